package faulttest

// The harness: the binaries built once per test run, a private PostgreSQL cluster (initdb
// in a temporary directory owned by the postgres OS user) and a private redis-server on free
// ports, both of which can be killed and started again on the same port and data, and the
// api and worker processes run against them.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/contentapi/contentapi/internal/testenv"
)

// pgBin holds the PostgreSQL server programs (Debian's layout).
const pgBin = "/usr/lib/postgresql/15/bin"

var (
	buildOnce sync.Once
	buildTook time.Duration // how long getting the binaries took, for the fault report
)

func TestMain(m *testing.M) { testenv.Main(m) }

// binaries are the built api, worker and ctl.
type binaries struct{ api, worker, ctl string }

// build returns cmd/api, cmd/worker and cmd/ctl built once for the whole test binary (or for
// the whole run: testenv.Commands).
func build(t *testing.T) binaries {
	t.Helper()
	buildOnce.Do(func() {
		start := time.Now()
		testenv.Commands(t)
		buildTook = time.Since(start)
	})
	dir := testenv.Commands(t)
	return binaries{filepath.Join(dir, "api"), filepath.Join(dir, "worker"), filepath.Join(dir, "ctl")}
}

// freePorts returns n distinct free loopback ports, outside the ephemeral range.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	ports, err := testenv.FreePorts(n)
	if err != nil {
		t.Fatal(err)
	}
	return ports
}

// waitFor polls cond until it reports true, fails for good (an error from stop), or the
// deadline passes. Polling a condition with a deadline is the only waiting the tests do.
func waitFor(what string, timeout, every time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		ok, err := cond()
		if ok {
			return nil
		}
		if errors.Is(err, errGaveUp) {
			return fmt.Errorf("%s: %w", what, err)
		}
		if err != nil {
			last = err
		}
		if time.Now().After(deadline) {
			if last == nil {
				return fmt.Errorf("%s: not within %s", what, timeout)
			}
			return fmt.Errorf("%s: not within %s (last error: %w)", what, timeout, last)
		}
		time.Sleep(every)
	}
}

// errGaveUp ends a waitFor at once (the process being waited for has exited).
var errGaveUp = errors.New("gave up")

// process is a started child process and its end.
type process struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error // Wait's result, set before done is closed
}

func start(name string, cmd *exec.Cmd) (*process, error) {
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	return p, nil
}

// exitStatus describes how an exited process ended.
func (p *process) exitStatus() string {
	if p.err == nil {
		return "exit status 0"
	}
	return p.err.Error()
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// killGroup SIGKILLs the process and every process of its group (PostgreSQL's backends)
// at once, as a machine losing the server would, and waits for the leader to be reaped.
func (p *process) killGroup() {
	if !p.exited() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
	<-p.done
}

// sysAttr puts the child in its own process group (killed as one) and kills it if the test
// binary dies.
func sysAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: cred}
}

// pgServer is a private PostgreSQL cluster run as the postgres OS user.
type pgServer struct {
	base, data string
	port       int
	cred       *syscall.Credential
	log        *os.File
	proc       *process
}

func newPostgres(t *testing.T, port int) *pgServer {
	t.Helper()
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Fatalf("the postgres OS user is needed to run a private PostgreSQL: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	s := &pgServer{port: port, cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	if s.base, err = os.MkdirTemp("", "contentapi-faulttest-pg"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(s.base) })
	if err := os.Chown(s.base, uid, gid); err != nil {
		t.Fatal(err)
	}
	s.data = filepath.Join(s.base, "data")
	if s.log, err = os.Create(filepath.Join(s.base, "postgres.log")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.log.Close() })
	initdb := exec.Command(filepath.Join(pgBin, "initdb"), "-D", s.data, "-U", "postgres", "--auth=trust",
		"--encoding=UTF8", "--locale=C.UTF-8", "--no-sync")
	initdb.SysProcAttr = sysAttr(s.cred)
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.proc.killGroup() })
	return s
}

// start runs the postmaster on the cluster's port and waits until it accepts connections.
// fsync is off: a process kill (not a machine crash) loses nothing written with write().
func (s *pgServer) start() error {
	cmd := exec.Command(filepath.Join(pgBin, "postgres"), "-D", s.data, "-p", strconv.Itoa(s.port),
		"-k", s.base, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=100")
	cmd.SysProcAttr = sysAttr(s.cred)
	cmd.Stdout, cmd.Stderr = s.log, s.log
	p, err := start("postgres", cmd)
	if err != nil {
		return err
	}
	s.proc = p
	return waitFor("PostgreSQL accepting connections", 60*time.Second, 20*time.Millisecond, func() (bool, error) {
		if p.exited() {
			return false, fmt.Errorf("postgres exited (%s): %w; log:\n%s", p.exitStatus(), errGaveUp, tail(s.log.Name(), 20))
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, s.url("postgres"))
		if err != nil {
			return false, err
		}
		_ = c.Close(ctx)
		return true, nil
	})
}

// kill takes the whole server down at once (postmaster and backends).
func (s *pgServer) kill() { s.proc.killGroup() }

func (s *pgServer) url(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// redisServer is a private, diskless redis-server: a restart starts it empty, as a Redis
// without persistence comes back.
type redisServer struct {
	port int
	log  *os.File
	proc *process
}

func newRedis(t *testing.T, port int, logDir string) *redisServer {
	t.Helper()
	s := &redisServer{port: port}
	var err error
	if s.log, err = os.Create(filepath.Join(logDir, "redis.log")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.log.Close() })
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.proc.killGroup() })
	return s
}

func (s *redisServer) start() error {
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning")
	cmd.SysProcAttr = sysAttr(nil)
	cmd.Stdout, cmd.Stderr = s.log, s.log
	p, err := start("redis-server", cmd)
	if err != nil {
		return err
	}
	s.proc = p
	c := redis.NewClient(&redis.Options{Addr: s.addr(), MaxRetries: -1, DialTimeout: time.Second})
	defer c.Close()
	return waitFor("redis-server answering PING", 30*time.Second, 10*time.Millisecond, func() (bool, error) {
		if p.exited() {
			return false, fmt.Errorf("redis-server exited (%s): %w; log:\n%s", p.exitStatus(), errGaveUp, tail(s.log.Name(), 20))
		}
		err := c.Ping(context.Background()).Err()
		return err == nil, err
	})
}

func (s *redisServer) kill() { s.proc.killGroup() }

func (s *redisServer) addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// service is a running api or worker.
type service struct {
	*process
	logPath string
}

// stack is PostgreSQL, Redis and the binaries' environment for one test.
type stack struct {
	t           *testing.T
	bins        binaries
	dir         string
	pg          *pgServer
	redis       *redisServer
	apiPort     int
	metricsPort int
	env         []string
	db          *pgxpool.Pool // the test's own view of the service's database
	http        *http.Client
}

// newStack starts PostgreSQL and Redis and prepares the environment the binaries read.
// extraEnv (NAME=value) is added after the defaults, so it overrides them.
func newStack(t *testing.T, extraEnv ...string) *stack {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the private PostgreSQL runs as the postgres OS user, which needs root")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	s := &stack{t: t, bins: build(t), dir: t.TempDir(), http: &http.Client{Timeout: 2 * time.Minute}}
	ports := freePorts(t, 4)
	s.apiPort, s.metricsPort = ports[2], ports[3]
	s.pg = newPostgres(t, ports[0])
	s.redis = newRedis(t, ports[1], s.dir)
	// A clean environment: nothing of the caller's (make exports DATABASE_URL) leaks in.
	s.env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + s.dir,
		// pool_max_conns is what docs/operating.md advises operators to set.
		"DATABASE_URL=" + s.pg.url("contentapi") + "&pool_max_conns=10",
		"REDIS_URL=redis://" + s.redis.addr() + "/0",
		"API_ADDR=127.0.0.1:" + strconv.Itoa(s.apiPort),
		"PUBLIC_BASE_URL=" + s.baseURL(),
		"METRICS_ADDR=127.0.0.1:" + strconv.Itoa(s.metricsPort),
		"REGISTER_RATE_LIMIT=1000",
		"SHUTDOWN_TIMEOUT=10s",
		"LOG_LEVEL=info",
	}
	s.env = append(s.env, extraEnv...)
	return s
}

func (s *stack) baseURL() string { return "http://127.0.0.1:" + strconv.Itoa(s.apiPort) }

// ctl runs the ctl binary and returns its output; a failure ends the test.
func (s *stack) ctl(args ...string) string {
	s.t.Helper()
	cmd := exec.Command(s.bins.ctl, args...)
	cmd.Env = s.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("ctl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// openDB opens the test's own pool on the service's database (after ctl migrate made it).
func (s *stack) openDB() {
	s.t.Helper()
	p, err := pgxpool.New(context.Background(), s.pg.url("contentapi")+"&pool_max_conns=4")
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(p.Close)
	s.db = p
}

// run starts a binary with the stack's environment; its output goes to a log file, whose
// tail is printed if the test fails. The process is killed when the test ends.
func (s *stack) run(name, bin string) *service {
	s.t.Helper()
	return s.runWith(name, bin)
}

// runWith is run with env (NAME=value) added to the stack's, overriding it.
func (s *stack) runWith(name, bin string, env ...string) *service {
	s.t.Helper()
	logPath := filepath.Join(s.dir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		s.t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(slices.Clip(s.env), env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = sysAttr(nil)
	p, err := start(name, cmd)
	if err != nil {
		f.Close()
		s.t.Fatal(err)
	}
	svc := &service{process: p, logPath: logPath}
	s.t.Cleanup(func() {
		p.killGroup()
		f.Close()
		if s.t.Failed() {
			s.t.Logf("last lines of the %s log:\n%s", name, tail(logPath, 15))
		}
	})
	return svc
}

// startServices starts the api and the worker and waits until both are ready.
func (s *stack) startServices() (api, worker *service) {
	s.t.Helper()
	api = s.run("api", s.bins.api)
	worker = s.run("worker", s.bins.worker)
	s.waitReady(api, s.baseURL()+"/readyz")
	s.waitReady(worker, "http://127.0.0.1:"+strconv.Itoa(s.metricsPort)+"/readyz")
	return api, worker
}

// waitReady polls a readiness URL until it answers 200, failing at once if svc exits.
func (s *stack) waitReady(svc *service, url string) {
	s.t.Helper()
	err := waitFor(svc.name+" ready", 60*time.Second, 20*time.Millisecond, func() (bool, error) {
		if svc.exited() {
			return false, fmt.Errorf("%s exited (%s): %w; log:\n%s", svc.name, svc.exitStatus(), errGaveUp, tail(svc.logPath, 20))
		}
		res, err := http.Get(url) //nolint:noctx // a local readiness probe
		if err != nil {
			return false, err
		}
		_ = res.Body.Close()
		return res.StatusCode == http.StatusOK, fmt.Errorf("status %d", res.StatusCode)
	})
	if err != nil {
		s.t.Fatal(err)
	}
}

// answer is one HTTP answer.
type answer struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

// data is the "data" object of a success envelope.
func (a answer) data() map[string]any {
	d, _ := a.body["data"].(map[string]any)
	return d
}

// errorCode is the code of either error shape.
func (a answer) errorCode() string {
	if e, ok := a.body["error"].(map[string]any); ok {
		c, _ := e["code"].(string)
		return c
	}
	c, _ := a.body["code"].(string)
	return c
}

// do sends one request; headers are name, value pairs.
func (s *stack) do(ctx context.Context, method, path, key string, body any, headers ...string) (answer, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return answer{}, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.baseURL()+path, rd)
	if err != nil {
		return answer{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return s.send(req)
}

// send sends req and reads the whole answer.
func (s *stack) send(req *http.Request) (answer, error) {
	res, err := s.http.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return answer{}, err
	}
	a := answer{status: res.StatusCode, header: res.Header, raw: raw}
	_ = json.Unmarshal(raw, &a.body)
	return a, nil
}

// register creates an account through the API and returns its key.
func (s *stack) register(email string) string {
	s.t.Helper()
	a, err := s.do(context.Background(), http.MethodPost, "/v1/auth/register", "", map[string]any{"email": email})
	if err != nil || a.status != http.StatusCreated {
		s.t.Fatalf("register %s: %v %d %s", email, err, a.status, a.raw)
	}
	key, _ := a.data()["api_key"].(string)
	if key == "" {
		s.t.Fatalf("register %s: no api_key in %s", email, a.raw)
	}
	return key
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}
