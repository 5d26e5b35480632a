// Package postgres connects to PostgreSQL, applies the embedded migrations and runs
// transactions. It is the system of record for accounts, keys, credits and jobs.
package postgres

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/contentapi/contentapi/internal/redact"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Querier is what both a pool and a transaction offer; store functions take it so they can
// run alone or inside a caller's transaction.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Connect opens a pool and checks the database answers.
func Connect(ctx context.Context, dsn string) (*pgxpool.Pool, error) {
	cfg, err := parseConfig(dsn)
	if err != nil {
		return nil, err
	}
	// pgx defaults to max(4, CPUs) connections, which queues a busy API behind a handful of
	// connections; a pool_max_conns parameter in DATABASE_URL still wins.
	if !strings.Contains(dsn, "pool_max_conns") {
		cfg.MaxConns = 32
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: ping: %w", err)
	}
	return pool, nil
}

// parseConfig reads dsn as pgxpool does. Its error quotes dsn with every password masked:
// pgx's own masking misses some (password = x, a quoted password holding a quote, a URL
// password holding an @), so its text is rebuilt from dsn and the reason pgx gives.
func parseConfig(dsn string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err == nil {
		return cfg, nil
	}
	reason := "not a PostgreSQL connection string"
	var pce *pgconn.ParseConfigError
	if errors.As(err, &pce) {
		// The text is "cannot parse `<dsn, masked by pgx>`: <reason>".
		if _, after, ok := strings.Cut(pce.Error(), "`: "); ok {
			reason = after
		}
	}
	// pgx's error is not wrapped: its text may hold a password.
	return nil, redact.Error(fmt.Errorf("postgres: parse DATABASE_URL `%s`: %s", redact.ConnString(dsn), reason))
}

// EnsureDatabase creates the database named in dsn when it does not exist, connecting to the
// server's "postgres" database to do it. It lets `make run` start on a fresh server. dsn is
// read as Connect reads it: pgxpool's own parameters (pool_max_conns and the like) and pgx's
// (default_query_exec_mode, ...) are taken out rather than sent to the server, which would
// refuse them as unknown settings.
func EnsureDatabase(ctx context.Context, dsn string) error {
	cfg, err := parseConfig(dsn)
	if err != nil {
		return err
	}
	name := cfg.ConnConfig.Database
	if name == "" || name == "postgres" {
		return nil
	}
	// The database usually exists: connecting to it is the check, and the only one a
	// connection pooler such as pgbouncer (which may not expose "postgres") allows.
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig.Copy())
	if err == nil {
		return conn.Close(ctx)
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "3D000" { // invalid_catalog_name: no such database
		return fmt.Errorf("postgres: connect: %w", err)
	}
	admin := cfg.ConnConfig.Copy()
	admin.Database = "postgres"
	conn, err = pgx.ConnectConfig(ctx, admin)
	if err != nil {
		return fmt.Errorf("postgres: connect to create database: %w", err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	if errors.As(err, &pgErr) && pgErr.Code == "42P04" { // created meanwhile by another process
		return nil
	}
	if err != nil {
		return fmt.Errorf("postgres: create database %s: %w", name, err)
	}
	return nil
}

// Setup creates the database when missing and applies pending migrations through a small
// pool of its own on dsn, which must reach PostgreSQL in session mode (directly, or a
// pooler in session mode): the migration lock is a session advisory lock.
func Setup(ctx context.Context, dsn string) ([]string, error) {
	if err := EnsureDatabase(ctx, dsn); err != nil {
		return nil, err
	}
	cfg, err := parseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	defer pool.Close()
	return Migrate(ctx, pool)
}

// Migrate applies pending migrations under a session advisory lock, so concurrent API
// replicas starting together apply each migration once.
func Migrate(ctx context.Context, pool *pgxpool.Pool) ([]string, error) {
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	// A replica that finds the lock taken (another one migrating) tries again every second,
	// for up to 5 minutes; goose's default of every 5 s would hold its start up that long
	// after the other one is done.
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, 300))
	if err != nil {
		return nil, fmt.Errorf("postgres: migration lock: %w", err)
	}
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return nil, fmt.Errorf("postgres: migrations: %w", err)
	}
	// Out-of-order: migrations developed on parallel branches may land with a lower number
	// than one a database already has; they are applied rather than refused.
	provider, err := goose.NewProvider(goose.DialectPostgres, db, sub,
		goose.WithSessionLocker(locker), goose.WithAllowOutofOrder(true))
	if err != nil {
		return nil, fmt.Errorf("postgres: migrations: %w", err)
	}
	results, err := provider.Up(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: migrate: %w", err)
	}
	applied := make([]string, 0, len(results))
	for _, r := range results {
		applied = append(applied, r.Source.Path)
	}
	return applied, nil
}

// ErrSchemaPending means the database lacks migrations this binary was built with: the API
// applies them at start (or ctl migrate does).
var ErrSchemaPending = errors.New("postgres: schema not migrated yet")

// SchemaReady returns nil when every migration embedded in this binary is applied, as goose
// records them, and ErrSchemaPending otherwise. Migrations the binary does not know (a newer
// API migrated first) are no obstacle. It only reads, so it works through any pooler.
func SchemaReady(ctx context.Context, q Querier) error {
	rows, err := q.Query(ctx, `SELECT version_id FROM goose_db_version WHERE is_applied`)
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42P01" { // undefined_table
			return fmt.Errorf("%w: no migration applied", ErrSchemaPending)
		}
		return fmt.Errorf("postgres: schema version: %w", err)
	}
	applied, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return fmt.Errorf("postgres: schema version: %w", err)
	}
	want, err := migrationVersions()
	if err != nil {
		return err
	}
	var missing []int64
	for _, v := range want {
		if !slices.Contains(applied, v) {
			missing = append(missing, v)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %d of %d migrations not applied (the first is %05d)", ErrSchemaPending, len(missing), len(want), missing[0])
	}
	return nil
}

// migrationVersions are the versions of the embedded migrations, in order.
func migrationVersions() ([]int64, error) {
	files, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return nil, fmt.Errorf("postgres: migrations: %w", err)
	}
	versions := make([]int64, 0, len(files))
	for _, f := range files {
		v, err := goose.NumericComponent(f)
		if err != nil {
			return nil, fmt.Errorf("postgres: migration %s: %w", f, err)
		}
		versions = append(versions, v)
	}
	return versions, nil
}

// MigrationsDigest is a hex SHA-256 of the embedded migrations, names and contents: two
// binaries with the same digest build the same schema. (The tests keep a migrated template
// database under it.)
func MigrationsDigest() string {
	files, _ := fs.Glob(migrations, "migrations/*.sql") // a valid pattern: no error
	h := sha256.New()
	for _, f := range files {
		b, _ := migrations.ReadFile(f) // listed by Glob in the same FS: no error
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// InTx runs fn in a transaction, committing when it returns nil and rolling back otherwise.
func InTx(ctx context.Context, pool *pgxpool.Pool, fn func(tx pgx.Tx) error) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: begin: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after commit
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: commit: %w", err)
	}
	return nil
}

// IsUniqueViolation reports whether err is a unique-constraint violation, optionally of the
// named constraint.
func IsUniqueViolation(err error, constraint string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505" &&
		(constraint == "" || pgErr.ConstraintName == constraint)
}
