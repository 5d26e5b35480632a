package job_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/job"
	"github.com/contentapi/contentapi/internal/testenv"
)

// These tests race the settlement paths production runs (job.Service.Complete's one
// statement, Fail's transaction through the ledger's refund, the sweep) against each other
// on real PostgreSQL, and check the ledger balances afterwards.

// together runs the functions at the same moment (as near as goroutines allow) and waits.
func together(fns ...func()) {
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	for _, fn := range fns {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			fn()
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
}

// outcome is what one settlement call reported.
type outcome struct {
	ok  bool
	err error
}

func complete(h *harness, id uuid.UUID, into *outcome) func() {
	return func() {
		into.ok, into.err = h.jobs.Complete(context.Background(), id, map[string]any{"clusters": []any{}})
	}
}

func fail(h *harness, id uuid.UUID, into *outcome) func() {
	return func() { into.ok, into.err = h.jobs.Fail(context.Background(), id, "PROVIDER_ERROR", "test") }
}

// checkLedger checks the account's books: every job's reservation closed the way the job
// ended (settled for the job's cost with success, or refunded with a success that cost
// nothing; refunded with failure; reserved while queued or running),
// every reservation drawn in full, no grant below zero or above its amount, and what the
// grants lost equal to what is settled or still reserved. It returns the balance.
func checkLedger(t *testing.T, acc uuid.UUID) int {
	t.Helper()
	var mismatched, partial, badGrants, granted, remaining, spent int
	err := testenv.Postgres(t).QueryRow(context.Background(), `
		SELECT
			(SELECT count(*) FROM jobs j JOIN reservations r ON r.id = j.reservation_id WHERE j.account_id = $1
				AND NOT ((j.status = 'succeeded' AND r.status = 'settled' AND r.amount = j.cost)
					OR (j.status = 'succeeded' AND r.status = 'refunded' AND j.cost = 0) OR (j.status = 'failed' AND r.status = 'refunded')
					OR (j.status IN ('queued', 'running') AND r.status = 'reserved'))),
			(SELECT count(*) FROM reservations r WHERE r.account_id = $1
				AND r.amount <> (SELECT COALESCE(sum(d.amount), 0) FROM reservation_draws d WHERE d.reservation_id = r.id)),
			(SELECT count(*) FROM credit_grants WHERE account_id = $1 AND (remaining < 0 OR remaining > amount)),
			(SELECT COALESCE(sum(amount), 0) FROM credit_grants WHERE account_id = $1),
			(SELECT COALESCE(sum(remaining), 0) FROM credit_grants WHERE account_id = $1),
			(SELECT COALESCE(sum(amount), 0) FROM reservations WHERE account_id = $1 AND status IN ('settled', 'reserved'))`,
		acc).Scan(&mismatched, &partial, &badGrants, &granted, &remaining, &spent)
	if err != nil {
		t.Fatal(err)
	}
	if mismatched != 0 || partial != 0 || badGrants != 0 || granted-remaining != spent {
		t.Fatalf("ledger of %s: %d jobs closed the wrong way, %d reservations not drawn in full, %d grants out of range, "+
			"granted %d − remaining %d ≠ settled or reserved %d", acc, mismatched, partial, badGrants, granted, remaining, spent)
	}
	return remaining
}

// Complete racing Fail on the same job, thirty times over: exactly one wins each race, the
// job ends as the winner said, its reservation is settled xor refunded, and the balance is
// the grants less the successes.
func TestCompleteRacesFail(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	acc := h.account(t, 100) // 150 credits: 30 jobs of 5
	ids := make([]uuid.UUID, 30)
	for i := range ids {
		ids[i] = h.submit(t, acc, fmt.Sprint("race ", i)).ID
	}
	completes, fails := make([]outcome, len(ids)), make([]outcome, len(ids))
	var fns []func()
	for i, id := range ids {
		fns = append(fns, complete(h, id, &completes[i]), fail(h, id, &fails[i]))
	}
	together(fns...)

	succeeded := 0
	for i, id := range ids {
		c, f := completes[i], fails[i]
		if c.err != nil || f.err != nil || c.ok == f.ok {
			t.Fatalf("job %d: complete %v %v, fail %v %v; want exactly one to win", i, c.ok, c.err, f.ok, f.err)
		}
		want, wantRes := job.Failed, "refunded"
		if c.ok {
			want, wantRes = job.Succeeded, "settled"
			succeeded++
		}
		if s, r := state(t, id); s != want || r != wantRes {
			t.Fatalf("job %d: %s with reservation %s; the winner said %s", i, s, r, want)
		}
	}
	if b := checkLedger(t, acc); b != 150-5*succeeded {
		t.Fatalf("balance %d after %d successes, want %d", b, succeeded, 150-5*succeeded)
	}
	t.Logf("%d of %d races won by Complete", succeeded, len(ids))
}

// Two Completes, or two Fails, of one job at once: one wins; the job is settled once or
// refunded once (a double refund would show as credits the account never had).
func TestDoubleCompleteAndDoubleFail(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	acc := h.account(t, 0) // 50 credits: 10 jobs
	var completed, failed []uuid.UUID
	for i := range 5 {
		completed = append(completed, h.submit(t, acc, fmt.Sprint("complete twice ", i)).ID)
		failed = append(failed, h.submit(t, acc, fmt.Sprint("fail twice ", i)).ID)
	}
	outs := make([]outcome, 20)
	var fns []func()
	for i := range 5 {
		fns = append(fns, complete(h, completed[i], &outs[4*i]), complete(h, completed[i], &outs[4*i+1]),
			fail(h, failed[i], &outs[4*i+2]), fail(h, failed[i], &outs[4*i+3]))
	}
	together(fns...)
	for i := 0; i < len(outs); i += 2 {
		a, b := outs[i], outs[i+1]
		if a.err != nil || b.err != nil || a.ok == b.ok {
			t.Fatalf("pair %d: %v %v / %v %v; want exactly one to win", i/2, a.ok, a.err, b.ok, b.err)
		}
	}
	for _, id := range completed {
		if s, r := state(t, id); s != job.Succeeded || r != "settled" {
			t.Fatalf("completed twice: %s, %s", s, r)
		}
	}
	for _, id := range failed {
		if s, r := state(t, id); s != job.Failed || r != "refunded" {
			t.Fatalf("failed twice: %s, %s", s, r)
		}
	}
	if b := checkLedger(t, acc); b != 25 {
		t.Fatalf("balance %d, want 25 (five settled, five refunded once)", b)
	}
}

// The sweep refunds a job whose last runner went silent; that runner's Complete, late or
// racing the sweep, then changes nothing: the caller is not charged for a refunded job.
func TestCompleteAfterOrDuringSweepRefund(t *testing.T) {
	clk := clock.NewManual(time.Now())
	cfg := testCfg
	cfg.MaxAttempts = 1
	h := newHarness(t, harnessOpts{clock: clk, cfg: cfg})
	acc := h.account(t, 0)
	late := h.submit(t, acc, "complete after sweep")
	racing := make([]uuid.UUID, 8)
	for i := range racing {
		racing[i] = h.submit(t, acc, fmt.Sprint("complete during sweep ", i)).ID
	}
	if _, ok, err := h.jobs.Claim(context.Background(), late.ID); !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
	clk.Advance(cfg.StaleAfter + time.Second) // its runner silent past StaleAfter, no attempt left

	// Late: the sweep has refunded the job before its runner's Complete arrives.
	if _, err := h.jobs.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s, r := state(t, late.ID); s != job.Failed || r != "refunded" {
		t.Fatalf("swept job: %s, %s; want failed and refunded", s, r)
	}
	if ok, err := h.jobs.Complete(context.Background(), late.ID, map[string]any{}); ok || err != nil {
		t.Fatalf("complete after the refund: %v %v; want nothing done", ok, err)
	}
	if s, r := state(t, late.ID); s != job.Failed || r != "refunded" {
		t.Fatalf("after the late complete: %s, %s", s, r)
	}

	// Racing: the sweep against the Completes of runners it takes for dead.
	for _, id := range racing {
		if _, ok, err := h.jobs.Claim(context.Background(), id); !ok || err != nil {
			t.Fatalf("claim: %v %v", ok, err)
		}
	}
	clk.Advance(cfg.StaleAfter + time.Second)
	outs := make([]outcome, len(racing))
	fns := []func(){func() {
		if _, err := h.jobs.Sweep(context.Background()); err != nil {
			t.Error(err)
		}
	}}
	for i, id := range racing {
		fns = append(fns, complete(h, id, &outs[i]))
	}
	together(fns...)
	succeeded := 0
	for i, id := range racing {
		s, r := state(t, id)
		switch {
		case outs[i].err != nil:
			t.Fatalf("complete: %v", outs[i].err)
		case outs[i].ok && (s != job.Succeeded || r != "settled"), !outs[i].ok && (s != job.Failed || r != "refunded"):
			t.Fatalf("job %d: complete said %v, job %s, reservation %s", i, outs[i].ok, s, r)
		}
		if outs[i].ok {
			succeeded++
		}
	}
	t.Logf("%d of %d Completes won against the sweep", succeeded, len(racing))
	if b := checkLedger(t, acc); b != 50-5*succeeded {
		t.Fatalf("balance %d after %d successes, want %d", b, succeeded, 50-5*succeeded)
	}
}

// Many jobs of one account settled and refunded at once, with new reservations taken
// meanwhile: the books balance and no reservation is left open.
func TestManyJobsSettleConcurrently(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	acc := h.account(t, 950) // 1,000 credits: 200 jobs
	ids := make([]uuid.UUID, 120)
	for i := range ids {
		ids[i] = h.submit(t, acc, fmt.Sprint("many ", i)).ID
	}
	outs := make([]outcome, len(ids))
	submitted := make([]error, 80)
	var fns []func()
	for i, id := range ids {
		if i%3 == 0 {
			fns = append(fns, fail(h, id, &outs[i]))
		} else {
			fns = append(fns, complete(h, id, &outs[i]))
		}
	}
	for i := range submitted {
		fns = append(fns, func() {
			_, submitted[i] = h.jobs.Submit(context.Background(), submission(acc, fmt.Sprint("meanwhile ", i)))
		})
	}
	together(fns...)
	for i, o := range outs {
		if !o.ok || o.err != nil {
			t.Fatalf("job %d: %v %v", i, o.ok, o.err)
		}
	}
	for i, err := range submitted {
		if err != nil {
			t.Fatalf("submit %d: %v", i, err)
		}
	}
	// 80 settled, 40 refunded, 80 new jobs still reserved.
	if b := checkLedger(t, acc); b != 1000-5*80-5*80 {
		t.Fatalf("balance %d, want %d", b, 1000-5*80-5*80)
	}
}
