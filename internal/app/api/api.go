// Package api builds the API binary's own parts over the shared graph: the dashboard and its
// e-mail outbox, the queue dashboard, the key-use flusher. It is apart from internal/app so
// that the worker and ctl binaries do not link Fiber, the dashboard or asynqmon.
package api

import (
	"context"

	"github.com/hibiken/asynqmon"

	"github.com/contentapi/contentapi/internal/app"
	"github.com/contentapi/contentapi/internal/dashboard"
	"github.com/contentapi/contentapi/internal/httpapi"
	"github.com/contentapi/contentapi/internal/ratelimit"
	"github.com/contentapi/contentapi/internal/report"
	"github.com/contentapi/contentapi/jobs"
)

// Deps is what the HTTP API is built from (httpapi.New), with the dashboard and its e-mail
// outbox. It starts writing the keys' last use, and counts the queues' tasks in Metrics;
// a.Close writes the last use once more and drains the outbox for up to SHUTDOWN_TIMEOUT.
// Call it once per App.
func Deps(a *app.App) (httpapi.Deps, error) {
	cfg := a.Config
	redisOpt, err := app.AsynqRedis(cfg)
	if err != nil {
		return httpapi.Deps{}, err
	}
	a.Metrics.Register(jobs.NewQueueCollector(a.Queue.Inspector))
	a.StartFlusher()
	var mailer dashboard.Mailer = dashboard.LogMailer{Log: a.Log}
	if cfg.SMTPURL != "" {
		if mailer, err = dashboard.NewSMTPMailer(cfg.SMTPURL, cfg.SMTPFrom); err != nil {
			return httpapi.Deps{}, err
		}
	}
	// E-mails leave through an outbox: no request waits on the SMTP server.
	outbox := dashboard.NewOutbox(mailer, a.Log, dashboard.OutboxConfig{})
	a.OnClose(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
		defer cancel()
		if err := outbox.Close(ctx); err != nil {
			a.Log.Error("shutdown", "err", err)
		}
	})
	limiter := ratelimit.New(a.Redis)
	dash, err := dashboard.New(dashboard.Deps{Log: a.Log, Pool: a.Pool, Accounts: a.Accounts, Gate: a.Gate,
		Ledger: a.Ledger, Limiter: limiter, Billing: a.Billing, Jobs: a.Jobs, Mailer: outbox, Clock: a.Clock,
		URL: cfg.DashboardURL, AnalysisOptions: report.Options{AllowPrivate: cfg.CrawlerAllowPrivate}, Cursors: a.Cursors})
	if err != nil {
		return httpapi.Deps{}, err
	}
	queues := asynqmon.New(asynqmon.Options{RootPath: "/admin/queues", RedisConnOpt: redisOpt})
	a.OnClose(func() { _ = queues.Close() })
	return httpapi.Deps{
		Log: a.Log, Pool: a.Pool, Redis: a.Redis, Accounts: a.Accounts, Gate: a.Gate, Ledger: a.Ledger,
		Limiter: limiter, Clock: a.Clock, PublicBaseURL: cfg.PublicBaseURL,
		DashboardURL: cfg.DashboardURL, DocsURL: cfg.DocsURL, RegisterLimit: cfg.RegisterLimit,
		AccessLogSample: cfg.AccessLogSample, AccessLogSlow: cfg.AccessLogSlow,
		TrustedProxies: cfg.TrustedProxies, Jobs: a.Jobs, SyncTimeout: cfg.SyncTimeout,
		MCPAllowedOrigins: cfg.MCPAllowedOrigins,
		AnalysisOptions:   report.Options{AllowPrivate: cfg.CrawlerAllowPrivate},
		Hosts:             a.Crawler,
		Cursors:           a.Cursors,
		Renderers:         jobs.Browsers{Redis: a.Redis},
		Metrics:           a.Metrics, AdminToken: cfg.AdminToken,
		AdminQueues: queues, Billing: a.Billing, Dashboard: dash,
	}, nil
}
