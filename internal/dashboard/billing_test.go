package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/contentapi/contentapi/internal/billing/billingtest"
	"github.com/contentapi/contentapi/internal/testenv"
)

// The billing page upgrades through the billing service's Stripe Checkout (plan, cycle,
// promo code), shows a pending plan change, and opens the customer portal; what the
// billing service refuses is shown on the form, with nothing sent to Stripe.
func TestBillingPage(t *testing.T) {
	stripe := billingtest.NewStripe(t)
	e := startEnv(t, withHTTPS(), withStripe(stripe.URL))
	b := e.newBrowser(t)
	email := uniqueEmail("billing")
	e.signIn(t, b, email)
	ctx := context.Background()

	first := b.Get("/dashboard/billing")
	if first.Status != http.StatusOK || !strings.Contains(first.Body, `id="current-plan">free<`) || !strings.Contains(first.Body, `id="checkout"`) ||
		strings.Contains(first.Body, `id="portal"`) || strings.Contains(first.Body, `id="pending-change"`) {
		t.Fatalf("billing page: %d %s", first.Status, first.Body)
	}
	csrf := first.CSRF(t)
	checkout := func(form url.Values) page {
		form.Set("csrf", csrf)
		return b.Post("/dashboard/billing/checkout", form)
	}

	// Refused: an unknown promo code, a plan that does not exist.
	bad := checkout(url.Values{"plan": {"scale"}, "billing_cycle": {"annual"}, "promo_code": {"NOPE"}})
	if bad.Status != http.StatusBadRequest || !strings.Contains(bad.Body, `id="billing-error"`) ||
		!strings.Contains(bad.Body, `value="NOPE"`) || !strings.Contains(bad.Body, `value="scale" checked`) {
		t.Fatalf("unknown promo code: %d %s", bad.Status, bad.Body)
	}
	if p := checkout(url.Values{"plan": {"gold"}}); p.Status != http.StatusBadRequest || !strings.Contains(p.Body, "pro or scale") {
		t.Fatalf("unknown plan: %d %s", p.Status, p.Body)
	}
	if n := len(stripe.Requests(http.MethodPost, "/v1/checkout/sessions")); n != 0 {
		t.Fatalf("%d checkout sessions made by refused forms", n)
	}

	// Accepted: the browser goes to Stripe's checkout page.
	stripe.AddPromotionCode(billingtest.PromotionCode("promo_save20", "SAVE20", true, time.Time{}, map[string]any{"percent_off": 20}))
	ok := checkout(url.Values{"plan": {"pro"}, "billing_cycle": {"annual"}, "promo_code": {"save20"}})
	if ok.Status != http.StatusSeeOther || !strings.HasPrefix(ok.Location, "https://") || strings.HasPrefix(ok.Location, e.URL) {
		t.Fatalf("checkout: %d to %q: %s", ok.Status, ok.Location, ok.Body)
	}
	sessions := stripe.Requests(http.MethodPost, "/v1/checkout/sessions")
	if len(sessions) != 1 {
		t.Fatalf("%d checkout sessions", len(sessions))
	}
	f := sessions[0].Form
	if f.Get("success_url") != e.URL+"/dashboard/billing?checkout=success" || f.Get("cancel_url") != e.URL+"/dashboard/billing?checkout=cancelled" ||
		f.Get("line_items[0][price]") != billingtest.PriceProAnnual || f.Get("discounts[0][promotion_code]") != "promo_save20" ||
		f.Get("customer_email") != email {
		t.Fatalf("checkout session %v", f)
	}
	if p := b.Get("/dashboard/billing?checkout=success"); !strings.Contains(p.Body, `role="status" class="notice">Thank you`) {
		t.Fatalf("after checkout: %s", p.Body)
	}

	// No billing account yet: the portal refuses, with the billing service's message.
	if p := b.Post("/dashboard/billing/portal", url.Values{"csrf": {csrf}}); p.Status != http.StatusBadRequest || !strings.Contains(p.Body, "no billing account") {
		t.Fatalf("portal without a customer: %d %s", p.Status, p.Body)
	}
	// A subscriber (as the webhook leaves one) with a change at the next period.
	pool := testenv.Postgres(t)
	at := e.Clock.Now().AddDate(0, 1, 0)
	if _, err := pool.Exec(ctx, `
		UPDATE accounts SET plan = 'scale', stripe_customer_id = 'cus_dash', stripe_subscription_id = 'sub_dash', pending_plan = 'pro',
			pending_billing_cycle = 'monthly', pending_change_at = $2 WHERE email = $1`, email, at); err != nil {
		t.Fatal(err)
	}
	sub := b.Get("/dashboard/billing")
	if !strings.Contains(sub.Body, `id="current-plan">scale<`) || !strings.Contains(sub.Body, `id="pending-change">Changes to <strong>pro</strong>, billed monthly, on `+at.UTC().Format("2006-01-02 15:04 UTC")) ||
		!strings.Contains(sub.Body, `id="portal"`) {
		t.Fatalf("subscriber's billing page: %s", sub.Body)
	}
	portal := b.Post("/dashboard/billing/portal", url.Values{"csrf": {csrf}})
	portals := stripe.Requests(http.MethodPost, "/v1/billing_portal/sessions")
	if portal.Status != http.StatusSeeOther || !strings.HasPrefix(portal.Location, "https://") || len(portals) != 1 || portals[0].Form.Get("customer") != "cus_dash" ||
		portals[0].Form.Get("return_url") != e.URL+"/dashboard/billing" {
		t.Fatalf("portal: %d to %q, requests %v", portal.Status, portal.Location, portals)
	}
	// Scale already: checkout for it is refused.
	if p := checkout(url.Values{"plan": {"scale"}, "billing_cycle": {"monthly"}}); p.Status != http.StatusConflict {
		t.Fatalf("checkout for the plan held: %d %s", p.Status, p.Body)
	}
}

// usage's upgrade_url is the billing page; without Stripe keys the page says billing is off
// and checkout changes nothing.
func TestBillingNotConfigured(t *testing.T) {
	e := startEnv(t)
	b := e.newBrowser(t)
	key := e.signIn(t, b, uniqueEmail("nobilling"))
	status, usage := e.call(t, key, http.MethodGet, "/v1/usage", "")
	upgrade := regexp.MustCompile(`"upgrade_url":"([^"]+)"`).FindStringSubmatch(usage)
	if status != http.StatusOK || upgrade == nil || upgrade[1] != e.URL+"/dashboard/billing" {
		t.Fatalf("usage: %d %s", status, usage)
	}
	off := b.Get(upgrade[1])
	if !strings.Contains(off.Body, `id="billing-off"`) || strings.Contains(off.Body, `id="checkout"`) {
		t.Fatalf("billing page: %s", off.Body)
	}
	if p := b.Post("/dashboard/billing/checkout", url.Values{"csrf": {off.CSRF(t)}, "plan": {"pro"}}); p.Status != http.StatusServiceUnavailable {
		t.Fatalf("checkout: %d %s", p.Status, p.Body)
	}
}
