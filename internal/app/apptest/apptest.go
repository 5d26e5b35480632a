// Package apptest builds the service's graph (app.App) for tests, over internal/testenv's
// database and Redis, with the test defaults below; it is closed when the test ends.
package apptest

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/contentapi/contentapi/internal/app"
	"github.com/contentapi/contentapi/internal/billing/billingtest"
	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/config"
	"github.com/contentapi/contentapi/internal/job"
	"github.com/contentapi/contentapi/internal/testenv"
)

// JobConfig is the job tuning tests run with: three attempts, and a deadline and staleness
// no test reaches unless it moves its clock on purpose.
var JobConfig = job.Config{MaxAttempts: 3, StaleAfter: 30 * time.Second, Deadline: time.Hour, EnqueueGrace: 10 * time.Second}

// env are the configuration variables tests run with, under Options.Env: the crawler may
// reach loopback addresses (the tests' sites), and a task runs for at most a minute.
var env = map[string]string{
	"CRAWLER_ALLOW_PRIVATE": "true",
	"JOB_TIMEOUT":           "1m",
	"PUBLIC_BASE_URL":       "http://api.test",
}

// Options change the graph a test gets; the zero value is the test defaults.
type Options struct {
	// Clock defaults to the real clock; pass a *clock.Manual to move time.
	Clock clock.Clock
	// Log defaults to one that discards.
	Log *slog.Logger
	// Pool and Redis default to the package's testenv database and Redis.
	Pool  *pgxpool.Pool
	Redis redis.UniversalClient
	// JobConfig defaults to JobConfig.
	JobConfig *job.Config
	// Env sets configuration variables over the test defaults (DASHBOARD_URL, ...).
	Env map[string]string
	// Stripe, when set, configures billing against this Stripe API address (billingtest's
	// fake) with billingtest's keys and prices.
	Stripe string
}

// New returns the graph, closed when the test ends.
func New(t testing.TB, o Options) *app.App {
	t.Helper()
	stripe := map[string]string{}
	if o.Stripe != "" {
		stripe = map[string]string{"STRIPE_API_BASE": o.Stripe,
			"STRIPE_SECRET_KEY": billingtest.SecretKey, "STRIPE_WEBHOOK_SECRET": billingtest.WebhookSecret,
			"STRIPE_PRICE_PRO_MONTHLY": billingtest.PriceProMonthly, "STRIPE_PRICE_PRO_ANNUAL": billingtest.PriceProAnnual,
			"STRIPE_PRICE_SCALE_MONTHLY": billingtest.PriceScaleMonthly, "STRIPE_PRICE_SCALE_ANNUAL": billingtest.PriceScaleAnnual}
	}
	// The keyword columns' files in the test's own directory, not the user's cache.
	columns := map[string]string{"KEYWORD_COLUMNS_DIR": t.TempDir()}
	cfg, err := config.Load(func(name string) string {
		for _, m := range []map[string]string{o.Env, stripe, columns, env} {
			if v, ok := m[name]; ok {
				return v
			}
		}
		return ""
	})
	if err != nil {
		t.Fatalf("apptest: %v", err)
	}
	if o.Pool == nil {
		o.Pool = testenv.Postgres(t)
	}
	if o.Redis == nil {
		o.Redis = testenv.Redis(t)
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewJSONHandler(io.Discard, nil))
	}
	if o.JobConfig == nil {
		o.JobConfig = &JobConfig
	}
	a, err := app.New(context.Background(), cfg, app.Options{Log: o.Log, Clock: o.Clock, Pool: o.Pool, Redis: o.Redis,
		JobConfig: o.JobConfig})
	if err != nil {
		t.Fatalf("apptest: %v", err)
	}
	t.Cleanup(a.Close)
	return a
}
