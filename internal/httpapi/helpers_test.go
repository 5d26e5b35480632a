package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/app"
	"github.com/contentapi/contentapi/internal/app/apptest"
	"github.com/contentapi/contentapi/internal/auth"
	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/credits"
	"github.com/contentapi/contentapi/internal/httpapi"
	"github.com/contentapi/contentapi/internal/ratelimit"
	"github.com/contentapi/contentapi/internal/testenv"
)

func TestMain(m *testing.M) { testenv.MainNoLeaks(m, testenv.FasthttpGoroutines...) }

type testServer struct {
	URL      string
	Clock    *clock.Manual
	Accounts *auth.Accounts
	Gate     *auth.Gate
	Ledger   *credits.Ledger
	App      *fiber.App
	// Graph is the service's graph the API was built from.
	Graph *app.App
	logW  *lockedWriter
}

type serverOption func(*httpapi.Deps)

// serverConfig is the graph a test server is built over, and whether it serves the job
// path (the graph's job service).
type serverConfig struct {
	graph apptest.Options
	jobs  bool
}

// startServer runs the API on a real listener over the test database and Redis.
func startServer(t testing.TB, opts ...serverOption) *testServer {
	t.Helper()
	return startServerWith(t, serverConfig{}, opts...)
}

// startServerWith is startServer over the graph sc describes.
func startServerWith(t testing.TB, sc serverConfig, opts ...serverOption) *testServer {
	t.Helper()
	clk := clock.NewManual(time.Now().UTC().Truncate(time.Millisecond))
	logW := &lockedWriter{w: &bytes.Buffer{}}
	log := slog.New(slog.NewJSONHandler(logW, nil))
	sc.graph.Clock, sc.graph.Log = clk, log
	a := apptest.New(t, sc.graph)
	d := httpapi.Deps{Log: log, Pool: a.Pool, Redis: a.Redis, Accounts: a.Accounts, Gate: a.Gate, Ledger: a.Ledger,
		Limiter: ratelimit.New(a.Redis), Clock: clk, PublicBaseURL: "http://api.test", DashboardURL: "https://dash.test",
		DocsURL: "https://docs.test", RegisterLimit: 1000, Cursors: a.Cursors}
	if sc.jobs {
		d.Jobs, d.Metrics = a.Jobs, a.Metrics
	}
	for _, o := range opts {
		o(&d)
	}
	srv := httpapi.New(d)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() { defer close(served); _ = srv.Listener(ln) }()
	t.Cleanup(func() {
		_ = srv.ShutdownWithTimeout(5 * time.Second)
		// A server shut down before it began serving would then serve the listener for ever.
		_ = ln.Close()
		<-served
	})
	return &testServer{URL: "http://" + ln.Addr().String(), Clock: clk, Accounts: a.Accounts, Gate: a.Gate,
		Ledger: a.Ledger, App: srv, Graph: a, logW: logW}
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (s *testServer) logText() string {
	s.logW.mu.Lock()
	defer s.logW.mu.Unlock()
	return s.logW.w.String()
}

type response struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    string
}

func (r response) data() map[string]any {
	d, _ := r.Body["data"].(map[string]any)
	return d
}

// errCode reads the code of any of the three error shapes.
func (r response) errCode() string {
	if c, ok := r.Body["code"].(string); ok {
		return c
	}
	if e, ok := r.Body["error"].(map[string]any); ok {
		c, _ := e["code"].(string)
		return c
	}
	return ""
}

func do(t testing.TB, method, url, key string, body any, headers ...string) response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		buf, _ := json.Marshal(b)
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return send(t, req)
}

// send makes the request and validates the answer against the document.
func send(t testing.TB, req *http.Request) response {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := response{Status: res.StatusCode, Header: res.Header, Raw: string(raw)}
	_ = json.Unmarshal(raw, &out.Body)
	validateAgainstSpec(t, req.Method, req.URL.String(), out)
	return out
}

// register creates an account and returns its key.
func register(t testing.TB, s *testServer) string {
	t.Helper()
	r := do(t, "POST", s.URL+"/v1/auth/register", "", map[string]any{"email": uniqueEmail()})
	if r.Status != 201 {
		t.Fatalf("register: %d %s", r.Status, r.Raw)
	}
	return r.data()["api_key"].(string)
}

func uniqueEmail() string { return "user-" + uuid.NewString() + "@example.com" }

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
