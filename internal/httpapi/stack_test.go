package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/contentapi/contentapi/internal/app/apptest"
	"github.com/contentapi/contentapi/internal/app/worker"
	"github.com/contentapi/contentapi/internal/crawler"
	"github.com/contentapi/contentapi/internal/httpapi"
	"github.com/contentapi/contentapi/internal/job"
	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/local"
	"github.com/contentapi/contentapi/internal/keywords/sample"
	"github.com/contentapi/contentapi/internal/report"
	"github.com/contentapi/contentapi/internal/testenv"
	"github.com/contentapi/contentapi/jobs"
)

// stack is the API with the job path and, unless told otherwise, a real asynq worker in the
// same process, over the test database and Redis.
type stack struct {
	*testServer
	Jobs  *job.Service
	Queue *jobs.Queue
}

type stackConfig struct {
	provider keywords.Provider
	runner   jobs.Runner
	noWorker bool
	jobCfg   job.Config
	sync     time.Duration
	// configure adjusts the API's dependencies.
	configure func(*httpapi.Deps)
	// callbackClient, when set, makes the worker deliver job callbacks with it.
	callbackClient *http.Client
	// redis, when set, is the graph's Redis, and workerRedis the worker's (as the worker
	// binary makes it); by default both use the test Redis.
	redis       redis.UniversalClient
	workerRedis asynq.RedisConnOpt
}

var seedOnce sync.Once

func seedSample(t testing.TB) {
	seedOnce.Do(func() {
		if _, _, err := sample.Seed(context.Background(), testenv.Postgres(t)); err != nil {
			t.Fatalf("seed sample: %v", err)
		}
	})
}

func quietLog() *slog.Logger { return slog.New(slog.NewJSONHandler(io.Discard, nil)) }

func startStack(t testing.TB, sc stackConfig) *stack {
	t.Helper()
	seedSample(t)
	if sc.jobCfg == (job.Config{}) {
		sc.jobCfg = apptest.JobConfig
	}
	if sc.sync == 0 {
		sc.sync = 20 * time.Second
	}
	if sc.provider == nil {
		sc.provider = local.New(testenv.Postgres(t))
	}
	st := &stack{}
	st.testServer = startServerWith(t, serverConfig{graph: apptest.Options{JobConfig: &sc.jobCfg, Redis: sc.redis}, jobs: true}, func(d *httpapi.Deps) {
		d.SyncTimeout = sc.sync
		d.AnalysisOptions = report.Options{AllowPrivate: true}
		d.Hosts = crawler.New(crawler.Config{AllowPrivate: true})
		if sc.configure != nil {
			sc.configure(d)
		}
	})
	st.Jobs, st.Queue = st.Graph.Jobs, st.Graph.Queue
	var srv *asynq.Server
	if !sc.noWorker {
		runner := sc.runner
		if runner == nil {
			runner = &report.Builder{Keywords: sc.provider, Crawler: crawler.New(crawler.Config{AllowPrivate: true}),
				Clock: st.Clock, ThinWords: 300, History: jobs.AuditHistory{Jobs: st.Jobs}, Cursors: st.Graph.Cursors}
		}
		cfg := asynq.Config{
			Concurrency: 20, Queues: jobs.Queues, TaskCheckInterval: time.Millisecond,
			DelayedTaskCheckInterval: 50 * time.Millisecond,
			RetryDelayFunc:           func(int, error, *asynq.Task) time.Duration { return 10 * time.Millisecond },
			LogLevel:                 asynq.FatalLevel,
		}
		if sc.workerRedis != nil {
			srv = asynq.NewServer(sc.workerRedis, cfg)
		} else {
			srv = asynq.NewServerFromRedisClient(st.Graph.Redis, cfg)
		}
		mux := asynq.NewServeMux()
		(&jobs.Analysis{Jobs: st.Jobs, Runner: runner, MaxAttempts: sc.jobCfg.MaxAttempts, Log: quietLog(), Metrics: st.Graph.Metrics}).Register(mux)
		if sc.callbackClient != nil {
			worker.ScheduleCallbacks(st.Graph)
			callbacks := worker.Callbacks(st.Graph)
			callbacks.Client = sc.callbackClient
			callbacks.Register(mux)
		}
		if err := srv.Start(mux); err != nil {
			t.Fatal(err)
		}
	}
	if srv != nil {
		t.Cleanup(srv.Shutdown)
	}
	return st
}

// balanceOf reads the account's balance from the ledger.
func (s *stack) balanceOf(t *testing.T, key string) int {
	t.Helper()
	b, err := s.Ledger.Balance(context.Background(), accountID(t, s.testServer, key))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// reservationsOf counts the account's reservations by status.
func reservationsOf(t *testing.T, acc uuid.UUID) map[string]int {
	t.Helper()
	return perKey[string](t, `SELECT status, count(*) FROM reservations WHERE account_id = ANY($1) GROUP BY status`, []uuid.UUID{acc})
}

func testPool(t testing.TB) *pgxpool.Pool { return testenv.Postgres(t) }

func testenvRedis(t testing.TB) *redis.Client { return testenv.Redis(t) }

func asynqInspector(t testing.TB) *asynq.Inspector {
	i := asynq.NewInspectorFromRedisClient(testenv.Redis(t))
	return i
}
