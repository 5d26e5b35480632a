package dataforseo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/dataforseo"
)

func f64(v float64) *float64 { return &v }

// jsonOf re-encodes v as the fake received it (numbers as float64, lists as []any).
func jsonOf(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestShortSeedsNotSent(t *testing.T) {
	f := newFake(t)
	c := f.client(dataforseo.Config{})
	if c.MinSeedChars() != 3 {
		t.Fatalf("MinSeedChars %d", c.MinSeedChars())
	}
	got, err := ideasOf(c.Ideas(context.Background(), keywords.IdeasRequest{Seeds: []string{"ai", "cold brew", " é "}}))
	if err != nil {
		t.Fatalf("a short seed must not fail the call: %v", err)
	}
	task := checkRequest(t, f.recorded()[0], dataforseo.PathKeywordIdeas)
	if kws, _ := task["keywords"].([]any); len(kws) != 1 || kws[0] != "cold brew" {
		t.Errorf("keywords sent %v, want only [cold brew]", task["keywords"])
	}
	if len(got) == 0 {
		t.Error("no ideas for the seed that was sent")
	}
	// Only short seeds, and a short topic: nothing is sent, nothing found.
	got, err = ideasOf(c.Ideas(context.Background(), keywords.IdeasRequest{Topic: "ux", Seeds: []string{"ai"}}))
	if err != nil || len(got) != 0 || len(f.recorded()) != 1 {
		t.Errorf("only short seeds: %v, %v, %d requests; want none sent and no ideas", got, err, len(f.recorded()))
	}
	// "café" is 4 characters (5 bytes), "日本" 2.
	_, _ = ideasOf(c.Ideas(context.Background(), keywords.IdeasRequest{Seeds: []string{"日本", "café"}}))
	task = f.recorded()[1].tasks[0]
	if kws, _ := task["keywords"].([]any); len(kws) != 1 || kws[0] != "café" {
		t.Errorf("characters, not bytes, count: sent %v", task["keywords"])
	}
}

func TestMonthlySearches(t *testing.T) {
	f := newFake(t)
	got, err := ideasOf(f.client(dataforseo.Config{}).Ideas(context.Background(), keywords.IdeasRequest{Topic: "cold brew"}))
	if err != nil {
		t.Fatal(err)
	}
	want := []keywords.MonthlyVolume{{Year: 2024, Month: 3, SearchVolume: 40500}, {Year: 2024, Month: 4, SearchVolume: 49500}}
	if !reflect.DeepEqual(got[0].MonthlySearches, want) {
		t.Errorf("monthly_searches %v, want %v (oldest first)", got[0].MonthlySearches, want)
	}
	if got[1].MonthlySearches != nil || got[2].MonthlySearches != nil {
		t.Errorf("null and [] monthly_searches must stay nil: %v %v", got[1].MonthlySearches, got[2].MonthlySearches)
	}
}

func TestRateLimited(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   []byte
		header string
		wait   time.Duration
	}{
		{"40202", http.StatusOK, fixture(t, "error_40202.json"), "", dataforseo.RateLimitRetryAfter},
		{"HTTP 429 with Retry-After", http.StatusTooManyRequests, []byte("slow down"), "17", 17 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			f.answer = func(string, map[string]any) (int, []byte) { return tc.status, tc.body }
			if tc.header != "" {
				f.header = map[string]string{"Retry-After": tc.header}
			}
			_, err := ideasOf(f.client(dataforseo.Config{}).Ideas(context.Background(), keywords.IdeasRequest{Topic: "cold brew"}))
			var pe *keywords.ProviderError
			if !errors.Is(err, keywords.ErrRateLimited) || errors.Is(err, keywords.ErrPermanent) || !errors.As(err, &pe) {
				t.Fatalf("err %v: want rate limited, temporary", err)
			}
			if pe.RetryAfter != tc.wait {
				t.Errorf("RetryAfter %v, want %v", pe.RetryAfter, tc.wait)
			}
		})
	}
	f := newFake(t)
	f.answer = func(string, map[string]any) (int, []byte) { return http.StatusOK, fixture(t, "task_error_40501.json") }
	_, err := ideasOf(f.client(dataforseo.Config{}).Ideas(context.Background(), keywords.IdeasRequest{Topic: "cold brew"}))
	if errors.Is(err, keywords.ErrRateLimited) {
		t.Errorf("40501 is not a rate limit: %v", err)
	}
}

func TestFiltersAndOrder(t *testing.T) {
	f := newFake(t)
	c := f.client(dataforseo.Config{})
	q := keywords.Filters{
		Ranges: map[keywords.Field]keywords.Range{
			keywords.FieldSearchVolume:       {Min: f64(500)},
			keywords.FieldDifficulty:         {Max: f64(30)},
			keywords.FieldCompetitorPosition: {Min: f64(1), Max: f64(10)},
		},
		Intents: []string{"commercial", "transactional"},
		Include: []string{"grinder"},
		Exclude: []string{"cheap"},
	}
	_, err := c.Gaps(context.Background(), keywords.GapsRequest{Domain: "ourbrew.example", Competitors: []string{"grindhouse.example"},
		Filters: q, Order: []keywords.OrderKey{{Field: keywords.FieldDifficulty}, {Field: keywords.FieldSearchVolume, Desc: true}}, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	task := checkRequest(t, f.recorded()[0], dataforseo.PathDomainIntersection)
	wantFilters := jsonOf(t, []any{
		[]any{"keyword_data.keyword_info.search_volume", ">=", 500}, "and",
		[]any{"keyword_data.keyword_properties.keyword_difficulty", "<=", 30}, "and",
		[]any{"first_domain_serp_element.rank_group", ">=", 1}, "and",
		[]any{"first_domain_serp_element.rank_group", "<=", 10}, "and",
		[]any{"keyword_data.search_intent_info.main_intent", "in", []string{"commercial", "transactional"}}, "and",
		[]any{"keyword_data.keyword", "match", "grinder"}, "and",
		[]any{"keyword_data.keyword", "not_match", "cheap"},
	})
	if !reflect.DeepEqual(task["filters"], wantFilters) {
		t.Errorf("filters\n got %v\nwant %v", task["filters"], wantFilters)
	}
	wantOrder := jsonOf(t, []string{"keyword_data.keyword_properties.keyword_difficulty,asc",
		"keyword_data.keyword_info.search_volume,desc", "keyword_data.keyword,asc"})
	if !reflect.DeepEqual(task["order_by"], wantOrder) || num(task["limit"]) != 500 {
		t.Errorf("order_by %v limit %v", task["order_by"], task["limit"])
	}

	// Ideas: the same filters without the keyword_data. prefix; no competitor there.
	delete(q.Ranges, keywords.FieldCompetitorPosition)
	if _, err := ideasOf(c.Ideas(context.Background(), keywords.IdeasRequest{Topic: "burr grinder", Filters: q,
		Order: []keywords.OrderKey{{Field: keywords.FieldCPC, Desc: true}}})); err != nil {
		t.Fatal(err)
	}
	task = f.recorded()[1].tasks[0]
	if fl, _ := task["filters"].([]any); len(fl) != 9 || !reflect.DeepEqual(fl[0], jsonOf(t, []any{"keyword_info.search_volume", ">=", 500})) {
		t.Errorf("ideas filters %v", task["filters"])
	}
	if !reflect.DeepEqual(task["order_by"], jsonOf(t, []string{"keyword_info.cpc,desc", "keyword,asc"})) {
		t.Errorf("ideas order_by %v", task["order_by"])
	}
}

func TestUnsupportedQueries(t *testing.T) {
	many := keywords.Filters{Include: []string{"a1", "b2", "c3", "d4", "e5", "f6", "g7", "h8", "i9"}}
	cases := []struct {
		name string
		call func(c *dataforseo.Client) error
		part string
	}{
		{"opportunity score filter", func(c *dataforseo.Client) error {
			_, err := c.Gaps(context.Background(), keywords.GapsRequest{Domain: "a.example", Competitors: []string{"b.example"},
				Filters: keywords.Filters{Ranges: map[keywords.Field]keywords.Range{keywords.FieldOpportunity: {Min: f64(50)}}}})
			return err
		}, "filters.opportunity_score"},
		{"more than 8 conditions", func(c *dataforseo.Client) error {
			_, err := ideasOf(c.Ideas(context.Background(), keywords.IdeasRequest{Topic: "coffee", Filters: many}))
			return err
		}, "at most 8"},
		{"own position in gaps", func(c *dataforseo.Client) error {
			_, err := c.Gaps(context.Background(), keywords.GapsRequest{Domain: "a.example", Competitors: []string{"b.example"},
				Filters: keywords.Filters{Ranges: map[keywords.Field]keywords.Range{keywords.FieldPosition: {Max: f64(10)}}}})
			return err
		}, "filters.position"},
		{"traffic order", func(c *dataforseo.Client) error {
			_, err := c.Rankings(context.Background(), keywords.RankingsRequest{Domain: "a.example",
				Order: []keywords.OrderKey{{Field: keywords.FieldTraffic, Desc: true}}})
			return err
		}, "order_by[0]"},
		{"competitor position descending over two competitors", func(c *dataforseo.Client) error {
			_, err := c.Gaps(context.Background(), keywords.GapsRequest{Domain: "a.example", Competitors: []string{"b.example", "c.example"},
				Order: []keywords.OrderKey{{Field: keywords.FieldCompetitorPosition, Desc: true}}})
			return err
		}, "order_by[0]"},
		{"competitor filters", func(c *dataforseo.Client) error {
			_, err := c.Competitors(context.Background(), keywords.CompetitorsRequest{Domain: "a.example",
				Filters: keywords.Filters{Include: []string{"coffee"}}})
			return err
		}, "filters"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			err := tc.call(f.client(dataforseo.Config{}))
			if !errors.Is(err, keywords.ErrUnsupported) || !strings.Contains(err.Error(), tc.part) {
				t.Errorf("err %v: want ErrUnsupported naming %q", err, tc.part)
			}
			if n := len(f.recorded()); n != 0 {
				t.Errorf("%d requests sent for a query DataForSEO cannot answer", n)
			}
		})
	}
}

func TestRankings(t *testing.T) {
	f := newFake(t)
	c := f.client(dataforseo.Config{})
	list, err := c.Rankings(context.Background(), keywords.RankingsRequest{Domain: "https://www.BrewShop.example/", Country: "uk",
		Filters: keywords.Filters{Ranges: map[keywords.Field]keywords.Range{keywords.FieldPosition: {Max: f64(20)}}},
		Page:    keywords.Page{Limit: 3}})
	if err != nil {
		t.Fatal(err)
	}
	task := checkRequest(t, f.recorded()[0], dataforseo.PathRankedKeywords)
	if task["target"] != "brewshop.example" || num(task["limit"]) != 3 || task["offset"] != nil {
		t.Errorf("task %v", task)
	}
	if !reflect.DeepEqual(task["filters"], jsonOf(t, []any{"ranked_serp_element.serp_item.rank_group", "<=", 20})) {
		t.Errorf("filters %v", task["filters"])
	}
	if !reflect.DeepEqual(task["order_by"], jsonOf(t, []string{"ranked_serp_element.serp_item.rank_group,asc",
		"keyword_data.keyword_info.search_volume,desc", "keyword_data.keyword,asc"})) {
		t.Errorf("default order_by %v", task["order_by"])
	}
	if list.Total != 3 || len(list.Rankings) != 3 {
		t.Errorf("total %d, %d rankings; want DataForSEO's total_count 3 and its 4 items as 3 keywords", list.Total, len(list.Rankings))
	}
	// "pour over kettle" ranks 7th and 3rd: one row, the best position with its URL.
	for _, r := range list.Rankings {
		if r.Keyword.Keyword == "pour over kettle" && (r.Position != 3 || r.URL != "https://brewshop.example/guides/gooseneck-kettle") {
			t.Errorf("pour over kettle at %d %s, want its best position 3 and the URL holding it", r.Position, r.URL)
		}
	}
	wantBands := map[string]int{"1-3": 1, "4-10": 1, "11-20": 1, "21-50": 0, "51-100": 0}
	if !reflect.DeepEqual(list.Bands, wantBands) {
		t.Errorf("bands %v, want %v (from metrics.organic)", list.Bands, wantBands)
	}
	if list.Next != "" {
		t.Errorf("next %q on the last page", list.Next)
	}
}

func TestCompetitors(t *testing.T) {
	f := newFake(t)
	c := f.client(dataforseo.Config{})
	list, err := c.Competitors(context.Background(), keywords.CompetitorsRequest{Domain: "www.ourbrew.example", Page: keywords.Page{Limit: 3}})
	if err != nil {
		t.Fatal(err)
	}
	task := checkRequest(t, f.recorded()[0], dataforseo.PathCompetitorsDomain)
	if task["target"] != "ourbrew.example" || num(task["limit"]) != 3 || num(task["location_code"]) != 2840 {
		t.Errorf("task %v", task)
	}
	want := []keywords.Competitor{
		{Domain: "grindhouse.example", Shared: 64, AvgPosition: 8.75, Total: 2310, Unknown: []string{keywords.CompetitorDomainAvgPosition}},
		// null metrics stay unknown
		{Domain: "beanery.example", Shared: 31, Unknown: []string{keywords.CompetitorDomainAvgPosition, keywords.CompetitorAvgPosition, keywords.CompetitorTotal}},
	}
	if !reflect.DeepEqual(list.Competitors, want) {
		t.Errorf("competitors %+v, want %+v (the domain itself left out)", list.Competitors, want)
	}
	if list.Total != 3 || list.Next != "p:3:4:" {
		t.Errorf("total %d next %q: want 3 (4 less the domain) and the offset after the 3 items", list.Total, list.Next)
	}
	// The next page (the fixture again, without the domain itself) says the same total.
	list, err = c.Competitors(context.Background(), keywords.CompetitorsRequest{Domain: "ourbrew.example", Page: keywords.Page{Limit: 3, After: list.Next}})
	if err != nil {
		t.Fatal(err)
	}
	if list.Total != 3 {
		t.Errorf("next page total %d, want the first page's 3", list.Total)
	}
	if task := f.recorded()[1].tasks[0]; num(task["offset"]) != 3 {
		t.Errorf("next page task %v, want offset 3", task)
	}
}

// gapRow is one keyword a competitor ranks for in the synthetic gap data.
type gapRow struct {
	kw     string
	volume *int64
	pos    int
}

// intersectionAnswer answers a domain_intersection task from rows sorted as the task's
// default order (volume descending, unknown last, then keyword), honouring limit and
// offset, in DataForSEO's documented shape.
func intersectionAnswer(t *testing.T, rows []gapRow, task map[string]any, withToken bool) []byte {
	t.Helper()
	offset := int(num(task["offset"]))
	if tok, _ := task["offset_token"].(string); tok != "" {
		fmt.Sscanf(tok, "tok-%d", &offset)
	}
	limit := int(num(task["limit"]))
	end := min(offset+limit, len(rows))
	items := []any{}
	for _, r := range rows[min(offset, len(rows)):end] {
		var vol any
		if r.volume != nil {
			vol = *r.volume
		}
		items = append(items, map[string]any{
			"se_type": "google",
			"keyword_data": map[string]any{
				"se_type": "google", "keyword": r.kw, "location_code": 2840, "language_code": "en",
				"keyword_info": map[string]any{"se_type": "google", "competition": nil, "cpc": nil, "search_volume": vol,
					"monthly_searches": nil, "search_volume_trend": nil},
				"keyword_properties": nil, "serp_info": nil, "avg_backlinks_info": nil, "search_intent_info": nil,
			},
			"first_domain_serp_element":  map[string]any{"se_type": "google", "type": "organic", "rank_group": r.pos, "rank_absolute": r.pos + 1, "url": "https://" + task["target1"].(string) + "/" + strings.ReplaceAll(r.kw, " ", "-")},
			"second_domain_serp_element": nil,
		})
	}
	result := map[string]any{"se_type": "google", "target1": task["target1"], "target2": task["target2"],
		"total_count": len(rows), "items_count": len(items), "items": items}
	if withToken {
		result["offset_token"] = fmt.Sprintf("tok-%d", end)
	}
	b, err := json.Marshal(map[string]any{"version": "0.1.20240514", "status_code": 20000, "status_message": "Ok.", "tasks_count": 1,
		"tasks": []any{map[string]any{"status_code": 20000, "status_message": "Ok.", "result_count": 1, "data": task, "result": []any{result}}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// syntheticGaps builds, per competitor, the keywords it ranks for: many ties on volume,
// some unknown volumes, keywords both rank for.
func syntheticGaps(n int) map[string][]gapRow {
	vol := func(i int) *int64 {
		if i%7 == 0 {
			return nil
		}
		v := int64(1000 - (i/5)*10) // ties in fives
		return &v
	}
	data := map[string][]gapRow{}
	for i := 0; i < n; i++ {
		kw := fmt.Sprintf("kw %03d", i)
		if i%3 != 0 {
			data["grindhouse.example"] = append(data["grindhouse.example"], gapRow{kw, vol(i), 1 + i%20})
		}
		if i%2 == 0 {
			data["beanery.example"] = append(data["beanery.example"], gapRow{kw, vol(i), 1 + i%13})
		}
	}
	for _, rows := range data {
		slices.SortFunc(rows, func(a, b gapRow) int {
			switch {
			case a.volume == nil && b.volume == nil:
			case a.volume == nil:
				return 1
			case b.volume == nil:
				return -1
			case *a.volume != *b.volume:
				return int(*b.volume - *a.volume)
			}
			return strings.Compare(a.kw, b.kw)
		})
	}
	return data
}

// TestGapsPaging pages through the gaps of one and of two competitors a few at a time and
// checks that every gap comes back exactly once, in order, with every competitor's position,
// and that the total is DataForSEO's total_count (exact with one competitor).
func TestGapsPaging(t *testing.T) {
	data := syntheticGaps(60)
	for _, tc := range []struct {
		name        string
		competitors []string
		token       bool
	}{
		{"one competitor, offset_token", []string{"grindhouse.example"}, true},
		{"one competitor, offset", []string{"beanery.example"}, false},
		{"two competitors", []string{"grindhouse.example", "beanery.example"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			f.answer = func(path string, task map[string]any) (int, []byte) {
				return http.StatusOK, intersectionAnswer(t, data[task["target1"].(string)], task, tc.token)
			}
			c := f.client(dataforseo.Config{})
			want := map[string]map[string]int{}
			for _, comp := range tc.competitors {
				for _, r := range data[comp] {
					if want[r.kw] == nil {
						want[r.kw] = map[string]int{}
					}
					want[r.kw][comp] = r.pos
				}
			}
			var all []keywords.Gap
			after, pages, firstTotal := "", 0, -1
			for {
				list, err := c.Gaps(context.Background(), keywords.GapsRequest{Domain: "ourbrew.example", Competitors: tc.competitors, Limit: 7, After: after})
				if err != nil {
					t.Fatal(err)
				}
				if firstTotal < 0 {
					firstTotal = list.Total
					if len(tc.competitors) == 1 && (list.Total != len(want) || list.Estimated) {
						t.Errorf("total %d estimated %v, want total_count %d exactly", list.Total, list.Estimated, len(want))
					}
					if len(tc.competitors) > 1 && (list.Total < len(want) || !list.Estimated) {
						t.Errorf("total %d estimated %v: want an upper bound of %d, marked estimated", list.Total, list.Estimated, len(want))
					}
				}
				if len(list.Gaps) > 7 {
					t.Fatalf("page of %d gaps, limit 7", len(list.Gaps))
				}
				if list.Total != firstTotal {
					t.Errorf("page %d: total %d, want the first page's %d on every page", pages+1, list.Total, firstTotal)
				}
				all = append(all, list.Gaps...)
				pages++
				if list.Next == "" || pages > 100 {
					break
				}
				after = list.Next
			}
			seen := map[string]bool{}
			for i, g := range all {
				if seen[g.Keyword.Keyword] {
					t.Errorf("%q came back twice", g.Keyword.Keyword)
				}
				seen[g.Keyword.Keyword] = true
				if !reflect.DeepEqual(g.CompetitorPositions, want[g.Keyword.Keyword]) {
					t.Errorf("%q positions %v, want %v", g.Keyword.Keyword, g.CompetitorPositions, want[g.Keyword.Keyword])
				}
				if i > 0 && !gapBefore(all[i-1], g) {
					t.Errorf("out of order: %q (%v) before %q (%v)", all[i-1].Keyword.Keyword, all[i-1].SearchVolume, g.Keyword.Keyword, g.SearchVolume)
				}
			}
			if len(seen) != len(want) {
				t.Errorf("%d distinct gaps over %d pages, want %d", len(seen), pages, len(want))
			}
		})
	}
}

func gapBefore(a, b keywords.Gap) bool {
	va, vb := a.SearchVolume, b.SearchVolume
	switch {
	case va != nil && vb != nil && *va != *vb:
		return *va > *vb
	case (va == nil) != (vb == nil):
		return va != nil
	}
	return a.Keyword.Keyword < b.Keyword.Keyword
}
