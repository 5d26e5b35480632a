package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/contentapi/contentapi/internal/config"
	"github.com/contentapi/contentapi/internal/postgres"
	"github.com/contentapi/contentapi/internal/testenv"
)

// With Wait, New waits for a Redis that is not up: it gives up with the last error after
// STARTUP_TIMEOUT, and, given longer, logs what it waits for and opens once Redis answers.
func TestNewWaitsForRedis(t *testing.T) {
	_, dsn := testenv.PostgresDSN(t)
	addr := testenv.FreeAddr(t) // nothing listens there until the test forwards it to Redis
	load := func(startup string) *config.Config {
		cfg, err := config.Load(func(name string) string {
			return map[string]string{"DATABASE_URL": dsn, "REDIS_URL": "redis://" + addr + "/0", "STARTUP_TIMEOUT": startup}[name]
		})
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}

	start := time.Now()
	_, err := New(context.Background(), load("1s"), Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Wait: true})
	if err == nil || !strings.Contains(err.Error(), "STARTUP_TIMEOUT") || !strings.Contains(err.Error(), addr) {
		t.Fatalf("New with Redis down past STARTUP_TIMEOUT: %v; want the last error and the limit", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("gave up after %s with STARTUP_TIMEOUT=1s", d)
	}

	var log lockedBuffer
	type opened struct {
		a   *App
		err error
	}
	done := make(chan opened, 1)
	go func() {
		a, err := New(context.Background(), load("1m"), Options{Log: slog.New(slog.NewJSONHandler(&log, nil)), Wait: true})
		done <- opened{a, err}
	}()
	for !strings.Contains(log.String(), `"msg":"waiting for Redis"`) {
		select {
		case o := <-done:
			t.Fatalf("New returned (%v) before it waited for Redis; log:\n%s", o.err, log.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	forward(t, addr, testenv.RedisOptions(t).Addr)
	select {
	case o := <-done:
		if o.err != nil {
			t.Fatalf("New once Redis answers: %v", o.err)
		}
		o.a.Close()
	case <-time.After(30 * time.Second):
		t.Fatalf("New still waiting 30 s after Redis came up; log:\n%s", log.String())
	}
	if !strings.Contains(log.String(), `"msg":"Redis ready"`) {
		t.Errorf("no \"Redis ready\" line after the wait; log:\n%s", log.String())
	}
}

// forward listens on addr and relays each connection to target until the test ends.
func forward(t *testing.T, addr, target string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			wg.Add(2)
			go func() { defer wg.Done(); _, _ = io.Copy(s, c); s.Close() }()
			go func() { defer wg.Done(); _, _ = io.Copy(c, s); c.Close() }()
		}
	}()
}

// A start waits out servers that are not up yet and a schema not yet migrated, and stops at
// once on anything a wait cannot mend. Connection failures are real ones from the test
// server: pgx wraps every failed connect in a ConnectError, whatever the server said.
func TestStartupRetryable(t *testing.T) {
	connect := func(edit func(*pgx.ConnConfig)) error {
		cfg, err := pgx.ParseConfig(testenv.ServerDSN())
		if err != nil {
			t.Fatal(err)
		}
		edit(cfg)
		c, err := pgx.ConnectConfig(context.Background(), cfg)
		if err == nil {
			_ = c.Close(context.Background())
			t.Fatal("connected; want a failure")
		}
		return err
	}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", fmt.Errorf("redis: ping: %w", refused), true},
		{"schema not migrated", fmt.Errorf("%w: no migration applied", postgres.ErrSchemaPending), true},
		{"database not created yet", connect(func(c *pgx.ConnConfig) { c.Database = "contentapi_not_created" }), true},
		{"server starting up", &pgconn.PgError{Code: "57P03"}, true},
		{"no such role", connect(func(c *pgx.ConnConfig) { c.User = "contentapi_no_such_role" }), false},
		{"a table missing outside the schema check", &pgconn.PgError{Code: "42P01"}, false},
		{"malformed setting", errors.New("CURSOR_SECRET must be at least 32 characters"), false},
	}
	for _, c := range cases {
		if got := startupRetryable(c.err); got != c.want {
			t.Errorf("%s: retryable %v, want %v (%v)", c.name, got, c.want, c.err)
		}
	}
}
