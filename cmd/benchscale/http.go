package main

// The HTTP side of the bench (-http): the real bin/api and bin/worker run as child processes
// against the bench database and a Redis database number of their own, and each question is
// also asked as the HTTP call a user makes (the API validates and charges, the job goes
// through asynq to the worker, the API answers 200 when the job ends), timed from the
// request's first byte sent to the answer's last byte read.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/contentapi/contentapi/internal/report"
)

// httpForm is a question as an HTTP call: its path and JSON body (the request as a user
// writes it, before the API normalizes it) and how its answer's data reads.
type httpForm struct {
	path string
	body []byte
	// read summarizes the answer's data as the question's in-process call does.
	read func(data []byte) (string, error)
	// page, when set, makes the body of a later page: the first page (body) is fetched
	// once, untimed, and the timed call sends page(its next_cursor); next reads that cursor.
	page func(cursor string) []byte
	next func(data []byte) (string, error)
}

// request is a body the API takes, normalized in process as the API normalizes it.
type request[R any] interface {
	*R
	Normalize(report.Options) error
}

// pagedRequest is a request with a cursor.
type pagedRequest[R any] interface {
	request[R]
	PageQuery() *report.Query
}

// newQuestion makes one question of one request r: in process, a normalized copy of r goes
// to call; over HTTP, r is posted to path as JSON. Both answers are read by summary, so the
// two can be compared.
func newQuestion[R any, P request[R], A any](kind, name, path string, r R,
	call func(*report.Builder, context.Context, R) (A, error), summary func(A) string) question {
	return question{kind: kind, name: name,
		ask: func(ctx context.Context, b *report.Builder) (string, error) {
			a, err := callNormalized[R, P](ctx, b, r, call)
			return summary(a), err
		},
		http: httpForm{path: path, body: mustJSON(r), read: reader(summary)},
	}
}

// callNormalized gives call a normalized copy of r, as the API would.
func callNormalized[R any, P request[R], A any](ctx context.Context, b *report.Builder, r R,
	call func(*report.Builder, context.Context, R) (A, error)) (A, error) {
	c := r
	if err := P(&c).Normalize(report.Options{}); err != nil {
		var zero A
		return zero, err
	}
	return call(b, ctx, c)
}

// laterPage makes a question of the page after r's first: in process the first page is
// asked once (untimed) for its next cursor, then the page at that cursor is timed; over HTTP
// the same with the first HTTP answer's next_cursor (cursors are signed by the process that
// issued them, so each side pages its own).
func laterPage[R any, P pagedRequest[R], A any](kind, name, path string, r R,
	call func(*report.Builder, context.Context, R) (A, error), next func(A) *string, summary func(A) string) question {
	withCursor := func(cursor string) R {
		c := r
		P(&c).PageQuery().Cursor = cursor
		return c
	}
	var cursor *string
	asked := false
	return question{kind: kind, name: name,
		ask: func(ctx context.Context, b *report.Builder) (string, error) {
			if !asked {
				first, err := callNormalized[R, P](ctx, b, r, call)
				if err != nil {
					return "", err
				}
				asked, cursor = true, next(first)
			}
			if cursor == nil {
				return noSecondPage, nil
			}
			a, err := callNormalized[R, P](ctx, b, withCursor(*cursor), call)
			return summary(a), err
		},
		http: httpForm{path: path, body: mustJSON(r), read: reader(summary),
			page: func(cursor string) []byte { return mustJSON(withCursor(cursor)) },
			next: reader(func(a A) string {
				if n := next(a); n != nil {
					return *n
				}
				return ""
			})},
	}
}

// noSecondPage is a later-page question's answer when the first page is the last: nothing
// is timed.
const noSecondPage = "no second page"

// reader decodes an answer's data as A and summarizes it.
func reader[A any](summary func(A) string) func([]byte) (string, error) {
	return func(data []byte) (string, error) {
		var a A
		if err := json.Unmarshal(data, &a); err != nil {
			return "", fmt.Errorf("decode the answer's data: %w", err)
		}
		return summary(a), nil
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// httpStack is an api and a worker run for one bench database, and the account they serve.
type httpStack struct {
	base     string // http://127.0.0.1:port
	key      string // the account's API key
	client   *http.Client
	procs    []*child
	redisURL string
	release  func()            // gives the Redis database number back
	dir      string            // logs
	cursors  map[string]string // a later-page question's cursor, from its first HTTP page
}

// child is a started api or worker.
type child struct {
	name, log string
	cmd       *exec.Cmd
	done      chan struct{}
	err       error
}

func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// httpOptions are the -api, -worker and -redis-url flags.
type httpOptions struct {
	api, worker, ctl, redisServer string
}

// startHTTP starts bin/api and bin/worker on the database dsn and waits until both are
// ready, then registers an account through the API and puts it on an enterprise plan with
// room for every call (ctl plan set). Stop ends the processes; it is safe after an error.
func startHTTP(ctx context.Context, o httpOptions, dsn string) (s *httpStack, err error) {
	s = &httpStack{client: &http.Client{Timeout: 15 * time.Minute}, cursors: map[string]string{}}
	defer func() {
		if err != nil {
			s.stop(true)
			s = nil
		}
	}()
	if s.dir, err = os.MkdirTemp("", "benchscale-http"); err != nil {
		return s, err
	}
	if s.redisURL, s.release, err = claimRedis(ctx, o.redisServer); err != nil {
		return s, err
	}
	ports, err := freePorts(2)
	if err != nil {
		return s, err
	}
	s.base = "http://127.0.0.1:" + strconv.Itoa(ports[0])
	metrics := "127.0.0.1:" + strconv.Itoa(ports[1])
	// A clean environment: nothing of the caller's (make exports DATABASE_URL) leaks in.
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + s.dir,
		"DATABASE_URL=" + dsn,
		"REDIS_URL=" + s.redisURL,
		"API_ADDR=127.0.0.1:" + strconv.Itoa(ports[0]),
		"PUBLIC_BASE_URL=" + s.base,
		"METRICS_ADDR=" + metrics,
		"KEYWORD_CACHE_TTL=0", // every call asks the database, as the in-process builder does
		"SYNC_TIMEOUT=15m",    // every call answers 200 with its result, never 202
		"LOG_LEVEL=warn",
		"SHUTDOWN_TIMEOUT=5s",
	}
	if columnsMB >= 0 {
		env = append(env, "KEYWORD_COLUMNS_MB="+strconv.Itoa(columnsMB))
	}
	if keptColumns != "" {
		// The worker keeps its column files and word indexes there too (a directory per
		// database, as on a node), so that a later run's worker maps them at its start
		// instead of building them from the database while the first questions are timed.
		env = append(env, "KEYWORD_COLUMNS_DIR="+filepath.Join(keptColumns, "worker"))
	}
	if mappedMB >= 0 {
		env = append(env, "KEYWORD_MAPPED_MB="+strconv.Itoa(mappedMB))
	}
	if workerMemLimit != "" {
		env = append(env, "GOMEMLIMIT="+workerMemLimit)
	}
	for _, p := range []struct{ name, bin string }{{"worker", o.worker}, {"api", o.api}} {
		c, err := s.start(p.name, p.bin, env)
		if err != nil {
			return s, err
		}
		s.procs = append(s.procs, c)
	}
	if err := s.waitReady(ctx, s.procs[0], "http://"+metrics+"/readyz"); err != nil {
		return s, err
	}
	if err := s.waitReady(ctx, s.procs[1], s.base+"/readyz"); err != nil {
		return s, err
	}
	email := fmt.Sprintf("benchscale-%d-%d@example.com", os.Getpid(), time.Now().UnixNano())
	status, data, err := s.post(ctx, "/v1/auth/register", "", []byte(`{"email":"`+email+`","name":"benchscale"}`))
	if err != nil {
		return s, fmt.Errorf("register: %w", err)
	}
	var reg struct {
		APIKey string `json:"api_key"`
	}
	if status != http.StatusCreated || json.Unmarshal(data, &reg) != nil || reg.APIKey == "" {
		return s, fmt.Errorf("register: status %d: %s", status, data)
	}
	s.key = reg.APIKey
	//nolint:gosec // the bench's own ctl binary (-ctl), and an address it generated
	cmd := exec.CommandContext(ctx, o.ctl, "plan", "set", "--email", email, "--plan", "enterprise",
		"--rate-limit", "100000", "--credits-monthly", "100000000")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		return s, fmt.Errorf("ctl plan set: %w: %s", err, out)
	}
	fmt.Fprintf(os.Stderr, "http: api at %s and worker (metrics %s) on %s, logs in %s (kept after a failure)\n", s.base, metrics, s.redisURL, s.dir)
	return s, nil
}

// start runs one binary in a process group of its own (stopped as one), killed if the
// bench dies.
func (s *httpStack) start(name, bin string, env []string) (*child, error) {
	logPath := filepath.Join(s.dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin) //nolint:noctx // stopped by stop, on every path
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	c := &child{name: name, log: logPath, cmd: cmd, done: make(chan struct{})}
	go func() { c.err = cmd.Wait(); f.Close(); close(c.done) }()
	return c, nil
}

// waitReady polls a readiness URL until it answers 200; an exited process fails at once.
func (s *httpStack) waitReady(ctx context.Context, c *child, url string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if c.exited() {
			exit := c.err
			if exit == nil {
				exit = errors.New("exit status 0")
			}
			return fmt.Errorf("%s exited (%w); log:\n%s", c.name, exit, tail(c.log, 20))
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if res, err := s.client.Do(req); err == nil {
			_ = res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready at %s within 2 minutes; log:\n%s", c.name, url, tail(c.log, 20))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stop sends SIGTERM to each process group, then SIGKILL after 10 s, and gives the Redis
// database back (emptied). After a failure the logs are kept and their tails printed.
func (s *httpStack) stop(failed bool) {
	if s == nil {
		return
	}
	for _, c := range s.procs {
		if !c.exited() {
			fmt.Fprintf(os.Stderr, "%s peak RSS %d MB\n", c.name, peakRSS(c.cmd.Process.Pid)>>20)
			_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGTERM)
		}
	}
	for _, c := range s.procs {
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
			<-c.done
		}
	}
	s.procs = nil
	if s.release != nil {
		s.release()
		s.release = nil
	}
	switch {
	case s.dir == "":
	case failed:
		for _, name := range []string{"api", "worker"} {
			if p := filepath.Join(s.dir, name+".log"); fileExists(p) {
				fmt.Fprintf(os.Stderr, "last lines of %s:\n%s\n", p, tail(p, 15))
			}
		}
	default:
		_ = os.RemoveAll(s.dir)
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// post sends one JSON body and returns the status and the answer's data (the whole body
// when it has no data envelope).
func (s *httpStack) post(ctx context.Context, path, key string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := s.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return res.StatusCode, nil, err
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(raw, &env) == nil && len(env.Data) > 0 && res.StatusCode < 300 {
		return res.StatusCode, env.Data, nil
	}
	return res.StatusCode, raw, nil
}

// call asks the question over HTTP once, timed, and returns its answer's summary. A status
// other than 200 is an error (a 202 would mean the job outlived SYNC_TIMEOUT).
func (s *httpStack) call(ctx context.Context, q question) (string, time.Duration, error) {
	h := q.http
	body := h.body
	if h.page != nil {
		key := q.kind + " " + q.name
		cursor, ok := s.cursors[key]
		if !ok {
			status, data, err := s.post(ctx, h.path, s.key, h.body)
			if err != nil {
				return "", 0, fmt.Errorf("first page: %w", err)
			}
			if status != http.StatusOK {
				return "", 0, fmt.Errorf("first page: POST %s: status %d: %.500s", h.path, status, data)
			}
			if cursor, err = h.next(data); err != nil {
				return "", 0, err
			}
			s.cursors[key] = cursor
		}
		if cursor == "" {
			return noSecondPage, 0, nil
		}
		body = h.page(cursor)
	}
	t0 := time.Now()
	status, data, err := s.post(ctx, h.path, s.key, body)
	took := time.Since(t0)
	if err != nil {
		return "", took, err
	}
	if status != http.StatusOK {
		return "", took, fmt.Errorf("POST %s: status %d: %.500s", h.path, status, data)
	}
	summary, err := h.read(data)
	return summary, took, err
}

// askHTTP times the question over HTTP as ask times it in process: one warm-up, then
// rounds. Every answer's summary must equal the in-process one (same totals).
func askHTTP(ctx context.Context, s *httpStack, res *result, q question, rounds int) error {
	want := res.answers[q.kind+" "+q.name]
	for i := 0; i <= rounds; i++ {
		got, took, err := s.call(ctx, q)
		if err != nil {
			return fmt.Errorf("%s %s over HTTP: %w", q.kind, q.name, err)
		}
		if got != want {
			return fmt.Errorf("%s %s: over HTTP %q, in process %q", q.kind, q.name, got, want)
		}
		if i > 0 && got != noSecondPage {
			res.httpTimings[q.kind] = append(res.httpTimings[q.kind], took)
		}
	}
	return nil
}

// claimRedis claims a database number on the Redis server (the URL's database is ignored)
// as the tests' testenv does, with SET NX of contentapi:testenv:db:N in database 0, from 15
// down (the tests claim from 1 up), and empties it. The release empties it again and drops
// the claim.
func claimRedis(ctx context.Context, server string) (string, func(), error) {
	opt, err := redis.ParseURL(server)
	if err != nil {
		return "", nil, fmt.Errorf("-redis-url: %w", err)
	}
	opt.DB = 0
	ctl := redis.NewClient(opt)
	defer ctl.Close()
	for n := 15; n >= 1; n-- {
		key := "contentapi:testenv:db:" + strconv.Itoa(n)
		ok, err := ctl.SetNX(ctx, key, "benchscale "+strconv.Itoa(os.Getpid()), 2*time.Hour).Result()
		if err != nil {
			return "", nil, fmt.Errorf("claim a database number on Redis at %s: %w", opt.Addr, err)
		}
		if !ok {
			continue
		}
		o := *opt
		o.DB = n
		flush := func() {
			c := redis.NewClient(&o)
			defer c.Close()
			if err := c.FlushDB(context.Background()).Err(); err != nil {
				fmt.Fprintf(os.Stderr, "flush Redis database %d: %v\n", n, err)
			}
		}
		flush()
		u := &url.URL{Scheme: "redis", Host: opt.Addr, Path: "/" + strconv.Itoa(n)}
		if opt.Password != "" {
			u.User = url.UserPassword(opt.Username, opt.Password)
		}
		return u.String(), func() {
			flush()
			c := redis.NewClient(opt)
			defer c.Close()
			c.Del(context.Background(), key)
		}, nil
	}
	return "", nil, errors.New("no free Redis database number (15 down to 1): claims expire in 2 hours")
}

// freePorts returns n distinct free loopback ports.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
