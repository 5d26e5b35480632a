package billing_test

import (
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/billing"
	"github.com/contentapi/contentapi/internal/billing/billingtest"
)

func validRequest() billing.CheckoutRequest {
	return billing.CheckoutRequest{Plan: "pro", SuccessURL: "https://app.example.com/done?session_id={CHECKOUT_SESSION_ID}",
		CancelURL: "https://app.example.com/cancelled"}
}

func wantCode(t *testing.T, err error, code, msg string) {
	t.Helper()
	e, ok := apperr.As(err)
	if !ok || e.Code != code || !strings.Contains(e.Message, msg) {
		t.Fatalf("error %v, want %s containing %q", err, code, msg)
	}
}

func TestCheckoutValidation(t *testing.T) {
	h := newHarness(t)
	acct, _ := h.register()
	meta := func(n int) map[string]any {
		m := map[string]any{}
		for i := 0; i < n; i++ {
			m["k"+strconv.Itoa(i)] = "v"
		}
		return m
	}
	cases := []struct {
		name      string
		edit      func(*billing.CheckoutRequest)
		code, msg string
	}{
		{"no plan", func(r *billing.CheckoutRequest) { r.Plan = "" }, apperr.InvalidPlan, "plan is required"},
		{"free", func(r *billing.CheckoutRequest) { r.Plan = "free" }, apperr.InvalidPlan, "pro or scale"},
		{"enterprise", func(r *billing.CheckoutRequest) { r.Plan = "enterprise" }, apperr.InvalidPlan, "pro or scale"},
		{"unknown plan", func(r *billing.CheckoutRequest) { r.Plan = "gold" }, apperr.InvalidPlan, "pro or scale"},
		{"cycle", func(r *billing.CheckoutRequest) { r.BillingCycle = "weekly" }, apperr.Validation, "billing_cycle must be monthly or annual"},
		{"no success_url", func(r *billing.CheckoutRequest) { r.SuccessURL = "" }, apperr.InvalidURL, "success_url is required"},
		{"http success_url", func(r *billing.CheckoutRequest) { r.SuccessURL = "http://app.example.com/done" }, apperr.InvalidURL, "success_url must be an absolute HTTPS URL"},
		{"relative success_url", func(r *billing.CheckoutRequest) { r.SuccessURL = "/done" }, apperr.InvalidURL, "success_url"},
		{"hostless success_url", func(r *billing.CheckoutRequest) { r.SuccessURL = "https://" }, apperr.InvalidURL, "success_url"},
		{"userinfo success_url", func(r *billing.CheckoutRequest) { r.SuccessURL = "https://user:pw@example.com/" }, apperr.InvalidURL, "success_url"},
		{"long success_url", func(r *billing.CheckoutRequest) { r.SuccessURL = "https://example.com/" + strings.Repeat("a", 2048) }, apperr.InvalidURL, "at most 2048"},
		{"ftp cancel_url", func(r *billing.CheckoutRequest) { r.CancelURL = "ftp://example.com/x" }, apperr.InvalidURL, "cancel_url must be an absolute HTTPS URL"},
		{"no cancel_url", func(r *billing.CheckoutRequest) { r.CancelURL = " " }, apperr.InvalidURL, "cancel_url is required"},
		{"long promo", func(r *billing.CheckoutRequest) { r.PromoCode = strings.Repeat("P", 65) }, apperr.Validation, "promo_code must be at most 64"},
		{"21 keys", func(r *billing.CheckoutRequest) { r.Metadata = meta(21) }, apperr.Validation, "at most 20 keys"},
		{"long key", func(r *billing.CheckoutRequest) { r.Metadata = map[string]any{strings.Repeat("k", 41): "v"} }, apperr.Validation, "keys must be at most 40"},
		{"long value", func(r *billing.CheckoutRequest) { r.Metadata = map[string]any{"k": strings.Repeat("v", 501)} }, apperr.Validation, "at most 500 characters (metadata.k)"},
		{"number value", func(r *billing.CheckoutRequest) { r.Metadata = map[string]any{"n": 5.0} }, apperr.Validation, "must be strings (metadata.n)"},
		{"bracket key", func(r *billing.CheckoutRequest) { r.Metadata = map[string]any{"a[b]": "v"} }, apperr.Validation, "square brackets"},
		{"reserved key", func(r *billing.CheckoutRequest) { r.Metadata = map[string]any{billing.MetaAccountID: "x"} }, apperr.Validation, "reserved"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := validRequest()
			c.edit(&req)
			_, err := h.svc.Checkout(h.ctx, acct, req)
			wantCode(t, err, c.code, c.msg)
		})
	}
	if n := len(h.stripe.Requests("POST", "/v1/checkout/sessions")); n != 0 {
		t.Fatalf("%d sessions created by rejected requests", n)
	}
	// The limits themselves are accepted.
	req := validRequest()
	req.Plan, req.BillingCycle = " Scale ", "ANNUAL"
	req.Metadata = meta(20)
	req.Metadata[strings.Repeat("k", 40)] = strings.Repeat("v", 500)
	delete(req.Metadata, "k0")
	if _, err := h.svc.Checkout(h.ctx, acct, req); err != nil {
		t.Fatalf("limits: %v", err)
	}
}

func TestCheckoutNotConfigured(t *testing.T) {
	h := newHarness(t)
	acct, _ := h.register()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, cfg := range []billing.Config{{}, {SecretKey: "sk_test_x"}, {WebhookSecret: "whsec_x"}} {
		svc := billing.New(cfg, h.pool, h.ledger, h.accounts, h.clock, log)
		if svc.Configured() {
			t.Fatalf("%+v: configured", cfg)
		}
		_, err := svc.Checkout(h.ctx, acct, validRequest())
		wantCode(t, err, apperr.BillingNotConfigured, "not configured")
		_, err = svc.Portal(h.ctx, acct, "")
		wantCode(t, err, apperr.BillingNotConfigured, "not configured")
		err = svc.HandleWebhook(h.ctx, []byte(`{}`), "t=1,v1=00")
		wantCode(t, err, apperr.BillingNotConfigured, "not configured")
	}
	var nilSvc *billing.Service
	if nilSvc.Configured() {
		t.Fatal("nil service configured")
	}
	// A plan and cycle without a price id is not offered.
	cfg := testConfig(h.stripe.URL)
	cfg.Prices.ScaleAnnual = ""
	svc := billing.New(cfg, h.pool, h.ledger, h.accounts, h.clock, log)
	req := validRequest()
	req.Plan, req.BillingCycle = "scale", "annual"
	_, err := svc.Checkout(h.ctx, acct, req)
	wantCode(t, err, apperr.BillingNotConfigured, "scale plan with annual billing")
}

func TestCheckoutSession(t *testing.T) {
	h := newHarness(t)
	acct, _ := h.register()
	email := h.account(acct).Email
	req := validRequest()
	req.Metadata = map[string]any{"team": "growth", "po": "PO-17"}
	out, err := h.svc.Checkout(h.ctx, acct, req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.SessionID, "cs_") || !strings.HasPrefix(out.CheckoutURL, "https://") {
		t.Fatalf("session %q url %q", out.SessionID, out.CheckoutURL)
	}
	wantExpiry := t0.Add(24 * time.Hour)
	if !out.ExpiryTime.Equal(wantExpiry) {
		t.Fatalf("expiry %v, want %v", out.ExpiryTime, wantExpiry)
	}
	d := out.PlanDetails
	if d.PlanName != "pro" || d.CreditsMonthly != 1000 || d.RateLimit != 60 || d.BillingCycle != "monthly" ||
		d.Price != (billing.Price{Amount: 4900, Currency: "usd", Formatted: "$49.00"}) || d.Discount != nil {
		t.Fatalf("plan details %+v", d)
	}
	reqs := h.stripe.Requests("POST", "/v1/checkout/sessions")
	if len(reqs) != 1 {
		t.Fatalf("%d session requests", len(reqs))
	}
	f := reqs[0].Form
	want := map[string]string{
		"mode": "subscription", "line_items[0][price]": billingtest.PriceProMonthly, "line_items[0][quantity]": "1",
		"success_url": req.SuccessURL, "cancel_url": req.CancelURL, "client_reference_id": acct.String(),
		"metadata[account_id]": acct.String(), "metadata[plan]": "pro", "metadata[billing_cycle]": "monthly",
		"subscription_data[metadata][team]": "growth", "subscription_data[metadata][po]": "PO-17",
		"subscription_data[metadata][contentapi_account_id]": acct.String(),
		"customer_email": email, "expires_at": strconv.FormatInt(wantExpiry.Unix(), 10),
	}
	for k, v := range want {
		if f.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, f.Get(k), v)
		}
	}
	if f.Has("customer") || f.Has("discounts[0][promotion_code]") || f.Has("metadata[team]") {
		t.Errorf("unexpected fields in %v", f)
	}

	// Scale annual: the year's price.
	req = validRequest()
	req.Plan, req.BillingCycle = "scale", "annual"
	out, err = h.svc.Checkout(h.ctx, acct, req)
	if err != nil {
		t.Fatal(err)
	}
	if d := out.PlanDetails; d.PlanName != "scale" || d.CreditsMonthly != 5000 || d.RateLimit != 120 || d.BillingCycle != "annual" ||
		d.Price != (billing.Price{Amount: 199000, Currency: "usd", Formatted: "$1,990.00"}) {
		t.Fatalf("scale annual %+v", d)
	}
	reqs = h.stripe.Requests("POST", "/v1/checkout/sessions")
	if p := reqs[len(reqs)-1].Form.Get("line_items[0][price]"); p != billingtest.PriceScaleAnnual {
		t.Fatalf("price %q", p)
	}
}

func TestCheckoutPromotionCodes(t *testing.T) {
	h := newHarness(t)
	acct, _ := h.register()
	past := t0.Add(-time.Hour)
	h.stripe.AddPromotionCode(billingtest.PromotionCode("promo_save20", "SAVE20", true, t0.Add(time.Hour), map[string]any{"percent_off": 20}))
	h.stripe.AddPromotionCode(billingtest.PromotionCode("promo_flat10", "FLAT10", true, time.Time{}, map[string]any{"amount_off": 1000, "currency": "usd"}))
	h.stripe.AddPromotionCode(billingtest.PromotionCode("promo_old", "OLD", true, past, map[string]any{"percent_off": 50}))
	h.stripe.AddPromotionCode(billingtest.PromotionCode("promo_off", "PAUSED", false, time.Time{}, map[string]any{"percent_off": 50}))
	h.stripe.AddPromotionCode(billingtest.PromotionCode("promo_eur", "EURO", true, time.Time{}, map[string]any{"amount_off": 500, "currency": "eur"}))
	h.stripe.AddPromotionCode(billingtest.PromotionCode("promo_void", "VOID", true, time.Time{}, map[string]any{"percent_off": 10, "valid": false}))

	cases := []struct {
		code, plan, cycle string
		want              *billing.Discount
	}{
		{"SAVE20", "pro", "monthly", &billing.Discount{Code: "SAVE20", DiscountAmount: 980, DiscountPercentage: 20}},
		{"save20", "scale", "annual", &billing.Discount{Code: "SAVE20", DiscountAmount: 39800, DiscountPercentage: 20}},
		{"FLAT10", "scale", "annual", &billing.Discount{Code: "FLAT10", DiscountAmount: 1000, DiscountPercentage: 0.5}},
		{"FLAT10", "pro", "monthly", &billing.Discount{Code: "FLAT10", DiscountAmount: 1000, DiscountPercentage: 20.41}},
		{"OLD", "pro", "monthly", nil},
		{"PAUSED", "pro", "monthly", nil},
		{"EURO", "pro", "monthly", nil},
		{"VOID", "pro", "monthly", nil},
		// Not one of ours: stripe-mock answers with its fixture (another, inactive code).
		{"NOSUCHCODE", "pro", "monthly", nil},
	}
	for _, c := range cases {
		req := validRequest()
		req.Plan, req.BillingCycle, req.PromoCode = c.plan, c.cycle, c.code
		before := len(h.stripe.Requests("POST", "/v1/checkout/sessions"))
		out, err := h.svc.Checkout(h.ctx, acct, req)
		if c.want == nil {
			wantCode(t, err, apperr.PromoCodeInvalid, "promo_code is not a valid")
			if n := len(h.stripe.Requests("POST", "/v1/checkout/sessions")); n != before {
				t.Errorf("%s: a session was created", c.code)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.code, err)
		}
		if out.PlanDetails.Discount == nil || *out.PlanDetails.Discount != *c.want {
			t.Errorf("%s %s: discount %+v, want %+v", c.code, c.plan, out.PlanDetails.Discount, c.want)
		}
		reqs := h.stripe.Requests("POST", "/v1/checkout/sessions")
		if got := reqs[len(reqs)-1].Form.Get("discounts[0][promotion_code]"); got != "promo_"+strings.ToLower(c.want.Code) {
			t.Errorf("%s: discounts[0][promotion_code] = %q", c.code, got)
		}
	}
	lists := h.stripe.Requests("GET", "/v1/promotion_codes")
	if len(lists) == 0 || lists[0].Form.Get("code") != "SAVE20" || lists[0].Form.Get("active") != "true" {
		t.Fatalf("promotion code lookups %v", lists)
	}
}

func TestCheckoutAlreadySubscribed(t *testing.T) {
	h := newHarness(t)
	acct, _ := h.register()
	_, customer := h.complete(acct, "pro", "monthly")

	req := validRequest()
	_, err := h.svc.Checkout(h.ctx, acct, req)
	wantCode(t, err, apperr.AlreadySubscribed, "already has an active pro subscription")
	req.BillingCycle = "annual"
	_, err = h.svc.Checkout(h.ctx, acct, req)
	wantCode(t, err, apperr.AlreadySubscribed, "billing portal")

	// Moving up to scale is allowed, and the session reuses the Stripe customer.
	req = validRequest()
	req.Plan = "scale"
	if _, err := h.svc.Checkout(h.ctx, acct, req); err != nil {
		t.Fatal(err)
	}
	reqs := h.stripe.Requests("POST", "/v1/checkout/sessions")
	f := reqs[len(reqs)-1].Form
	if f.Get("customer") != customer || f.Has("customer_email") {
		t.Fatalf("customer %q email %q", f.Get("customer"), f.Get("customer_email"))
	}

	// On scale, pro is a downgrade: the portal does it at the next period.
	other, _ := h.register()
	h.complete(other, "scale", "monthly")
	_, err = h.svc.Checkout(h.ctx, other, validRequest())
	wantCode(t, err, apperr.AlreadySubscribed, "lower plan")
}

func TestPortal(t *testing.T) {
	h := newHarness(t)
	acct, _ := h.register()
	_, err := h.svc.Portal(h.ctx, acct, "")
	wantCode(t, err, apperr.NoBillingAccount, "no billing account")
	if n := len(h.stripe.Requests("POST", "/v1/billing_portal/sessions")); n != 0 {
		t.Fatal("portal session created without a customer")
	}
	_, customer := h.complete(acct, "pro", "monthly")
	p, err := h.svc.Portal(h.ctx, acct, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.PortalURL, "https://") || p.ReturnURL != "https://dash.test/billing" {
		t.Fatalf("portal %+v", p)
	}
	p, err = h.svc.Portal(h.ctx, acct, "https://app.example.com/account")
	if err != nil || p.ReturnURL != "https://app.example.com/account" {
		t.Fatalf("portal %+v %v", p, err)
	}
	reqs := h.stripe.Requests("POST", "/v1/billing_portal/sessions")
	if len(reqs) != 2 || reqs[0].Form.Get("customer") != customer || reqs[0].Form.Get("return_url") != "https://dash.test/billing" ||
		reqs[1].Form.Get("return_url") != "https://app.example.com/account" {
		t.Fatalf("portal requests %v", reqs)
	}
	_, err = h.svc.Portal(h.ctx, acct, "http://app.example.com/account")
	wantCode(t, err, apperr.InvalidURL, "return_url")
	_, err = h.svc.Portal(h.ctx, uuid.New(), "")
	wantCode(t, err, apperr.NotFound, "account")
}
