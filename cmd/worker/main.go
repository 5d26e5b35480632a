// Command worker runs the asynq server that executes analysis jobs and the scheduler of
// periodic housekeeping.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hibiken/asynq"

	"github.com/contentapi/contentapi/internal/app"
	"github.com/contentapi/contentapi/internal/app/worker"
	"github.com/contentapi/contentapi/internal/config"
	"github.com/contentapi/contentapi/jobs"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	cfg, err := config.LoadLookup(os.LookupEnv) // METRICS_ADDR= turns metrics off
	if err != nil {
		return err
	}
	log := app.NewLogger(os.Stdout, cfg.LogLevel)
	log.Info("starting worker", "config", app.Describe(os.Getenv))
	if limit, ok := worker.MemoryLimit(cfg); ok && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(limit)
	}
	redisOpt, err := app.AsynqRedis(cfg)
	if err != nil {
		return err
	}
	// Health and metrics answer while the worker waits for PostgreSQL, Redis and the schema
	// the api migrates (the log says which); /readyz turns ready once it runs tasks.
	var ready atomic.Pointer[app.App]
	stopMetrics := serveMetrics(cfg.MetricsAddr, &ready, log)
	defer stopMetrics()
	a, err := app.New(ctx, cfg, app.Options{Log: log, Wait: true})
	if err != nil {
		return err
	}
	defer a.Close()
	// The browser starts beside the rest (seconds on a busy machine): tasks are taken
	// meanwhile, and a render asked for before it is up waits for it. It must have finished
	// before a.Close, which this deferred wait (run first) ensures.
	rendering := make(chan struct{})
	go func() { defer close(rendering); worker.StartRendering(ctx, a) }()
	defer func() { <-rendering }()

	mux := asynq.NewServeMux()
	var inflight jobs.InFlight
	mux.Use(inflight.Middleware)
	worker.Maintenance(a).Register(mux)
	runner, err := worker.ReportBuilder(ctx, a)
	if err != nil {
		return err
	}
	analysis := &jobs.Analysis{Jobs: a.Jobs, Runner: runner, MaxAttempts: cfg.JobMaxAttempts, Log: log, Metrics: a.Metrics,
		Lifetime: ctx}
	analysis.Register(mux)
	defer analysis.Wait() // hand-back retries end with ctx; they use the pool a.Close closes
	worker.Callbacks(a).Register(mux)
	worker.ScheduleCallbacks(a)

	// Tasks run under runs, which shutdown cancels once SHUTDOWN_TIMEOUT has passed: the runs
	// still going then hand their jobs back while this worker still holds their tasks, so the
	// tasks are retried at once elsewhere (asynq's own shutdown would put them back while
	// their job rows still said running).
	runs, stopRuns := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRuns()
	srv, sched, err := newServer(cfg, redisOpt, runs, log)
	if err != nil {
		return err
	}
	if err := srv.Start(mux); err != nil {
		return fmt.Errorf("asynq server: %w", err)
	}
	if err := sched.Start(); err != nil {
		srv.Shutdown()
		return fmt.Errorf("scheduler: %w", err)
	}
	ready.Store(a)
	log.Info("worker running", "concurrency", cfg.WorkerConcurrency)
	sweep(ctx, a.Jobs, cfg.JobSweepInterval, log)
	log.Info("shutting down: finishing tasks in flight", "timeout", cfg.ShutdownTimeout.String())
	// Whatever a task or a browser does, the process ends at SHUTDOWN_TIMEOUT: the browsers
	// are killed and the jobs still held are taken over once their heartbeats go stale.
	// The timer is never stopped: closing the pools after this function may hang too.
	time.AfterFunc(cfg.ShutdownTimeout, func() {
		a.Crawler.Close()
		log.Error("still stopping at the shutdown timeout; exiting")
		os.Exit(1)
	})
	grace := shutdownGrace(cfg.ShutdownTimeout)
	sched.Shutdown()
	srv.Stop()
	if !waitIdle(&inflight, cfg.ShutdownTimeout-grace) {
		log.Warn("tasks still running at the shutdown timeout; stopping them and handing their jobs back")
		stopRuns()
		a.Crawler.Close() // a render ends with its browser, whatever the page does
		waitIdle(&inflight, grace/2)
	}
	srv.Shutdown()
	log.Info("stopped")
	return nil
}

// shutdownGrace is the end of SHUTDOWN_TIMEOUT kept for the runs stopped at shutdown to hand
// their jobs back and for asynq to let go of their tasks (half each), so the whole shutdown
// fits in SHUTDOWN_TIMEOUT: handBackGrace, or a third of a shorter timeout.
func shutdownGrace(timeout time.Duration) time.Duration {
	return min(handBackGrace, timeout/3)
}

// newServer builds the asynq server, whose tasks run under runs, and the scheduler of the
// periodic housekeeping tasks.
func newServer(cfg *config.Config, redisOpt asynq.RedisConnOpt, runs context.Context, log *slog.Logger) (*asynq.Server, *asynq.Scheduler, error) {
	srv := asynq.NewServer(redisOpt, asynq.Config{
		Concurrency:     cfg.WorkerConcurrency,
		Queues:          jobs.Queues,
		BaseContext:     func() context.Context { return runs },
		ShutdownTimeout: shutdownGrace(cfg.ShutdownTimeout) / 2,
		// asynq polls empty queues; its 1 s default would add up to a second to every call.
		TaskCheckInterval:        cfg.WorkerPollInterval,
		DelayedTaskCheckInterval: 500 * time.Millisecond,
		RetryDelayFunc:           jobs.RetryDelay(cfg.JobRetryDelay),
		Logger:                   asynqLogger{log},
	})
	sched := asynq.NewScheduler(redisOpt, &asynq.SchedulerOpts{Logger: asynqLogger{log}})
	if _, err := sched.Register("@every 1m", jobs.NewRenewPeriodsTask()); err != nil {
		return nil, nil, fmt.Errorf("scheduler: %w", err)
	}
	if _, err := sched.Register("@every 1h", jobs.NewPurgeJobsTask()); err != nil {
		return nil, nil, fmt.Errorf("scheduler: %w", err)
	}
	return srv, sched, nil
}

// handBackGrace is how long runs stopped at shutdown get to hand their jobs back.
const handBackGrace = 5 * time.Second

// waitIdle waits up to timeout for the tasks in flight to end; it reports whether they did.
func waitIdle(f *jobs.InFlight, timeout time.Duration) bool {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-f.Idle():
		return true
	case <-t.C:
		return false
	}
}
