package app

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/contentapi/contentapi/internal/postgres"
)

// A start waits out servers that are not up yet and a schema not yet migrated, and stops at
// once on anything a wait cannot mend.
func TestStartupRetryable(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", fmt.Errorf("redis: ping: %w", refused), true},
		{"schema not migrated", fmt.Errorf("%w: no migration applied", postgres.ErrSchemaPending), true},
		{"database not created yet", fmt.Errorf("postgres: ping: %w", &pgconn.PgError{Code: "3D000"}), true},
		{"server starting up", &pgconn.PgError{Code: "57P03"}, true},
		{"wrong password", fmt.Errorf("postgres: ping: %w", &pgconn.PgError{Code: "28P01"}), false},
		{"no such role", &pgconn.PgError{Code: "28000"}, false},
		{"a table missing outside the schema check", &pgconn.PgError{Code: "42P01"}, false},
		{"malformed setting", errors.New("CURSOR_SECRET must be at least 32 characters"), false},
	}
	for _, c := range cases {
		if got := startupRetryable(c.err); got != c.want {
			t.Errorf("%s: retryable %v, want %v", c.name, got, c.want)
		}
	}
}
