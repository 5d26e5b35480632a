// Command api serves the Content Strategy HTTP API.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/hibiken/asynq"
	"github.com/hibiken/asynqmon"

	"github.com/contentapi/contentapi/internal/auth"
	"github.com/contentapi/contentapi/internal/billing"
	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/config"
	"github.com/contentapi/contentapi/internal/crawler"
	"github.com/contentapi/contentapi/internal/credits"
	"github.com/contentapi/contentapi/internal/dashboard"
	"github.com/contentapi/contentapi/internal/httpapi"
	"github.com/contentapi/contentapi/internal/job"
	"github.com/contentapi/contentapi/internal/metrics"
	"github.com/contentapi/contentapi/internal/postgres"
	"github.com/contentapi/contentapi/internal/ratelimit"
	"github.com/contentapi/contentapi/internal/report"
	"github.com/contentapi/contentapi/jobs"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "api:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	cfg, err := config.Load(os.Getenv)
	if err != nil {
		return err
	}
	logOut := config.NewLogWriter(os.Stdout, 100*time.Millisecond)
	defer logOut.Close()
	log := config.NewLogger(logOut, cfg.LogLevel)
	// Request ids are random UUIDs: draw their randomness in blocks, not a read per request.
	uuid.EnableRandPool()
	log.Info("starting api", "config", config.Describe(os.Getenv))

	applied, err := postgres.Setup(ctx, cfg.MigrateURL())
	if err != nil {
		return err
	}
	log.Info("migrations applied", "applied", applied)
	pool, err := postgres.Connect(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	rdb, err := cfg.ConnectRedis(ctx)
	if err != nil {
		return err
	}
	defer rdb.Close()

	clk := clock.Real{}
	ledger := credits.NewLedger(pool, clk)
	gate := auth.NewGate(pool, rdb, ledger, clk, log)
	ledger.OnChange(func(ctx context.Context, id uuid.UUID) {
		if err := gate.Changed(ctx, id); err != nil {
			log.Warn("account change not pushed; cached usage may lag up to 30s", "account_id", id, "err", err)
		}
	})
	accounts := auth.NewAccounts(pool, ledger, clk, gate)
	billingService := billing.New(billing.ConfigFrom(cfg), pool, ledger, accounts, clk, log)

	signals := job.NewSignals(rdb)
	sub, err := signals.Subscribe(ctx)
	if err != nil {
		return err
	}
	sigCtx, stopSignals := context.WithCancel(context.Background())
	defer stopSignals()
	go signals.Run(sigCtx, sub)
	queue := &jobs.Queue{Client: asynq.NewClientFromRedisClient(rdb), Timeout: cfg.JobTimeout, MaxRetry: cfg.JobMaxAttempts}
	m := metrics.New()
	m.Register(jobs.NewQueueCollector(asynq.NewInspectorFromRedisClient(rdb)))
	jobService := job.NewService(pool, ledger, clk, queue, signals, cfg.JobConfig(), log).WithMetrics(m)
	asynqOpt, err := cfg.AsynqRedis()
	if err != nil {
		return err
	}

	var mailer dashboard.Mailer = dashboard.LogMailer{Log: log}
	if cfg.SMTPURL != "" {
		if mailer, err = dashboard.NewSMTPMailer(cfg.SMTPURL, cfg.SMTPFrom); err != nil {
			return err
		}
	}
	// E-mails leave through an outbox: no request waits on the SMTP server.
	outbox := dashboard.NewOutbox(mailer, log, dashboard.OutboxConfig{})
	mailer = outbox
	limiter := ratelimit.New(rdb)
	dash, err := dashboard.New(dashboard.Deps{Log: log, Pool: pool, Accounts: accounts, Gate: gate, Ledger: ledger,
		Limiter: limiter, Billing: billingService, Jobs: jobService, Mailer: mailer, Clock: clk, URL: cfg.DashboardURL})
	if err != nil {
		return err
	}

	app := httpapi.New(httpapi.Deps{
		Log: log, Pool: pool, Redis: rdb, Accounts: accounts, Gate: gate, Ledger: ledger,
		Limiter: limiter, Clock: clk, PublicBaseURL: cfg.PublicBaseURL,
		DashboardURL: cfg.DashboardURL, DocsURL: cfg.DocsURL, RegisterLimit: cfg.RegisterLimit,
		TrustedProxies: cfg.TrustedProxies, Jobs: jobService, SyncTimeout: cfg.SyncTimeout,
		AnalysisOptions: report.Options{AllowPrivate: cfg.CrawlerAllowPrivate},
		Hosts:           crawler.New(cfg.CrawlerConfig()),
		Metrics:         m, AdminToken: cfg.AdminToken,
		AdminQueues: asynqmon.New(asynqmon.Options{RootPath: "/admin/queues", RedisConnOpt: asynqOpt}),
		Billing:     billingService,
		Dashboard:   dash,
	})

	flushCtx, stopFlush := context.WithCancel(context.Background())
	flushed := make(chan struct{})
	go func() { gate.RunFlusher(flushCtx, 10*time.Second); close(flushed) }()

	serveErr := make(chan error, 1)
	go func() { serveErr <- app.Listen(cfg.APIAddr) }()
	log.Info("listening", "addr", cfg.APIAddr)

	select {
	case err := <-serveErr:
		stopFlush()
		<-flushed
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing requests in flight", "timeout", cfg.ShutdownTimeout.String())
	err = app.ShutdownWithTimeout(cfg.ShutdownTimeout)
	stopFlush()
	<-flushed
	mailCtx, stopMail := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	if mailErr := outbox.Close(mailCtx); mailErr != nil {
		log.Error("shutdown", "err", mailErr)
	}
	stopMail()
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("stopped")
	return nil
}
