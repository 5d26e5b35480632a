package dataforseo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"testing"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/dataforseo"
)

// labs answers every Labs endpoint from a model, in DataForSEO's documented shapes: each
// list pages with limit and offset or offset_token ("tok-END"), its total_count claims
// unreachable items more than it ever returns (as DataForSEO's may), later pages claim
// drift more again (its data changes while a walk goes on), and what it does not know is
// null.
type labs struct {
	t           *testing.T
	n           int // items in each list
	unreachable int
	drift       int
}

// keyword is a keyword object: volume unknown for every fourth, difficulty for every third,
// an intent for the even ones only.
func (l labs) keyword(name string, i int) map[string]any {
	var volume, difficulty, intent any = 1000 - i, 10 + i, nil
	if i%4 == 3 {
		volume = nil
	}
	if i%3 == 0 {
		difficulty = nil
	}
	if i%2 == 0 {
		intent = map[string]any{"se_type": "google", "main_intent": "commercial", "foreign_intent": nil}
	}
	return map[string]any{"se_type": "google", "keyword": name, "location_code": 2840, "language_code": "en",
		"keyword_info":       map[string]any{"se_type": "google", "search_volume": volume, "cpc": nil, "competition": nil, "monthly_searches": nil},
		"keyword_properties": map[string]any{"se_type": "google", "keyword_difficulty": difficulty},
		"search_intent_info": intent}
}

func (l labs) answer(path string, task map[string]any) (int, []byte) {
	var items []any
	result := map[string]any{"se_type": "google", "location_code": 2840, "language_code": "en"}
	switch path {
	case dataforseo.PathKeywordIdeas:
		for i := range l.n {
			items = append(items, l.keyword(fmt.Sprintf("cold brew idea %02d", i), i))
		}
	case dataforseo.PathRankedKeywords:
		for i := range l.n {
			kw := i
			if i%6 == 1 { // the keyword before it again, one place lower, with another page
				kw = i - 1
			}
			items = append(items, map[string]any{"se_type": "google", "keyword_data": l.keyword(fmt.Sprintf("ranked %02d", kw), kw),
				"ranked_serp_element": map[string]any{"se_type": "google", "serp_item": map[string]any{"type": "organic",
					"rank_group": i + 1, "rank_absolute": i + 2, "url": fmt.Sprintf("https://ourbrew.example/p%02d", i)}}})
		}
		result["metrics"] = map[string]any{"organic": map[string]any{"pos_1": 1, "pos_2_3": 2, "pos_4_10": 6, "pos_11_20": nil, "count": l.n}}
	case dataforseo.PathDomainIntersection:
		for i := range l.n {
			items = append(items, map[string]any{"se_type": "google", "keyword_data": l.keyword(fmt.Sprintf("gap %02d", i), i),
				"first_domain_serp_element":  map[string]any{"type": "organic", "rank_group": 1 + i%10, "url": fmt.Sprintf("https://%s/", task["target1"])},
				"second_domain_serp_element": nil})
		}
	case dataforseo.PathCompetitorsDomain:
		// The domain itself shares the most keywords with itself: DataForSEO lists it first.
		items = append(items, map[string]any{"se_type": "google", "domain": task["target"], "avg_position": 3.5, "intersections": 900,
			"full_domain_metrics": map[string]any{"organic": map[string]any{"count": 900}}})
		for i := range l.n - 1 {
			var avg, count any
			if i%2 == 0 {
				avg, count = 5.5, 100+i
			}
			items = append(items, map[string]any{"se_type": "google", "domain": fmt.Sprintf("rival%02d.example", i), "avg_position": avg,
				"intersections": 400 - i, "full_domain_metrics": map[string]any{"organic": map[string]any{"count": count}}})
		}
	case dataforseo.PathSearchIntent, dataforseo.PathBulkKeywordDifficulty:
		kws, _ := task["keywords"].([]any)
		for _, k := range kws {
			if path == dataforseo.PathSearchIntent {
				items = append(items, map[string]any{"keyword": k, "keyword_intent": map[string]any{"label": "informational", "probability": 0.9},
					"secondary_keyword_intents": nil})
			} else {
				items = append(items, map[string]any{"se_type": "google", "keyword": k, "keyword_difficulty": 42})
			}
		}
		return l.envelope(task, map[string]any{"language_code": "en", "items_count": len(items), "items": items})
	default:
		l.t.Errorf("asked %s", path)
		return http.StatusNotFound, nil
	}
	offset := int(num(task["offset"]))
	if tok, _ := task["offset_token"].(string); tok != "" {
		if _, err := fmt.Sscanf(tok, "tok-%d", &offset); err != nil {
			l.t.Errorf("offset_token %q is not one the model gave", tok)
		}
	}
	end := min(offset+int(num(task["limit"])), len(items))
	page := []any{}
	if offset < end {
		page = items[offset:end]
	}
	result["total_count"] = len(items) + l.unreachable
	if offset > 0 {
		result["total_count"] = len(items) + l.unreachable + l.drift
	}
	result["items_count"] = len(page)
	result["offset"] = offset
	result["offset_token"] = fmt.Sprintf("tok-%d", end)
	result["items"] = page
	return l.envelope(task, result)
}

func (l labs) envelope(task, result map[string]any) (int, []byte) {
	b, err := json.Marshal(map[string]any{"version": "0.1.20240801", "status_code": 20000, "status_message": "Ok.", "cost": 0.0101,
		"tasks_count": 1, "tasks_error": 0, "tasks": []any{map[string]any{"status_code": 20000, "status_message": "Ok.",
			"result_count": 1, "data": task, "result": []any{result}}}})
	if err != nil {
		l.t.Fatal(err)
	}
	return http.StatusOK, b
}

// Short names of the endpoints, for the counts.
var endpointName = map[string]string{
	dataforseo.PathKeywordIdeas: "keyword_ideas", dataforseo.PathRankedKeywords: "ranked_keywords",
	dataforseo.PathDomainIntersection: "domain_intersection", dataforseo.PathCompetitorsDomain: "competitors_domain",
	dataforseo.PathSearchIntent: "search_intent", dataforseo.PathBulkKeywordDifficulty: "bulk_keyword_difficulty",
}

// callsSince counts the calls per endpoint after the first `from`, failing the test when
// one of them repeats another's body exactly.
func callsSince(t *testing.T, f *fake, from int) (map[string]int, int) {
	t.Helper()
	reqs := f.recorded()
	got, bodies := map[string]int{}, map[string]bool{}
	for _, r := range reqs[from:] {
		got[endpointName[r.path]]++
		if bodies[r.path+r.body] {
			t.Errorf("%s called twice with the same body %s", r.path, r.body)
		}
		bodies[r.path+r.body] = true
	}
	return got, len(reqs)
}

// Each answer makes the fewest upstream calls that give it, counted per endpoint: the list
// call, then a fill only for a metric the answer shows, some row lacks, and the query does
// not filter or sort on; never the same call twice. docs/api.md states these counts.
func TestCallsPerAnswer(t *testing.T) {
	const n, unreachable = 12, 5
	f := newFake(t)
	f.answer = labs{t: t, n: n, unreachable: unreachable, drift: 2}.answer
	c := f.client(dataforseo.Config{FillMissing: true})
	ctx := context.Background()
	seen := 0
	expect := func(what string, want map[string]int) {
		t.Helper()
		var got map[string]int
		got, seen = callsSince(t, f, seen)
		if !maps.Equal(got, want) {
			t.Errorf("%s: calls %v, want %v", what, got, want)
		}
	}
	list := func(kind string) map[string]int { return map[string]int{kind: 1} }
	filled := func(kind string, fills ...string) map[string]int {
		m := list(kind)
		for _, f := range fills {
			m[f] = 1
		}
		return m
	}
	const intent, difficulty = "search_intent", "bulk_keyword_difficulty"

	// Research pages: keyword_ideas and both fills on each (the last holds no keyword
	// without a difficulty: no fill for it); the last page (fewer items than asked) ends the
	// walk and says the items reached.
	req := keywords.IdeasRequest{Topic: "cold brew", Page: keywords.Page{Limit: 5}}
	wantTotals := []int{n + unreachable, n + unreachable, n}
	wantCalls := []map[string]int{filled("keyword_ideas", intent, difficulty), filled("keyword_ideas", intent, difficulty),
		filled("keyword_ideas", intent)}
	for p := 0; ; p++ {
		ideas, err := c.Ideas(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if p >= len(wantTotals) {
			t.Fatal("the pages do not end")
		}
		expect(fmt.Sprintf("ideas page %d", p+1), wantCalls[p])
		if ideas.Total != wantTotals[p] {
			t.Fatalf("ideas page %d: total %d, want %v in turn", p+1, ideas.Total, wantTotals)
		}
		for _, k := range ideas.Ideas {
			if k.Intent == "" || k.Difficulty == nil {
				t.Errorf("%s not filled: %+v", k.Keyword, k)
			}
			var i int
			if _, err := fmt.Sscanf(k.Keyword, "cold brew idea %02d", &i); err != nil || (i%4 == 3) != (k.SearchVolume == nil) {
				t.Errorf("%s: volume %v, want null exactly where DataForSEO has none", k.Keyword, k.SearchVolume)
			}
		}
		if ideas.Next == "" {
			if p != 2 {
				t.Fatalf("the walk ended on page %d, want 3", p+1)
			}
			break
		}
		req.Page.After = ideas.Next
	}
	// Research's positions: one ranked_keywords call, no fill; a plan's rankings are filled.
	if _, err := c.Ranked(ctx, keywords.RankedRequest{Domain: "ourbrew.example", PositionsOnly: true}); err != nil {
		t.Fatal(err)
	}
	expect("ranked, positions only", list("ranked_keywords"))
	if _, err := c.Ranked(ctx, keywords.RankedRequest{Domain: "ourbrew.example"}); err != nil {
		t.Fatal(err)
	}
	expect("ranked", filled("ranked_keywords", intent, difficulty))

	// Rankings: one row per keyword, the total of the first page on every page, and a page
	// past the items reached is empty, with no next page and only the list call.
	rreq := keywords.RankingsRequest{Domain: "ourbrew.example", Page: keywords.Page{Limit: 6}}
	for p := 0; p < 3; p++ {
		rl, err := c.Rankings(ctx, rreq)
		if err != nil {
			t.Fatal(err)
		}
		switch p {
		case 0, 1:
			expect(fmt.Sprintf("rankings page %d", p+1), filled("ranked_keywords", intent, difficulty))
			if rl.Total != n+unreachable || len(rl.Rankings) != 5 || rl.Next == "" {
				t.Fatalf("rankings page %d: total %d, %d rows, next %q; want %d, 5 keywords of 6 rows, a next page",
					p+1, rl.Total, len(rl.Rankings), rl.Next, n+unreachable)
			}
			if first := rl.Rankings[0]; first.Position != 6*p+1 || first.URL != fmt.Sprintf("https://ourbrew.example/p%02d", 6*p) {
				t.Errorf("rankings page %d: %s at %d on %s, want its best position and the URL holding it", p+1, first.Keyword.Keyword, first.Position, first.URL)
			}
		case 2:
			expect("rankings past the end", list("ranked_keywords"))
			if len(rl.Rankings) != 0 || rl.Next != "" || rl.Total != n {
				t.Errorf("page past the end: %d rows, next %q, total %d; want none, none, the %d reached", len(rl.Rankings), rl.Next, rl.Total, n)
			}
		}
		rreq.Page.After = rl.Next
		if p == 1 && rl.Next == "" {
			t.Fatal("a full page must offer the next")
		}
	}
	// Sorted by difficulty: DataForSEO ordered the page by its own value; none is filled.
	if _, err := c.Rankings(ctx, keywords.RankingsRequest{Domain: "ourbrew.example", Order: []keywords.OrderKey{{Field: keywords.FieldDifficulty}},
		Page: keywords.Page{Limit: 6}}); err != nil {
		t.Fatal(err)
	}
	expect("rankings by difficulty", filled("ranked_keywords", intent))

	// Gaps show no intent: one domain_intersection call per competitor and a difficulty fill.
	gl, err := c.Gaps(ctx, keywords.GapsRequest{Domain: "ourbrew.example", Competitors: []string{"grindhouse.example"}, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	expect("gaps, one competitor", filled("domain_intersection", difficulty))
	if gl.Total != n+unreachable || gl.Gaps[0].Intent != "commercial" || gl.Gaps[1].Intent != "" || !eqF(gl.Gaps[0].Difficulty, 42) {
		t.Errorf("gaps: total %d, first two %+v %+v", gl.Total, gl.Gaps[0].Keyword, gl.Gaps[1].Keyword)
	}
	if _, err := c.Gaps(ctx, keywords.GapsRequest{Domain: "ourbrew.example", Competitors: []string{"grindhouse.example", "beanery.example"},
		Limit: 5}); err != nil {
		t.Fatal(err)
	}
	expect("gaps, two competitors", map[string]int{"domain_intersection": 2, difficulty: 1})
	gl, err = c.Gaps(ctx, keywords.GapsRequest{Domain: "ourbrew.example", Competitors: []string{"grindhouse.example"}, Limit: 5,
		Order: []keywords.OrderKey{{Field: keywords.FieldDifficulty, Desc: true}}})
	if err != nil {
		t.Fatal(err)
	}
	expect("gaps by difficulty", list("domain_intersection"))
	for _, g := range gl.Gaps {
		var i int
		if _, err := fmt.Sscanf(g.Keyword.Keyword, "gap %02d", &i); err != nil || (i%3 == 0) != (g.Difficulty == nil) {
			t.Errorf("gaps by difficulty: %s difficulty %v: an unknown one filled, or a known one lost", g.Keyword.Keyword, g.Difficulty)
		}
	}

	// Competitors: one call a page; the domain itself out of every page and its total.
	creq := keywords.CompetitorsRequest{Domain: "ourbrew.example", Page: keywords.Page{Limit: 5}}
	for p := 0; p < 2; p++ {
		cl, err := c.Competitors(ctx, creq)
		if err != nil {
			t.Fatal(err)
		}
		expect(fmt.Sprintf("competitors page %d", p+1), list("competitors_domain"))
		if cl.Total != n+unreachable-1 {
			t.Errorf("competitors page %d: total %d, want %d on every page", p+1, cl.Total, n+unreachable-1)
		}
		for _, comp := range cl.Competitors {
			var i int
			if _, err := fmt.Sscanf(comp.Domain, "rival%02d.example", &i); err != nil {
				t.Fatalf("competitor %q", comp.Domain)
			}
			if known := i%2 == 0; comp.Knows(keywords.CompetitorAvgPosition) != known || comp.Knows(keywords.CompetitorTotal) != known ||
				comp.Knows(keywords.CompetitorDomainAvgPosition) || !comp.Knows(keywords.CompetitorShared) {
				t.Errorf("%s: unknown %v", comp.Domain, comp.Unknown)
			}
		}
		creq.Page.After = cl.Next
	}
}
