package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/contentapi/contentapi/internal/config"
	"github.com/contentapi/contentapi/internal/job"
	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/cache"
	"github.com/contentapi/contentapi/internal/keywords/dataforseo"
	"github.com/contentapi/contentapi/internal/keywords/local"
)

// keywordProvider builds the configured keyword data source behind the Redis answer cache.
func keywordProvider(cfg *config.Config, pool *pgxpool.Pool, rdb redis.UniversalClient, log *slog.Logger) (keywords.Provider, error) {
	var p keywords.Provider
	switch cfg.KeywordProvider {
	case "dataforseo":
		p = dataforseo.New(dataforseo.Config{BaseURL: cfg.DataForSEOBaseURL, Login: cfg.DataForSEOLogin,
			Password: cfg.DataForSEOPassword, Logger: log})
	default:
		p = local.New(pool)
	}
	return cache.New(p, rdb, cfg.KeywordCacheTTL, cache.WithLogger(log)), nil
}

// retryDelay doubles from base for each retry, up to a minute: a temporary provider or site
// failure gets a quick second chance without hammering it.
func retryDelay(base time.Duration) asynq.RetryDelayFunc {
	return func(n int, _ error, _ *asynq.Task) time.Duration {
		d := base
		for i := 0; i < n && d < time.Minute; i++ {
			d *= 2
		}
		return min(d, time.Minute)
	}
}

// sweep runs the job sweep every interval until ctx ends.
func sweep(ctx context.Context, jobs *job.Service, every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r, err := jobs.Sweep(ctx)
			if err != nil && ctx.Err() == nil {
				log.Error("job sweep", "err", err)
			} else if r != (job.SweepResult{}) {
				log.Info("job sweep", "resent", r.Resent, "resumed", r.Resumed, "refunded", r.Refunded)
			}
		}
	}
}
