package report

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/keywords/cache"
	"github.com/contentapi/contentapi/internal/keywords/dataforseo"
	"github.com/contentapi/contentapi/internal/testenv"
)

// Research reads the domain's positions once per query, not once per page: the first page
// makes one keyword_ideas and one ranked_keywords call, every later page of the walk (through
// the keyword cache, as the worker runs it) one keyword_ideas call only.
func TestResearchPositionsOncePerQuery(t *testing.T) {
	const n = 5 // ideas DataForSEO holds
	var mu sync.Mutex
	calls := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var tasks []map[string]any
		if err := json.Unmarshal(body, &tasks); err != nil || len(tasks) != 1 {
			t.Errorf("body %s", body)
			return
		}
		task := tasks[0]
		mu.Lock()
		name := strings.TrimSuffix(r.URL.Path, "/live")
		calls[name[strings.LastIndex(name, "/")+1:]]++
		mu.Unlock()
		var items []any
		switch r.URL.Path {
		case dataforseo.PathKeywordIdeas:
			for i := range n {
				items = append(items, map[string]any{"keyword": fmt.Sprintf("cold brew idea %02d", i),
					"keyword_info":       map[string]any{"search_volume": 1000 - i, "cpc": nil, "competition": nil},
					"keyword_properties": map[string]any{"keyword_difficulty": 20}, "search_intent_info": nil})
			}
		case dataforseo.PathRankedKeywords:
			items = append(items, map[string]any{"keyword_data": map[string]any{"keyword": "cold brew idea 01"},
				"ranked_serp_element": map[string]any{"serp_item": map[string]any{"type": "organic", "rank_group": 4, "url": "https://ourbrew.example/a"}}})
		default:
			t.Errorf("asked %s", r.URL.Path)
		}
		offset := 0
		if tok, _ := task["offset_token"].(string); tok != "" {
			_, _ = fmt.Sscanf(tok, "tok-%d", &offset)
		}
		limit, _ := task["limit"].(float64)
		end := min(offset+int(limit), len(items))
		result := map[string]any{"total_count": len(items), "items_count": end - offset, "offset_token": fmt.Sprintf("tok-%d", end),
			"items": items[offset:end]}
		_ = json.NewEncoder(w).Encode(map[string]any{"status_code": 20000, "status_message": "Ok.",
			"tasks": []any{map[string]any{"status_code": 20000, "status_message": "Ok.", "result": []any{result}}}})
	}))
	t.Cleanup(srv.Close)
	provider := dataforseo.New(dataforseo.Config{BaseURL: srv.URL, Login: "l", Password: "p", HTTPClient: srv.Client()})
	b := &Builder{Keywords: cache.New(provider, testenv.Redis(t), 24*time.Hour), Clock: clock.NewManual(testNow),
		Cursors: NewCursors([]byte(strings.Repeat("k", 32)))}
	ctx := WithAccount(context.Background(), "acct-1")
	limit := 2
	req := ResearchRequest{Domain: "ourbrew.example", Topic: "cold brew", Country: "us", Language: "en", Limit: &limit}
	want := []map[string]int{{"keyword_ideas": 1, "ranked_keywords": 1}, {"keyword_ideas": 1}, {"keyword_ideas": 1}}
	for p := 0; ; p++ {
		mu.Lock()
		clear(calls)
		mu.Unlock()
		res, err := b.Research(ctx, req)
		if err != nil {
			t.Fatalf("page %d: %v", p+1, err)
		}
		mu.Lock()
		got := maps.Clone(calls)
		mu.Unlock()
		if p >= len(want) {
			t.Fatal("the pages do not end")
		}
		if !maps.Equal(got, want[p]) {
			t.Errorf("page %d: calls %v, want %v", p+1, got, want[p])
		}
		if res.Total != n {
			t.Errorf("page %d: total %d, want %d", p+1, res.Total, n)
		}
		if res.NextCursor == nil {
			if p != len(want)-1 {
				t.Errorf("the walk ended on page %d, want %d", p+1, len(want))
			}
			break
		}
		req.Cursor = *res.NextCursor
	}
}
