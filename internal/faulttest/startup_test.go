package faulttest

import (
	"context"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The real binaries start with the DATABASE_URL docs/operating.md advises (pool_max_conns in it):
// ctl migrate creates and migrates the database, the api and worker become ready, a
// registration and a keyword research call work end to end, and SIGTERM stops both cleanly.
func TestRealBinariesStartServeAndStop(t *testing.T) {
	s := newStack(t)
	if out := s.ctl("migrate"); !strings.Contains(out, "applied") {
		t.Fatalf("ctl migrate said: %s", out)
	}
	s.ctl("seed-sample")
	api, worker := s.startServices()

	ctx := context.Background()
	ready, err := s.do(ctx, http.MethodGet, "/readyz", "", nil)
	if err != nil || ready.status != http.StatusOK {
		t.Fatalf("readyz: %v %d %s", err, ready.status, ready.raw)
	}
	key := s.register("startup@example.com")
	a, err := s.do(ctx, http.MethodPost, "/v1/keywords/research", key,
		map[string]any{"domain": "coffee-sample.example", "topic": "coffee"})
	if err != nil || a.status != http.StatusOK {
		t.Fatalf("research: %v %d %s", err, a.status, a.raw)
	}
	if clusters, _ := a.data()["clusters"].([]any); len(clusters) == 0 {
		t.Fatalf("research found no clusters on the sample data: %s", a.raw)
	}
	meta, _ := a.body["meta"].(map[string]any)
	if meta["credits_used"] != float64(5) || meta["credits_remaining"] != float64(45) {
		t.Fatalf("research meta %v: want 5 credits used, 45 remaining", meta)
	}

	for _, p := range []*service{api, worker} {
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatalf("SIGTERM %s: %v", p.name, err)
		}
	}
	for _, p := range []*service{api, worker} {
		select {
		case <-p.done:
		case <-time.After(20 * time.Second): // SHUTDOWN_TIMEOUT is 10 s
			t.Fatalf("%s still running 20 s after SIGTERM", p.name)
		}
		if p.err != nil {
			t.Errorf("%s ended with %v after SIGTERM, want exit status 0", p.name, p.err)
		}
		log, err := os.ReadFile(p.logPath)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(log), `"msg":"stopped"`) {
			t.Errorf("%s log has no \"stopped\" line after SIGTERM:\n%s", p.name, tail(p.logPath, 10))
		}
	}
}
