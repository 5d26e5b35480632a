package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/contentapi/contentapi/internal/config"
	"github.com/contentapi/contentapi/internal/job"
	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/cache"
	"github.com/contentapi/contentapi/internal/keywords/dataforseo"
	"github.com/contentapi/contentapi/internal/keywords/local"
	"github.com/contentapi/contentapi/internal/metrics"
)

// keywordProvider builds the configured keyword data source behind the Redis answer cache.
func keywordProvider(cfg *config.Config, pool *pgxpool.Pool, rdb redis.UniversalClient, log *slog.Logger, m *metrics.Metrics) (keywords.Provider, error) {
	var p keywords.Provider
	switch cfg.KeywordProvider {
	case "dataforseo":
		p = dataforseo.New(dataforseo.Config{BaseURL: cfg.DataForSEOBaseURL, Login: cfg.DataForSEOLogin,
			Password: cfg.DataForSEOPassword, Logger: log})
	default:
		p = local.New(pool)
	}
	c := cache.New(p, rdb, cfg.KeywordCacheTTL, cache.WithLogger(log))
	labels := map[string]string{"provider": p.Name()}
	m.CounterFunc("contentapi_keyword_cache_hits_total", "Keyword provider answers served from the Redis cache.", labels,
		func() float64 { return float64(c.Hits()) })
	m.CounterFunc("contentapi_keyword_provider_calls_total", "Calls that reached the keyword provider (cache misses).", labels,
		func() float64 { return float64(c.Misses()) })
	return c, nil
}

// serveMetrics exposes the worker's metrics and health on their own port (not published
// outside the cluster): /healthz answers while the process runs, /readyz when PostgreSQL and
// Redis answer. It returns a function that stops the server.
func serveMetrics(addr string, m *metrics.Metrics, pool *pgxpool.Pool, rdb redis.UniversalClient, log *slog.Logger) func() {
	if addr == "" {
		return func() {}
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		w.Header().Set("Content-Type", "application/json")
		if pool.Ping(ctx) != nil || rdb.Ping(ctx).Err() != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"status":"unavailable"}`))
			return
		}
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	})
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server", "addr", addr, "err", err)
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
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
				log.Info("job sweep", "resent", r.Resent, "resumed", r.Resumed, "refunded", r.Refunded, "unsent", r.Unsent)
			}
		}
	}
}
