// Package testenv gives tests real PostgreSQL and Redis: a fresh, migrated database per test
// package on the machine's PostgreSQL (a copy of a migrated template database the server
// keeps for the next run, see createMigrated) and a private redis-server per test package, so
// packages tested in parallel never see each other's queues or keys and the machine's own
// Redis is never flushed.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/contentapi/contentapi/internal/postgres"
)

var (
	mu        sync.Mutex
	pool      *pgxpool.Pool
	dsn       string
	dbName    string
	redisDB   int
	redisAddr string
	cleanups  []func()
)

// ServerDSN is the PostgreSQL server tests use; TEST_DATABASE_URL overrides it.
func ServerDSN() string {
	if v := os.Getenv("TEST_DATABASE_URL"); v != "" {
		return v
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

// Main runs the package's tests and then drops what they created.
func Main(m *testing.M) {
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// MainNoLeaks is Main for packages that start goroutines: once the tests passed and what
// they created is dropped (the pool closed, the private redis-server stopped), a goroutine
// still running fails the package (goleak). opts ignore goroutines a library starts and
// cannot stop.
func MainNoLeaks(m *testing.M, opts ...goleak.Option) {
	code := m.Run()
	cleanup()
	if code == 0 {
		if err := goleak.Find(append(opts, processHelpers...)...); err != nil {
			fmt.Fprintf(os.Stderr, "goroutines outlived the tests: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// FasthttpGoroutines ignores what fasthttp (under Fiber) leaves running after a server's
// Shutdown: its process-wide Date header updater, which never stops, and each server's
// idle-worker cleaner, which sees the stop only after its 10 s sleep.
// The benchmarks' load client (a fasthttp.Client) leaves its cleaners too, each ending only
// after a sleep of up to 10 s once its connections are closed.
var FasthttpGoroutines = []goleak.Option{
	goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"),
	goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"),
	goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*Client).mCleaner"),
	goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*HostClient).connsCleaner"),
	goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*TCPDialer).tcpAddrsClean"),
}

// processHelpers are the goroutines of helpers that live as long as the test binary on
// purpose: the one stripe-mock a test binary shares (billingtest) is read until it dies
// with the binary.
var processHelpers = []goleak.Option{
	goleak.IgnoreAnyFunction("github.com/contentapi/contentapi/internal/billing/billingtest.startStripeMock.func1"),
}

func cleanup() {
	mu.Lock()
	defer mu.Unlock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	cleanups = nil
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
	if err := createMigrated(ctx, admin, dbName, templatePrefix+postgres.MigrationsDigest()[:16]); err != nil {
		t.Fatalf("testenv: %v", err)
	}
	dsn = databaseDSN(admin, dbName)
	p, err := postgres.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	pool = p
	name := dbName
	cleanups = append(cleanups, func() {
		if !closePool(p, poolCloseWait) {
			fmt.Fprintf(os.Stderr, "testenv: %s: a connection was still in use %v after the tests (rows left open by a failed test?); the database is dropped with it\n",
				name, poolCloseWait)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if c, err := pgx.Connect(ctx, ServerDSN()); err == nil {
			_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			c.Close(ctx)
		}
	})
	return pool, dsn
}

// poolCloseWait bounds the wait for a package's connections at its end.
const poolCloseWait = 10 * time.Second

// closePool closes p, waiting at most wait for the connections in use to come back, and
// reports whether they did. pgxpool's Close waits for ever: a test that failed with rows
// still open (t.Fatal inside a rows loop) kept its connection, and the package's binary
// then hung at its end until go test's timeout, minutes after the failure. Past the wait,
// dropping the database (WITH (FORCE)) ends the connection.
func closePool(p *pgxpool.Pool, wait time.Duration) bool {
	closed := make(chan struct{})
	go func() {
		p.Close()
		close(closed)
	}()
	select {
	case <-closed:
		return true
	case <-time.After(wait):
		return false
	}
}

// templatePrefix names the migrated template databases createMigrated copies, one per set
// of migrations (postgres.MigrationsDigest).
const templatePrefix = "contentapi_test_template_"

// createMigrated creates the database name as a copy of a template holding the embedded
// migrations, building the template first when this server has none for them. Copying
// takes a sixth of the CPU of migrating a new database (0.06 against 0.34 CPU-seconds,
// PostgreSQL's included), and every test package needs one. Test processes of any
// checkout serialise on a server-wide advisory lock (held only on admin's session): one
// builds a template while the others wait, none copies a template being built or dropped,
// and the template of other migrations (an older checkout's) is dropped when a new one is
// built. The tests of the migrations themselves (internal/postgres) migrate databases of
// their own.
func createMigrated(ctx context.Context, admin *pgx.Conn, name, template string) error {
	const lockKey = 0x636f6e74656e74 // "content"
	if _, err := admin.Exec(ctx, "SELECT pg_advisory_lock($1)", lockKey); err != nil {
		return fmt.Errorf("lock the template: %w", err)
	}
	defer admin.Exec(context.Background(), "SELECT pg_advisory_unlock($1)", lockKey) //nolint:errcheck // the session ends with the test process
	var exists bool
	if err := admin.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)", template).Scan(&exists); err != nil {
		return fmt.Errorf("find the template: %w", err)
	}
	if !exists {
		if err := buildTemplate(ctx, admin, template); err != nil {
			return err
		}
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE "+pgx.Identifier{template}.Sanitize()); err != nil {
		return fmt.Errorf("create database from %s: %w", template, err)
	}
	return nil
}

// buildTemplate migrates a new database and renames it template, then drops the other
// templates. The rename, like a copy, waits (up to 5 s, PostgreSQL's own wait) for the
// sessions of the migration's closed pool to end: a template with a session cannot be
// copied.
func buildTemplate(ctx context.Context, admin *pgx.Conn, template string) error {
	building := template + "_building"
	// A build a killed test process left half done.
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{building}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop a half-built template: %w", err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{building}.Sanitize()); err != nil {
		return fmt.Errorf("create the template: %w", err)
	}
	p, err := postgres.Connect(ctx, databaseDSN(admin, building))
	if err != nil {
		return err
	}
	_, err = postgres.Migrate(ctx, p)
	p.Close()
	if err != nil {
		return err
	}
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{building}.Sanitize()+" RENAME TO "+pgx.Identifier{template}.Sanitize()); err != nil {
		return fmt.Errorf("rename the template: %w", err)
	}
	rows, err := admin.Query(ctx, "SELECT datname FROM pg_database WHERE starts_with(datname, $1) AND datname <> $2", templatePrefix, template)
	if err != nil {
		return fmt.Errorf("list old templates: %w", err)
	}
	old, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("list old templates: %w", err)
	}
	for _, db := range old {
		if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{db}.Sanitize()+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("drop the old template %s: %w", db, err)
		}
	}
	return nil
}

// databaseDSN is the connection string of database db on admin's server, as admin's user.
func databaseDSN(admin *pgx.Conn, db string) string {
	cfg := admin.Config()
	return fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Host, cfg.Port, db)
}

// RedisOptions returns options for the package's own Redis. By default each test package
// starts a private redis-server on a free loopback port (killed with the test binary), so
// tests never touch databases of the machine's shared Redis. TEST_REDIS_ADDR points the
// tests at an existing server instead; then a database number 1-15 is claimed with SET NX.
func RedisOptions(t testing.TB) *redis.Options {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if redisAddr != "" {
		return &redis.Options{Addr: redisAddr, DB: redisDB}
	}
	if os.Getenv("TEST_REDIS_ADDR") != "" {
		claimSharedRedis(t)
	} else {
		startRedis(t)
	}
	return &redis.Options{Addr: redisAddr, DB: redisDB}
}

// startRedis runs a private, diskless redis-server for this test binary.
func startRedis(t testing.TB) {
	t.Helper()
	addr, kill, err := launchRedis()
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	redisAddr, redisDB = addr, 0
	cleanups = append(cleanups, kill)
}

// launchRedis starts a private, diskless redis-server on a free loopback port and returns
// its address and a function killing it (safe to call more than once). extra are more
// arguments (--replicaof host port).
func launchRedis(extra ...string) (addr string, kill func(), err error) {
	return launchRedisWith(func(port int) ([]string, error) { return append(serverArgs(port), extra...), nil })
}

// serverArgs are the arguments of a private, diskless redis-server on port.
func serverArgs(port int) []string {
	return []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning",
		"--logfile", ""}
}

// launchRedisWith starts redis-server with the arguments args gives for a free loopback
// port, waits until it answers PING, and returns its address and a function killing it.
func launchRedisWith(args func(port int) ([]string, error)) (addr string, kill func(), err error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return "", nil, fmt.Errorf("redis-server not found (install it, or set TEST_REDIS_ADDR): %w", err)
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			return "", nil, err
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		argv, err := args(port)
		if err != nil {
			return "", nil, err
		}
		// Its own working directory: a replica writes the master's snapshot there
		// whatever --save says.
		dir, err := os.MkdirTemp("", "testenv-redis-")
		if err != nil {
			return "", nil, err
		}
		cmd := exec.CommandContext(context.Background(), bin, argv...)
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		out := &tailWriter{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			_ = os.RemoveAll(dir)
			return "", nil, fmt.Errorf("start redis-server: %w", err)
		}
		// exited is closed once the process is reaped, with its result in waitErr: both
		// waitRedis and the kill below wait on it (a value sent once could be taken by
		// the first, and the second would wait for ever).
		exited := make(chan struct{})
		var waitErr error
		go func() { waitErr = cmd.Wait(); close(exited) }()
		if lastErr = waitRedis(addr, exited, &waitErr); lastErr == nil {
			var once sync.Once
			return addr, func() {
				once.Do(func() {
					_ = cmd.Process.Kill()
					<-exited
					_ = os.RemoveAll(dir)
				})
			}, nil
		}
		_ = cmd.Process.Kill()
		<-exited
		_ = os.RemoveAll(dir)
		lastErr = fmt.Errorf("%w; its output: %q", lastErr, out.String())
	}
	return "", nil, fmt.Errorf("redis-server did not start: %w", lastErr)
}

// tailWriter keeps the last 4 KiB written to it: a server's output, for the error when it
// does not start.
type tailWriter struct {
	mu sync.Mutex
	b  []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b = append(w.b, p...)
	if n := len(w.b) - 4096; n > 0 {
		w.b = append(w.b[:0], w.b[n:]...)
	}
	return len(p), nil
}

func (w *tailWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.b)
}

// waitRedis waits until the server at addr answers PING or its process exits.
func waitRedis(addr string, exited <-chan struct{}, waitErr *error) error {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			err := *waitErr
			if err == nil {
				err = errors.New("exit status 0")
			}
			return fmt.Errorf("redis-server exited: %w", err)
		default:
		}
		if err := c.Ping(context.Background()).Err(); err == nil {
			return nil
		}
		// Polling a starting server: there is no readiness signal to wait on.
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("no answer from %s", addr)
}

func freePort() (int, error) {
	ports, err := FreePorts(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

// FreePorts returns n distinct loopback ports nothing listens on, for servers a test
// starts on a port it names (PostgreSQL, redis-server, the api binary). They are drawn
// below the system's ephemeral range (ip_local_port_range): a port the kernel hands out
// for ":0" or for an outgoing connection's local end could be taken between the check
// and the server's bind, and under load it was (a private PostgreSQL on an ephemeral port
// failed with "Address already in use"). Each is checked by listening on it, all held
// until all are found. Where the range starts too low to leave room, ":0" is used.
func FreePorts(n int) ([]int, error) {
	lo := ephemeralLow()
	var held []net.Listener
	defer func() {
		for _, l := range held {
			_ = l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for attempts := 0; len(ports) < n; attempts++ {
		addr := "127.0.0.1:0"
		if lo-firstFixedPort >= 1000 && attempts < 100*n {
			port := firstFixedPort + mrand.IntN(lo-firstFixedPort) //nolint:gosec // a port to try, not a secret
			addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		}
		l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", addr)
		if err != nil {
			if addr == "127.0.0.1:0" {
				return nil, fmt.Errorf("find a free port: %w", err)
			}
			continue // taken
		}
		held = append(held, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// FreeAddr is a loopback host:port nothing listens on, from FreePorts; a failure ends the
// test.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ports, err := FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
}

// firstFixedPort is the lowest port FreePorts draws: above the registered services a
// machine commonly runs (PostgreSQL's 5432, Redis's 6379, 8080 and the like).
const firstFixedPort = 20000

// ephemeralLow is the first port of the system's ephemeral range (32768 where it cannot
// be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	lo, err := strconv.Atoi(f[0])
	if err != nil {
		return 32768
	}
	return lo
}

// claimSharedRedis claims a database number on the TEST_REDIS_ADDR server.
func claimSharedRedis(t testing.TB) {
	t.Helper()
	addr := os.Getenv("TEST_REDIS_ADDR")
	ctx := context.Background()
	ctl := redis.NewClient(&redis.Options{Addr: addr})
	defer ctl.Close()
	for n := 1; n < 16; n++ {
		key := "contentapi:testenv:db:" + strconv.Itoa(n)
		ok, err := ctl.SetNX(ctx, key, os.Getpid(), 30*time.Minute).Result()
		if err != nil {
			t.Fatalf("testenv: Redis at %s: %v", addr, err)
		}
		if !ok {
			continue
		}
		c := redis.NewClient(&redis.Options{Addr: addr, DB: n})
		if err := c.FlushDB(ctx).Err(); err != nil {
			t.Fatalf("testenv: flush Redis db %d: %v", n, err)
		}
		c.Close()
		redisAddr, redisDB = addr, n
		cleanups = append(cleanups, func() {
			c := redis.NewClient(&redis.Options{Addr: addr})
			c.Del(context.Background(), key)
			c.Close()
		})
		return
	}
	t.Fatal("testenv: no free Redis database number (1-15) on TEST_REDIS_ADDR; stale claims expire in 30 minutes")
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

// NewDatabaseDSN names a database of its own on the test server, not created (the code under
// test creates it), and drops it when the test ends.
func NewDatabaseDSN(t testing.TB) string {
	t.Helper()
	buf := make([]byte, 6)
	_, _ = rand.Read(buf)
	name := "contentapi_test_" + hex.EncodeToString(buf)
	cfg, _ := pgx.ParseConfig(ServerDSN())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if c, err := pgx.Connect(ctx, ServerDSN()); err == nil {
			_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			c.Close(ctx)
		}
	})
	return fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Host, cfg.Port, name)
}
