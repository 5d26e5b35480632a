package credits_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/credits"
	"github.com/contentapi/contentapi/internal/plan"
	"github.com/contentapi/contentapi/internal/testenv"
)

type grantRow struct {
	Amount              int
	IssuedAt, ExpiresAt time.Time
	Source, SourceRef   string
}

func grantsOf(t *testing.T, acc uuid.UUID) []grantRow {
	t.Helper()
	rows, err := testenv.Postgres(t).Query(context.Background(), `
		SELECT amount, issued_at, expires_at, source, source_ref FROM credit_grants WHERE account_id = $1 ORDER BY id`, acc)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[grantRow])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func enterprise(monthly int) plan.Plan {
	p := plan.Enterprise
	p.CreditsMonthly = monthly
	return p
}

func months(n int) time.Time { return clock.AddMonths(t0, n) }

// An operator's plan is granted at once, a repeat grants nothing, a higher allocation its
// difference once per period, a lower one nothing; back to free starts a free month.
func TestSetPlanGrantsWhatTheChangeBrings(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewManual(t0)
	l := credits.NewLedger(testenv.Postgres(t), clk)
	acc := newAccount(t, clk)
	clk.Advance(10 * 24 * time.Hour)
	now := clk.Now()
	steps := []struct {
		name       string
		p          plan.Plan
		granted    int
		start, end time.Time
	}{
		{"free to enterprise starts a period now", enterprise(100), 100, now, clock.AddMonths(now, 1)},
		{"the same again grants nothing", enterprise(100), 0, now, clock.AddMonths(now, 1)},
		{"a higher allocation brings the difference", enterprise(250), 150, now, clock.AddMonths(now, 1)},
		{"a lower one waits for the next period", enterprise(100), 0, now, clock.AddMonths(now, 1)},
		{"raising again in the period brings nothing twice", enterprise(250), 0, now, clock.AddMonths(now, 1)},
		{"pro without Stripe is operator-managed too", plan.Pro, 750, now, clock.AddMonths(now, 1)},
	}
	for _, s := range steps {
		ch, err := l.SetPlan(ctx, acc, s.p)
		if err != nil || ch.Granted != s.granted || !ch.PeriodStart.Equal(s.start) || !ch.PeriodEnd.Equal(s.end) {
			t.Fatalf("%s: %+v %v; want %d granted, period %v..%v", s.name, ch, err, s.granted, s.start, s.end)
		}
	}
	if b := balance(t, l, acc); b != 1000 {
		t.Fatalf("balance %d, want 100 + 150 + 750", b)
	}
	for _, g := range grantsOf(t, acc) {
		if g.Source != credits.SourceOperatorMonthly || !g.ExpiresAt.Equal(clock.AddMonths(g.IssuedAt, 12)) {
			t.Fatalf("grant %+v: want an operator monthly grant lasting 12 months", g)
		}
	}
	// Back to free: a free month starts now; the operator's credits stay until they expire.
	clk.Advance(24 * time.Hour)
	ch, err := l.SetPlan(ctx, acc, plan.Free)
	if err != nil || ch.Granted != 50 || !ch.PeriodStart.Equal(clk.Now()) {
		t.Fatalf("to free: %+v %v", ch, err)
	}
	if b := balance(t, l, acc); b != 1050 {
		t.Fatalf("balance %d on free, want 1050", b)
	}
	u, err := l.Usage(ctx, acc)
	if err != nil || u.Plan != "free" || u.Limit() != 50 || u.BillingCycle != "monthly" {
		t.Fatalf("usage %+v %v", u, err)
	}

	// An account paying through Stripe is refused, and nothing changes.
	sub := newAccount(t, clk)
	pool := testenv.Postgres(t)
	if _, err := pool.Exec(ctx, `UPDATE accounts SET plan = 'pro', credits_monthly = 1000, stripe_subscription_id = $2 WHERE id = $1`,
		sub, "sub_"+sub.String()); err != nil {
		t.Fatal(err)
	}
	_, err = l.SetPlan(ctx, sub, enterprise(100))
	if apperr.CodeOf(err) != apperr.AlreadySubscribed || !strings.Contains(err.Error(), "Stripe") {
		t.Fatalf("set plan on a Stripe account: %v", err)
	}
	if u, _ := l.Usage(ctx, sub); u.Plan != "pro" || u.CreditsMonthly != 1000 || u.Balance != 0 {
		t.Fatalf("a refused change changed %+v", u)
	}
	if _, err := l.SetPlan(ctx, uuid.New(), enterprise(100)); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("unknown account: %v", err)
	}
}

// Months the worker missed are each granted to an operator-managed account, issued at
// their own period's start; those whose credits would already have expired are skipped.
func TestOperatorPeriodsCatchUp(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewManual(t0)
	l := credits.NewLedger(testenv.Postgres(t), clk)
	acc := newAccount(t, clk)
	if _, err := l.SetPlan(ctx, acc, enterprise(100)); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Reserve(ctx, acc, 100, "/x"); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := l.RenewPeriod(ctx, acc); ok || err != nil {
		t.Fatalf("renewed within the period: %v %v", ok, err)
	}
	clk.Set(months(2).Add(24 * time.Hour))
	if n, err := l.RenewDuePeriods(ctx); err != nil || n < 1 {
		t.Fatalf("renewed %d: %v", n, err)
	}
	if b := balance(t, l, acc); b != 200 {
		t.Fatalf("balance %d after two missed months, want 200", b)
	}
	u, err := l.Usage(ctx, acc)
	if err != nil || u.Used != 0 || !u.PeriodStart.Equal(months(2)) || !u.PeriodEnd.Equal(months(3)) {
		t.Fatalf("usage %+v %v", u, err)
	}
	// Sixteen months on: periods 3 and 4 would have expired; 5, 6 and 7 fill the cap.
	clk.Set(months(16))
	if _, _, err := l.RenewPeriod(ctx, acc); err != nil {
		t.Fatal(err)
	}
	var issued []time.Time
	for _, g := range grantsOf(t, acc) {
		if !g.ExpiresAt.Equal(clock.AddMonths(g.IssuedAt, 12)) {
			t.Fatalf("grant %+v does not last 12 months", g)
		}
		issued = append(issued, g.IssuedAt)
	}
	want := []time.Time{t0, months(1), months(2), months(5), months(6), months(7)}
	if len(issued) != len(want) {
		t.Fatalf("grants issued %v, want %v", issued, want)
	}
	for i := range want {
		if !issued[i].Equal(want[i]) {
			t.Fatalf("grants issued %v, want %v", issued, want)
		}
	}
	if b := balance(t, l, acc); b != 300 {
		t.Fatalf("balance %d, want the cap 300", b)
	}
}

// No grant outlives the 12-month credit lifetime; one that would is refused, granting nothing.
func TestGrantRefusedPastTwelveMonths(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewManual(t0)
	l := credits.NewLedger(testenv.Postgres(t), clk)
	acc := newAccount(t, clk)
	g := credits.Grant{AccountID: acc, Amount: 10, IssuedAt: t0, ExpiresAt: months(12).Add(time.Second),
		Source: credits.SourceOperator, SourceRef: "long"}
	n, err := l.Grant(ctx, g)
	if apperr.CodeOf(err) != apperr.Validation || n != 0 || !strings.Contains(err.Error(), "at most 12 months") {
		t.Fatalf("a grant for 12 months and a second: %d %v", n, err)
	}
	if b := balance(t, l, acc); b != 0 {
		t.Fatalf("a refused grant granted %d", b)
	}
	g.ExpiresAt = months(12)
	if n, err := l.Grant(ctx, g); n != 10 || err != nil {
		t.Fatalf("a 12-month grant: %d %v", n, err)
	}
}
