package faulttest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The api and the worker start in any order and before their servers: each waits, saying
// so in its log, with its readiness false meanwhile, and both serve once everything is up.

// Started together on a server without the database, the api creates and migrates it while
// the worker waits for the schema; a keyword research call on the sample data is answered
// within 10 s of the api listening (the sample loaded by ctl seed-sample once it does).
func TestStartTogetherOnEmptyDatabase(t *testing.T) {
	s := newStack(t)
	api := s.run("api", s.bins.api)
	worker := s.run("worker", s.bins.worker)
	listening := s.waitListening(api)

	s.ctl("seed-sample")
	key := s.register("together@example.com")
	s.research(key)
	took := time.Since(listening)
	t.Logf("api and worker started together on an empty database: research answered %s after the api listened",
		took.Round(time.Millisecond))
	if took > 10*time.Second {
		t.Errorf("research answered %s after the api listened, want within 10 s", took.Round(time.Millisecond))
	}
	s.waitReady(worker, s.workerURL("/readyz"))
}

// The worker started before the api, on a server without the database, waits (first for
// the database, then for its schema) with /healthz up and /readyz 503, and runs jobs once
// the api has migrated. The database is made (empty) between the two waits, as an operator
// may make it: the api, which makes it too, migrates it in less than the worker's next
// retry, and the worker would then find its schema at once.
func TestWorkerStartsBeforeAPI(t *testing.T) {
	s := newStack(t)
	worker := s.run("worker", s.bins.worker)
	s.waitLog(worker, `"msg":"waiting for PostgreSQL"`)
	s.checkNotReady(worker)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, s.pg.url("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = admin.Exec(ctx, "CREATE DATABASE contentapi")
	_ = admin.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.waitLog(worker, `"msg":"waiting for the database schema`)
	s.checkNotReady(worker)

	api := s.run("api", s.bins.api)
	s.waitReady(api, s.baseURL()+"/readyz")
	s.waitReady(worker, s.workerURL("/readyz"))
	s.waitLog(worker, `"msg":"the database schema (the api applies the migrations at start) ready"`)
	s.ctl("seed-sample")
	s.research(s.register("worker-first@example.com"))
}

// PostgreSQL and Redis both down as the api starts, then the worker: each waits for
// PostgreSQL, and neither is ready (the api does not listen, the worker's /readyz is 503).
// PostgreSQL comes up: the api migrates, and both wait for Redis. Redis comes up: both
// become ready and a research call is answered.
func TestStartBeforePostgresAndRedis(t *testing.T) {
	s := newStack(t)
	s.pg.kill()
	s.redis.kill()
	api := s.run("api", s.bins.api)
	s.waitLog(api, `"msg":"waiting for PostgreSQL to apply migrations"`)
	worker := s.run("worker", s.bins.worker)
	s.waitLog(worker, `"msg":"waiting for PostgreSQL"`)
	s.checkNotReady(worker)
	s.checkNotListening(api)

	if err := s.pg.start(); err != nil {
		t.Fatal(err)
	}
	s.waitLog(api, `"msg":"waiting for Redis"`)
	s.waitLog(worker, `"msg":"waiting for Redis"`)
	s.checkNotReady(worker)
	s.checkNotListening(api)

	if err := s.redis.start(); err != nil {
		t.Fatal(err)
	}
	s.waitReady(api, s.baseURL()+"/readyz")
	s.waitReady(worker, s.workerURL("/readyz"))
	s.ctl("seed-sample")
	s.research(s.register("servers-later@example.com"))
}

func (s *stack) workerURL(path string) string {
	return "http://127.0.0.1:" + strconv.Itoa(s.metricsPort) + path
}

// waitLog waits until svc's log holds text, failing at once if svc exits.
func (s *stack) waitLog(svc *service, text string) {
	s.t.Helper()
	err := waitFor(svc.name+" to log "+text, 60*time.Second, 20*time.Millisecond, func() (bool, error) {
		if svc.exited() {
			return false, fmt.Errorf("%s exited (%s): %w; log:\n%s", svc.name, svc.exitStatus(), errGaveUp, tail(svc.logPath, 20))
		}
		log, err := os.ReadFile(svc.logPath)
		return strings.Contains(string(log), text), err
	})
	if err != nil {
		s.t.Fatal(err)
	}
}

// waitListening waits until the api accepts connections and returns when it first did.
func (s *stack) waitListening(api *service) time.Time {
	s.t.Helper()
	var at time.Time
	err := waitFor("api listening", 60*time.Second, 5*time.Millisecond, func() (bool, error) {
		if api.exited() {
			return false, fmt.Errorf("api exited (%s): %w; log:\n%s", api.exitStatus(), errGaveUp, tail(api.logPath, 20))
		}
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(s.apiPort), time.Second)
		if err != nil {
			return false, err
		}
		at = time.Now()
		_ = c.Close()
		return true, nil
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return at
}

// checkNotReady fails unless the waiting worker runs, answers /healthz and answers /readyz
// with 503 "starting".
func (s *stack) checkNotReady(worker *service) {
	s.t.Helper()
	if worker.exited() {
		s.t.Fatalf("worker exited (%s) while waiting; log:\n%s", worker.exitStatus(), tail(worker.logPath, 20))
	}
	var health answer
	err := waitFor("worker /healthz", 30*time.Second, 20*time.Millisecond, func() (bool, error) {
		var err error
		health, err = s.get(s.workerURL("/healthz"))
		return err == nil, err
	})
	if err != nil || health.status != http.StatusOK {
		s.t.Fatalf("worker /healthz while waiting: %v %d %s", err, health.status, health.raw)
	}
	ready, err := s.get(s.workerURL("/readyz"))
	if err != nil || ready.status != http.StatusServiceUnavailable || ready.body["status"] != "starting" {
		s.t.Fatalf("worker /readyz while waiting: %v %d %s; want 503 starting", err, ready.status, ready.raw)
	}
}

// checkNotListening fails unless the waiting api runs and does not accept connections yet.
func (s *stack) checkNotListening(api *service) {
	s.t.Helper()
	if api.exited() {
		s.t.Fatalf("api exited (%s) while waiting; log:\n%s", api.exitStatus(), tail(api.logPath, 20))
	}
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(s.apiPort), time.Second); err == nil {
		_ = c.Close()
		s.t.Fatal("the api accepts connections while it waits for its servers")
	}
}

// get fetches a URL outside the API (the worker's port).
func (s *stack) get(url string) (answer, error) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		return answer{}, err
	}
	return s.send(req)
}

// research makes a keyword research call on the sample data and fails unless it is answered
// with clusters.
func (s *stack) research(key string) {
	s.t.Helper()
	a, err := s.do(context.Background(), http.MethodPost, "/v1/keywords/research", key,
		map[string]any{"domain": "coffee-sample.example", "topic": "coffee"})
	if err != nil || a.status != http.StatusOK {
		s.t.Fatalf("research: %v %d %s", err, a.status, a.raw)
	}
	if clusters, _ := a.data()["clusters"].([]any); len(clusters) == 0 {
		s.t.Fatalf("research found no clusters on the sample data: %s", a.raw)
	}
}
