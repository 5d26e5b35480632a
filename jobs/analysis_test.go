package jobs

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/auth"
	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/credits"
	"github.com/contentapi/contentapi/internal/job"
	"github.com/contentapi/contentapi/internal/testenv"
)

func TestMain(m *testing.M) { testenv.MainNoLeaks(m) }

// logBuffer collects a logger's lines; the heartbeat goroutine logs too.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// runnerFunc is a Runner made of a function.
type runnerFunc func(ctx context.Context) (any, error)

func (f runnerFunc) Run(ctx context.Context, _, _ string, _ []byte) (any, error) { return f(ctx) }

// handler is the analysis handler over a job service on pool, with heartbeats every 100 ms
// (a job is lost after 300 ms without one), and one submitted 5-credit job.
type handler struct {
	*Analysis
	logs    *logBuffer
	account uuid.UUID
	job     job.Job
}

func newHandler(t *testing.T, pool *pgxpool.Pool, runner Runner) *handler {
	t.Helper()
	ctx := context.Background()
	direct := testenv.Postgres(t)
	rdb := testenv.Redis(t)
	cfg := job.Config{MaxAttempts: 3, StaleAfter: 300 * time.Millisecond, Deadline: time.Hour, EnqueueGrace: time.Minute}
	logs := &logBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	svc := job.NewService(pool, credits.NewLedger(pool, clock.Real{}), clock.Real{},
		&Queue{Client: asynq.NewClientFromRedisClient(rdb), Timeout: time.Minute, MaxRetry: cfg.MaxAttempts},
		job.NewSignals(rdb), cfg, log)
	reg, err := auth.NewAccounts(direct, credits.NewLedger(direct, clock.Real{}), clock.Real{}, nil).
		Register(ctx, uuid.NewString()+"@example.com", "test")
	if err != nil {
		t.Fatal(err)
	}
	j, err := svc.Submit(ctx, job.Submission{AccountID: reg.AccountID, Kind: "keywords:research",
		Endpoint: "/v1/keywords/research", Cost: 5, Request: map[string]any{"topic": "coffee"}})
	if err != nil {
		t.Fatal(err)
	}
	// A hand-back retried in the background ends with the test: the worker's lifetime ends
	// and the retries are waited for, so none outlives the test (the package's leak check)
	// however long a loaded machine took to answer it.
	lifetime, stop := context.WithCancel(context.Background())
	a := &Analysis{Jobs: svc, Runner: runner, MaxAttempts: cfg.MaxAttempts, Log: log, Lifetime: lifetime}
	t.Cleanup(func() { stop(); a.Wait() })
	return &handler{Analysis: a, logs: logs, account: reg.AccountID, job: j}
}

// deliver runs one delivery of the job's task, as asynq would.
func (h *handler) deliver(ctx context.Context, t *testing.T) error {
	t.Helper()
	task, err := NewAnalysisTask(h.job.Kind, h.job.ID, h.job.ID.String(), time.Minute, 3)
	if err != nil {
		t.Fatal(err)
	}
	return h.handle(ctx, task)
}

// row reads the job's status and attempts and its reservation's status on the test database.
func (h *handler) row(t *testing.T) (status string, attempts int, reservation string) {
	t.Helper()
	err := testenv.Postgres(t).QueryRow(context.Background(), `
		SELECT j.status, j.attempts, r.status FROM jobs j JOIN reservations r ON r.id = j.reservation_id WHERE j.id = $1`,
		h.job.ID).Scan(&status, &attempts, &reservation)
	if err != nil {
		t.Fatal(err)
	}
	return status, attempts, reservation
}

// PostgreSQL goes down as the run ends: the result write is retried (and logged), and once
// PostgreSQL is back the result is stored without a second run.
func TestResultWriteRetriedThroughAShortOutage(t *testing.T) {
	proxy := testenv.NewPGProxy(t)
	var runs atomic.Int32
	h := newHandler(t, proxy.Pool(t), runnerFunc(func(context.Context) (any, error) {
		runs.Add(1)
		proxy.Cut()
		return map[string]any{"clusters": []any{}}, nil
	}))
	go func() {
		<-proxy.Refused() // a write was tried while PostgreSQL was down
		proxy.Restore()
	}()
	if err := h.deliver(context.Background(), t); err != nil {
		t.Fatalf("delivery: %v", err)
	}
	if s, attempts, r := h.row(t); s != job.Succeeded || attempts != 1 || r != "settled" || runs.Load() != 1 {
		t.Fatalf("job %s after %d attempts (%d runs), reservation %s; want succeeded in one run, settled", s, attempts, runs.Load(), r)
	}
	if logs := h.logs.String(); !strings.Contains(logs, `"msg":"job result not stored"`) || !strings.Contains(logs, h.job.ID.String()) {
		t.Fatalf("the failed write was not logged with the job id:\n%s", logs)
	}
}

// PostgreSQL stays down past the write retries: the delivery fails (logged with the job id
// and error), and the task's redelivery takes the job over at once instead of dropping it
// as held by a live runner.
func TestFailedResultWriteIsTakenOverOnRedelivery(t *testing.T) {
	proxy := testenv.NewPGProxy(t)
	var runs atomic.Int32
	h := newHandler(t, proxy.Pool(t), runnerFunc(func(context.Context) (any, error) {
		if runs.Add(1) == 1 {
			proxy.Cut()
		}
		return map[string]any{"clusters": []any{}}, nil
	}))
	err := h.deliver(context.Background(), t)
	if err == nil || errors.Is(err, asynq.SkipRetry) {
		t.Fatalf("delivery with PostgreSQL down: %v; want an error asynq retries", err)
	}
	logs := h.logs.String()
	if !strings.Contains(logs, `"msg":"job result not stored"`) || !strings.Contains(logs, h.job.ID.String()) || !strings.Contains(logs, `"err"`) {
		t.Fatalf("the failed write was not logged with the job id and error:\n%s", logs)
	}
	proxy.Restore()
	if err := h.deliver(context.Background(), t); err != nil {
		t.Fatalf("redelivery: %v", err)
	}
	if s, attempts, r := h.row(t); s != job.Succeeded || attempts != 2 || r != "settled" {
		t.Fatalf("job %s after %d attempts, reservation %s; want succeeded on the redelivery, settled", s, attempts, r)
	}
}

// A delivery that finds the job held by a live runner is an error asynq retries when that
// runner's heartbeat would be stale: neither dropped nor retried in a tight loop.
func TestDeliveryForALiveRunnersJobIsRetriedLater(t *testing.T) {
	h := newHandler(t, testenv.Postgres(t), runnerFunc(func(context.Context) (any, error) { return map[string]any{}, nil }))
	if _, ok, err := h.Jobs.Claim(context.Background(), h.job.ID); !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
	err := h.deliver(context.Background(), t)
	var busy *job.BusyError
	if !errors.As(err, &busy) || errors.Is(err, asynq.SkipRetry) {
		t.Fatalf("delivery: %v; want a BusyError", err)
	}
	task, _ := NewAnalysisTask(h.job.Kind, h.job.ID, h.job.ID.String(), time.Minute, 3)
	delay := RetryDelay(2*time.Second)(0, err, task)
	if delay != busy.RetryIn || delay <= 200*time.Millisecond || delay > 400*time.Millisecond {
		t.Fatalf("retry in %s (RetryIn %s): want when the 300 ms heartbeat window has passed", delay, busy.RetryIn)
	}
	if s, attempts, _ := h.row(t); s != job.Running || attempts != 1 {
		t.Fatalf("job %s, attempts %d: the busy delivery must change nothing", s, attempts)
	}
}

// A run stopped from outside (the worker's shutdown cancels its runs) hands the job back
// without spending the attempt; the task, retried at once, claims it and finishes.
func TestInterruptedRunHandsTheJobBack(t *testing.T) {
	started := make(chan struct{})
	var runs atomic.Int32
	h := newHandler(t, testenv.Postgres(t), runnerFunc(func(ctx context.Context) (any, error) {
		if runs.Add(1) == 1 {
			close(started)
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return map[string]any{"clusters": []any{}}, nil
	}))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	err := h.deliver(ctx, t)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("interrupted delivery: %v; want ErrInterrupted", err)
	}
	task, _ := NewAnalysisTask(h.job.Kind, h.job.ID, h.job.ID.String(), time.Minute, 3)
	if d := RetryDelay(2*time.Second)(0, err, task); d != 0 {
		t.Fatalf("retry in %s, want at once", d)
	}
	if s, attempts, r := h.row(t); s != job.Queued || attempts != 0 || r != "reserved" {
		t.Fatalf("job %s, attempts %d, reservation %s; want queued, attempt not spent", s, attempts, r)
	}
	if err := h.deliver(context.Background(), t); err != nil {
		t.Fatalf("redelivery: %v", err)
	}
	if s, attempts, r := h.row(t); s != job.Succeeded || attempts != 1 || r != "settled" {
		t.Fatalf("job %s, attempts %d, reservation %s", s, attempts, r)
	}
}

// A result PostgreSQL refuses to store (a NUL character in jsonb) fails the job and refunds
// at once, logged, instead of running it again to the same end.
func TestUnstorableResultFailsAndRefunds(t *testing.T) {
	var runs atomic.Int32
	h := newHandler(t, testenv.Postgres(t), runnerFunc(func(context.Context) (any, error) {
		runs.Add(1)
		return map[string]any{"h1": "bad\x00title"}, nil
	}))
	err := h.deliver(context.Background(), t)
	if !errors.Is(err, asynq.SkipRetry) || !errors.Is(err, job.ErrUnstorable) {
		t.Fatalf("delivery: %v; want ErrUnstorable, not retried", err)
	}
	if s, _, r := h.row(t); s != job.Failed || r != "refunded" || runs.Load() != 1 {
		t.Fatalf("job %s, reservation %s, %d runs; want failed and refunded after one run", s, r, runs.Load())
	}
	if logs := h.logs.String(); !strings.Contains(logs, "job result cannot be stored") || !strings.Contains(logs, h.job.ID.String()) {
		t.Fatalf("not logged:\n%s", logs)
	}
}

// A run fails while PostgreSQL is down, so its job cannot be handed back for the retry: the
// failure is logged with the job id, and the release is tried again until PostgreSQL
// answers, so the job is queued again (for the task's retry, or the sweep's re-send when
// that retry was lost with Redis) instead of staying running until its heartbeat is stale.
func TestFailedReleaseIsRetriedUntilPostgresAnswers(t *testing.T) {
	proxy := testenv.NewPGProxy(t)
	h := newHandler(t, proxy.Pool(t), runnerFunc(func(context.Context) (any, error) {
		proxy.Cut()
		return nil, errors.New("provider: connection reset")
	}))
	err := h.deliver(context.Background(), t)
	if err == nil || errors.Is(err, asynq.SkipRetry) {
		t.Fatalf("delivery: %v; want the run's error, retried", err)
	}
	logs := h.logs.String()
	if !strings.Contains(logs, "job not handed back for its retry") || !strings.Contains(logs, h.job.ID.String()) {
		t.Fatalf("the failed release was not logged with the job id:\n%s", logs)
	}
	if s, attempts, _ := h.row(t); s != job.Running || attempts != 1 {
		t.Fatalf("job %s after %d attempts while PostgreSQL is down; want running", s, attempts)
	}
	proxy.Restore()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		s, attempts, r := h.row(t)
		if s == job.Queued && attempts == 1 && r == "reserved" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s (attempts %d, reservation %s) 10 s after PostgreSQL came back; want queued again", s, attempts, r)
		}
	}
	// The row may be queued by a try whose answer the cut connection lost: the retry then
	// tries once more (a no-op) after its back-off. It ends on its own; the package's leak
	// check must not find it still waiting.
	h.Wait()
}

// The hand-back retried in the background stops when the worker's lifetime ends, PostgreSQL
// still down: Wait returns, the giving up is logged, and the job is left running for the
// next delivery to take over once its heartbeat is stale.
func TestFailedReleaseRetriesStopWithTheWorker(t *testing.T) {
	proxy := testenv.NewPGProxy(t)
	h := newHandler(t, proxy.Pool(t), runnerFunc(func(context.Context) (any, error) {
		proxy.Cut()
		return nil, errors.New("provider: connection reset")
	}))
	lifetime, stop := context.WithCancel(context.Background())
	h.Lifetime = lifetime
	if err := h.deliver(context.Background(), t); err == nil {
		t.Fatal("delivery succeeded; want the run's error")
	}
	for range 2 {
		<-proxy.Refused() // the hand-back is being tried again
	}
	stop()
	waited := make(chan struct{})
	go func() { h.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		t.Fatal("the hand-back is still retried 10 s after the worker's lifetime ended")
	}
	if logs := h.logs.String(); !strings.Contains(logs, "job hand-back abandoned") || !strings.Contains(logs, h.job.ID.String()) {
		t.Fatalf("giving up was not logged with the job id:\n%s", logs)
	}
	proxy.Restore()
	if s, attempts, _ := h.row(t); s != job.Running || attempts != 1 {
		t.Fatalf("job %s after %d attempts; want left running once the retries stopped", s, attempts)
	}
}
