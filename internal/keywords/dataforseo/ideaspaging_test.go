package dataforseo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/dataforseo"
)

// ideasAnswer answers a keyword_ideas task from n keywords in DataForSEO's order, honouring
// limit and offset_token ("tok-OFFSET"), in the documented shape: total_count, items_count,
// offset, offset_token, items with keyword_info, keyword_properties and a null
// search_intent_info.
func ideasAnswer(t *testing.T, n int, task map[string]any) []byte {
	t.Helper()
	offset := 0
	if tok, _ := task["offset_token"].(string); tok != "" {
		if _, err := fmt.Sscanf(tok, "tok-%d", &offset); err != nil {
			t.Fatalf("offset_token %q is not one the fake gave", tok)
		}
	}
	if task["offset"] != nil {
		t.Errorf("offset sent beside offset_token: %v", task)
	}
	limit := int(num(task["limit"]))
	end := min(offset+limit, n)
	items := []any{}
	for i := offset; i < end; i++ {
		kw := fmt.Sprintf("cold brew idea %03d", i)
		if i%9 == 4 {
			kw = fmt.Sprintf("brew tools %03d", i) // left out by the test's Keep rule
		}
		items = append(items, map[string]any{
			"se_type": "google", "keyword": kw, "location_code": 2840, "language_code": "en",
			"keyword_info": map[string]any{"se_type": "google", "competition": nil, "cpc": nil, "search_volume": 1000 - i,
				"monthly_searches": nil, "search_volume_trend": nil},
			"keyword_properties": map[string]any{"se_type": "google", "keyword_difficulty": i % 100},
			"serp_info":          nil, "avg_backlinks_info": nil, "search_intent_info": nil,
		})
	}
	result := map[string]any{"se_type": "google", "seed_keywords": task["keywords"], "location_code": 2840, "language_code": "en",
		"total_count": n, "items_count": len(items), "offset": offset, "offset_token": fmt.Sprintf("tok-%d", end), "items": items}
	b, err := json.Marshal(map[string]any{"version": "0.1.20240514", "status_code": 20000, "status_message": "Ok.", "tasks_count": 1,
		"tasks": []any{map[string]any{"status_code": 20000, "status_message": "Ok.", "result_count": 1, "data": task, "result": []any{result}}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Research pages map onto keyword_ideas: limit is the page's (at most 1,000), a later page
// sends DataForSEO's offset_token, total is its total_count, every idea comes back once, in
// DataForSEO's order; a Keep rule leaves ideas out and marks the total estimated.
func TestIdeasPagingOffsetToken(t *testing.T) {
	const n = 40
	f := newFake(t)
	f.answer = func(path string, task map[string]any) (int, []byte) {
		if path != dataforseo.PathKeywordIdeas {
			t.Errorf("asked %s", path)
		}
		return http.StatusOK, ideasAnswer(t, n, task)
	}
	c := f.client(dataforseo.Config{})
	for _, keep := range []bool{false, true} {
		req := keywords.IdeasRequest{Topic: "cold brew", Page: keywords.Page{Limit: 7}}
		if keep {
			req.Keep, req.KeepRule = func(k keywords.Keyword) bool { return !strings.HasPrefix(k.Keyword, "brew tools") }, "test"
		}
		var got []string
		for pages := 0; ; pages++ {
			if pages > n {
				t.Fatal("the pages do not end")
			}
			list, err := c.Ideas(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if list.Total != n || list.Estimated != keep {
				t.Fatalf("keep %v, page %d: total %d estimated %v; want total_count %d, estimated %v", keep, pages, list.Total, list.Estimated, n, keep)
			}
			for _, k := range list.Ideas {
				got = append(got, k.Keyword)
				if k.Difficulty == nil || k.SearchVolume == nil || k.Intent != "" {
					t.Fatalf("%q: numbers not passed through, or an intent made up: %+v", k.Keyword, k)
				}
			}
			if list.Next == "" {
				break
			}
			req.Page.After = list.Next
		}
		want := 0
		for i := 0; i < n; i++ {
			kw := fmt.Sprintf("cold brew idea %03d", i)
			if i%9 == 4 {
				if keep {
					continue
				}
				kw = fmt.Sprintf("brew tools %03d", i)
			}
			if want >= len(got) || got[want] != kw {
				t.Fatalf("keep %v: idea %d is %q, want %q (got %v)", keep, want, at(got, want), kw, got)
			}
			want++
		}
		if want != len(got) {
			t.Fatalf("keep %v: %d ideas, want %d", keep, len(got), want)
		}
	}
	// The tasks: limit 7, the first without a token, the next with the one DataForSEO gave.
	reqs := f.recorded()
	first := checkRequest(t, reqs[0], dataforseo.PathKeywordIdeas)
	second := checkRequest(t, reqs[1], dataforseo.PathKeywordIdeas)
	if num(first["limit"]) != 7 || first["offset_token"] != nil || second["offset_token"] != "tok-7" {
		t.Errorf("tasks %v then %v; want limit 7, then offset_token tok-7", first, second)
	}
	// A page of more than 1,000 asks for 1,000, DataForSEO's most.
	if _, err := c.Ideas(context.Background(), keywords.IdeasRequest{Topic: "cold brew", Page: keywords.Page{Limit: 5000}}); err != nil {
		t.Fatal(err)
	}
	reqs = f.recorded()
	if last := checkRequest(t, reqs[len(reqs)-1], dataforseo.PathKeywordIdeas); num(last["limit"]) != 1000 {
		t.Errorf("limit %v, want 1000", last["limit"])
	}
	// A token this provider did not make is refused.
	if _, err := c.Ideas(context.Background(), keywords.IdeasRequest{Topic: "cold brew", Page: keywords.Page{Limit: 7, After: "x"}}); err == nil {
		t.Error("a foreign token was accepted")
	}
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "(none)"
}
