package httpapi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/contentapi/contentapi/internal/credits"
)

// expectSource checks an analysis answer's data source in meta and in X-Data-Source, and
// whether meta.warnings carries the synthetic-data warning.
func expectSource(t *testing.T, what string, r response, source string) []string {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("%s: %d %s", what, r.Status, r.Raw)
	}
	if h := r.Header.Get("X-Data-Source"); h != source {
		t.Errorf("%s: X-Data-Source %q, want %q", what, h, source)
	}
	var warnings []string
	if meta, ok := r.Body["meta"].(map[string]any); ok { // CSV answers carry the header only
		if meta["data_source"] != source {
			t.Errorf("%s: meta.data_source %v, want %s", what, meta["data_source"], source)
		}
		ws, ok := meta["warnings"].([]any)
		if !ok {
			t.Fatalf("%s: meta.warnings missing: %v", what, meta)
		}
		for _, w := range ws {
			warnings = append(warnings, w.(string))
		}
		synthetic := strings.Contains(strings.Join(warnings, "\n"), "synthetic sample data")
		if synthetic != (source == "synthetic" || source == "mixed") {
			t.Errorf("%s: warnings %q: a synthetic-data warning exactly when data is synthetic", what, warnings)
		}
	}
	return warnings
}

func TestDataSourceOfAnswers(t *testing.T) {
	importData(t)
	s := startStack(t, stackConfig{})
	key := registerBusy(t, s.testServer)
	now := s.Clock.Now()
	if _, err := s.Ledger.Grant(context.Background(), credits.Grant{AccountID: accountID(t, s.testServer, key), Amount: 100,
		IssuedAt: now, ExpiresAt: now.Add(72 * time.Hour), Source: credits.SourceOperator, SourceRef: "datasource"}); err != nil {
		t.Fatal(err)
	}
	doms := sampleDomains(t)

	// The sample set: synthetic, in the answer, on the job, in CSV and in the plan.
	r := do(t, "POST", s.URL+"/v1/keywords/research", key, map[string]any{"domain": doms[0], "topic": "coffee"})
	expectSource(t, "sample research", r, "synthetic")
	id := r.Body["meta"].(map[string]any)["job_id"].(string)
	expectSource(t, "sample research job", do(t, "GET", s.URL+"/v1/jobs/"+id, key, nil), "synthetic")
	expectSource(t, "sample research csv", do(t, "GET", s.URL+"/v1/jobs/"+id, key, nil, "Accept", "text/csv"), "synthetic")
	expectSource(t, "sample gaps", do(t, "POST", s.URL+"/v1/keywords/gaps", key, map[string]any{"domain": doms[0], "competitors": []string{doms[1]}}), "synthetic")
	_, site := testSite(t)
	expectSource(t, "sample recommend", do(t, "POST", s.URL+"/v1/content/recommend", key, map[string]any{"domain": site, "focus_topics": []string{"cold brew"}, "limit": 3}), "synthetic")

	// Imported data: no flag, no warning.
	r = do(t, "POST", s.URL+"/v1/keywords/research", key, map[string]any{"domain": "honesty-shop.example", "topic": "honesty espresso", "country": importedCountry})
	if w := expectSource(t, "imported research", r, "imported"); len(w) != 0 {
		t.Errorf("imported research warnings %q, want none", w)
	}
	id = r.Body["meta"].(map[string]any)["job_id"].(string)
	expectSource(t, "imported research csv", do(t, "GET", s.URL+"/v1/jobs/"+id, key, nil, "Accept", "text/csv"), "imported")
	w := expectSource(t, "imported gaps", do(t, "POST", s.URL+"/v1/keywords/gaps", key, map[string]any{"domain": "honesty-shop.example",
		"competitors": []string{"honesty-rival.example", "nobody-here.example"}, "country": importedCountry}), "imported")
	if len(w) != 1 || !strings.Contains(w[0], `no ranking data for "nobody-here.example" in au/en`) {
		t.Errorf("gaps warnings %q, want one naming the competitor without data", w)
	}
	// A plan names competitors without ranking data too.
	w = expectSource(t, "sample content map", do(t, "POST", s.URL+"/v1/content-map", key, map[string]any{"domain": doms[0],
		"competitors": []string{doms[1], "nobody-here.example"}, "focus_topics": []string{"coffee"}}), "synthetic")
	if !strings.Contains(strings.Join(w, "\n"), `no ranking data for "nobody-here.example" in us/en`) {
		t.Errorf("content map warnings %q, want one naming the competitor without data", w)
	}
	// The audit rests on the crawl alone.
	expectSource(t, "audit", do(t, "POST", s.URL+"/v1/content/audit", key, map[string]any{"domain": site}), "crawl")
}

func TestDataSourceOfProviderAnswers(t *testing.T) {
	f := newFakeDataForSEO(t)
	s := dataForSEOStack(t, f, stackConfig{})
	key := register(t, s.testServer)
	r := do(t, "POST", s.URL+"/v1/keywords/research", key, map[string]any{"domain": "example.com", "topic": "coffee"})
	if w := expectSource(t, "provider research", r, "provider"); len(w) != 0 {
		t.Errorf("provider research warnings %q, want none", w)
	}
}
