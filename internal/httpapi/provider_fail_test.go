package httpapi_test

import (
	"testing"

	"github.com/contentapi/contentapi/internal/keywords/dataforseo"
)

func dataForSEOStack(t *testing.T, f *fakeDataForSEO, sc stackConfig) *stack {
	sc.provider = dataforseo.New(dataforseo.Config{BaseURL: f.URL, Login: "login", Password: "secret", HTTPClient: f.Client()})
	return startStack(t, sc)
}

func TestProviderFailureRefunds(t *testing.T) {
	f := newFakeDataForSEO(t)
	s := dataForSEOStack(t, f, stackConfig{})
	key := register(t, s.testServer)
	acc := accountID(t, s.testServer, key)

	// A refusal that retrying cannot fix: failed at once, refunded.
	f.setFail("error_40100")
	r := do(t, "POST", s.URL+"/v1/keywords/research", key, map[string]any{"domain": "example.com", "topic": "coffee"})
	if r.Status != 502 || r.errCode() != "PROVIDER_ERROR" || r.Body["success"] != false {
		t.Fatalf("permanent failure: %d %s", r.Status, r.Raw)
	}
	if e := r.Body["error"].(map[string]any); e["credits_refunded"] != float64(5) || e["job_id"] == nil {
		t.Fatalf("error body %v", e)
	}
	if b := s.balanceOf(t, key); b != 50 {
		t.Fatalf("balance %d after a failed call, want 50", b)
	}

	// A provider that keeps failing with 500: every attempt is tried, then refunded.
	f.setFail("500")
	before := f.calls.Load()
	r = do(t, "POST", s.URL+"/v1/keywords/research", key, map[string]any{"domain": "example.com", "topic": "tea"})
	if r.Status != 502 || r.errCode() != "PROVIDER_ERROR" {
		t.Fatalf("temporary failure: %d %s", r.Status, r.Raw)
	}
	if n := f.calls.Load() - before; n < 3 {
		t.Fatalf("provider called %d times; want the job tried 3 times", n)
	}
	if b := s.balanceOf(t, key); b != 50 {
		t.Fatalf("balance %d, want 50", b)
	}
	if rs := reservationsOf(t, acc); rs["refunded"] != 2 || rs["settled"] != 0 || rs["reserved"] != 0 {
		t.Fatalf("reservations %v", rs)
	}
	if calls := do(t, "GET", s.URL+"/v1/usage", key, nil).data()["recent_calls"].([]any); len(calls) != 0 {
		t.Fatalf("failed calls listed as used: %v", calls)
	}

	// Once it answers again, the call succeeds and is charged once.
	f.setFail("")
	r = do(t, "POST", s.URL+"/v1/keywords/research", key, map[string]any{"domain": "example.com", "topic": "cold brew"})
	if r.Status != 200 || r.data()["total_keywords"].(float64) < 1 {
		t.Fatalf("recovered: %d %s", r.Status, r.Raw)
	}
	if b := s.balanceOf(t, key); b != 45 {
		t.Fatalf("balance %d, want 45", b)
	}
}
