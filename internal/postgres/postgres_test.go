package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/contentapi/contentapi/internal/postgres"
	"github.com/contentapi/contentapi/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// freshDSN names a database that does not exist yet on the test server (dropped after the
// test), with query parameters appended.
func freshDSN(t *testing.T, params string) string {
	t.Helper()
	buf := make([]byte, 6)
	_, _ = rand.Read(buf)
	name := "contentapi_pgtest_" + hex.EncodeToString(buf)
	cfg, err := pgx.ParseConfig(testenv.ServerDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if c, err := pgx.Connect(ctx, testenv.ServerDSN()); err == nil {
			_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			c.Close(ctx)
		}
	})
	return fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable&%s", cfg.User, cfg.Host, cfg.Port, name, params)
}

// The pool parameters docs/operating.md advises (and pgx's own) are read, not sent to the server as
// settings: PostgreSQL refuses unknown settings, which stopped `api` and `ctl migrate`.
func TestSetupAndConnectWithPoolParameters(t *testing.T) {
	ctx := context.Background()
	dsn := freshDSN(t, "pool_max_conns=7&pool_min_conns=1&pool_max_conn_lifetime=1h&pool_max_conn_idle_time=5m"+
		"&pool_health_check_period=30s&pool_max_conn_lifetime_jitter=1m&statement_cache_capacity=64")
	if err := postgres.EnsureDatabase(ctx, dsn); err != nil {
		t.Fatalf("create with pool parameters: %v", err)
	}
	if err := postgres.EnsureDatabase(ctx, dsn); err != nil {
		t.Fatalf("existing database with pool parameters: %v", err)
	}
	applied, err := postgres.Setup(ctx, dsn)
	if err != nil || len(applied) == 0 {
		t.Fatalf("setup: %v %v", applied, err)
	}
	if again, err := postgres.Setup(ctx, dsn); err != nil || len(again) != 0 {
		t.Fatalf("second setup: %v %v", again, err)
	}
	pool, err := postgres.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if got := pool.Config().MaxConns; got != 7 {
		t.Fatalf("MaxConns = %d, want the URL's 7", got)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM jobs`).Scan(&n); err != nil {
		t.Fatal(err)
	}
}

// pgx's own parameters are read too: default_query_exec_mode=cache_describe (what the
// docs/operating.md advises behind pgbouncer; TestBehindPgbouncerTransactionMode runs the store through
// one) reaches the pool, and creating and migrating the database work with it in the URL.
func TestSetupAndConnectWithQueryExecMode(t *testing.T) {
	ctx := context.Background()
	dsn := freshDSN(t, "default_query_exec_mode=cache_describe")
	if _, err := postgres.Setup(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	pool, err := postgres.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if got := pool.Config().ConnConfig.DefaultQueryExecMode; got != pgx.QueryExecModeCacheDescribe {
		t.Fatalf("mode = %s, want cache describe", got)
	}
	if got := pool.Config().MaxConns; got != 32 {
		t.Fatalf("MaxConns = %d, want the default 32", got)
	}
}

func TestEnsureDatabaseReportsOtherErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// A setting PostgreSQL does not know is still refused: only pool and pgx parameters are
	// taken out.
	if err := postgres.EnsureDatabase(ctx, freshDSN(t, "no_such_setting=1")); err == nil {
		t.Fatal("an unknown server setting was accepted")
	}
}

// A connection string PostgreSQL's driver cannot use is quoted in the error with its
// passwords masked, in every form (the driver's own masking misses some of them).
func TestConnectErrorsHidePasswords(t *testing.T) {
	for _, dsn := range []string{
		"host=db user=x password=hunter2 port=abc",
		"host=db user=x password = hunter2 port=abc",
		`host=db user=x password='hun\'ter2 x' port=abc`,
		"postgres://x:hun@ter2@db:abc/app",
		"postgres://x:hunter2@db/app?sslmode=bogus",
		"postgres://x@db/app?password=hunter2&port=abc",
	} {
		_, err := postgres.Connect(context.Background(), dsn)
		if err == nil || strings.Contains(err.Error(), "hun") || strings.Contains(err.Error(), "ter2") {
			t.Errorf("Connect(%q): %v", dsn, err)
		}
	}
}

// Two API replicas starting together on a fresh database both migrate without an error and
// each migration is applied once (the advisory lock); the schema is ready only when every
// embedded migration is recorded, and migrations this binary does not know do not matter.
func TestConcurrentSetupAndSchemaReady(t *testing.T) {
	ctx := context.Background()
	dsn := freshDSN(t, "pool_max_conns=2")
	if err := postgres.EnsureDatabase(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	pool, err := postgres.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := postgres.SchemaReady(ctx, pool); !errors.Is(err, postgres.ErrSchemaPending) {
		t.Fatalf("schema of an empty database: %v, want ErrSchemaPending", err)
	}

	results := make(chan []string, 2)
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			applied, err := postgres.Setup(ctx, dsn)
			results <- applied
			errs <- err
		}()
	}
	total := 0
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent setup: %v", err)
		}
		total += len(<-results)
	}
	var rows int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM goose_db_version WHERE version_id > 0`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if total == 0 || rows != total {
		t.Fatalf("the two setups applied %d migrations, %d recorded: want each applied once", total, rows)
	}
	if err := postgres.SchemaReady(ctx, pool); err != nil {
		t.Fatalf("schema after setup: %v", err)
	}

	if _, err := pool.Exec(ctx, `INSERT INTO goose_db_version (version_id, is_applied) VALUES (99999, true)`); err != nil {
		t.Fatal(err)
	}
	if err := postgres.SchemaReady(ctx, pool); err != nil {
		t.Fatalf("schema with a migration this binary does not know: %v", err)
	}
	var last int64
	if err := pool.QueryRow(ctx, `DELETE FROM goose_db_version WHERE version_id = (SELECT max(version_id) FROM goose_db_version WHERE version_id < 99999) RETURNING version_id`).Scan(&last); err != nil {
		t.Fatal(err)
	}
	err = postgres.SchemaReady(ctx, pool)
	if !errors.Is(err, postgres.ErrSchemaPending) || !strings.Contains(err.Error(), fmt.Sprintf("%05d", last)) {
		t.Fatalf("schema missing migration %d: %v, want ErrSchemaPending naming it", last, err)
	}
}
