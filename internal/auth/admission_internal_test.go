package auth

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/credits"
	"github.com/contentapi/contentapi/internal/ratelimit"
	"github.com/contentapi/contentapi/internal/testenv"
)

var admissionSeed = flag.Uint64("admission.seed", 0, "seed of TestLeasesNeverOverAdmit (0: from the clock)")

// admitted is one call's outcome: started before its lease could have been asked for, ended
// after it was used.
type admitted struct {
	start, end time.Time
	ok         bool
}

// TestLeasesNeverOverAdmit drives three gates (three replicas) on one Redis with random
// bursts of calls of one account, random pushes between them (credit changes, plan
// refreshes that drop leases and hand slots back) and a short window, and checks every
// admission against the rule the limit states, as an oracle sharing no code with the
// leases: at no instant were more than the limit admitted within the window before it. A
// call admitted between start and end counts for certain over [end, start + window), so
// for every admission's end T, the calls with end ≤ T < start + window number at most the
// limit.
func TestLeasesNeverOverAdmit(t *testing.T) {
	// Leases of one slot (7 a window), of two, and of up to twenty.
	for _, limit := range []int{7, 40, 400} {
		t.Run(strconv.Itoa(limit), func(t *testing.T) { leasesNeverOverAdmit(t, limit) })
	}
}

func leasesNeverOverAdmit(t *testing.T, limit int) {
	const (
		window = time.Second
		run    = 2500 * time.Millisecond
	)
	seed := *admissionSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (-admission.seed to repeat the schedule)", seed)
	ctx := context.Background()
	pool, rdb := testenv.Postgres(t), testenv.Redis(t)
	clk := clock.Real{}
	ledger := credits.NewLedger(pool, clk)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	gates := make([]*Gate, 3)
	for i := range gates {
		gates[i] = NewGate(pool, rdb, ledger, clk, log)
		gates[i].adm.window = window
		defer gates[i].Close()
	}
	accounts := NewAccounts(pool, ledger, clk, gates[0])
	reg, err := accounts.Register(ctx, uuid.NewString()+"@example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := accounts.SetPlan(ctx, reg.AccountID, "pro", limit, 0); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var calls []admitted
	var wg sync.WaitGroup
	deadline := time.Now().Add(run)
	for w := 0; w < 9; w++ {
		rng := rand.New(rand.NewPCG(seed, uint64(w)))
		g := gates[w%3]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				switch r := rng.IntN(100); {
				case r < 2: // a credit change pushed from this replica
					_ = g.Changed(ctx, reg.AccountID)
				case r < 4: // a plan refresh: every replica drops its lease
					_ = g.Refresh(ctx, reg.AccountID)
				case r < 30: // a pause between bursts (the load's shape, not a wait for anything)
					time.Sleep(time.Duration(rng.IntN(40)) * time.Millisecond)
				}
				start := time.Now()
				d, err := g.Admit(ctx, reg.AccountID)
				end := time.Now()
				if err != nil && d.Limit == 0 {
					t.Errorf("admit: %v", err)
					return
				}
				mu.Lock()
				calls = append(calls, admitted{start: start, end: end, ok: d.Allowed})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()

	var ok []admitted
	for _, c := range calls {
		if c.ok {
			ok = append(ok, c)
		}
	}
	slices.SortFunc(ok, func(a, b admitted) int { return a.end.Compare(b.end) })
	worst := 0
	for _, b := range ok {
		n := 0
		for _, a := range ok {
			if !a.end.After(b.end) && b.end.Before(a.start.Add(window)) {
				n++
			}
		}
		if n > worst {
			worst = n
		}
		if n > limit {
			t.Fatalf("%d calls admitted within a window before %s, over the limit of %d", n, b.end.Format("15:04:05.000"), limit)
		}
	}
	// Fewer than the limit in every window would pass the check above by admitting nothing:
	// with demand far above the limit, each window's slots are used, less the slots leases
	// hold when they are dropped or end.
	windows := float64(run) / float64(window+leaseTTL)
	t.Logf("%d calls, %d admitted (%.1f windows of %d), most in one window %d", len(calls), len(ok), windows, limit, worst)
	if worst < limit*3/4 || float64(len(ok)) < windows*float64(limit)*0.75 {
		t.Errorf("%d admitted, at most %d in a window: the limit of %d is not being used", len(ok), worst, limit)
	}
}

// TestDroppedLeaseSlotsFreeBeforeTheNextLease drops a lease holding unused slots (a plan
// change) and asks for the next lease at once, while the background hand-back of those
// slots is held back: the slots must be free when the next lease is counted (or a
// downgraded account is refused calls it never made), and the hand-back arriving late must
// not free them a second time (or the limit is over-admitted).
func TestDroppedLeaseSlotsFreeBeforeTheNextLease(t *testing.T) {
	const limit = 400
	ctx := context.Background()
	pool, rdb := testenv.Postgres(t), testenv.Redis(t)
	clk := clock.Real{}
	ledger := credits.NewLedger(pool, clk)
	g := NewGate(pool, rdb, ledger, clk, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer g.Close()
	hold := make(chan struct{})
	release := sync.OnceFunc(func() { close(hold) })
	defer release() // before Close, which waits for the hand-backs
	g.adm.backLate = func() { <-hold }
	accounts := NewAccounts(pool, ledger, clk, g)
	reg, err := accounts.Register(ctx, uuid.NewString()+"@example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := accounts.SetPlan(ctx, reg.AccountID, "pro", limit, 0); err != nil {
		t.Fatal(err)
	}
	admit := func() ratelimit.Decision {
		t.Helper()
		d, err := g.Admit(ctx, reg.AccountID)
		if err != nil || !d.Allowed {
			t.Fatalf("admit: %+v %v", d, err)
		}
		return d
	}

	// The first lease is one slot; the second, asked for at a high rate, is more.
	admit()
	admit()
	acc := g.adm.get(reg.AccountID)
	acc.mu.Lock()
	unused := acc.left
	acc.mu.Unlock()
	if unused < 2 {
		t.Fatalf("second lease left %d unused slots: the test needs a lease of several", unused)
	}

	if err := g.Refresh(ctx, reg.AccountID); err != nil {
		t.Fatal(err)
	}
	if d := admit(); d.Remaining != limit-3 {
		t.Fatalf("after a dropped lease of %d unused slots: %d remaining of %d, want %d", unused, d.Remaining, limit, limit-3)
	}

	release()
	g.adm.handing.Wait()
	acc.mu.Lock()
	left := acc.left
	acc.mu.Unlock()
	n, err := rdb.HGet(ctx, leaseKeys(reg.AccountID)[2], "n").Int()
	if err != nil {
		t.Fatal(err)
	}
	if n != 3+left {
		t.Fatalf("after the late hand-back the window counts %d slots, want %d (3 used, %d leased unused)", n, 3+left, left)
	}
}
