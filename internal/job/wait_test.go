package job_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/job"
	"github.com/contentapi/contentapi/internal/testenv"
	"github.com/contentapi/contentapi/jobs"
)

// afterEnqueue runs a function once the task was handed to the queue (or refused by it).
type afterEnqueue struct {
	job.Enqueuer
	then func()
}

func (q afterEnqueue) Enqueue(ctx context.Context, kind string, id uuid.UUID, taskID string) error {
	err := q.Enqueuer.Enqueue(ctx, kind, id, taskID)
	q.then()
	return err
}

// cutAfterEnqueue makes the harness's PostgreSQL go down right after a job was stored and
// enqueued: its caller is then waiting on a job that exists.
func cutAfterEnqueue(p *testenv.PGProxy) func(job.Enqueuer) job.Enqueuer {
	return func(q job.Enqueuer) job.Enqueuer { return afterEnqueue{q, p.Cut} }
}

// PostgreSQL drops while a caller waits on its job: the caller gets the job (its id, still
// queued), flagged as not read again, not an error; the credits stay reserved for the run.
func TestWaitAnswersWithTheJobWhenPostgresDrops(t *testing.T) {
	proxy := testenv.NewPGProxy(t)
	h := newHarness(t, harnessOpts{pool: proxy.Pool(t), queue: cutAfterEnqueue(proxy)})
	acc := h.account(t, 0)

	start := time.Now()
	j, err := h.jobs.SubmitAndWait(context.Background(), submission(acc, "coffee"), 1500*time.Millisecond)
	if err != nil {
		t.Fatalf("wait with PostgreSQL down: %v; want the job", err)
	}
	if j.ID == uuid.Nil || j.Status != job.Queued || !j.ReadFailed || j.Done() {
		t.Fatalf("job %+v: want its id, queued, ReadFailed", j)
	}
	if d := time.Since(start); d > 1500*time.Millisecond+3*time.Second {
		t.Fatalf("answered after %s: the wait must end near its timeout", d)
	}
	if s, r := state(t, j.ID); s != job.Queued || r != "reserved" {
		t.Fatalf("job %s, reservation %s: want the job stored and its credits reserved", s, r)
	}
	if b := balance(t, acc); b != 45 {
		t.Fatalf("balance %d, want 45 (reserved for the job)", b)
	}
}

// PostgreSQL drops and comes back while a caller waits: the wait carries on and answers
// with the finished job.
func TestWaitCarriesOnWhenPostgresReturns(t *testing.T) {
	proxy := testenv.NewPGProxy(t)
	h := newHarness(t, harnessOpts{pool: proxy.Pool(t), queue: cutAfterEnqueue(proxy)})
	direct := newHarness(t, harnessOpts{})
	acc := h.account(t, 0)

	go func() {
		<-proxy.Refused() // the waiter tried to read the job while PostgreSQL was down
		proxy.Restore()
		var id uuid.UUID
		if err := testenv.Postgres(t).QueryRow(context.Background(),
			`SELECT id FROM jobs WHERE account_id = $1`, acc).Scan(&id); err != nil {
			t.Error(err)
			return
		}
		if ok, err := direct.jobs.Complete(context.Background(), id, map[string]any{"clusters": []any{}}); !ok || err != nil {
			t.Errorf("complete: %v %v", ok, err)
		}
	}()
	j, err := h.jobs.SubmitAndWait(context.Background(), submission(acc, "tea"), 20*time.Second)
	if err != nil || j.Status != job.Succeeded || j.ReadFailed || !j.Balanced || j.Balance != 45 {
		t.Fatalf("job %+v, %v: want it succeeded with the balance", j, err)
	}
}

// The connection breaks while the job's COMMIT is under way. Whether the job was stored is
// found out before anything is said about money: stored, the call goes on; not stored, the
// error is the plain database error; not knowable, the caller is told the call may have
// been accepted (and how to find out), never that nothing was charged.
func TestCommitOutcomeLost(t *testing.T) {
	cases := []struct {
		name   string
		action testenv.QueryAction
		refuse bool // PostgreSQL stays unreachable after the break
		stored bool
	}{
		{"answer lost, job stored", testenv.CutAfter, false, true},
		{"commit never arrived", testenv.CutBefore, false, false},
		{"outcome unknowable", testenv.CutAfter, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			proxy := testenv.NewPGProxy(t)
			h := newHarness(t, harnessOpts{pool: proxy.Pool(t)})
			acc := h.account(t, 0)
			var armed atomic.Bool
			armed.Store(true)
			proxy.OnQuery(func(sql string) testenv.QueryAction {
				if !strings.EqualFold(sql, "commit") || !armed.CompareAndSwap(true, false) {
					return testenv.Forward
				}
				if c.refuse {
					proxy.Refuse()
				}
				return c.action
			})
			j, err := h.jobs.Submit(context.Background(), submission(acc, c.name))
			var id uuid.UUID
			if err := testenv.Postgres(t).QueryRow(context.Background(),
				`SELECT COALESCE((SELECT id FROM jobs WHERE account_id = $1), '00000000-0000-0000-0000-000000000000')`, acc).Scan(&id); err != nil {
				t.Fatal(err)
			}
			if got := id != uuid.Nil; got != c.stored {
				t.Fatalf("stored %v, want %v", got, c.stored)
			}
			switch {
			case c.refuse:
				e, ok := apperr.As(err)
				if !ok || e.Code != apperr.ServiceUnavailable || !strings.Contains(e.Message, id.String()) ||
					strings.Contains(strings.ToLower(e.Message), "nothing was charged;") {
					t.Fatalf("error %v: want SERVICE_UNAVAILABLE naming job %s, not claiming nothing was charged", err, id)
				}
			case c.stored:
				if err != nil || j.ID != id || j.Status != job.Queued {
					t.Fatalf("submit %+v, %v: want the stored job", j, err)
				}
				if _, err := asynq.NewInspectorFromRedisClient(testenv.Redis(t)).GetTaskInfo(jobs.QueueAnalysis, id.String()); err != nil {
					t.Fatalf("the stored job's task: %v", err)
				}
			default:
				if err == nil || apperr.CodeOf(err) == apperr.ServiceUnavailable {
					t.Fatalf("error %v: want the database error (nothing was stored)", err)
				}
				if b := balance(t, acc); b != 50 {
					t.Fatalf("balance %d, want 50", b)
				}
			}
		})
	}
}

// The queue refuses the task and PostgreSQL is gone before the refund: the job stays
// queued for the sweep to send, so the caller gets the job, not "nothing was charged".
func TestFailedEnqueueWithoutRefundAnswersWithTheJob(t *testing.T) {
	proxy := testenv.NewPGProxy(t)
	deadRedis := testenv.FreeAddr(t)
	client := asynq.NewClient(asynq.RedisClientOpt{Addr: deadRedis, DialTimeout: time.Second})
	t.Cleanup(func() { _ = client.Close() })
	h := newHarness(t, harnessOpts{pool: proxy.Pool(t), queue: func(job.Enqueuer) job.Enqueuer {
		dead := &jobs.Queue{Client: client, Timeout: time.Minute, MaxRetry: 3}
		return afterEnqueue{dead, proxy.Cut}
	}})
	acc := h.account(t, 0)
	j, err := h.jobs.Submit(context.Background(), submission(acc, "refund lost"))
	if err != nil || j.ID == uuid.Nil || j.Status != job.Queued {
		t.Fatalf("submit %+v, %v: want the queued job", j, err)
	}
	if s, r := state(t, j.ID); s != job.Queued || r != "reserved" {
		t.Fatalf("job %s, reservation %s: want it queued with its credits reserved", s, r)
	}
}

// StopWaiting (the API shutting down) ends a wait at once with the job as it stands, and
// every later wait answers without waiting: the caller learns the job id and its credits
// stay reserved for the run.
func TestStopWaitingAnswersWithTheJobAsItStands(t *testing.T) {
	var h *harness
	h = newHarness(t, harnessOpts{queue: func(q job.Enqueuer) job.Enqueuer {
		return afterEnqueue{q, func() { h.jobs.StopWaiting() }}
	}})
	acc := h.account(t, 0)

	start := time.Now()
	j, err := h.jobs.SubmitAndWait(context.Background(), submission(acc, "coffee"), 30*time.Second)
	if err != nil || j.ID == uuid.Nil || j.Status != job.Queued || j.ReadFailed {
		t.Fatalf("job %+v, %v: want it queued, read again", j, err)
	}
	again, err := h.jobs.Wait(context.Background(), acc, j.ID, 30*time.Second)
	if err != nil || again.ID != j.ID || again.Status != job.Queued {
		t.Fatalf("second wait: %+v, %v", again, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the waits answered after %s; StopWaiting must end them at once", d)
	}
	if s, r := state(t, j.ID); s != job.Queued || r != "reserved" {
		t.Fatalf("job %s, reservation %s: want the job stored and its credits reserved", s, r)
	}
}
