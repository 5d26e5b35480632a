package billing_test

import (
	"strings"
	"testing"
	"time"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/billing"
	"github.com/contentapi/contentapi/internal/billing/billingtest"
	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/credits"
)

// TestCreditRules walks the credit rules of docs/api.md and plan transitions through the webhook
// handler and the ledger, moving the clock instead of waiting.
func TestCreditRules(t *testing.T) {
	h := newHarness(t)

	t.Run("free credits reset monthly without rollover", func(t *testing.T) {
		h.clock.Set(t0)
		acct, _ := h.register()
		h.spend(acct, 20)
		if b := h.balance(acct); b != 30 {
			t.Fatalf("balance %d", b)
		}
		for i := 1; i <= 3; i++ {
			h.clock.Set(months(i))
			if ok, _, err := h.ledger.RenewPeriod(h.ctx, acct); err != nil || !ok {
				t.Fatalf("renew %d: %v %v", i, ok, err)
			}
			if b := h.balance(acct); b != 50 {
				t.Fatalf("month %d: balance %d, want 50 (no rollover)", i, b)
			}
		}
	})

	t.Run("paid rollover is capped at three monthly allocations", func(t *testing.T) {
		h.clock.Set(t0)
		acct, _ := h.register()
		sub, cus := h.complete(acct, "pro", "monthly")
		if b := h.balance(acct); b != 1050 {
			t.Fatalf("balance %d", b)
		}
		want := []struct{ granted, balance int }{
			{1000, 2000}, // the free 50 expired with its period
			{1000, 3000},
			{0, 3000}, // at the cap: the grant is cut to nothing
		}
		for i, w := range want {
			h.clock.Set(months(i + 1))
			h.renew(sub, cus, billingtest.PriceProMonthly, months(i+1), months(i+2))
			p := h.paidGrants(acct)
			got := 0
			if len(p) == i+2 {
				got = p[i+1].Amount
			}
			if got != w.granted || h.balance(acct) != w.balance {
				t.Fatalf("renewal %d: granted %d balance %d, want %d %d", i+1, got, h.balance(acct), w.granted, w.balance)
			}
		}
		h.spend(acct, 400)
		h.clock.Set(months(4))
		h.renew(sub, cus, billingtest.PriceProMonthly, months(4), months(5))
		p := h.paidGrants(acct)
		if last := p[len(p)-1]; last.Amount != 400 || h.balance(acct) != 3000 {
			t.Fatalf("cut grant %+v balance %d", last, h.balance(acct))
		}
		a := h.account(acct)
		if !a.PeriodStart.Equal(months(4)) || !a.PeriodEnd.Equal(months(5)) {
			t.Fatalf("period %v..%v", a.PeriodStart, a.PeriodEnd)
		}
	})

	t.Run("credits expire 12 months after issue, oldest spent first", func(t *testing.T) {
		h.clock.Set(t0)
		acct, _ := h.register()
		sub, cus := h.complete(acct, "pro", "monthly")
		h.clock.Set(months(1))
		h.renew(sub, cus, billingtest.PriceProMonthly, months(1), months(2))
		h.spend(acct, 300)
		p := h.paidGrants(acct)
		if p[0].Remaining != 700 || p[1].Remaining != 1000 {
			t.Fatalf("spent from %+v, want the older grant first", p)
		}
		for _, g := range p {
			if !g.ExpiresAt.Equal(clock.AddMonths(g.IssuedAt, 12)) {
				t.Fatalf("grant %+v does not expire 12 months after issue", g)
			}
		}
		h.clock.Set(months(12).Add(-time.Second))
		if b := h.balance(acct); b != 1700 {
			t.Fatalf("balance %d before expiry", b)
		}
		h.clock.Set(months(12))
		if b := h.balance(acct); b != 1000 {
			t.Fatalf("balance %d after the first grant expired", b)
		}
		h.clock.Set(months(13))
		if b := h.balance(acct); b != 0 {
			t.Fatalf("balance %d after both expired", b)
		}
		// No overage: an empty balance refuses the call.
		_, err := h.ledger.Reserve(h.ctx, acct, 5, "/v1/test")
		wantCode(t, err, apperr.InsufficientCredits, "balance is 0")
	})

	t.Run("annual billing grants the year upfront", func(t *testing.T) {
		h.clock.Set(t0)
		acct, _ := h.register()
		sub, cus := h.complete(acct, "scale", "annual")
		a := h.account(acct)
		if a.BillingCycle != "annual" || !a.PeriodEnd.Equal(months(12)) || h.balance(acct) != 60050 {
			t.Fatalf("account %+v balance %d", a, h.balance(acct))
		}
		h.spend(acct, 10000)
		h.clock.Set(months(12))
		h.renew(sub, cus, billingtest.PriceScaleAnnual, months(12), months(24))
		if p := h.paidGrants(acct); len(p) != 2 || p[1].Amount != 60000 || h.balance(acct) != 60000 {
			t.Fatalf("grants %+v balance %d", p, h.balance(acct))
		}
	})

	t.Run("an upgrade takes effect at once", func(t *testing.T) {
		h.clock.Set(t0)
		acct, key := h.register()
		sub, cus := h.complete(acct, "pro", "monthly")
		h.clock.Advance(10 * 24 * time.Hour)
		h.mustDeliver(h.event(billing.EventSubscriptionUpdated, billingtest.Subscription(billingtest.Sub{ID: sub, Customer: cus,
			AccountID: acct.String(), Price: billingtest.PriceScaleMonthly, Start: t0, End: months(1)})))
		a := h.account(acct)
		if a.Plan != "scale" || a.RateLimit != 120 || a.CreditsMonthly != 5000 || a.PendingChangeAt != nil || h.limit(key) != 120 {
			t.Fatalf("account %+v", a)
		}
		// The difference between the allocations comes at once.
		if b := h.balance(acct); b != 50+1000+4000 {
			t.Fatalf("balance %d", b)
		}
	})

	t.Run("a downgrade waits for the next billing period", func(t *testing.T) {
		h.clock.Set(t0)
		acct, key := h.register()
		sub, cus := h.complete(acct, "scale", "monthly")
		h.clock.Advance(5 * 24 * time.Hour)
		h.mustDeliver(h.event(billing.EventSubscriptionUpdated, billingtest.Subscription(billingtest.Sub{ID: sub, Customer: cus,
			AccountID: acct.String(), Price: billingtest.PriceProMonthly, Start: t0, End: months(1)})))
		a := h.account(acct)
		if a.Plan != "scale" || a.RateLimit != 120 || a.PendingPlan == nil || *a.PendingPlan != "pro" ||
			*a.PendingBillingCycle != "monthly" || !a.PendingChangeAt.Equal(months(1)) || h.limit(key) != 120 {
			t.Fatalf("account %+v", a)
		}
		h.spend(acct, 4500)
		h.clock.Set(months(1))
		h.renew(sub, cus, billingtest.PriceProMonthly, months(1), months(2))
		a = h.account(acct)
		if a.Plan != "pro" || a.RateLimit != 60 || a.CreditsMonthly != 1000 || a.PendingChangeAt != nil || h.limit(key) != 60 {
			t.Fatalf("account after renewal %+v", a)
		}
		// The new period's plan sets the allocation: pro's 1000.
		if b := h.balance(acct); b != 550+1000 {
			t.Fatalf("balance %d", b)
		}
	})

	t.Run("a downgrade due at renewal applies when the price is not ours", func(t *testing.T) {
		h.clock.Set(t0)
		acct, _ := h.register()
		sub, cus := h.complete(acct, "scale", "monthly")
		h.mustDeliver(h.event(billing.EventSubscriptionUpdated, billingtest.Subscription(billingtest.Sub{ID: sub, Customer: cus,
			AccountID: acct.String(), Price: billingtest.PriceProMonthly, Start: t0, End: months(1)})))
		h.clock.Set(months(1))
		h.renew(sub, cus, "price_legacy", months(1), months(2))
		if a := h.account(acct); a.Plan != "pro" || a.PendingChangeAt != nil {
			t.Fatalf("account %+v", a)
		}
	})

	t.Run("annual to monthly converts at renewal", func(t *testing.T) {
		h.clock.Set(t0)
		acct, _ := h.register()
		sub, cus := h.complete(acct, "pro", "annual")
		h.clock.Advance(30 * 24 * time.Hour)
		h.mustDeliver(h.event(billing.EventSubscriptionUpdated, billingtest.Subscription(billingtest.Sub{ID: sub, Customer: cus,
			AccountID: acct.String(), Price: billingtest.PriceProMonthly, Start: t0, End: months(12)})))
		a := h.account(acct)
		if a.BillingCycle != "annual" || a.PendingBillingCycle == nil || *a.PendingBillingCycle != "monthly" || !a.PendingChangeAt.Equal(months(12)) {
			t.Fatalf("account %+v", a)
		}
		// A renewal between (none for annual) would not apply it early; the year's end does.
		h.clock.Set(months(12))
		h.renew(sub, cus, billingtest.PriceProMonthly, months(12), months(13))
		a = h.account(acct)
		if a.BillingCycle != "monthly" || a.Plan != "pro" || a.PendingChangeAt != nil || !a.PeriodEnd.Equal(months(13)) {
			t.Fatalf("account after renewal %+v", a)
		}
		if p := h.paidGrants(acct); p[len(p)-1].Amount != 1000 || h.balance(acct) != 1000 {
			t.Fatalf("grants %+v balance %d", p, h.balance(acct))
		}
	})

	t.Run("monthly to annual takes effect at once", func(t *testing.T) {
		h.clock.Set(t0)
		acct, _ := h.register()
		sub, cus := h.complete(acct, "pro", "monthly")
		h.clock.Advance(24 * time.Hour)
		now := h.clock.Now()
		h.mustDeliver(h.event(billing.EventSubscriptionUpdated, billingtest.Subscription(billingtest.Sub{ID: sub, Customer: cus,
			AccountID: acct.String(), Price: billingtest.PriceProAnnual, Start: now, End: clock.AddMonths(now, 12)})))
		a := h.account(acct)
		if a.BillingCycle != "annual" || !a.PeriodEnd.Equal(clock.AddMonths(now, 12)) || h.balance(acct) != 50+12000 {
			t.Fatalf("account %+v balance %d", a, h.balance(acct))
		}
	})

	t.Run("a cancellation is shown, then the deletion returns the account to free", func(t *testing.T) {
		h.clock.Set(t0)
		acct, key := h.register()
		sub, cus := h.complete(acct, "pro", "monthly")
		h.spend(acct, 200) // the free 50 first: they expire first
		h.clock.Set(months(1))
		h.renew(sub, cus, billingtest.PriceProMonthly, months(1), months(2))
		h.clock.Advance(3 * 24 * time.Hour)
		subObj := billingtest.Sub{ID: sub, Customer: cus, AccountID: acct.String(), Price: billingtest.PriceProMonthly,
			Start: months(1), End: months(2), CancelAtPeriodEnd: true}
		h.mustDeliver(h.event(billing.EventSubscriptionUpdated, billingtest.Subscription(subObj)))
		a := h.account(acct)
		if a.Plan != "pro" || a.PendingPlan == nil || *a.PendingPlan != "free" || !a.PendingChangeAt.Equal(months(2)) {
			t.Fatalf("account %+v", a)
		}
		h.clock.Set(months(2))
		subObj.Status = "canceled"
		h.mustDeliver(h.event(billing.EventSubscriptionDeleted, billingtest.Subscription(subObj)))
		a = h.account(acct)
		if a.Plan != "free" || a.RateLimit != 10 || a.CreditsMonthly != 50 || a.BillingCycle != "monthly" ||
			a.PendingChangeAt != nil || !a.PeriodStart.Equal(months(2)) || !a.PeriodEnd.Equal(months(3)) ||
			a.StripeCustomerID == nil || *a.StripeCustomerID != cus || h.limit(key) != 10 {
			t.Fatalf("account %+v", a)
		}
		// Paid credits stay until they expire; a new free period starts with its 50.
		if b := h.balance(acct); b != 850+1000+50 {
			t.Fatalf("balance %d", b)
		}
		// Later free months renew, whatever the earlier free periods were called.
		for i := 3; i <= 4; i++ {
			h.clock.Set(months(i))
			if ok, _, err := h.ledger.RenewPeriod(h.ctx, acct); err != nil || !ok {
				t.Fatalf("renew: %v %v", ok, err)
			}
			if b := h.balance(acct); b != 850+1000+50 {
				t.Fatalf("month %d balance %d", i, b)
			}
		}
		var free, refs []string
		for _, g := range h.grants(acct) {
			if g.Source == credits.SourceFreeMonthly {
				free = append(free, g.SourceRef)
			}
		}
		// Named by anchor and period: the earlier run's grant and the new run's 0, 1, 2.
		for _, r := range free[1:] {
			refs = append(refs, r[strings.Index(r, ":"):])
		}
		if len(free) != 4 || strings.Join(refs, ",") != ":0,:1,:2" || strings.SplitN(free[0], ":", 2)[0] == strings.SplitN(free[1], ":", 2)[0] {
			t.Fatalf("free grant refs %v", free)
		}
		// And it can subscribe again.
		if _, err := h.svc.Checkout(h.ctx, acct, validRequest()); err != nil {
			t.Fatal(err)
		}
	})
}
