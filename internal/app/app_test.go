package app_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/contentapi/contentapi/internal/app"
	"github.com/contentapi/contentapi/internal/app/api"
	"github.com/contentapi/contentapi/internal/app/apptest"
	"github.com/contentapi/contentapi/internal/app/worker"
	"github.com/contentapi/contentapi/internal/config"
	"github.com/contentapi/contentapi/internal/testenv"
)

func TestMain(m *testing.M) { testenv.MainNoLeaks(m) }

// Close ends every goroutine the graph started: the job signals' subscription, the gate's
// batchers, the key-use flusher, the e-mail outbox and the queue dashboard's clients.
func TestCloseEndsEveryGoroutine(t *testing.T) {
	pool, rdb := testenv.Postgres(t), testenv.Redis(t)
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	// A query Close cancels costs the test's pool its connection, which the pool tears down
	// on goroutines of its own (the server's goodbye read to the end); the pool outlives the
	// graph, and its Close, at the package's end, waits for them, where MainNoLeaks looks.
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(),
		goleak.IgnoreAnyFunction("github.com/jackc/pgx/v5/pgconn.(*PgConn).asyncClose.func1"),
		goleak.IgnoreAnyFunction("github.com/jackc/puddle/v2.(*Pool[...]).destructResourceValue"))

	a := apptest.New(t, apptest.Options{Pool: pool, Redis: rdb})
	if _, err := api.Deps(a); err != nil {
		t.Fatal(err)
	}
	if _, err := worker.ReportBuilder(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	worker.ScheduleCallbacks(a)
	a.Close()
}

// When a part cannot be opened (here Redis, after the pool), New fails with its error and
// closes what it had opened: no pool is left behind with its goroutines.
func TestNewClosesWhatItOpenedOnFailure(t *testing.T) {
	_, dsn := testenv.PostgresDSN(t)
	noRedis := testenv.FreeAddr(t) // nothing listens there
	cfg, err := config.Load(func(name string) string {
		return map[string]string{"DATABASE_URL": dsn, "REDIS_URL": "redis://" + noRedis + "/0"}[name]
	})
	if err != nil {
		t.Fatal(err)
	}
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	a, err := app.New(context.Background(), cfg, app.Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil || a != nil || !strings.Contains(err.Error(), noRedis) {
		t.Fatalf("New with Redis down: %v, %v; want an error naming %s", a, err, noRedis)
	}
}
