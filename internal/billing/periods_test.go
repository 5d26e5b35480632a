package billing_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"github.com/contentapi/contentapi/internal/billing/billingtest"
	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/credits"
	"github.com/contentapi/contentapi/jobs"
)

// TestEveryPlanEarnsItsCredits moves the clock month by month over one account of each
// kind (free, Stripe monthly, Stripe annual, and a plan an operator set without Stripe) and,
// as the worker's scheduler does, runs the renewal task at each step; Stripe's accounts
// also get their paid renewal invoices. After each renewal it checks the balance, the
// usage (credits used and limit) and the period.
func TestEveryPlanEarnsItsCredits(t *testing.T) {
	h := newHarness(t)
	h.clock.Set(t0)
	mux := asynq.NewServeMux()
	(&jobs.Maintenance{Ledger: h.ledger, Log: slog.New(slog.NewTextHandler(h.logs, nil))}).Register(mux)
	renewTask := func() {
		t.Helper()
		if err := mux.ProcessTask(h.ctx, jobs.NewRenewPeriodsTask()); err != nil {
			t.Fatalf("renewal task: %v", err)
		}
	}
	type want struct {
		balance, used, limit int
		start, end           time.Time
	}
	check := func(what string, acct uuid.UUID, w want) {
		t.Helper()
		u, err := h.ledger.Usage(h.ctx, acct)
		if err != nil {
			t.Fatal(err)
		}
		if u.Balance != w.balance || u.Used != w.used || u.Limit() != w.limit || !u.PeriodStart.Equal(w.start) || !u.PeriodEnd.Equal(w.end) {
			t.Fatalf("%s: balance %d used %d limit %d period %v..%v; want %d %d %d %v..%v", what, u.Balance, u.Used, u.Limit(),
				u.PeriodStart.UTC(), u.PeriodEnd.UTC(), w.balance, w.used, w.limit, w.start, w.end)
		}
	}

	free, _ := h.register()
	monthly, _ := h.register()
	subM, cusM := h.complete(monthly, "pro", "monthly")
	annual, _ := h.register()
	subA, cusA := h.complete(annual, "scale", "annual")
	operator, _ := h.register()
	if err := h.accounts.SetPlan(h.ctx, operator, "enterprise", 300, 100); err != nil {
		t.Fatal(err)
	}
	// Set without Stripe: granted at once, in a monthly period starting now.
	check("operator when set", operator, want{150, 0, 100, t0, months(1)})

	// Each month every account spends; the free month's 50 go first (they expire first).
	spend := map[uuid.UUID]int{free: 20, monthly: 500, annual: 1000, operator: 10}
	steps := []struct {
		free, monthly, annual, operator int // balances after the month's renewal
	}{
		{50, 550 + 1000, 59050, 140 - 40 + 100}, // the free 40 left expired with month 0
		{50, 1050 + 1000, 58050, 190 + 100},
		{50, 1550 + 1000, 57050, 300}, // 280 + 100 cut to the cap, 3 x 100
		{50, 2050 + 950, 56050, 300},  // 2050 + 1000 cut to the cap, 3 x 1000
	}
	for acct, n := range spend {
		h.spend(acct, n)
	}
	lastMonthly := 1050
	for i, s := range steps {
		m := i + 1
		h.clock.Set(months(m))
		renewTask()
		// The task leaves Stripe's accounts to their invoices: nothing granted, period kept.
		check("Stripe monthly before its invoice", monthly, want{lastMonthly - 500, 500, 1000, months(m - 1), months(m)})
		lastMonthly = s.monthly
		h.renew(subM, cusM, billingtest.PriceProMonthly, months(m), months(m+1))
		check("free", free, want{s.free, 0, 50, months(m), months(m + 1)})
		check("Stripe monthly", monthly, want{s.monthly, 0, 1000, months(m), months(m + 1)})
		check("Stripe annual", annual, want{s.annual, 1000 * m, 60000, t0, months(12)})
		check("operator", operator, want{s.operator, 0, 100, months(m), months(m + 1)})
		for acct, n := range spend {
			h.spend(acct, n)
		}
		check("operator after a call", operator, want{s.operator - 10, 10, 100, months(m), months(m + 1)})
	}

	// The worker was away for months (or the calls stopped): a year from the start, the
	// task catches every account up to the period containing now.
	h.clock.Set(months(12))
	renewTask()
	check("free after a year", free, want{50, 0, 50, months(12), months(13)})
	// The operator's missed months are granted, each issued at its own period's start and
	// expiring 12 months later, within the rollover cap; the first months' grants expired.
	check("operator after a year", operator, want{300, 0, 100, months(12), months(13)})
	for _, g := range h.grants(operator) {
		if g.Source == credits.SourceOperatorMonthly && !g.ExpiresAt.Equal(clock.AddMonths(g.IssuedAt, 12)) {
			t.Fatalf("operator grant %+v does not expire 12 months after issue", g)
		}
	}
	// A Stripe monthly account whose invoice is late keeps its period until it is paid.
	check("Stripe monthly with no invoice", monthly, want{3000 - 500, 500, 1000, months(4), months(5)})
	// The annual year ended: its upfront grant expired, the next year's invoice brings the next.
	check("Stripe annual at the year's end", annual, want{0, 5000, 60000, t0, months(12)})
	h.renew(subA, cusA, billingtest.PriceScaleAnnual, months(12), months(24))
	check("Stripe annual renewed", annual, want{60000, 0, 60000, months(12), months(24)})
}
