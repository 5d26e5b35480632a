package credits_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/credits"
	"github.com/contentapi/contentapi/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

var t0 = time.Date(2026, 1, 31, 10, 0, 0, 0, time.UTC)

// newAccount inserts a free account anchored at the clock's time, with no grants.
func newAccount(t *testing.T, clk clock.Clock) uuid.UUID {
	t.Helper()
	pool := testenv.Postgres(t)
	id := uuid.New()
	now := clk.Now()
	_, err := pool.Exec(context.Background(), `
		INSERT INTO accounts (id, email, plan, rate_limit, credits_monthly, period_anchor, period_start, period_end, created_at, updated_at)
		VALUES ($1, $2, 'free', 10, 50, $3, $3, $4, $3, $3)`, id, id.String()+"@example.com", now, clock.AddMonths(now, 1))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func grant(t *testing.T, l *credits.Ledger, acc uuid.UUID, amount int, expires time.Time, ref string) {
	t.Helper()
	n, err := l.Grant(context.Background(), credits.Grant{AccountID: acc, Amount: amount, IssuedAt: l.Now(),
		ExpiresAt: expires, Source: credits.SourceOperator, SourceRef: ref})
	if err != nil || n != amount {
		t.Fatalf("grant: %d, %v", n, err)
	}
}

func balance(t *testing.T, l *credits.Ledger, acc uuid.UUID) int {
	t.Helper()
	b, err := l.Balance(context.Background(), acc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestConcurrentReservationsNeverOverspend(t *testing.T) {
	clk := clock.NewManual(t0)
	l := credits.NewLedger(testenv.Postgres(t), clk)
	acc := newAccount(t, clk)
	grant(t, l, acc, 30, t0.Add(24*time.Hour), "a")
	grant(t, l, acc, 20, t0.Add(48*time.Hour), "b")

	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, refused := 0, 0
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := l.Reserve(context.Background(), acc, 5, "/v1/keywords/research")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case apperr.CodeOf(err) == apperr.InsufficientCredits:
				refused++
			default:
				t.Errorf("reserve: %v", err)
			}
		}()
	}
	wg.Wait()
	if ok != 10 || refused != 190 {
		t.Fatalf("succeeded %d, refused %d; want 10 and 190", ok, refused)
	}
	if b := balance(t, l, acc); b != 0 {
		t.Fatalf("balance %d, want 0", b)
	}
	var drawn, reserved int
	pool := testenv.Postgres(t)
	if err := pool.QueryRow(context.Background(), `
		SELECT (SELECT sum(d.amount) FROM reservation_draws d JOIN reservations r ON r.id = d.reservation_id WHERE r.account_id = $1),
		       (SELECT sum(amount) FROM reservations WHERE account_id = $1)`, acc).Scan(&drawn, &reserved); err != nil {
		t.Fatal(err)
	}
	if drawn != 50 || reserved != 50 {
		t.Fatalf("drawn %d, reserved %d; want 50 and 50", drawn, reserved)
	}
}

// The ledger's own Settle and Refund close a reservation once. Analysis calls settle through
// job.Service.Complete and Fail instead, which internal/job's settle tests race each other.
func TestSettleAndRefundHappenOnce(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewManual(t0)
	l := credits.NewLedger(testenv.Postgres(t), clk)
	acc := newAccount(t, clk)
	grant(t, l, acc, 50, t0.Add(24*time.Hour), "a")

	r1, err := l.Reserve(ctx, acc, 15, "/v1/content/audit")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := l.Settle(ctx, r1); !ok || err != nil {
		t.Fatalf("first settle: %v %v", ok, err)
	}
	if ok, err := l.Settle(ctx, r1); ok || err != nil {
		t.Fatalf("second settle changed something: %v %v", ok, err)
	}
	if ok, err := l.Refund(ctx, r1); ok || err != nil {
		t.Fatalf("refund after settle changed something: %v %v", ok, err)
	}
	if b := balance(t, l, acc); b != 35 {
		t.Fatalf("balance %d, want 35", b)
	}

	r2, err := l.Reserve(ctx, acc, 10, "/v1/keywords/gaps")
	if err != nil {
		t.Fatal(err)
	}
	// Refunds racing each other and a settle: exactly one wins.
	var wg sync.WaitGroup
	results := make(chan bool, 6)
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var ok bool
			var err error
			if i == 0 {
				ok, err = l.Settle(ctx, r2)
			} else {
				ok, err = l.Refund(ctx, r2)
			}
			if err != nil {
				t.Error(err)
			}
			results <- ok
		}(i)
	}
	wg.Wait()
	close(results)
	wins := 0
	for ok := range results {
		if ok {
			wins++
		}
	}
	if wins != 1 {
		t.Fatalf("%d of settle/refund took effect, want 1", wins)
	}
	if b := balance(t, l, acc); b != 35 && b != 25 {
		t.Fatalf("balance %d, want 35 (refunded) or 25 (settled)", b)
	}
}

func TestSpendsEarliestExpiryFirstAndSkipsExpired(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewManual(t0)
	pool := testenv.Postgres(t)
	l := credits.NewLedger(pool, clk)
	acc := newAccount(t, clk)
	grant(t, l, acc, 10, t0.Add(30*24*time.Hour), "late")
	grant(t, l, acc, 10, t0.Add(10*24*time.Hour), "early")

	if _, err := l.Reserve(ctx, acc, 4, "/x"); err != nil {
		t.Fatal(err)
	}
	remaining := func(ref string) int {
		var n int
		if err := pool.QueryRow(ctx, `SELECT remaining FROM credit_grants WHERE account_id = $1 AND source_ref = $2`, acc, ref).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if remaining("early") != 6 || remaining("late") != 10 {
		t.Fatalf("early %d late %d; want the earlier-expiring grant spent first", remaining("early"), remaining("late"))
	}
	// Mid-month the early grant expires: it no longer counts and is not spent.
	clk.Advance(15 * 24 * time.Hour)
	if b := balance(t, l, acc); b != 10 {
		t.Fatalf("balance %d after expiry, want 10", b)
	}
	if _, err := l.Reserve(ctx, acc, 10, "/x"); err != nil {
		t.Fatal(err)
	}
	if remaining("early") != 6 || remaining("late") != 0 {
		t.Fatalf("expired grant was spent: early %d late %d", remaining("early"), remaining("late"))
	}
	if _, err := l.Reserve(ctx, acc, 1, "/x"); apperr.CodeOf(err) != apperr.InsufficientCredits {
		t.Fatalf("reserve on empty balance: %v", err)
	}
}

func TestRefundSpansGrantsAndFailedReserveTakesNothing(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewManual(t0)
	l := credits.NewLedger(testenv.Postgres(t), clk)
	acc := newAccount(t, clk)
	grant(t, l, acc, 3, t0.Add(time.Hour), "a")
	grant(t, l, acc, 4, t0.Add(2*time.Hour), "b")
	if _, err := l.Reserve(ctx, acc, 8, "/x"); apperr.CodeOf(err) != apperr.InsufficientCredits {
		t.Fatalf("reserve 8 of 7: %v", err)
	}
	if b := balance(t, l, acc); b != 7 {
		t.Fatalf("a refused reservation took credits: balance %d", b)
	}
	r, err := l.Reserve(ctx, acc, 5, "/x")
	if err != nil {
		t.Fatal(err)
	}
	if b := balance(t, l, acc); b != 2 {
		t.Fatalf("balance %d, want 2", b)
	}
	if ok, err := l.Refund(ctx, r); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if b := balance(t, l, acc); b != 7 {
		t.Fatalf("balance after refund %d, want 7", b)
	}
}

func TestGrantCapAndIdempotence(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewManual(t0)
	l := credits.NewLedger(testenv.Postgres(t), clk)
	acc := newAccount(t, clk)
	g := credits.Grant{AccountID: acc, Amount: 1000, IssuedAt: t0, ExpiresAt: t0.AddDate(1, 0, 0),
		Source: credits.SourcePaid, SourceRef: "in_1", Cap: 2500}
	for i, want := range []int{1000, 0} { // the same invoice twice grants once
		if n, err := l.Grant(ctx, g); err != nil || n != want {
			t.Fatalf("grant %d: %d, %v; want %d", i, n, err, want)
		}
	}
	g.SourceRef = "in_2"
	if n, _ := l.Grant(ctx, g); n != 1000 {
		t.Fatalf("second month %d", n)
	}
	g.SourceRef = "in_3"
	if n, _ := l.Grant(ctx, g); n != 500 {
		t.Fatalf("third month cut to %d, want 500 (cap 2500)", n)
	}
	g.SourceRef = "in_4"
	if n, _ := l.Grant(ctx, g); n != 0 {
		t.Fatalf("at the cap granted %d", n)
	}
	if b := balance(t, l, acc); b != 2500 {
		t.Fatalf("balance %d, want 2500", b)
	}
}

func TestFreePeriodRenewsWithoutRollover(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewManual(t0) // registered 31 January
	l := credits.NewLedger(testenv.Postgres(t), clk)
	acc := newAccount(t, clk)
	if _, err := l.Grant(ctx, credits.Grant{AccountID: acc, Amount: 50, IssuedAt: t0, ExpiresAt: clock.AddMonths(t0, 1),
		Source: credits.SourceFreeMonthly, SourceRef: "0"}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Reserve(ctx, acc, 5, "/x"); err != nil {
		t.Fatal(err)
	}
	if ok, _, _ := l.RenewPeriod(ctx, acc); ok {
		t.Fatal("renewed within the first period")
	}
	clk.Set(time.Date(2026, 2, 28, 10, 0, 0, 0, time.UTC)) // the next period starts 28 February
	if b := balance(t, l, acc); b != 0 {
		t.Fatalf("balance %d once the period ended, want 0 (no rollover)", b)
	}
	ok, end, err := l.RenewPeriod(ctx, acc)
	if err != nil || !ok {
		t.Fatalf("renew: %v %v", ok, err)
	}
	if want := time.Date(2026, 3, 31, 10, 0, 0, 0, time.UTC); !end.Equal(want) {
		t.Fatalf("period end %v, want %v", end, want)
	}
	if b := balance(t, l, acc); b != 50 {
		t.Fatalf("balance %d after renewal, want 50", b)
	}
	if ok, _, _ := l.RenewPeriod(ctx, acc); ok {
		t.Fatal("renewed twice in one period")
	}
	// Months without requests: the periodic sweep catches up to the current period only.
	clk.Set(time.Date(2026, 6, 5, 0, 0, 0, 0, time.UTC))
	n, err := l.RenewDuePeriods(ctx)
	if err != nil || n < 1 {
		t.Fatalf("sweep renewed %d, %v", n, err)
	}
	if b := balance(t, l, acc); b != 50 {
		t.Fatalf("balance %d after months away, want 50", b)
	}
}

func TestMonthlyPeriodAt(t *testing.T) {
	anchor := time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		now        time.Time
		k          int
		start, end time.Time
	}{
		{anchor, 0, anchor, time.Date(2026, 2, 28, 12, 0, 0, 0, time.UTC)},
		{time.Date(2026, 2, 28, 11, 59, 0, 0, time.UTC), 0, anchor, time.Date(2026, 2, 28, 12, 0, 0, 0, time.UTC)},
		{time.Date(2026, 2, 28, 12, 0, 0, 0, time.UTC), 1, time.Date(2026, 2, 28, 12, 0, 0, 0, time.UTC), time.Date(2026, 3, 31, 12, 0, 0, 0, time.UTC)},
		{time.Date(2027, 1, 31, 12, 0, 0, 0, time.UTC), 12, time.Date(2027, 1, 31, 12, 0, 0, 0, time.UTC), time.Date(2027, 2, 28, 12, 0, 0, 0, time.UTC)},
	}
	for _, c := range cases {
		k, s, e := credits.MonthlyPeriodAt(anchor, c.now)
		if k != c.k || !s.Equal(c.start) || !e.Equal(c.end) {
			t.Errorf("MonthlyPeriodAt(%v) = %d %v %v; want %d %v %v", c.now, k, s, e, c.k, c.start, c.end)
		}
	}
}
