package jobs

import (
	"context"
	"log/slog"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/contentapi/contentapi/internal/testenv"
)

// The periodic purge task, as the worker's scheduler sends it, deletes ended jobs past the
// retention and keeps their reservations.
func TestPurgeJobsTask(t *testing.T) {
	ctx := context.Background()
	h := newHandler(t, testenv.Postgres(t), nil)
	if ok, err := h.Jobs.Fail(ctx, h.job.ID, "PROVIDER_ERROR", "test"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	mux := asynq.NewServeMux()
	(&Maintenance{Log: slog.New(slog.NewJSONHandler(h.logs, nil)), Jobs: h.Jobs, Retention: 0}).Register(mux)
	if err := mux.ProcessTask(ctx, NewPurgeJobsTask()); err != nil {
		t.Fatal(err)
	}
	var jobs, reservations int
	if err := testenv.Postgres(t).QueryRow(ctx, `
		SELECT (SELECT count(*) FROM jobs WHERE account_id = $1),
		       (SELECT count(*) FROM reservations WHERE account_id = $1 AND status = 'refunded')`, h.account).
		Scan(&jobs, &reservations); err != nil {
		t.Fatal(err)
	}
	if jobs != 0 || reservations != 1 {
		t.Fatalf("%d jobs and %d refunded reservations left; want the job gone and its reservation kept", jobs, reservations)
	}
}
