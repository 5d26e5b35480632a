package worker_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/contentapi/contentapi/internal/app/worker"
	"github.com/contentapi/contentapi/internal/config"
	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/dataforseo"
)

// TestDataForSEOFillWired builds the worker's DataForSEO client from the configuration and
// checks that the intent and difficulty fill-ins are called by default, and not when
// DATAFORSEO_FILL_MISSING=false.
func TestDataForSEOFillWired(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		var result any = []any{map[string]any{"total_count": 1, "items": []any{map[string]any{
			"keyword": "cold brew maker", "keyword_info": nil, "keyword_properties": nil, "search_intent_info": nil}}}}
		if r.URL.Path != dataforseo.PathKeywordIdeas {
			result = []any{map[string]any{"items": []any{}}}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"status_code": 20000, "status_message": "Ok.",
			"tasks": []any{map[string]any{"status_code": 20000, "status_message": "Ok.", "result": result}}})
	}))
	t.Cleanup(srv.Close)

	for _, tc := range []struct {
		fill  string
		calls int
	}{{"", 3}, {"false", 1}} {
		env := map[string]string{"KEYWORD_PROVIDER": "dataforseo", "DATAFORSEO_LOGIN": "l", "DATAFORSEO_PASSWORD": "p",
			"DATAFORSEO_BASE_URL": srv.URL, "DATAFORSEO_FILL_MISSING": tc.fill}
		cfg, err := config.LoadLookup(func(name string) (string, bool) { v, ok := env[name]; return v, ok })
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		paths = nil
		mu.Unlock()
		c := dataforseo.New(worker.DataForSEOConfig(cfg, nil))
		if _, err := c.Ideas(context.Background(), keywords.IdeasRequest{Topic: "cold brew"}); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		got := strings.Join(paths, " ")
		mu.Unlock()
		if len(paths) != tc.calls {
			t.Errorf("DATAFORSEO_FILL_MISSING=%q: calls %s, want %d", tc.fill, got, tc.calls)
		}
		if tc.calls == 3 && (!strings.Contains(got, dataforseo.PathSearchIntent) || !strings.Contains(got, dataforseo.PathBulkKeywordDifficulty)) {
			t.Errorf("fill-ins not called: %s", got)
		}
	}
}
