package httpapi_test

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/billing"
	"github.com/contentapi/contentapi/internal/billing/billingtest"
	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/httpapi"
)

// withBilling gives the server a billing service over the fake Stripe.
func withBilling(apiBase string) serverOption {
	return func(d *httpapi.Deps) {
		cfg := billing.Config{
			SecretKey: billingtest.SecretKey, WebhookSecret: billingtest.WebhookSecret, APIBase: apiBase,
			DashboardURL: d.DashboardURL,
			Prices: billing.Prices{ProMonthly: billingtest.PriceProMonthly, ProAnnual: billingtest.PriceProAnnual,
				ScaleMonthly: billingtest.PriceScaleMonthly, ScaleAnnual: billingtest.PriceScaleAnnual},
		}
		d.Billing = billing.New(cfg, d.Pool, d.Ledger, d.Accounts, d.Clock, d.Log)
	}
}

// uid makes Stripe ids unique across runs over the same database.
func uid() string { return strings.ReplaceAll(uuid.NewString(), "-", "")[:14] }

func checkoutBody(plan string, extra ...any) map[string]any {
	b := map[string]any{"plan": plan, "success_url": "https://app.example.com/done", "cancel_url": "https://app.example.com/cancel"}
	for i := 0; i+1 < len(extra); i += 2 {
		b[extra[i].(string)] = extra[i+1]
	}
	return b
}

func sortedKeys(m map[string]any) string {
	k := keysOf(m)
	sort.Strings(k)
	return strings.Join(k, " ")
}

// webhook posts a signed event to the server.
func webhook(t *testing.T, s *testServer, typ string, created time.Time, obj map[string]any) response {
	t.Helper()
	payload := billingtest.Event("evt_"+uuid.NewString(), typ, created, obj)
	return do(t, "POST", s.URL+"/v1/billing/webhook", "", payload,
		"Stripe-Signature", billingtest.Sign(payload, billingtest.WebhookSecret))
}

func TestBillingCheckoutResponse(t *testing.T) {
	fake := billingtest.NewStripe(t)
	s := startServer(t, withBilling(fake.URL))
	fake.AddPromotionCode(billingtest.PromotionCode("promo_launch", "LAUNCH25", true, time.Time{}, map[string]any{"percent_off": 25}))
	key := register(t, s)

	r := do(t, "POST", s.URL+"/v1/billing/checkout", key, checkoutBody("pro"))
	if r.Status != 200 || r.Body["status"] != "success" || sortedKeys(r.Body) != "data status" {
		t.Fatalf("checkout: %d %s", r.Status, r.Raw)
	}
	d := r.data()
	if sortedKeys(d) != "checkout_url expiry_time plan_details session_id" {
		t.Fatalf("data fields %s", sortedKeys(d))
	}
	if !strings.HasPrefix(d["checkout_url"].(string), "https://") || !strings.HasPrefix(d["session_id"].(string), "cs_") {
		t.Fatalf("session %v", d)
	}
	exp, err := time.Parse(time.RFC3339, d["expiry_time"].(string))
	if err != nil || !exp.Equal(s.Clock.Now().Add(24*time.Hour).Truncate(time.Second)) {
		t.Fatalf("expiry_time %v (%v), want 24 h from %v", d["expiry_time"], err, s.Clock.Now())
	}
	pd := d["plan_details"].(map[string]any)
	if sortedKeys(pd) != "billing_cycle credits_monthly plan_name price rate_limit" {
		t.Fatalf("plan_details fields %s", sortedKeys(pd))
	}
	if pd["plan_name"] != "pro" || pd["credits_monthly"] != float64(1000) || pd["rate_limit"] != float64(60) ||
		pd["billing_cycle"] != "monthly" {
		t.Fatalf("plan_details %v", pd)
	}
	price := pd["price"].(map[string]any)
	if sortedKeys(price) != "amount currency formatted" || price["amount"] != float64(4900) || price["currency"] != "usd" ||
		price["formatted"] != "$49.00" {
		t.Fatalf("price %v", price)
	}

	// Scale, annual, with a promotion code and metadata.
	r = do(t, "POST", s.URL+"/v1/billing/checkout", key, checkoutBody("scale", "billing_cycle", "annual",
		"promo_code", "launch25", "metadata", map[string]any{"campaign": "spring"}))
	if r.Status != 200 {
		t.Fatalf("scale: %d %s", r.Status, r.Raw)
	}
	pd = r.data()["plan_details"].(map[string]any)
	price = pd["price"].(map[string]any)
	disc, _ := pd["discount"].(map[string]any)
	if pd["plan_name"] != "scale" || pd["credits_monthly"] != float64(5000) || pd["rate_limit"] != float64(120) ||
		pd["billing_cycle"] != "annual" || price["amount"] != float64(199000) || price["formatted"] != "$1,990.00" {
		t.Fatalf("plan_details %v", pd)
	}
	if sortedKeys(disc) != "code discount_amount discount_percentage" || disc["code"] != "LAUNCH25" ||
		disc["discount_amount"] != float64(49750) || disc["discount_percentage"] != float64(25) {
		t.Fatalf("discount %v", disc)
	}
	reqs := fake.Requests("POST", "/v1/checkout/sessions")
	if f := reqs[len(reqs)-1].Form; f.Get("subscription_data[metadata][campaign]") != "spring" ||
		f.Get("discounts[0][promotion_code]") != "promo_launch" || f.Get("line_items[0][price]") != billingtest.PriceScaleAnnual {
		t.Fatalf("session request %v", f)
	}
}

func TestBillingErrors(t *testing.T) {
	fake := billingtest.NewStripe(t)
	s := startServer(t, withBilling(fake.URL))
	cases := []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"plan", checkoutBody("free"), 400, "INVALID_PLAN"},
		{"missing plan", map[string]any{"success_url": "https://a.example/x", "cancel_url": "https://a.example/y"}, 400, "INVALID_PLAN"},
		{"url", checkoutBody("pro", "success_url", "http://app.example.com/done"), 400, "INVALID_URL"},
		{"cancel url", checkoutBody("pro", "cancel_url", "app.example.com"), 400, "INVALID_URL"},
		{"promo", checkoutBody("pro", "promo_code", "NOPE"), 400, "PROMO_CODE_INVALID"},
		{"cycle", checkoutBody("pro", "billing_cycle", "weekly"), 400, "VALIDATION_ERROR"},
		{"long promo", checkoutBody("pro", "promo_code", strings.Repeat("x", 65)), 400, "VALIDATION_ERROR"},
		{"metadata value", checkoutBody("pro", "metadata", map[string]any{"n": 1}), 400, "VALIDATION_ERROR"},
		{"not json", "plan=pro", 400, "VALIDATION_ERROR"},
		{"unknown field", checkoutBody("pro", "coupon", "x"), 400, "VALIDATION_ERROR"},
		{"wrong type", checkoutBody("pro", "metadata", "x"), 400, "VALIDATION_ERROR"},
	}
	var key string
	for i, c := range cases {
		if i%5 == 0 {
			key = register(t, s) // stay inside the free plan's 10 requests a minute
		}
		r := do(t, "POST", s.URL+"/v1/billing/checkout", key, c.body)
		if r.Status != c.status || r.Body["status"] != "error" || r.Body["code"] != c.code ||
			r.Body["message"] == "" || r.Body["error"] == "" || sortedKeys(r.Body) != "code error message status" {
			t.Errorf("%s: %d %s", c.name, r.Status, r.Raw)
		}
	}

	// Authentication errors keep their own shape.
	r := do(t, "POST", s.URL+"/v1/billing/checkout", "", checkoutBody("pro"))
	if r.Status != 401 || r.Body["code"] != "MISSING_AUTH_HEADER" || sortedKeys(r.Body) != "code error message" {
		t.Fatalf("no key: %d %s", r.Status, r.Raw)
	}

	// ALREADY_SUBSCRIBED: 409 once the account has the plan.
	key = register(t, s)
	id := accountID(t, s, key)
	if r := webhook(t, s, billing.EventCheckoutCompleted, s.Clock.Now(),
		billingtest.CheckoutSession("cs_"+uid(), id.String(), "sub_"+uid(), "cus_"+uid(), "pro", "monthly")); r.Status != 200 {
		t.Fatalf("webhook: %d %s", r.Status, r.Raw)
	}
	r = do(t, "POST", s.URL+"/v1/billing/checkout", key, checkoutBody("pro"))
	if r.Status != 409 || r.Body["status"] != "error" || r.Body["code"] != "ALREADY_SUBSCRIBED" {
		t.Fatalf("already subscribed: %d %s", r.Status, r.Raw)
	}
	if r := do(t, "POST", s.URL+"/v1/billing/checkout", key, checkoutBody("scale")); r.Status != 200 {
		t.Fatalf("pro to scale: %d %s", r.Status, r.Raw)
	}

	// An unknown billing path answers 404 in the billing shape.
	if r := do(t, "GET", s.URL+"/v1/billing/nothing", key, nil); r.Status != 404 || r.Body["status"] != "error" || r.Body["code"] != "NOT_FOUND" {
		t.Fatalf("unknown path: %d %s", r.Status, r.Raw)
	}
}

func TestBillingNotConfigured(t *testing.T) {
	for name, opt := range map[string]serverOption{
		"no service": func(*httpapi.Deps) {},
		"no keys": func(d *httpapi.Deps) {
			d.Billing = billing.New(billing.Config{APIBase: "http://127.0.0.1:1"}, d.Pool, d.Ledger, d.Accounts, d.Clock, d.Log)
		},
	} {
		s := startServer(t, opt)
		key := register(t, s)
		for _, path := range []string{"/v1/billing/checkout", "/v1/billing/portal"} {
			r := do(t, "POST", s.URL+path, key, checkoutBody("pro"))
			if r.Status != 503 || r.Body["status"] != "error" || r.Body["code"] != "BILLING_NOT_CONFIGURED" {
				t.Fatalf("%s %s: %d %s", name, path, r.Status, r.Raw)
			}
		}
		r := do(t, "POST", s.URL+"/v1/billing/webhook", "", `{}`, "Stripe-Signature", "t=1,v1=00")
		if r.Status != 503 || r.Body["code"] != "BILLING_NOT_CONFIGURED" {
			t.Fatalf("%s webhook: %d %s", name, r.Status, r.Raw)
		}
	}
}

func TestBillingPortal(t *testing.T) {
	fake := billingtest.NewStripe(t)
	s := startServer(t, withBilling(fake.URL))
	key := register(t, s)
	id := accountID(t, s, key)
	r := do(t, "POST", s.URL+"/v1/billing/portal", key, nil)
	if r.Status != 409 || r.Body["status"] != "error" || r.Body["code"] != apperr.NoBillingAccount {
		t.Fatalf("portal without customer: %d %s", r.Status, r.Raw)
	}
	cus := "cus_" + uid()
	webhook(t, s, billing.EventCheckoutCompleted, s.Clock.Now(),
		billingtest.CheckoutSession("cs_"+uid(), id.String(), "sub_"+uid(), cus, "pro", "monthly"))
	r = do(t, "POST", s.URL+"/v1/billing/portal", key, nil)
	if r.Status != 200 || r.Body["status"] != "success" || !strings.HasPrefix(r.data()["portal_url"].(string), "https://") ||
		r.data()["return_url"] != "https://dash.test" {
		t.Fatalf("portal: %d %s", r.Status, r.Raw)
	}
	r = do(t, "POST", s.URL+"/v1/billing/portal", key, map[string]any{"return_url": "https://app.example.com/settings"})
	if r.Status != 200 || r.data()["return_url"] != "https://app.example.com/settings" {
		t.Fatalf("portal with return_url: %d %s", r.Status, r.Raw)
	}
	r = do(t, "POST", s.URL+"/v1/billing/portal", key, map[string]any{"return_url": "javascript:alert(1)"})
	if r.Status != 400 || r.Body["code"] != "INVALID_URL" || r.Body["status"] != "error" {
		t.Fatalf("bad return_url: %d %s", r.Status, r.Raw)
	}
	if reqs := fake.Requests("POST", "/v1/billing_portal/sessions"); len(reqs) != 2 || reqs[0].Form.Get("customer") != cus {
		t.Fatalf("portal requests %v", reqs)
	}
}

func TestBillingWebhookSignature(t *testing.T) {
	fake := billingtest.NewStripe(t)
	s := startServer(t, withBilling(fake.URL))
	key := register(t, s)
	id := accountID(t, s, key)
	payload := billingtest.Event("evt_"+uid(), billing.EventCheckoutCompleted, s.Clock.Now(),
		billingtest.CheckoutSession("cs_"+uid(), id.String(), "sub_"+uid(), "cus_"+uid(), "pro", "monthly"))
	for name, sig := range map[string]string{
		"missing":      "",
		"wrong secret": billingtest.Sign(payload, "whsec_wrong"),
		"malformed":    "v1=zz",
	} {
		r := do(t, "POST", s.URL+"/v1/billing/webhook", "", payload, "Stripe-Signature", sig)
		if r.Status != 400 || r.Body["status"] != "error" || r.Body["code"] != "VALIDATION_ERROR" {
			t.Fatalf("%s: %d %s", name, r.Status, r.Raw)
		}
	}
	if a, _ := s.Accounts.Get(context.Background(), id); a.Plan != "free" {
		t.Fatalf("a rejected delivery changed the plan to %s", a.Plan)
	}
	if b, _ := s.Ledger.Balance(context.Background(), id); b != 50 {
		t.Fatalf("a rejected delivery changed the balance to %d", b)
	}
	for i := 0; i < 2; i++ {
		r := do(t, "POST", s.URL+"/v1/billing/webhook", "", payload, "Stripe-Signature", billingtest.Sign(payload, billingtest.WebhookSecret))
		if r.Status != 200 || r.Raw != `{"received":true}` {
			t.Fatalf("signed: %d %s", r.Status, r.Raw)
		}
	}
	if b, _ := s.Ledger.Balance(context.Background(), id); b != 1050 {
		t.Fatalf("balance %d after a repeated delivery", b)
	}
}

// TestBillingStory follows one customer through the API: checkout, payment, renewals up to
// the rollover cap, an upgrade, a downgrade at the period end and the end of the
// subscription. It makes at most 10 authenticated calls, the free plan's minute.
func TestBillingStory(t *testing.T) {
	fake := billingtest.NewStripe(t)
	s := startServer(t, withBilling(fake.URL))
	ctx := context.Background()
	key := register(t, s)

	r := do(t, "POST", s.URL+"/v1/billing/checkout", key, checkoutBody("pro"))
	if r.Status != 200 || r.Header.Get("X-RateLimit-Limit") != "10" {
		t.Fatalf("checkout: %d %v %s", r.Status, r.Header, r.Raw)
	}
	sessionID := r.data()["session_id"].(string)
	reqs := fake.Requests("POST", "/v1/checkout/sessions")
	id, _ := uuid.Parse(reqs[len(reqs)-1].Form.Get("client_reference_id"))

	// Stripe reports the payment: the upgrade applies to the very next request.
	sub, cus := "sub_"+uid(), "cus_"+uid()
	if r := webhook(t, s, billing.EventCheckoutCompleted, s.Clock.Now(),
		billingtest.CheckoutSession(sessionID, id.String(), sub, cus, "pro", "monthly")); r.Status != 200 || r.Raw != `{"received":true}` {
		t.Fatalf("completion: %d %s", r.Status, r.Raw)
	}
	r = do(t, "GET", s.URL+"/v1/usage", key, nil)
	if r.Header.Get("X-RateLimit-Limit") != "60" || r.data()["plan"] != "pro" || r.data()["credits_remaining"] != float64(1050) ||
		r.data()["credits_limit"] != float64(1000) || r.data()["rate_limit"] != float64(60) {
		t.Fatalf("usage after upgrade: %v %s", r.Header.Get("X-RateLimit-Limit"), r.Raw)
	}

	// Monthly renewals roll credits over up to three allocations.
	a, _ := s.Accounts.Get(ctx, id)
	start := a.PeriodEnd
	for i := 0; i < 3; i++ {
		s.Clock.Set(clock.AddMonths(start, i))
		if r := webhook(t, s, billing.EventInvoicePaid, s.Clock.Now(), billingtest.Invoice("in_"+uid(),
			"subscription_cycle", sub, cus, id.String(), billingtest.PriceProMonthly, clock.AddMonths(start, i), clock.AddMonths(start, i+1))); r.Status != 200 {
			t.Fatalf("renewal %d: %d %s", i, r.Status, r.Raw)
		}
	}
	r = do(t, "GET", s.URL+"/v1/usage", key, nil)
	if r.data()["credits_remaining"] != float64(3000) {
		t.Fatalf("usage after renewals: %s", r.Raw)
	}

	// An upgrade to scale in the portal takes effect at once.
	periodStart, periodEnd := clock.AddMonths(start, 2), clock.AddMonths(start, 3)
	subObj := billingtest.Sub{ID: sub, Customer: cus, AccountID: id.String(), Price: billingtest.PriceScaleMonthly,
		Start: periodStart, End: periodEnd}
	s.Clock.Advance(24 * time.Hour)
	webhook(t, s, billing.EventSubscriptionUpdated, s.Clock.Now(), billingtest.Subscription(subObj))
	r = do(t, "GET", s.URL+"/v1/usage", key, nil)
	if r.Header.Get("X-RateLimit-Limit") != "120" || r.data()["plan"] != "scale" || r.data()["credits_remaining"] != float64(7000) {
		t.Fatalf("usage after upgrade to scale: %s", r.Raw)
	}

	// Back to pro: recorded, shown, and not applied before the period ends.
	s.Clock.Advance(24 * time.Hour)
	subObj.Price = billingtest.PriceProMonthly
	webhook(t, s, billing.EventSubscriptionUpdated, s.Clock.Now(), billingtest.Subscription(subObj))
	r = do(t, "GET", s.URL+"/v1/account", key, nil)
	pending, _ := r.data()["pending_change"].(map[string]any)
	if r.Header.Get("X-RateLimit-Limit") != "120" || r.data()["plan"] != "scale" || pending == nil || pending["plan"] != "pro" ||
		pending["billing_cycle"] != "monthly" || pending["effective_at"] != periodEnd.UTC().Format(time.RFC3339) {
		t.Fatalf("account with pending downgrade: %s", r.Raw)
	}
	s.Clock.Set(periodEnd)
	webhook(t, s, billing.EventInvoicePaid, s.Clock.Now(), billingtest.Invoice("in_"+uid(), "subscription_cycle", sub, cus,
		id.String(), billingtest.PriceProMonthly, periodEnd, clock.AddMonths(periodEnd, 1)))
	r = do(t, "GET", s.URL+"/v1/account", key, nil)
	if r.Header.Get("X-RateLimit-Limit") != "60" || r.data()["plan"] != "pro" || r.data()["pending_change"] != nil {
		t.Fatalf("account after the period end: %s", r.Raw)
	}

	// The subscription ends: free again, the paid credits kept until they expire.
	s.Clock.Advance(24 * time.Hour)
	subObj.Status, subObj.Start, subObj.End = "canceled", periodEnd, clock.AddMonths(periodEnd, 1)
	webhook(t, s, billing.EventSubscriptionDeleted, s.Clock.Now(), billingtest.Subscription(subObj))
	r = do(t, "GET", s.URL+"/v1/usage", key, nil)
	if r.Header.Get("X-RateLimit-Limit") != "10" || r.data()["plan"] != "free" || r.data()["rate_limit"] != float64(10) ||
		r.data()["credits_limit"] != float64(50) || r.data()["credits_remaining"] != float64(7000+50) {
		t.Fatalf("usage after the end: %s", r.Raw)
	}
}
