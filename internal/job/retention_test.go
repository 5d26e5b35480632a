package job_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/credits"
	"github.com/contentapi/contentapi/internal/testenv"
)

const retention = 30 * 24 * time.Hour

// books is what an account's credit history shows: its usage answer (balance, credits used,
// the recent settled calls) and its reservations.
type books struct {
	usage        credits.Usage
	reservations []string
}

func readBooks(t *testing.T, h *harness, acc uuid.UUID) books {
	t.Helper()
	u, err := h.ledger.Usage(context.Background(), acc)
	if err != nil {
		t.Fatal(err)
	}
	var rs []string
	rows, err := testenv.Postgres(t).Query(context.Background(), `
		SELECT id::text || ' ' || status || ' ' || amount FROM reservations WHERE account_id = $1 ORDER BY id`, acc)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		rs = append(rs, s)
	}
	return books{usage: u, reservations: rs}
}

func purge(t *testing.T, h *harness) {
	t.Helper()
	if _, err := h.jobs.Purge(context.Background(), retention); err != nil {
		t.Fatal(err)
	}
}

// Ended jobs are deleted JOB_RETENTION after they finished; their reservations stay, so the
// balance, usage and its history read the same after the purge. Unfinished and recent jobs
// stay.
func TestPurgeDeletesEndedJobsPastRetention(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewManual(time.Now().UTC())
	h := newHarness(t, harnessOpts{clock: clk})
	acc := h.account(t, 0)
	succeeded := h.submit(t, acc, "old success")
	if ok, err := h.jobs.Complete(ctx, succeeded.ID, map[string]any{"clusters": []any{}}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	failed := h.submit(t, acc, "old failure")
	if ok, err := h.jobs.Fail(ctx, failed.ID, "PROVIDER_ERROR", "test"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	queued := h.submit(t, acc, "never ran") // its reservation stays open: never purged

	clk.Advance(10 * 24 * time.Hour)
	recent := h.submit(t, acc, "recent")
	if ok, err := h.jobs.Complete(ctx, recent.ID, map[string]any{"clusters": []any{}}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	purge(t, h) // the old jobs ended 10 days ago: kept
	for _, j := range []uuid.UUID{succeeded.ID, failed.ID, queued.ID, recent.ID} {
		if _, err := h.jobs.Get(ctx, acc, j); err != nil {
			t.Fatalf("job %s before its retention ended: %v", j, err)
		}
	}

	clk.Advance(retention - 10*24*time.Hour + time.Minute)
	before := readBooks(t, h, acc)
	purge(t, h)
	after := readBooks(t, h, acc)
	for _, j := range []uuid.UUID{succeeded.ID, failed.ID} {
		_, err := h.jobs.Get(ctx, acc, j)
		var ae *apperr.Error
		if !errors.As(err, &ae) || ae.Code != apperr.NotFound {
			t.Errorf("job %s ended %s ago: %v, want NOT_FOUND", j, retention, err)
		}
	}
	for _, j := range []uuid.UUID{queued.ID, recent.ID} {
		if _, err := h.jobs.Get(ctx, acc, j); err != nil {
			t.Errorf("job %s: %v, want it kept", j, err)
		}
	}
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("credit history changed by the purge:\n%+v\n%+v", before, after)
	}
	if len(after.reservations) != 4 || len(after.usage.Recent) != 2 {
		t.Fatalf("reservations %v, recent calls %v; want all 4 reservations and both settled calls", after.reservations, after.usage.Recent)
	}
	if s, r := state(t, queued.ID); s != "queued" || r != "reserved" {
		t.Fatalf("queued job %s, reservation %s", s, r)
	}
}

// The purge works in batches until none is left.
func TestPurgeDeletesInBatches(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewManual(time.Now().UTC())
	h := newHarness(t, harnessOpts{clock: clk})
	acc := h.account(t, 0)
	j := h.submit(t, acc, "batch")
	if ok, err := h.jobs.Complete(ctx, j.ID, map[string]any{}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	// Copies of the ended job, enough for two batches and a part of a third.
	copyEndedJob(t, j.ID, 12001)
	clk.Advance(retention + time.Minute)
	n, err := h.jobs.Purge(ctx, retention)
	if err != nil || n < 12002 {
		t.Fatalf("purged %d (%v), want at least 12002", n, err)
	}
	var left int
	if err := testenv.Postgres(t).QueryRow(ctx, `SELECT count(*) FROM jobs WHERE account_id = $1`, acc).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d jobs left (%v)", left, err)
	}
}

// copyEndedJob inserts n copies of an ended job, each with a closed reservation of its own.
func copyEndedJob(t *testing.T, id uuid.UUID, n int) {
	t.Helper()
	if _, err := testenv.Postgres(t).Exec(context.Background(), `
		WITH n AS (SELECT gen_random_uuid() AS job, gen_random_uuid() AS res FROM generate_series(1, $2::int)),
		ins AS (INSERT INTO reservations (id, account_id, amount, endpoint, status, created_at, finished_at)
			SELECT n.res, r.account_id, r.amount, r.endpoint, r.status, r.created_at, r.finished_at
			FROM n, reservations r JOIN jobs j ON j.reservation_id = r.id WHERE j.id = $1)
		INSERT INTO jobs (id, account_id, kind, endpoint, request, request_hash, reservation_id, cost, status, result, created_at, finished_at)
		SELECT n.job, j.account_id, j.kind, j.endpoint, j.request, j.request_hash, n.res, j.cost, j.status, j.result, j.created_at, j.finished_at
		FROM n, jobs j WHERE j.id = $1`, id, n); err != nil {
		t.Fatal(err)
	}
}

// cancelAfterDelete is a query tracer that cancels a context once a DELETE statement has
// run, as a worker's shutdown would between two purge batches.
type cancelAfterDelete struct {
	cancel context.CancelFunc
}

type deleteKey struct{}

func (c *cancelAfterDelete) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	return context.WithValue(ctx, deleteKey{}, strings.HasPrefix(strings.TrimSpace(d.SQL), "DELETE"))
}

func (c *cancelAfterDelete) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	if isDelete, _ := ctx.Value(deleteKey{}).(bool); isDelete {
		c.cancel()
	}
}

// A purge cancelled between batches reports the cancellation (the task is then run again)
// and what it deleted until then, instead of passing for a finished purge.
func TestPurgeCancelledBetweenBatchesReportsIt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, dsn := testenv.PostgresDSN(t)
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Tracer = &cancelAfterDelete{cancel: cancel}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	clk := clock.NewManual(time.Now().UTC())
	h := newHarness(t, harnessOpts{clock: clk, pool: pool})
	j := h.submit(t, h.account(t, 0), "cancelled purge")
	if ok, err := h.jobs.Complete(context.Background(), j.ID, map[string]any{}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	copyEndedJob(t, j.ID, 5000) // two batches' worth
	clk.Advance(retention + time.Minute)
	n, err := h.jobs.Purge(ctx, retention)
	if !errors.Is(err, context.Canceled) || n != 5000 {
		t.Fatalf("purge cancelled after its first batch: %d deleted, err %v; want 5000 and context.Canceled", n, err)
	}
}
