package job_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/job"
	"github.com/contentapi/contentapi/internal/testenv"
	"github.com/contentapi/contentapi/jobs"
)

// switchedQueue fails every send while down is set, as a queue whose Redis is down does.
type switchedQueue struct {
	job.Enqueuer
	down *atomic.Bool
}

func (q switchedQueue) Enqueue(ctx context.Context, kind string, id uuid.UUID, taskID string) error {
	if q.down.Load() {
		return errors.New("dial tcp 127.0.0.1:6379: connect: connection refused")
	}
	return q.Enqueuer.Enqueue(ctx, kind, id, taskID)
}

// A call whose job could not be enqueued is refunded and answered 503 "nothing was
// charged"; its Idempotency-Key is freed with the refund, so the caller's retry under the
// same key makes a new job (charged once) instead of replaying the 503 for 24 h.
func TestFailedEnqueueFreesTheIdempotencyKey(t *testing.T) {
	ctx := context.Background()
	var down atomic.Bool
	down.Store(true)
	h := newHarness(t, harnessOpts{queue: func(q job.Enqueuer) job.Enqueuer { return switchedQueue{q, &down} }})
	acc := h.account(t, 0)
	sub := submission(acc, "queue down")
	sub.IdempotencyKey = "retry-after-503"

	if _, err := h.jobs.Submit(ctx, sub); apperr.CodeOf(err) != apperr.ServiceUnavailable {
		t.Fatalf("submit with the queue down: %v; want SERVICE_UNAVAILABLE", err)
	}
	var first uuid.UUID
	var key *string
	if err := testenv.Postgres(t).QueryRow(ctx, `SELECT id, idempotency_key FROM jobs WHERE account_id = $1`, acc).
		Scan(&first, &key); err != nil {
		t.Fatal(err)
	}
	if s, r := state(t, first); s != job.Failed || r != "refunded" || key != nil {
		t.Fatalf("unsent job: %s, reservation %s, key %v; want failed, refunded, key freed", s, r, key)
	}

	down.Store(false)
	retry, err := h.jobs.Submit(ctx, sub)
	if err != nil || retry.Replayed || retry.ID == first || retry.Status != job.Queued {
		t.Fatalf("retry under the same key: %+v %v; want a new queued job", retry, err)
	}
	again, err := h.jobs.Submit(ctx, sub)
	if err != nil || !again.Replayed || again.ID != retry.ID {
		t.Fatalf("second retry: %+v %v; want the retry's job replayed", again, err)
	}
	if b := balance(t, acc); b != 45 {
		t.Fatalf("balance %d, want 45: the retry's job reserved once, the unsent one refunded", b)
	}
}

// A release retried after another runner took the job over changes nothing: it names the
// attempt it ended, and the job is on a later one.
func TestReleaseOfAnEarlierAttemptChangesNothing(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewManual(time.Now())
	h := newHarness(t, harnessOpts{clock: clk})
	j := h.submit(t, h.account(t, 0), "late release")
	first, ok, _ := claim(t, h, j.ID)
	if !ok {
		t.Fatal("first claim refused")
	}
	clk.Advance(lostAfter + time.Second)
	second, ok, _ := claim(t, h, j.ID)
	if !ok || second.Attempts != first.Attempts+1 {
		t.Fatalf("takeover: %v, attempt %d", ok, second.Attempts)
	}
	if err := h.jobs.Release(ctx, j.ID, first.Attempts); err != nil {
		t.Fatal(err)
	}
	if got, err := h.jobs.Load(ctx, j.ID); err != nil || got.Status != job.Running || got.Attempts != second.Attempts {
		t.Fatalf("after the first runner's late release: %+v %v; want still running on attempt %d", got, err, second.Attempts)
	}
	if err := h.jobs.Release(ctx, j.ID, second.Attempts); err != nil {
		t.Fatal(err)
	}
	if got, _ := h.jobs.Load(ctx, j.ID); got.Status != job.Queued {
		t.Fatalf("after the current runner's release: %s, want queued", got.Status)
	}
}

// With production's tuning the sweep finds, within seconds, the jobs an outage of Redis and
// PostgreSQL leaves without a task: a queued job whose task Redis lost is sent again once
// it is 4 s old (EnqueueGrace), a running job whose runner went silent is resumed under a
// new task after 15 s without a heartbeat (StaleAfter), and a queued job whose task was
// archived (its retries spent while PostgreSQL was down) gets a new task under its id.
func TestSweepResendsLostTasksWithProductionTuning(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewManual(time.Now())
	h := newHarness(t, harnessOpts{clock: clk})
	insp := asynq.NewInspectorFromRedisClient(testenv.Redis(t))
	acc := h.account(t, 0)
	lost := h.submit(t, acc, "task lost")
	silent := h.submit(t, acc, "runner silent")
	archived := h.submit(t, acc, "task archived")
	if _, ok, _ := claim(t, h, silent.ID); !ok {
		t.Fatal("claim refused")
	}
	for _, id := range []uuid.UUID{lost.ID, silent.ID} { // Redis came back empty
		if err := insp.DeleteTask(jobs.QueueAnalysis, id.String()); err != nil {
			t.Fatal(err)
		}
	}
	if err := insp.ArchiveTask(jobs.QueueAnalysis, archived.ID.String()); err != nil {
		t.Fatal(err)
	}
	taskState := func(taskID string) string {
		info, err := insp.GetTaskInfo(jobs.QueueAnalysis, taskID)
		if errors.Is(err, asynq.ErrTaskNotFound) {
			return "none"
		}
		if err != nil {
			t.Fatal(err)
		}
		return info.State.String()
	}
	sweep := func() {
		t.Helper()
		if _, err := h.jobs.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
	}

	sweep()
	if s := taskState(lost.ID.String()); s != "none" {
		t.Fatalf("a job within its enqueue grace was sent again (task %s)", s)
	}
	clk.Advance(testCfg.EnqueueGrace + time.Second)
	sweep()
	if s := taskState(lost.ID.String()); s != "pending" {
		t.Fatalf("lost task after the grace: %s, want pending", s)
	}
	if s := taskState(archived.ID.String()); s != "pending" {
		t.Fatalf("archived task after the grace: %s, want pending (replaced)", s)
	}
	if got, _ := h.jobs.Load(ctx, silent.ID); got.Status != job.Running {
		t.Fatalf("a job with a 5 s old heartbeat was touched: %s", got.Status)
	}
	clk.Advance(lostAfter - testCfg.EnqueueGrace)
	sweep()
	if got, _ := h.jobs.Load(ctx, silent.ID); got.Status != job.Queued {
		t.Fatalf("silent job after %s: %s, want queued again", lostAfter+time.Second, got.Status)
	}
	if s := taskState(silent.ID.String() + ":resume-1"); s != "pending" {
		t.Fatalf("resume task: %s, want pending", s)
	}
}

// A running job the sweep resumes while the queue is down is queued without its resume
// task; the next sweep, with the queue back, sends that resume task (its first task is
// still held by the dead runner's lease, so sending under the job's own id would wait for
// the lease to end).
func TestSweepSendsAResumeTaskLostInAnOutage(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewManual(time.Now())
	var down atomic.Bool
	h := newHarness(t, harnessOpts{clock: clk, queue: func(q job.Enqueuer) job.Enqueuer { return switchedQueue{q, &down} }})
	insp := asynq.NewInspectorFromRedisClient(testenv.Redis(t))
	j := h.submit(t, h.account(t, 0), "resume lost")
	if _, ok, _ := claim(t, h, j.ID); !ok {
		t.Fatal("claim refused")
	}
	clk.Advance(lostAfter + time.Second)
	down.Store(true)
	if r, err := h.jobs.Sweep(ctx); err != nil || r.Resumed < 1 || r.Unsent < 1 { // other tests' jobs may be swept too
		t.Fatalf("sweep with the queue down: %+v %v; want the job resumed, unsent", r, err)
	}
	if got, _ := h.jobs.Load(ctx, j.ID); got.Status != job.Queued {
		t.Fatalf("after the sweep: %s, want queued", got.Status)
	}
	down.Store(false)
	if _, err := h.jobs.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	info, err := insp.GetTaskInfo(jobs.QueueAnalysis, j.ID.String()+":resume-1")
	if err != nil || info.State != asynq.TaskStatePending {
		t.Fatalf("resume task after the queue came back: %v %v; want pending", info, err)
	}
}
