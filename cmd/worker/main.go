// Command worker runs the asynq server that executes analysis jobs and the scheduler of
// periodic housekeeping.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"github.com/contentapi/contentapi/internal/auth"
	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/config"
	"github.com/contentapi/contentapi/internal/crawler"
	"github.com/contentapi/contentapi/internal/credits"
	"github.com/contentapi/contentapi/internal/job"
	"github.com/contentapi/contentapi/internal/metrics"
	"github.com/contentapi/contentapi/internal/postgres"
	"github.com/contentapi/contentapi/internal/report"
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
	log := config.NewLogger(os.Stdout, cfg.LogLevel)
	log.Info("starting worker", "config", config.Describe(os.Getenv))

	pool, err := postgres.Connect(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	redisOpt, err := cfg.AsynqRedis()
	if err != nil {
		return err
	}

	rdb, err := cfg.ConnectRedis(ctx)
	if err != nil {
		return err
	}
	defer rdb.Close()

	clk := clock.Real{}
	ledger := credits.NewLedger(pool, clk)
	ledger.OnChange(func(ctx context.Context, id uuid.UUID) {
		if err := auth.AccountChanged(ctx, rdb, id); err != nil {
			log.Warn("account change not pushed; cached usage may lag up to 30s", "account_id", id, "err", err)
		}
	})
	m := metrics.New()
	provider, err := keywordProvider(cfg, pool, rdb, log, m)
	if err != nil {
		return err
	}
	asynqClient := asynq.NewClientFromRedisClient(rdb)
	// The sweep's sends find tasks archived or completed under a job's id and replace them.
	queue := &jobs.Queue{Client: asynqClient, Inspector: asynq.NewInspectorFromRedisClient(rdb),
		Timeout: cfg.JobTimeout, MaxRetry: cfg.JobMaxAttempts}
	jobService := job.NewService(pool, ledger, clk, queue, job.NewSignals(rdb), cfg.JobConfig(), log).WithMetrics(m)
	crawlCfg := cfg.CrawlerConfig()
	crawlCfg.OnPage = func(p crawler.Page) { m.CrawlPage(p.Status, p.Error != "") }
	builder := &report.Builder{Keywords: provider, Crawler: crawler.New(crawlCfg), Clock: clk,
		ThinWords: cfg.ThinContentWords}

	mux := asynq.NewServeMux()
	var inflight jobs.InFlight
	mux.Use(inflight.Middleware)
	(&jobs.Maintenance{Ledger: ledger, Log: log, Jobs: jobService, Retention: cfg.JobRetention}).Register(mux)
	(&jobs.Analysis{Jobs: jobService, Runner: builder, MaxAttempts: cfg.JobMaxAttempts, Log: log, Metrics: m,
		Lifetime: ctx}).Register(mux)
	accounts := auth.NewAccounts(pool, ledger, clk, nil)
	scheduler := &jobs.CallbackScheduler{Client: asynqClient, Log: log}
	jobService.OnFinish(func(ctx context.Context, id uuid.UUID) {
		if err := jobService.MarkCallbackPending(ctx, id); err != nil {
			log.Warn("callback state", "job_id", id, "err", err)
		}
		scheduler.Schedule(ctx, id)
	})
	(&jobs.Callbacks{Jobs: jobService, Accounts: accounts, Client: crawler.New(cfg.CrawlerConfig()).HTTPClient(), Log: log}).Register(mux)
	stopMetrics := serveMetrics(cfg.MetricsAddr, m, pool, rdb, log)
	defer stopMetrics()

	// Tasks run under runs, which shutdown cancels once SHUTDOWN_TIMEOUT has passed: the runs
	// still going then hand their jobs back while this worker still holds their tasks, so the
	// tasks are retried at once elsewhere (asynq's own shutdown would put them back while
	// their job rows still said running).
	runs, stopRuns := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRuns()
	srv := asynq.NewServer(redisOpt, asynq.Config{
		Concurrency:     cfg.WorkerConcurrency,
		Queues:          jobs.Queues,
		BaseContext:     func() context.Context { return runs },
		ShutdownTimeout: handBackGrace,
		// asynq polls empty queues; its 1 s default would add up to a second to every call.
		TaskCheckInterval:        cfg.WorkerPollInterval,
		DelayedTaskCheckInterval: 500 * time.Millisecond,
		RetryDelayFunc:           jobs.RetryDelay(cfg.JobRetryDelay),
		Logger:                   asynqLogger{log},
	})
	sched := asynq.NewScheduler(redisOpt, &asynq.SchedulerOpts{Logger: asynqLogger{log}})
	if _, err := sched.Register("@every 1m", jobs.NewRenewPeriodsTask()); err != nil {
		return fmt.Errorf("scheduler: %w", err)
	}
	if _, err := sched.Register("@every 1h", jobs.NewPurgeJobsTask()); err != nil {
		return fmt.Errorf("scheduler: %w", err)
	}
	if err := srv.Start(mux); err != nil {
		return fmt.Errorf("asynq server: %w", err)
	}
	if err := sched.Start(); err != nil {
		srv.Shutdown()
		return fmt.Errorf("scheduler: %w", err)
	}
	log.Info("worker running", "concurrency", cfg.WorkerConcurrency)
	sweepDone := make(chan struct{})
	go func() { defer close(sweepDone); sweep(ctx, jobService, cfg.JobSweepInterval, log) }()
	<-ctx.Done()
	<-sweepDone
	log.Info("shutting down: finishing tasks in flight", "timeout", cfg.ShutdownTimeout.String())
	sched.Shutdown()
	srv.Stop()
	if !waitIdle(&inflight, cfg.ShutdownTimeout) {
		log.Warn("tasks still running at the shutdown timeout; stopping them and handing their jobs back")
		stopRuns()
		waitIdle(&inflight, handBackGrace)
	}
	srv.Shutdown()
	log.Info("stopped")
	return nil
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
