package job_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/auth"
	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/credits"
	"github.com/contentapi/contentapi/internal/job"
	"github.com/contentapi/contentapi/internal/testenv"
	"github.com/contentapi/contentapi/jobs"
)

func TestMain(m *testing.M) { testenv.MainNoLeaks(m) }

// testCfg is the job tuning of these tests, production's: heartbeats every 5 s, a running
// job lost after 15 s without one, a queued job's task sent again after 4 s.
var testCfg = job.DefaultConfig

// harness is a job service over a pool (the test database, or a proxy in front of it), with
// the real asynq queue on the package's Redis (no worker takes its tasks) and signals.
type harness struct {
	pool   *pgxpool.Pool
	clock  clock.Clock
	ledger *credits.Ledger
	jobs   *job.Service
	queue  *jobs.Queue
}

type harnessOpts struct {
	pool  *pgxpool.Pool // the test database when nil
	clock clock.Clock   // the real clock when nil
	cfg   job.Config    // testCfg when zero
	// queue wraps the real queue, when set.
	queue func(job.Enqueuer) job.Enqueuer
	log   *slog.Logger
}

func newHarness(t *testing.T, o harnessOpts) *harness {
	t.Helper()
	if o.pool == nil {
		o.pool = testenv.Postgres(t)
	}
	if o.clock == nil {
		o.clock = clock.Real{}
	}
	if o.cfg == (job.Config{}) {
		o.cfg = testCfg
	}
	if o.log == nil {
		o.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	rdb := testenv.Redis(t)
	signals := job.NewSignals(rdb)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := signals.Start(ctx); err != nil {
		t.Fatal(err)
	}
	h := &harness{pool: o.pool, clock: o.clock, ledger: credits.NewLedger(o.pool, o.clock)}
	h.queue = &jobs.Queue{Client: asynq.NewClientFromRedisClient(rdb), Inspector: asynq.NewInspectorFromRedisClient(rdb),
		Timeout: time.Minute, MaxRetry: o.cfg.MaxAttempts}
	var q job.Enqueuer = h.queue
	if o.queue != nil {
		q = o.queue(q)
	}
	h.jobs = job.NewService(o.pool, h.ledger, o.clock, q, signals, o.cfg, o.log)
	return h
}

// account registers an account (50 free credits) and grants it extra credits.
func (h *harness) account(t *testing.T, extra int) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	// On the test database directly: the harness's pool may be a proxy the test cuts.
	ledger := credits.NewLedger(testenv.Postgres(t), h.clock)
	reg, err := auth.NewAccounts(testenv.Postgres(t), ledger, h.clock, nil).
		Register(ctx, uuid.NewString()+"@example.com", "test")
	if err != nil {
		t.Fatal(err)
	}
	if extra > 0 {
		_, err := ledger.Grant(ctx, credits.Grant{AccountID: reg.AccountID, Amount: extra,
			IssuedAt: h.clock.Now(), ExpiresAt: h.clock.Now().Add(24 * time.Hour), Source: credits.SourceOperator, SourceRef: "test"})
		if err != nil {
			t.Fatal(err)
		}
	}
	return reg.AccountID
}

// submission is a 5-credit keyword research call of the account.
func submission(acc uuid.UUID, topic string) job.Submission {
	return job.Submission{AccountID: acc, Kind: "keywords:research", Endpoint: "/v1/keywords/research", Cost: 5,
		Request: map[string]any{"domain": "example.com", "topic": topic}}
}

func (h *harness) submit(t *testing.T, acc uuid.UUID, topic string) job.Job {
	t.Helper()
	j, err := h.jobs.Submit(context.Background(), submission(acc, topic))
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// balance is the account's balance, read on the test database directly.
func balance(t *testing.T, acc uuid.UUID) int {
	t.Helper()
	b, err := credits.NewLedger(testenv.Postgres(t), clock.Real{}).Balance(context.Background(), acc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// state is a job's status and its reservation's, read on the test database directly ("" and
// "" when the job does not exist).
func state(t *testing.T, id uuid.UUID) (jobStatus, reservation string) {
	t.Helper()
	err := testenv.Postgres(t).QueryRow(context.Background(), `
		SELECT j.status, r.status FROM jobs j JOIN reservations r ON r.id = j.reservation_id WHERE j.id = $1`, id).
		Scan(&jobStatus, &reservation)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		t.Fatal(err)
	}
	return jobStatus, reservation
}
