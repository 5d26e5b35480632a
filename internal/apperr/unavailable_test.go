package apperr_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// IsUnavailable tells an outage from a request's own failure, on errors the real drivers
// return.
func TestIsUnavailable(t *testing.T) {
	ctx := context.Background()
	pool := testenv.Postgres(t)
	rdb := testenv.Redis(t)
	closedPort := testenv.FreeAddr(t)

	pgErr := func(sql string) error {
		_, err := pool.Exec(ctx, sql)
		if err == nil {
			t.Fatalf("%s succeeded", sql)
		}
		return err
	}
	raise := func(state string) error {
		return pgErr(fmt.Sprintf(`DO $$ BEGIN RAISE EXCEPTION 'x' USING ERRCODE = '%s'; END $$`, state))
	}
	redisReply := func(msg string) error {
		return rdb.Eval(ctx, `return redis.error_reply(ARGV[1])`, nil, msg).Err()
	}

	// A connection the server terminates (what a restart or pg_terminate_backend does).
	terminated := func() error {
		conn, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Release()
		if _, err := pool.Exec(ctx, `SELECT pg_terminate_backend($1)`, conn.Conn().PgConn().PID()); err != nil {
			t.Fatal(err)
		}
		_, err = conn.Exec(ctx, `SELECT 1`)
		return err
	}()
	refusedPG := func() error {
		_, err := pgx.Connect(ctx, "postgres://postgres@"+closedPort+"/x?sslmode=disable&connect_timeout=2")
		return err
	}()
	refusedRedis := func() error {
		c := redis.NewClient(&redis.Options{Addr: closedPort, MaxRetries: -1})
		defer c.Close()
		return c.Ping(ctx).Err()
	}()
	closedRedis := func() error {
		c := redis.NewClient(&redis.Options{Addr: rdb.Options().Addr})
		c.Close()
		return c.Ping(ctx).Err()
	}()
	expired, cancel := context.WithTimeout(ctx, time.Nanosecond)
	defer cancel()
	<-expired.Done()
	_, acquireErr := pool.Acquire(expired)

	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection terminated by the server", terminated, true},
		{"connect refused (PostgreSQL)", refusedPG, true},
		{"admin shutdown 57P01", raise("57P01"), true},
		{"cannot connect now 57P03", raise("57P03"), true},
		{"connection exception class 08", raise("08006"), true},
		{"too many connections 53300", raise("53300"), true},
		{"deadline while acquiring", acquireErr, true},
		{"wrapped", fmt.Errorf("auth: look up key: %w", refusedPG), true},
		{"connect refused (Redis)", refusedRedis, true},
		{"closed Redis client", closedRedis, true},
		{"Redis LOADING", redisReply("LOADING Redis is loading the dataset in memory"), true},
		{"Redis MASTERDOWN", redisReply("MASTERDOWN Link with MASTER is down"), true},
		{"Redis pool timeout", fmt.Errorf("gate: %w", redis.ErrPoolTimeout), true},
		{"EOF", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},

		{"unique violation", raise("23505"), false},
		{"syntax error", pgErr(`SELEC 1`), false},
		{"no rows", pool.QueryRow(ctx, `SELECT 1 WHERE false`).Scan(new(int)), false},
		{"Redis wrong type", redisReply("WRONGTYPE Operation against a key holding the wrong kind of value"), false},
		{"Redis nil", rdb.Get(ctx, "no-such-key").Err(), false},
		{"application error", apperr.Invalid("domain is required"), false},
		{"plain error", errors.New("boom"), false},
		{"nil", nil, false},
	} {
		if got := apperr.IsUnavailable(c.err); got != c.want {
			t.Errorf("%s: IsUnavailable(%v) = %v", c.name, c.err, got)
		}
	}
}
