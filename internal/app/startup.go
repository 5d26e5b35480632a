package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/postgres"
)

// The retry delays of a start waiting on PostgreSQL, Redis or the schema: doubled after each
// attempt from the first to the last, then kept there.
const (
	firstRetry = 100 * time.Millisecond
	lastRetry  = 2 * time.Second
	// tryTimeout bounds one attempt to connect or to check the schema (not a migration).
	tryTimeout = 10 * time.Second
)

// await runs try until it succeeds. With opts.Wait, an error that means a server is not up
// yet (see startupRetryable) is logged and tried again after a delay growing from 100 ms to
// 2 s, until STARTUP_TIMEOUT has passed; any other error, or any error without opts.Wait,
// is returned at once. timeout bounds each attempt (0: no bound).
func (a *App) await(ctx context.Context, wait bool, what string, timeout time.Duration, try func(ctx context.Context) error) error {
	start := time.Now()
	delay := firstRetry
	for attempt := 1; ; attempt++ {
		tctx, cancel := ctx, context.CancelFunc(func() {})
		if timeout > 0 {
			tctx, cancel = context.WithTimeout(ctx, timeout)
		}
		err := try(tctx)
		cancel()
		if err == nil {
			if attempt > 1 {
				a.Log.Info(what+" ready", "attempts", attempt, "waited", time.Since(start).Round(time.Millisecond).String())
			}
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		}
		if !wait || !startupRetryable(err) {
			return err
		}
		if time.Since(start)+delay > a.Config.StartupTimeout {
			return fmt.Errorf("waited %s (STARTUP_TIMEOUT) for %s: %w", a.Config.StartupTimeout, what, err)
		}
		a.Log.Warn("waiting for "+what, "attempt", attempt, "retry_in", delay.String(), "err", err)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-t.C:
		}
		delay = min(delay*2, lastRetry)
	}
}

// startupRetryable reports whether err, met at start, may go away by itself: PostgreSQL or
// Redis not (yet) reachable or still starting, the database not created yet, or its schema
// not migrated yet (the api creates and migrates it). Refused credentials are not retried.
func startupRetryable(err error) bool {
	if errors.Is(err, postgres.ErrSchemaPending) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "3D000": // invalid_catalog_name: the database does not exist yet
			return true
		case strings.HasPrefix(pgErr.Code, "28"): // invalid authorization
			return false
		}
	}
	return apperr.IsUnavailable(err)
}
