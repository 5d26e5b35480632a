// Package app builds the service's object graph once: the PostgreSQL pool, Redis, the
// credits ledger and the gate it notifies, job signals, the analysis queue, the job
// service, accounts, billing, metrics, the crawler and the worker's report builder. The
// api, worker and ctl binaries open one App and keep only their own loops; tests build the
// same graph through apptest. Close ends everything the App started, in reverse order.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/contentapi/contentapi/internal/auth"
	"github.com/contentapi/contentapi/internal/billing"
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

// App is every long-lived dependency of the binaries, built once and passed down.
type App struct {
	Config   *config.Config
	Log      *slog.Logger
	Clock    clock.Clock
	Pool     *pgxpool.Pool
	Redis    redis.UniversalClient
	Ledger   *credits.Ledger
	Gate     *auth.Gate
	Accounts *auth.Accounts
	Signals  *job.Signals
	Queue    *jobs.Queue
	Jobs     *job.Service
	Billing  *billing.Service
	Metrics  *metrics.Metrics
	// Crawler checks hosts for the API, crawls for the worker and delivers callbacks; the
	// pages it fetches are counted in Metrics.
	Crawler *crawler.Crawler
	// JobConfig is the job path's tuning the job service was built with.
	JobConfig job.Config
	// Cursors signs and checks keyword answers' cursors, alike in the API and the worker.
	Cursors *report.Cursors

	closeMu sync.Mutex // OnClose may be called from goroutines started at start-up
	closers []func()
}

// Options replace parts of the graph New would build from the configuration; tests use
// them. The zero value builds everything as the binaries run it.
type Options struct {
	// Log defaults to JSON lines on standard output at LOG_LEVEL.
	Log *slog.Logger
	// Clock defaults to the real clock.
	Clock clock.Clock
	// Pool and Redis, when given, are used instead of connecting to DATABASE_URL and
	// REDIS_URL; the App does not close them.
	Pool  *pgxpool.Pool
	Redis redis.UniversalClient
	// JobConfig, when set, replaces the job tuning derived from the JOB_ variables.
	JobConfig *job.Config
	// Migrate applies pending migrations (on DATABASE_MIGRATE_URL) before connecting, as
	// the API does at start.
	Migrate bool
	// Wait makes New wait, up to STARTUP_TIMEOUT, for PostgreSQL and Redis to answer and,
	// without Migrate, for the schema to be migrated, logging what it waits for; api and
	// worker can then start in any order and before their servers. Without it the first
	// failure is returned.
	Wait bool
}

// New opens the graph. On an error, what was already opened is closed again.
func New(ctx context.Context, cfg *config.Config, opts Options) (*App, error) {
	a := &App{Config: cfg, Log: opts.Log, Clock: opts.Clock, Pool: opts.Pool, Redis: opts.Redis, JobConfig: JobConfig(cfg)}
	if err := a.open(ctx, opts); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// open builds what opts did not give, registering what Close must undo as it goes.
func (a *App) open(ctx context.Context, opts Options) error {
	cfg := a.Config
	if a.Log == nil {
		a.Log = NewLogger(os.Stdout, cfg.LogLevel)
	}
	if a.Clock == nil {
		a.Clock = clock.Real{}
	}
	if opts.JobConfig != nil {
		a.JobConfig = *opts.JobConfig
	}
	if opts.Migrate {
		var applied []string
		err := a.await(ctx, opts.Wait, "PostgreSQL to apply migrations", 0, func(ctx context.Context) (err error) {
			applied, err = postgres.Setup(ctx, cfg.MigrateURL())
			return err
		})
		if err != nil {
			return err
		}
		a.Log.Info("migrations applied", "applied", applied)
	}
	if a.Pool == nil {
		err := a.await(ctx, opts.Wait, "PostgreSQL", tryTimeout, func(ctx context.Context) (err error) {
			a.Pool, err = postgres.Connect(ctx, cfg.DatabaseURL)
			return err
		})
		if err != nil {
			return err
		}
		a.OnClose(a.Pool.Close)
	}
	if opts.Wait && !opts.Migrate {
		err := a.await(ctx, true, "the database schema (the api applies the migrations at start)", tryTimeout, func(ctx context.Context) error {
			return postgres.SchemaReady(ctx, a.Pool)
		})
		if err != nil {
			return err
		}
	}
	if a.Redis == nil {
		var rdb redis.UniversalClient
		err := a.await(ctx, opts.Wait, "Redis", tryTimeout, func(ctx context.Context) (err error) {
			rdb, err = ConnectRedis(ctx, cfg)
			return err
		})
		if err != nil {
			return err
		}
		a.Redis = rdb
		a.OnClose(func() { _ = rdb.Close() })
	}

	cursors, err := cursorKey(ctx, cfg, a.Pool)
	if err != nil {
		return err
	}
	a.Cursors = cursors
	a.Metrics = metrics.New()
	a.Ledger = credits.NewLedger(a.Pool, a.Clock)
	a.Gate = auth.NewGate(a.Pool, a.Redis, a.Ledger, a.Clock, a.Log)
	a.OnClose(a.Gate.Close)
	// Every replica hears of a committed credit change, so cached usage is rebuilt.
	a.Ledger.OnChange(func(ctx context.Context, id uuid.UUID) {
		if err := a.Gate.Changed(ctx, id); err != nil {
			a.Log.Warn("account change not pushed; cached usage may lag up to 30s", "account_id", id, "err", err)
		}
	})
	a.Accounts = auth.NewAccounts(a.Pool, a.Ledger, a.Clock, a.Gate)
	a.Billing = billing.New(BillingConfig(cfg), a.Pool, a.Ledger, a.Accounts, a.Clock, a.Log)

	a.Signals = job.NewSignals(a.Redis)
	if err := a.startSignals(ctx); err != nil {
		return err
	}
	a.Queue = jobs.NewQueue(a.Redis, cfg.JobTimeout, a.JobConfig.MaxAttempts)
	a.Jobs = job.NewService(a.Pool, a.Ledger, a.Clock, a.Queue, a.Signals, a.JobConfig, a.Log).WithMetrics(a.Metrics)

	crawlCfg := CrawlerConfig(cfg)
	crawlCfg.OnPage = func(p crawler.Page) { a.Metrics.CrawlPage(p.Status, p.Error != "") }
	a.Crawler = crawler.New(crawlCfg)
	a.OnClose(a.Crawler.Close)
	return nil
}

// startSignals subscribes to job ends and delivers them to waiters until Close.
func (a *App) startSignals(ctx context.Context) error {
	sub, err := a.Signals.Subscribe(ctx)
	if err != nil {
		return err
	}
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() { defer close(done); a.Signals.Run(runCtx, sub) }()
	a.OnClose(func() { stop(); <-done })
	return nil
}

// StartFlusher writes the keys' last use every 10 s until Close, then once more; only the
// API authenticates, so only it has key use to write.
func (a *App) StartFlusher() {
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); a.Gate.RunFlusher(ctx, 10*time.Second) }()
	a.OnClose(func() { stop(); <-done })
}

// OnClose adds fn to what Close runs, before everything added earlier: a binary's own parts
// built over the App end before what they use.
func (a *App) OnClose(fn func()) {
	a.closeMu.Lock()
	defer a.closeMu.Unlock()
	a.closers = append(a.closers, fn)
}

// Close stops what the App started and closes what it opened, last opened first. It may
// be called more than once.
func (a *App) Close() {
	a.closeMu.Lock()
	closers := a.closers
	a.closers = nil
	a.closeMu.Unlock()
	for i := len(closers) - 1; i >= 0; i-- {
		closers[i]()
	}
}

// JobConfig is the job path's tuning from the JOB_ variables. A queued job's task is sent
// again after two sweep intervals (a send under the job's own task id never doubles a task
// still queued).
func JobConfig(c *config.Config) job.Config {
	return job.Config{MaxAttempts: c.JobMaxAttempts, StaleAfter: c.JobStaleAfter,
		Deadline: c.JobTimeout*time.Duration(c.JobMaxAttempts) + c.JobStaleAfter*2, EnqueueGrace: c.JobSweepInterval * 2}
}

// CrawlerConfig is the crawler's configuration from the CRAWLER_ variables, and its
// rendering's from CHROME_PATH and the RENDER_ ones.
func CrawlerConfig(c *config.Config) crawler.Config {
	return crawler.Config{UserAgent: c.CrawlerUserAgent, AllowPrivate: c.CrawlerAllowPrivate, Timeout: c.CrawlerTimeout,
		Render: crawler.RenderConfig{BrowserPath: crawler.FindBrowser(c.ChromePath),
			Concurrency: c.RenderConcurrency, Timeout: c.RenderTimeout, MemoryMB: c.RenderMemoryMB,
			Idle: c.RenderIdle}}
}

// BillingConfig is the billing service's configuration from the STRIPE_ variables.
func BillingConfig(c *config.Config) billing.Config {
	return billing.Config{
		SecretKey: c.StripeSecretKey, WebhookSecret: c.StripeWebhookSecret, APIBase: c.StripeAPIBase,
		DashboardURL: c.DashboardURL,
		Prices: billing.Prices{ProMonthly: c.StripePriceProMonthly, ProAnnual: c.StripePriceProAnnual,
			ScaleMonthly: c.StripePriceScaleMonthly, ScaleAnnual: c.StripePriceScaleAnnual},
	}
}

// cursorKey is CURSOR_SECRET when set (at least 32 bytes), else the key the database made
// once (migration 00028), which every process on the database shares.
func cursorKey(ctx context.Context, cfg *config.Config, pool *pgxpool.Pool) (*report.Cursors, error) {
	if cfg.CursorSecret != "" {
		if len(cfg.CursorSecret) < 32 {
			return nil, fmt.Errorf("CURSOR_SECRET must be at least 32 characters")
		}
		return report.NewCursors([]byte(cfg.CursorSecret)), nil
	}
	var key []byte
	if err := pool.QueryRow(ctx, `SELECT key FROM service_keys WHERE name = 'cursor'`).Scan(&key); err != nil {
		return nil, fmt.Errorf("cursor key: %w", err)
	}
	return report.NewCursors(key), nil
}
