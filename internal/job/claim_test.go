package job_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/job"
)

// lostAfter is testCfg's StaleAfter: three 5 s heartbeats.
const lostAfter = 15 * time.Second

func claim(t *testing.T, h *harness, id uuid.UUID) (job.Job, bool, *job.BusyError) {
	t.Helper()
	j, ok, err := h.jobs.Claim(context.Background(), id)
	var busy *job.BusyError
	if err != nil && !errors.As(err, &busy) {
		t.Fatalf("claim: %v", err)
	}
	return j, ok, busy
}

// A delivery that finds the job running with a fresh heartbeat is told to come back when
// that heartbeat would be stale, not dropped; once three heartbeats are missed (the runner
// was killed) the next delivery takes the job over.
func TestClaimTakesOverARunnerThatWentSilent(t *testing.T) {
	clk := clock.NewManual(time.Now())
	h := newHarness(t, harnessOpts{clock: clk})
	if got := h.jobs.StaleAfter(); got != lostAfter {
		t.Fatalf("StaleAfter %s, want %s", got, lostAfter)
	}
	j := h.submit(t, h.account(t, 0), "silent")
	if _, ok, busy := claim(t, h, j.ID); !ok || busy != nil {
		t.Fatalf("first claim: %v %v", ok, busy)
	}

	clk.Advance(10 * time.Second)
	if err := h.jobs.Heartbeat(context.Background(), j.ID); err != nil {
		t.Fatal(err)
	}
	clk.Advance(4 * time.Second)
	got, ok, busy := claim(t, h, j.ID)
	if ok || busy == nil || got.Status != job.Running {
		t.Fatalf("claim of a live runner's job: %v %+v %s; want a BusyError", ok, busy, got.Status)
	}
	// The heartbeat is 4 s old: stale in 11 s; the retry comes a little after.
	if busy.ID != j.ID || busy.RetryIn <= 11*time.Second || busy.RetryIn > 13*time.Second {
		t.Fatalf("RetryIn %s, want just over 11s", busy.RetryIn)
	}

	clk.Advance(busy.RetryIn)
	got, ok, busy = claim(t, h, j.ID)
	if !ok || busy != nil || got.Attempts != 2 || got.Status != job.Running {
		t.Fatalf("claim after the runner went silent: %v %v %+v; want it taken over (attempt 2)", ok, busy, got)
	}
	if s, r := state(t, j.ID); s != job.Running || r != "reserved" {
		t.Fatalf("job %s, reservation %s", s, r)
	}
}

// A silent runner on the job's last attempt: the delivery fails the job and refunds it at
// once (as the sweep would, later), and reports nothing to run.
func TestClaimRefundsASilentJobWithNoAttemptLeft(t *testing.T) {
	clk := clock.NewManual(time.Now())
	cfg := testCfg
	cfg.MaxAttempts = 1
	h := newHarness(t, harnessOpts{clock: clk, cfg: cfg})
	acc := h.account(t, 0)
	j := h.submit(t, acc, "last attempt")
	if _, ok, _ := claim(t, h, j.ID); !ok {
		t.Fatal("first claim refused")
	}
	clk.Advance(lostAfter + time.Second)
	got, ok, busy := claim(t, h, j.ID)
	if ok || busy != nil || got.Status != job.Failed || got.ErrorCode != "JOB_FAILED" {
		t.Fatalf("claim: %v %v %+v; want the job failed", ok, busy, got)
	}
	if s, r := state(t, j.ID); s != job.Failed || r != "refunded" {
		t.Fatalf("job %s, reservation %s; want failed and refunded", s, r)
	}
	if b := balance(t, acc); b != 50 {
		t.Fatalf("balance %d, want 50", b)
	}
}

// Nothing to run: an ended job, an unknown one.
func TestClaimOfEndedOrUnknownJob(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	j := h.submit(t, h.account(t, 0), "ended")
	if ok, err := h.jobs.Complete(context.Background(), j.ID, map[string]any{}); !ok || err != nil {
		t.Fatalf("complete: %v %v", ok, err)
	}
	for _, id := range []uuid.UUID{j.ID, uuid.New()} {
		if _, ok, busy := claim(t, h, id); ok || busy != nil {
			t.Fatalf("claim of %s: %v %v; want nothing to run", id, ok, busy)
		}
	}
}

// A run stopped from outside hands the job back without spending the attempt, and the
// next delivery claims it at once, whatever its heartbeat said.
func TestHandBackKeepsTheAttempt(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	j := h.submit(t, h.account(t, 0), "handed back")
	if _, ok, _ := claim(t, h, j.ID); !ok {
		t.Fatal("claim refused")
	}
	if err := h.jobs.HandBack(context.Background(), j.ID); err != nil {
		t.Fatal(err)
	}
	got, ok, busy := claim(t, h, j.ID)
	if !ok || busy != nil || got.Attempts != 1 {
		t.Fatalf("claim after hand-back: %v %v attempts %d; want claimed, attempt 1", ok, busy, got.Attempts)
	}
}

// A running job is lost after StaleAfter without a heartbeat, for a delivery as for the
// sweep (one threshold); unset, it is 15 s.
func TestStaleAfterDefaults(t *testing.T) {
	for _, c := range []struct {
		cfg  job.Config
		want time.Duration
	}{
		{job.DefaultConfig, 15 * time.Second},
		{job.Config{}, 15 * time.Second},
		{job.Config{StaleAfter: 900 * time.Millisecond}, 900 * time.Millisecond},
		{job.Config{StaleAfter: time.Minute}, time.Minute},
	} {
		s := job.NewService(nil, nil, clock.Real{}, nil, nil, c.cfg, nil)
		if got := s.StaleAfter(); got != c.want {
			t.Errorf("%+v: StaleAfter %s, want %s", c.cfg, got, c.want)
		}
	}
}
