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

	"github.com/contentapi/contentapi/internal/app"
	"github.com/contentapi/contentapi/internal/app/api"
	"github.com/contentapi/contentapi/internal/config"
	"github.com/contentapi/contentapi/internal/httpapi"
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
	logOut := app.NewLogWriter(os.Stdout, 100*time.Millisecond)
	defer logOut.Close()
	log := app.NewLogger(logOut, cfg.LogLevel)
	// Request ids are random UUIDs: draw their randomness in blocks, not a read per request.
	uuid.EnableRandPool()
	log.Info("starting api", "config", app.Describe(os.Getenv))

	// PostgreSQL and Redis may come up after the api: it waits for them (the log says so),
	// and it listens, so /readyz answers, only once both answer and the schema is migrated.
	a, err := app.New(ctx, cfg, app.Options{Log: log, Migrate: true, Wait: true})
	if err != nil {
		return err
	}
	defer a.Close()
	deps, err := api.Deps(a)
	if err != nil {
		return err
	}
	deps.Lifetime = ctx // SIGTERM ends MCP sessions and waits for jobs before the drain
	srv := httpapi.New(deps)
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Listen(cfg.APIAddr) }()
	log.Info("listening", "addr", cfg.APIAddr)

	select {
	case err := <-serveErr:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: MCP sessions and waits for jobs end now; finishing requests in flight", "timeout", cfg.ShutdownTimeout.String())
	err = srv.ShutdownWithTimeout(cfg.ShutdownTimeout)
	a.Close() // flushes key use and drains the e-mail outbox
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("stopped")
	return nil
}
