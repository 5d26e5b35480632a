// Package testenv gives tests the real PostgreSQL and Redis of the machine: a fresh, migrated
// database per test package and a Redis database number of its own, so packages tested in
// parallel never see each other's queues or keys.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/contentapi/contentapi/internal/postgres"
)

var (
	mu       sync.Mutex
	pool     *pgxpool.Pool
	dsn      string
	dbName   string
	redisDB  = -1
	cleanups []func()
)

// ServerDSN is the PostgreSQL server tests use; TEST_DATABASE_URL overrides it.
func ServerDSN() string {
	if v := os.Getenv("TEST_DATABASE_URL"); v != "" {
		return v
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

// RedisAddr is the Redis server tests use; TEST_REDIS_ADDR overrides it.
func RedisAddr() string {
	if v := os.Getenv("TEST_REDIS_ADDR"); v != "" {
		return v
	}
	return "127.0.0.1:6379"
}

// Main runs the package's tests and then drops what they created.
func Main(m *testing.M) {
	code := m.Run()
	mu.Lock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	mu.Unlock()
	os.Exit(code)
}

// Postgres returns a pool on the package's fresh, migrated database.
func Postgres(t testing.TB) *pgxpool.Pool {
	t.Helper()
	p, _ := PostgresDSN(t)
	return p
}

// PostgresDSN is Postgres with the database's connection string, for child processes.
func PostgresDSN(t testing.TB) (*pgxpool.Pool, string) {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if pool != nil {
		return pool, dsn
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	buf := make([]byte, 6)
	_, _ = rand.Read(buf)
	dbName = "contentapi_test_" + hex.EncodeToString(buf)
	admin, err := pgx.Connect(ctx, ServerDSN())
	if err != nil {
		t.Fatalf("testenv: connect to PostgreSQL at %s: %v", ServerDSN(), err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+dbName); err != nil {
		t.Fatalf("testenv: create database: %v", err)
	}
	cfg, _ := pgx.ParseConfig(ServerDSN())
	dsn = fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Host, cfg.Port, dbName)
	p, err := postgres.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	if _, err := postgres.Migrate(ctx, p); err != nil {
		t.Fatalf("testenv: %v", err)
	}
	pool = p
	name := dbName
	cleanups = append(cleanups, func() {
		p.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if c, err := pgx.Connect(ctx, ServerDSN()); err == nil {
			_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			c.Close(ctx)
		}
	})
	return pool, dsn
}

// RedisOptions returns options for the package's own Redis database number, flushed when
// claimed. Numbers are claimed with SET NX in database 0 so parallel packages never share.
func RedisOptions(t testing.TB) *redis.Options {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if redisDB >= 0 {
		return &redis.Options{Addr: RedisAddr(), DB: redisDB}
	}
	ctx := context.Background()
	ctl := redis.NewClient(&redis.Options{Addr: RedisAddr()})
	defer ctl.Close()
	for n := 1; n < 16; n++ {
		key := "contentapi:testenv:db:" + strconv.Itoa(n)
		ok, err := ctl.SetNX(ctx, key, os.Getpid(), 30*time.Minute).Result()
		if err != nil {
			t.Fatalf("testenv: Redis at %s: %v", RedisAddr(), err)
		}
		if !ok {
			continue
		}
		c := redis.NewClient(&redis.Options{Addr: RedisAddr(), DB: n})
		if err := c.FlushDB(ctx).Err(); err != nil {
			t.Fatalf("testenv: flush Redis db %d: %v", n, err)
		}
		c.Close()
		redisDB = n
		cleanups = append(cleanups, func() {
			c := redis.NewClient(&redis.Options{Addr: RedisAddr()})
			c.Del(context.Background(), key)
			c.Close()
		})
		return &redis.Options{Addr: RedisAddr(), DB: n}
	}
	t.Fatal("testenv: no free Redis database number (1-15); stale claims expire in 30 minutes")
	return nil
}

// Redis returns a client on the package's own Redis database.
func Redis(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(RedisOptions(t))
	t.Cleanup(func() { c.Close() })
	return c
}

// RedisURL is the package's Redis database as a URL, for child processes.
func RedisURL(t testing.TB) string {
	o := RedisOptions(t)
	return fmt.Sprintf("redis://%s/%d", o.Addr, o.DB)
}
