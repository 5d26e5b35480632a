package httpapi_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/contentapi/contentapi/internal/app/apptest"
	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/auth"
	"github.com/contentapi/contentapi/internal/httpapi"
	"github.com/contentapi/contentapi/internal/testenv"
)

// outageServer is the API with the job path (no worker) over the given pool and Redis.
func outageServer(t *testing.T, pool *pgxpool.Pool, rdb redis.UniversalClient) *testServer {
	t.Helper()
	return startServerWith(t, serverConfig{graph: apptest.Options{Pool: pool, Redis: rdb}, jobs: true},
		func(d *httpapi.Deps) { d.SyncTimeout = time.Second })
}

type outageCall struct {
	name, method, path, key string
	body                    any
}

// outageCalls are registration, usage and an analysis call with the key, plus the keys
// given (unknown to the server: authenticating them needs the database).
func outageCalls(key string, strangers ...string) []outageCall {
	calls := []outageCall{
		{"register", "POST", "/v1/auth/register", "", nil},
		{"usage", "GET", "/v1/usage", key, nil},
		{"keyword research", "POST", "/v1/keywords/research", key, map[string]any{"domain": "example.com", "topic": "coffee"}},
	}
	for _, k := range strangers {
		calls = append(calls, outageCall{"usage with a key not seen yet", "GET", "/v1/usage", k, nil})
	}
	return calls
}

// expectUnavailable makes the calls rounds times (pooled connections die first, then new
// ones are refused) and wants 503 SERVICE_UNAVAILABLE with Retry-After every time.
func expectUnavailable(t *testing.T, s *testServer, calls []outageCall, rounds int) {
	t.Helper()
	for round := 0; round < rounds; round++ {
		for _, c := range calls {
			body := c.body
			if c.name == "register" {
				body = map[string]any{"email": uniqueEmail()}
			}
			r := do(t, c.method, s.URL+c.path, c.key, body)
			if r.Status != 503 || r.errCode() != apperr.ServiceUnavailable || r.Header.Get("Retry-After") != fmt.Sprint(apperr.RetryAfterUnavailable) {
				t.Errorf("%s, round %d: %d Retry-After %q %s", c.name, round, r.Status, r.Header.Get("Retry-After"), r.Raw)
			}
		}
	}
	if r := do(t, "GET", s.URL+"/readyz", "", nil); r.Status != 503 {
		t.Errorf("readyz: %d %s", r.Status, r.Raw)
	}
	if strings.Contains(s.logText(), `"internal error"`) {
		t.Errorf("an outage was logged as an internal error:\n%s", s.logText())
	}
}

// registerKnown registers an account and makes one call with its key, so the server knows
// the key (its owner cached in process, the account's state in Redis).
func registerKnown(t *testing.T, s *testServer) string {
	t.Helper()
	key := register(t, s)
	if r := do(t, "GET", s.URL+"/v1/keys", key, nil); r.Status != 200 {
		t.Fatalf("keys: %d %s", r.Status, r.Raw)
	}
	return key
}

// With PostgreSQL gone (every connection cut, new ones refused) callers get 503 with
// Retry-After, never 500: registration, authentication of an unknown key, usage and an
// analysis call; and answers resume when it is back.
func TestPostgresDownAnswers503(t *testing.T) {
	proxy := testenv.NewPGProxy(t)
	s := outageServer(t, proxy.Pool(t), testenv.Redis(t))
	key := registerKnown(t, s)
	stranger, err := auth.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	proxy.Cut()
	expectUnavailable(t, s, outageCalls(key, stranger), 3)
	proxy.Restore()
	register(t, s)
	if r := do(t, "GET", s.URL+"/v1/usage", key, nil); r.Status != 200 {
		t.Fatalf("usage after PostgreSQL came back: %d %s", r.Status, r.Raw)
	}
}

// With Redis killed the registration limit, the authentication gate and the analysis call
// answer 503 with Retry-After, never 500.
func TestRedisDownAnswers503(t *testing.T) {
	rs := testenv.StartRedisServer(t)
	s := outageServer(t, testenv.Postgres(t), rs.Client(t))
	key := registerKnown(t, s)
	rs.Kill()
	expectUnavailable(t, s, outageCalls(key), 1)
}

// PostgreSQL goes away while an analysis call's job is being committed, and whether it
// was cannot be read: the 503 names the job (error.job_id, Location), which the caller then
// finds (202, still queued) instead of calling again; a retry under the same
// Idempotency-Key answers with that job and charges once.
func TestMaybeAcceptedCallNamesItsJob(t *testing.T) {
	proxy := testenv.NewPGProxy(t)
	pool := proxy.Pool(t)
	s := outageServer(t, pool, testenv.Redis(t))
	key := registerKnown(t, s)
	var armed atomic.Bool
	armed.Store(true)
	proxy.OnQuery(func(sql string) testenv.QueryAction {
		if !strings.EqualFold(sql, "commit") || !armed.CompareAndSwap(true, false) {
			return testenv.Forward
		}
		// The COMMIT reaches the server, its answer is lost, and no connection is left to
		// look the job up with.
		pool.Reset()
		proxy.Refuse()
		return testenv.CutAfter
	})
	body := map[string]any{"domain": "example.com", "topic": "coffee"}
	r := do(t, "POST", s.URL+"/v1/keywords/research", key, body, "Idempotency-Key", "maybe-1")
	e, _ := r.Body["error"].(map[string]any)
	id, _ := e["job_id"].(string)
	if r.Status != 503 || e["code"] != apperr.ServiceUnavailable || id == "" {
		t.Fatalf("research while its COMMIT was lost: %d %s, want 503 naming the job", r.Status, r.Raw)
	}
	if _, err := uuid.Parse(id); err != nil {
		t.Fatalf("job_id %q: %v", id, err)
	}
	if loc := r.Header.Get("Location"); loc != "http://api.test/v1/jobs/"+id {
		t.Fatalf("Location %q, want http://api.test/v1/jobs/%s", loc, id)
	}
	proxy.Restore()
	if got := do(t, "GET", s.URL+"/v1/jobs/"+id, key, nil); got.Status != 202 || got.data()["job_id"] != id {
		t.Fatalf("the named job: %d %s, want 202 with it", got.Status, got.Raw)
	}
	again := do(t, "POST", s.URL+"/v1/keywords/research", key, body, "Idempotency-Key", "maybe-1")
	if again.Status != 202 || again.data()["job_id"] != id || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry under the same key: %d %s, want the same job replayed", again.Status, again.Raw)
	}
	if u := do(t, "GET", s.URL+"/v1/usage", key, nil); u.data()["credits_remaining"] != float64(45) {
		t.Fatalf("usage %s, want 45 credits left (one call reserved)", u.Raw)
	}
}
