package httpapi_test

import (
	"slices"
	"testing"

	"github.com/contentapi/contentapi/internal/analysis"
)

// TestRecommendOneItemPerPage: on the sample coffee site, recommend with limit 3 gives each page
// at most one improvement, and no outline section (stock sections aside) appears in two
// items.
func TestRecommendOneItemPerPage(t *testing.T) {
	s := startStack(t, stackConfig{})
	key := registerBusy(t, s.testServer)
	domain := "coffee-sample.example" // the sample set's coffee site: /blog/summer-coffee ranks for several keywords
	if !slices.Contains(sampleDomains(t), domain) {
		t.Fatalf("sample domains %v", sampleDomains(t))
	}
	for _, body := range []map[string]any{
		{"domain": domain, "limit": 3},
		{"domain": domain, "limit": 3, "focus_topics": []string{"cold brew"}},
	} {
		r := do(t, "POST", s.URL+"/v1/content/recommend", key, body)
		if r.Status != 200 {
			t.Fatalf("recommend %v: %d %s", body, r.Status, r.Raw)
		}
		pages := map[string]int{}
		sections := map[string]int{}
		for i, rec := range r.data()["recommendations"].([]any) {
			rm := rec.(map[string]any)
			if u, ok := rm["url"].(string); ok && rm["action"] == "improve" {
				pages[u]++
				if pages[u] > 1 {
					t.Errorf("%v: %s improved twice", body, u)
				}
			}
			for _, sec := range rm["outline"].([]any) {
				h2 := sec.(map[string]any)["h2"].(string)
				if j, ok := sections[h2]; ok && j != i && !analysis.IsStockHeading(h2) {
					t.Errorf("%v: section %q in items %d and %d", body, h2, j+1, i+1)
				}
				sections[h2] = i
			}
		}
		t.Logf("%v: %d items, pages %v", body, len(r.data()["recommendations"].([]any)), pages)
	}
}
