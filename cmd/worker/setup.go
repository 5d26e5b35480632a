package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/contentapi/contentapi/internal/app"
	"github.com/contentapi/contentapi/internal/job"
)

// serveMetrics exposes the worker's metrics and health on their own port (not published
// outside the cluster): /healthz answers while the process runs, /readyz once ready holds
// the App (the worker runs tasks) and while PostgreSQL and Redis answer; until then /readyz
// answers 503 "starting" and /metrics 503. It returns a function that stops the server.
func serveMetrics(addr string, ready *atomic.Pointer[app.App], log *slog.Logger) func() {
	if addr == "" {
		return func() {}
	}
	mux := http.NewServeMux()
	var metrics sync.Once
	var metricsHandler http.Handler
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		a := ready.Load()
		if a == nil {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		metrics.Do(func() { metricsHandler = a.Metrics.Handler() })
		metricsHandler.ServeHTTP(w, r)
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		w.Header().Set("Content-Type", "application/json")
		a := ready.Load()
		if a == nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"status":"starting"}`))
			return
		}
		if a.Pool.Ping(ctx) != nil || a.Redis.Ping(ctx).Err() != nil {
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
