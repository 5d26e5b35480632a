package apperr

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/redis/go-redis/v9"
)

// RetryAfterUnavailable is the Retry-After, in seconds, of a SERVICE_UNAVAILABLE answer.
const RetryAfterUnavailable = 2

// RetryAfterProviderRateLimit is the Retry-After, in seconds, of PROVIDER_RATE_LIMITED: the
// keyword provider's rate limit counts requests per minute.
const RetryAfterProviderRateLimit = 60

// unavailableSQLStates are PostgreSQL errors that mean the server cannot serve now (it is
// shutting down, starting, or out of connection slots), not that the request is wrong.
var unavailableSQLStates = map[string]bool{
	"57P01": true, // admin_shutdown
	"57P02": true, // crash_shutdown
	"57P03": true, // cannot_connect_now
	"53300": true, // too_many_connections
}

// IsUnavailable reports whether err means PostgreSQL or Redis could not be reached or cannot
// serve for now: a failed connect or a dead connection (network errors, EOF, pgconn's
// safe-to-retry errors, timeouts including a deadline while waiting for a pooled
// connection), SQLSTATE class 08 and the shutdown / starting-up codes, a closed or exhausted
// go-redis pool, and Redis's LOADING, MASTERDOWN, READONLY, TRYAGAIN and CLUSTERDOWN
// replies. Callers answer such errors with SERVICE_UNAVAILABLE and Retry-After: the same
// request may well succeed shortly.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return strings.HasPrefix(pgErr.Code, "08") || unavailableSQLStates[pgErr.Code]
	}
	if pgconn.SafeToRetry(err) || pgconn.Timeout(err) {
		return true
	}
	if errors.Is(err, redis.ErrClosed) || errors.Is(err, redis.ErrPoolTimeout) || errors.Is(err, redis.ErrPoolExhausted) ||
		redis.IsLoadingError(err) || redis.IsMasterDownError(err) || redis.IsReadOnlyError(err) ||
		redis.IsTryAgainError(err) || redis.IsClusterDownError(err) || redis.IsMaxClientsError(err) {
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, context.DeadlineExceeded)
}
