package billing_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/billing"
	"github.com/contentapi/contentapi/internal/billing/billingtest"
	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/credits"
)

func eventID(t *testing.T, payload []byte) string {
	t.Helper()
	var ev struct{ ID string }
	if err := json.Unmarshal(payload, &ev); err != nil {
		t.Fatal(err)
	}
	return ev.ID
}

func TestCheckoutCompletedUpgradesAtOnce(t *testing.T) {
	h := newHarness(t)
	acct, key := h.register()
	if h.limit(key) != 10 {
		t.Fatal("free limit")
	}
	h.clock.Advance(3 * 24 * time.Hour)
	now := h.clock.Now()
	subID, customer := "sub_"+short(), "cus_"+short()
	payload := h.event(billing.EventCheckoutCompleted,
		billingtest.CheckoutSession("cs_"+short(), acct.String(), subID, customer, "pro", "monthly"))
	h.mustDeliver(payload)

	a := h.account(acct)
	if a.Plan != "pro" || a.BillingCycle != "monthly" || a.RateLimit != 60 || a.CreditsMonthly != 1000 ||
		*a.StripeCustomerID != customer || !a.PeriodStart.Equal(now) || !a.PeriodEnd.Equal(clock.AddMonths(now, 1)) ||
		a.PendingChangeAt != nil {
		t.Fatalf("account %+v", a)
	}
	var sub string
	_ = h.pool.QueryRow(h.ctx, `SELECT stripe_subscription_id FROM accounts WHERE id = $1`, acct).Scan(&sub)
	if sub != subID {
		t.Fatalf("subscription %q", sub)
	}
	// The paid allocation is added at once; the free credits stay until their period ends.
	if b := h.balance(acct); b != 1050 {
		t.Fatalf("balance %d", b)
	}
	g := h.grants(acct)
	if len(g) != 2 || g[0].Source != credits.SourceFreeMonthly || !g[0].ExpiresAt.Equal(months(1)) ||
		g[1].Source != credits.SourcePaid || g[1].Amount != 1000 || g[1].SourceRef != subID ||
		!g[1].IssuedAt.Equal(now) || !g[1].ExpiresAt.Equal(clock.AddMonths(now, 12)) {
		t.Fatalf("grants %+v", g)
	}
	// The gate applies the higher limit on the next request.
	if l := h.limit(key); l != 60 {
		t.Fatalf("limit %d after upgrade", l)
	}
	if n, outcome := h.processed(eventID(t, payload)); n != 1 || !strings.Contains(outcome, "subscribed to pro") {
		t.Fatalf("processed %d %q", n, outcome)
	}
	// The subscription's previous cycle would be retrieved from Stripe for its period.
	if n := len(h.stripe.Requests("GET", "/v1/subscriptions/"+subID)); n != 1 {
		t.Fatalf("%d subscription retrievals", n)
	}
}

func TestCheckoutCompletedTakesPeriodFromSubscription(t *testing.T) {
	h := newHarness(t)
	acct, key := h.register()
	subID, cus := "sub_"+short(), "cus_"+short()
	start, end := t0.Add(-time.Minute), clock.AddMonths(t0.Add(-time.Minute), 12)
	h.stripe.AddSubscription(billingtest.Subscription(billingtest.Sub{ID: subID, Customer: cus, AccountID: acct.String(),
		Price: billingtest.PriceScaleAnnual, Start: start, End: end}))
	h.mustDeliver(h.event(billing.EventCheckoutCompleted,
		billingtest.CheckoutSession("cs_"+short(), acct.String(), subID, cus, "scale", "annual")))
	a := h.account(acct)
	if a.Plan != "scale" || a.BillingCycle != "annual" || a.RateLimit != 120 || a.CreditsMonthly != 5000 ||
		!a.PeriodStart.Equal(start) || !a.PeriodEnd.Equal(end) {
		t.Fatalf("account %+v", a)
	}
	// Annual billing: twelve months of credits upfront.
	if p := h.paidGrants(acct); len(p) != 1 || p[0].Amount != 60000 {
		t.Fatalf("paid grants %+v", p)
	}
	if b := h.balance(acct); b != 60050 {
		t.Fatalf("balance %d", b)
	}
	if l := h.limit(key); l != 120 {
		t.Fatalf("limit %d", l)
	}
}

func TestWebhookSignature(t *testing.T) {
	h := newHarness(t)
	acct, _ := h.register()
	payload := h.event(billing.EventCheckoutCompleted,
		billingtest.CheckoutSession("cs_"+short(), acct.String(), "sub_"+short(), "cus_"+short(), "pro", "monthly"))
	good := billingtest.Sign(payload, billingtest.WebhookSecret)
	tampered := []byte(strings.Replace(string(payload), `"pro"`, `"scale"`, 1))
	cases := []struct {
		name    string
		payload []byte
		header  string
	}{
		{"missing", payload, ""},
		{"garbage", payload, "not a signature"},
		{"wrong secret", payload, billingtest.Sign(payload, "whsec_other")},
		{"tampered payload", tampered, good},
		{"too old", payload, billingtest.SignAt(payload, billingtest.WebhookSecret, time.Now().Add(-10*time.Minute))},
		{"no v1", payload, strings.Replace(good, "v1=", "v0=", 1)},
	}
	for _, c := range cases {
		err := h.svc.HandleWebhook(h.ctx, c.payload, c.header)
		wantCode(t, err, apperr.Validation, "Stripe-Signature")
		if a := h.account(acct); a.Plan != "free" {
			t.Fatalf("%s: plan %s", c.name, a.Plan)
		}
	}
	if n, _ := h.processed(eventID(t, payload)); n != 0 || h.balance(acct) != 50 {
		t.Fatalf("a rejected delivery changed something: recorded %d, balance %d", n, h.balance(acct))
	}
	// Within the 300 s tolerance.
	if err := h.svc.HandleWebhook(h.ctx, payload, billingtest.SignAt(payload, billingtest.WebhookSecret, time.Now().Add(-4*time.Minute))); err != nil {
		t.Fatal(err)
	}
	if a := h.account(acct); a.Plan != "pro" {
		t.Fatalf("plan %s", a.Plan)
	}
}

func TestWebhookDuplicateDeliveries(t *testing.T) {
	h := newHarness(t)
	acct, _ := h.register()
	sub, cus, inv := "sub_"+short(), "cus_"+short(), "in_"+short()
	payload := h.event(billing.EventCheckoutCompleted,
		billingtest.CheckoutSession("cs_"+short(), acct.String(), sub, cus, "pro", "monthly"))
	for i := 0; i < 3; i++ {
		h.mustDeliver(payload)
	}
	if b := h.balance(acct); b != 1050 {
		t.Fatalf("balance %d after repeats", b)
	}

	// Twenty deliveries of one renewal at the same moment: applied once.
	h.clock.Set(months(1))
	renewal := h.event(billing.EventInvoicePaid,
		billingtest.Invoice(inv, "subscription_cycle", sub, cus, "", billingtest.PriceProMonthly, months(1), months(2)))
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	start := make(chan struct{})
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs <- h.deliver(renewal)
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if p := h.paidGrants(acct); len(p) != 2 || p[1].SourceRef != inv || p[1].Amount != 1000 {
		t.Fatalf("paid grants %+v", p)
	}
	if b := h.balance(acct); b != 2000 {
		t.Fatalf("balance %d", b)
	}
	if n, _ := h.processed(eventID(t, renewal)); n != 1 {
		t.Fatalf("%d rows", n)
	}

	// Twenty concurrent completions of a new account's checkout: one upgrade, one grant.
	other, _ := h.register()
	completion := h.event(billing.EventCheckoutCompleted,
		billingtest.CheckoutSession("cs_"+short(), other.String(), "sub_"+short(), "cus_"+short(), "scale", "monthly"))
	errs = make(chan error, 20)
	start = make(chan struct{})
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs <- h.deliver(completion)
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if p := h.paidGrants(other); len(p) != 1 || p[0].Amount != 5000 {
		t.Fatalf("paid grants %+v", p)
	}
}

func TestWebhookUnknownAccountAndIgnoredEvents(t *testing.T) {
	h := newHarness(t)
	cases := [][]byte{
		h.event(billing.EventCheckoutCompleted,
			billingtest.CheckoutSession("cs_"+short(), uuid.NewString(), "sub_"+short(), "cus_"+short(), "pro", "monthly")),
		h.event(billing.EventCheckoutCompleted,
			billingtest.CheckoutSession("cs_"+short(), "not-a-uuid", "sub_"+short(), "", "pro", "monthly")),
		h.event(billing.EventInvoicePaid,
			billingtest.Invoice("in_"+short(), "subscription_cycle", "sub_"+short(), "cus_"+short(), "", billingtest.PriceProMonthly, t0, months(1))),
		h.event(billing.EventSubscriptionUpdated, billingtest.Subscription(billingtest.Sub{ID: "sub_" + short(), Customer: "cus_" + short(),
			Price: billingtest.PriceScaleMonthly, Start: t0, End: months(1)})),
		h.event(billing.EventSubscriptionDeleted, billingtest.Subscription(billingtest.Sub{ID: "sub_" + short(),
			Price: billingtest.PriceScaleMonthly, Start: t0, End: months(1), Status: "canceled"})),
	}
	for i, payload := range cases {
		if err := h.deliver(payload); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if n, outcome := h.processed(eventID(t, payload)); n != 1 || !strings.Contains(outcome, "ignored") {
			t.Fatalf("case %d: %d %q", i, n, outcome)
		}
	}
	if !strings.Contains(h.logs.String(), "unknown account") {
		t.Fatal("unknown accounts not logged")
	}
	// Types we do not act on, and objects we cannot read, are recorded and answered.
	acct, _ := h.register()
	for _, payload := range [][]byte{
		h.event("customer.created", map[string]any{"id": "cus_" + short(), "object": "customer"}),
		h.event(billing.EventInvoicePaid, map[string]any{"id": "in_" + short(), "object": "invoice", "lines": "not a list"}),
		h.event(billing.EventInvoicePaid, billingtest.Invoice("in_"+short(), "manual", "sub_"+short(), "", acct.String(), billingtest.PriceProMonthly, t0, months(1))),
	} {
		if err := h.deliver(payload); err != nil {
			t.Fatal(err)
		}
		if _, outcome := h.processed(eventID(t, payload)); !strings.HasPrefix(outcome, "ignored") {
			t.Fatalf("outcome %q", outcome)
		}
	}
	if a := h.account(acct); a.Plan != "free" {
		t.Fatalf("plan %s", a.Plan)
	}
	// A subscription another account already has is not given to a second one.
	owner, _ := h.register()
	sub, _ := h.complete(owner, "pro", "monthly")
	clash := h.event(billing.EventCheckoutCompleted,
		billingtest.CheckoutSession("cs_"+short(), acct.String(), sub, "cus_"+short(), "pro", "monthly"))
	if err := h.deliver(clash); err != nil {
		t.Fatal(err)
	}
	if _, outcome := h.processed(eventID(t, clash)); !strings.Contains(outcome, "another account") || h.account(acct).Plan != "free" {
		t.Fatalf("outcome %q", outcome)
	}
}

func TestWebhookOutOfOrder(t *testing.T) {
	h := newHarness(t)

	t.Run("update before completion", func(t *testing.T) {
		acct, key := h.register()
		subID, cus := "sub_"+short(), "cus_"+short()
		created := h.clock.Now()
		update := billingtest.Event("evt_"+short(), billing.EventSubscriptionUpdated, created.Add(2*time.Second),
			billingtest.Subscription(billingtest.Sub{ID: subID, Customer: cus, AccountID: acct.String(),
				Price: billingtest.PriceScaleMonthly, Start: created, End: clock.AddMonths(created, 1)}))
		completion := billingtest.Event("evt_"+short(), billing.EventCheckoutCompleted, created,
			billingtest.CheckoutSession("cs_"+short(), acct.String(), subID, cus, "scale", "monthly"))
		h.mustDeliver(update)
		if a := h.account(acct); a.Plan != "scale" || h.limit(key) != 120 {
			t.Fatalf("after update: %+v", a)
		}
		h.mustDeliver(completion)
		a := h.account(acct)
		if a.Plan != "scale" || !a.PeriodEnd.Equal(clock.AddMonths(created, 1)) {
			t.Fatalf("after completion: %+v", a)
		}
		if p := h.paidGrants(acct); len(p) != 1 || p[0].Amount != 5000 {
			t.Fatalf("paid grants %+v", p)
		}
	})

	t.Run("cancellation stored before the account is known", func(t *testing.T) {
		acct, _ := h.register()
		subID, cus := "sub_"+short(), "cus_"+short()
		created := h.clock.Now()
		// No account id on the subscription and an unknown customer: stored for later.
		update := billingtest.Event("evt_"+short(), billing.EventSubscriptionUpdated, created.Add(5*time.Second),
			billingtest.Subscription(billingtest.Sub{ID: subID, Customer: cus, Price: billingtest.PriceProMonthly,
				Start: created, End: clock.AddMonths(created, 1), CancelAtPeriodEnd: true}))
		h.mustDeliver(update)
		if _, outcome := h.processed(eventID(t, update)); outcome != "ignored: unknown account" {
			t.Fatalf("outcome %q", outcome)
		}
		h.mustDeliver(billingtest.Event("evt_"+short(), billing.EventCheckoutCompleted, created,
			billingtest.CheckoutSession("cs_"+short(), acct.String(), subID, cus, "pro", "monthly")))
		a := h.account(acct)
		if a.Plan != "pro" || a.PendingPlan == nil || *a.PendingPlan != "free" || !a.PendingChangeAt.Equal(clock.AddMonths(created, 1)) {
			t.Fatalf("account %+v", a)
		}
	})

	t.Run("deletion before completion", func(t *testing.T) {
		acct, _ := h.register()
		subID, cus := "sub_"+short(), "cus_"+short()
		created := h.clock.Now()
		h.mustDeliver(billingtest.Event("evt_"+short(), billing.EventSubscriptionDeleted, created.Add(time.Minute),
			billingtest.Subscription(billingtest.Sub{ID: subID, Customer: cus, Price: billingtest.PriceProMonthly,
				Start: created, End: clock.AddMonths(created, 1), Status: "canceled"})))
		h.mustDeliver(billingtest.Event("evt_"+short(), billing.EventCheckoutCompleted, created,
			billingtest.CheckoutSession("cs_"+short(), acct.String(), subID, cus, "pro", "monthly")))
		if a := h.account(acct); a.Plan != "free" || len(h.paidGrants(acct)) != 0 {
			t.Fatalf("account %+v grants %+v", a, h.paidGrants(acct))
		}
	})

	t.Run("first invoice before completion", func(t *testing.T) {
		acct, _ := h.register()
		subID, cus := "sub_"+short(), "cus_"+short()
		now := h.clock.Now()
		h.mustDeliver(h.event(billing.EventInvoicePaid, billingtest.Invoice("in_"+short(), "subscription_create", subID, cus,
			acct.String(), billingtest.PriceProAnnual, now, clock.AddMonths(now, 12))))
		h.mustDeliver(h.event(billing.EventCheckoutCompleted,
			billingtest.CheckoutSession("cs_"+short(), acct.String(), subID, cus, "pro", "annual")))
		a := h.account(acct)
		if a.Plan != "pro" || a.BillingCycle != "annual" || !a.PeriodEnd.Equal(clock.AddMonths(now, 12)) {
			t.Fatalf("account %+v", a)
		}
		if p := h.paidGrants(acct); len(p) != 1 || p[0].Amount != 12000 {
			t.Fatalf("paid grants %+v", p)
		}
	})

	t.Run("stale update ignored", func(t *testing.T) {
		acct, _ := h.register()
		subID, cus := h.complete(acct, "scale", "monthly")
		now := h.clock.Now()
		sub := billingtest.Sub{ID: subID, Customer: cus, AccountID: acct.String(), Start: now, End: clock.AddMonths(now, 1)}
		down, same := sub, sub
		down.Price, same.Price = billingtest.PriceProMonthly, billingtest.PriceScaleMonthly
		h.mustDeliver(billingtest.Event("evt_"+short(), billing.EventSubscriptionUpdated, now.Add(20*time.Second), billingtest.Subscription(down)))
		stale := billingtest.Event("evt_"+short(), billing.EventSubscriptionUpdated, now.Add(10*time.Second), billingtest.Subscription(same))
		h.mustDeliver(stale)
		if _, outcome := h.processed(eventID(t, stale)); !strings.Contains(outcome, "stale") {
			t.Fatalf("outcome %q", outcome)
		}
		a := h.account(acct)
		if a.Plan != "scale" || a.PendingPlan == nil || *a.PendingPlan != "pro" {
			t.Fatalf("account %+v", a)
		}
	})
}

func TestNewSubscriptionReplacesOld(t *testing.T) {
	h := newHarness(t)
	acct, key := h.register()
	oldSub, cus := h.complete(acct, "pro", "monthly")
	h.clock.Advance(24 * time.Hour)
	newSub := "sub_" + short()
	h.mustDeliver(h.event(billing.EventCheckoutCompleted,
		billingtest.CheckoutSession("cs_"+short(), acct.String(), newSub, cus, "scale", "monthly")))
	a := h.account(acct)
	if a.Plan != "scale" || h.limit(key) != 120 {
		t.Fatalf("account %+v", a)
	}
	if p := h.paidGrants(acct); len(p) != 2 || p[1].Amount != 5000 || p[1].SourceRef != newSub {
		t.Fatalf("paid grants %+v", p)
	}
	// The pro subscription is cancelled at Stripe, prorated.
	reqs := h.stripe.Requests("DELETE", "/v1/subscriptions/"+oldSub)
	if len(reqs) != 1 || reqs[0].Form.Get("prorate") != "true" {
		t.Fatalf("cancel requests %v", reqs)
	}
	// Its end does not touch the account.
	h.mustDeliver(h.event(billing.EventSubscriptionDeleted, billingtest.Subscription(billingtest.Sub{ID: oldSub, Customer: cus,
		AccountID: acct.String(), Price: billingtest.PriceProMonthly, Start: t0, End: months(1), Status: "canceled"})))
	if a := h.account(acct); a.Plan != "scale" {
		t.Fatalf("plan %s after the old subscription ended", a.Plan)
	}
}
