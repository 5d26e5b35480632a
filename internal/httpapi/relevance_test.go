package httpapi_test

import (
	"strings"
	"testing"
)

// TestResearchGenericWord: on the sample data, "seo tools" matches only "remote work
// tools", by the generic word "tools": NO_DATA, refunded, not an answer about remote work.
// A topic whose head word is specific still answers.
func TestResearchGenericWord(t *testing.T) {
	s := startStack(t, stackConfig{})
	key := register(t, s.testServer)
	doms := sampleDomains(t)
	r := do(t, "POST", s.URL+"/v1/keywords/research", key, map[string]any{"domain": doms[0], "topic": "seo tools"})
	expectNoData(t, "seo tools", r, 5, `"tools"`, `"remote work tools"`, "generic")
	expectBalance(t, s, key, 50, map[string]int{"refunded": 1})

	r = do(t, "POST", s.URL+"/v1/keywords/research", key, map[string]any{"domain": doms[0], "topic": "home gardening"})
	if r.Status != 200 || r.data()["total_keywords"].(float64) < 1 {
		t.Fatalf("home gardening: %d %s", r.Status, r.Raw)
	}
	for _, c := range r.data()["clusters"].([]any) {
		for _, k := range c.(map[string]any)["keywords"].([]any) {
			if kw := k.(map[string]any)["keyword"].(string); strings.Contains(kw, "remote") {
				t.Errorf("home gardening answered %q", kw)
			}
		}
	}
}
