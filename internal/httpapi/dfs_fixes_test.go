package httpapi_test

import (
	"strings"
	"testing"
)

// TestDataForSEOAnswers checks, through the API over the fake DataForSEO: inferred intents
// marked, trends passed through, short seeds left out (400 when
// nothing is left), the rate limit as 503 with Retry-After and refunded, NO_DATA advice for
// a DataForSEO user, total_gaps from total_count and competitors labelled as queried.
func TestDataForSEOAnswers(t *testing.T) {
	f := newFakeDataForSEO(t)
	s := dataForSEOStack(t, f, stackConfig{})
	key := register(t, s.testServer)

	// A two-character seed is left out, with a warning; the other is looked up.
	r := do(t, "POST", s.URL+"/v1/keywords/research", key, map[string]any{"domain": "ourbrew.example", "keywords": []string{"ai", "cold brew"}})
	if r.Status != 200 {
		t.Fatalf("research with a short seed: %d %s", r.Status, r.Raw)
	}
	for _, b := range f.sent() {
		if strings.Contains(b, `"ai"`) {
			t.Errorf("the short seed was sent: %s", b)
		}
	}
	warnings := r.Body["meta"].(map[string]any)["warnings"].([]any)
	if len(warnings) != 1 || !strings.Contains(warnings[0].(string), `"ai"`) || !strings.Contains(warnings[0].(string), "3 characters") {
		t.Errorf("warnings %v, want one naming the seed left out", warnings)
	}
	byKeyword := map[string]map[string]any{}
	for _, c := range r.data()["clusters"].([]any) {
		for _, k := range c.(map[string]any)["keywords"].([]any) {
			byKeyword[k.(map[string]any)["keyword"].(string)] = k.(map[string]any)
		}
	}
	coffee, maker := byKeyword["cold brew coffee"], byKeyword["cold brew maker"]
	if coffee == nil || maker == nil {
		t.Fatalf("keywords %v", byKeyword)
	}
	if coffee["search_intent_inferred"] != false || maker["search_intent_inferred"] != true || maker["search_intent"] == "" {
		t.Errorf("intents: coffee %v/%v, maker %v/%v: DataForSEO's intent is not inferred, the classifier's guess is",
			coffee["search_intent"], coffee["search_intent_inferred"], maker["search_intent"], maker["search_intent_inferred"])
	}
	if ms, _ := coffee["monthly_searches"].([]any); len(ms) != 2 || coffee["trend"] != nil {
		t.Errorf("cold brew coffee: monthly_searches %v trend %v: want DataForSEO's 2 months and no trend (6 are needed)", coffee["monthly_searches"], coffee["trend"])
	}
	if maker["monthly_searches"] != nil || maker["trend"] != nil {
		t.Errorf("cold brew maker: monthly_searches %v trend %v, want null", maker["monthly_searches"], maker["trend"])
	}

	// Only short seeds: 400 naming the field, nothing charged, nothing sent.
	before, sent := s.balanceOf(t, key), len(f.sent())
	r = do(t, "POST", s.URL+"/v1/keywords/research", key, map[string]any{"domain": "ourbrew.example", "keywords": []string{"ai"}})
	if r.Status != 400 || r.errCode() != "VALIDATION_ERROR" || !strings.Contains(r.Raw, "keywords") {
		t.Errorf("only short seeds: %d %s", r.Status, r.Raw)
	}
	if s.balanceOf(t, key) != before || len(f.sent()) != sent {
		t.Errorf("a refused seed was charged or sent")
	}

	// Gaps: the competitor is labelled as it is queried, total_gaps is total_count.
	r = do(t, "POST", s.URL+"/v1/keywords/gaps", key, map[string]any{"domain": "ourbrew.example", "competitors": []string{"https://www.GrindHouse.example/"}})
	if r.Status != 200 {
		t.Fatalf("gaps: %d %s", r.Status, r.Raw)
	}
	if c := r.data()["competitors"].([]any); len(c) != 1 || c[0] != "grindhouse.example" {
		t.Errorf("competitors %v, want [grindhouse.example]", c)
	}
	for _, g := range r.data()["gaps"].([]any) {
		for d := range g.(map[string]any)["competitor_positions"].(map[string]any) {
			if d != "grindhouse.example" {
				t.Errorf("competitor_positions labelled %q, queried as grindhouse.example", d)
			}
		}
	}
	last := f.sent()[len(f.sent())-1]
	if !strings.Contains(last, `"target1":"grindhouse.example"`) {
		t.Errorf("queried %s", last)
	}
	if r.data()["total_gaps"] != float64(3) {
		t.Errorf("total_gaps %v, want DataForSEO's total_count 3", r.data()["total_gaps"])
	}

	// Rankings: one row per keyword, its best position with the URL holding it; an intent
	// DataForSEO did not give is the classifier's guess, marked so.
	busy := registerBusy(t, s.testServer)
	r = do(t, "POST", s.URL+"/v1/keywords/rankings", busy, map[string]any{"domain": "brewshop.example", "country": "uk"})
	if r.Status != 200 {
		t.Fatalf("rankings: %d %s", r.Status, r.Raw)
	}
	rows := map[string]map[string]any{}
	for _, x := range r.data()["rankings"].([]any) {
		k := x.(map[string]any)
		if rows[k["keyword"].(string)] != nil {
			t.Errorf("%s listed twice", k["keyword"])
		}
		rows[k["keyword"].(string)] = k
	}
	kettle, grinder := rows["pour over kettle"], rows["best manual coffee grinder uk"]
	if kettle == nil || kettle["position"] != float64(3) || kettle["url"] != "https://brewshop.example/guides/gooseneck-kettle" ||
		kettle["search_intent_inferred"] != false {
		t.Errorf("pour over kettle %v: want its best position 3 with its URL, DataForSEO's intent", kettle)
	}
	if grinder == nil || grinder["search_intent_inferred"] != true || grinder["search_intent"] == "" || r.data()["total"] != float64(3) {
		t.Errorf("grinder %v, total %v: want a guessed intent marked inferred, 3 keywords", grinder, r.data()["total"])
	}

	// Competitors: what DataForSEO leaves null is null, never 0.
	r = do(t, "POST", s.URL+"/v1/keywords/competitors", busy, map[string]any{"domain": "ourbrew.example"})
	if r.Status != 200 {
		t.Fatalf("competitors: %d %s", r.Status, r.Raw)
	}
	for _, x := range r.data()["competitors"].([]any) {
		c := x.(map[string]any)
		if c["domain_avg_position"] != nil || (c["domain"] == "beanery.example") != (c["avg_position"] == nil) ||
			(c["domain"] == "beanery.example") != (c["total_keywords"] == nil) || c["shared_keywords"] == nil {
			t.Errorf("competitor %v: unknown numbers must be null, known ones given", c)
		}
	}

	// The rate limit: 503 with Retry-After at once (no retries), refunded.
	f.setFail("error_40202")
	before = s.balanceOf(t, key)
	r = do(t, "POST", s.URL+"/v1/keywords/research", key, map[string]any{"domain": "ourbrew.example", "topic": "espresso"})
	if r.Status != 503 || r.errCode() != "PROVIDER_RATE_LIMITED" || r.Header.Get("Retry-After") != "60" {
		t.Errorf("rate limited: %d Retry-After %q %s", r.Status, r.Header.Get("Retry-After"), r.Raw)
	}
	asked := 0
	for _, b := range f.sent() {
		if strings.Contains(b, `"espresso"`) {
			asked++
		}
	}
	// The package's stacks share one queue, so another stack's worker (with a fake of its own
	// answering 40202) may have run the job: then this fake saw nothing. Ours never twice.
	if asked > 1 {
		t.Errorf("keyword ideas asked %d times; a rate limit is not retried within the job", asked)
	}
	if e, _ := r.Body["error"].(map[string]any); e == nil || e["credits_refunded"] != float64(5) || s.balanceOf(t, key) != before {
		t.Errorf("not refunded: %v, balance %d then %d", r.Body["error"], before, s.balanceOf(t, key))
	}

	// Nothing found: the advice fits a DataForSEO user.
	f.setFail("task_no_results_40102")
	r = do(t, "POST", s.URL+"/v1/keywords/research", key, map[string]any{"domain": "ourbrew.example", "topic": "zzyzx widgets"})
	if r.Status != 422 || r.errCode() != "NO_DATA" {
		t.Fatalf("no results: %d %s", r.Status, r.Raw)
	}
	if msg := r.Body["error"].(map[string]any)["message"].(string); strings.Contains(msg, "ctl import") || !strings.Contains(msg, "DataForSEO") {
		t.Errorf("NO_DATA advice for a DataForSEO user: %s", msg)
	}
}

// TestDataForSEOQuery sends filters, order_by and a cursor through the API to the fake
// DataForSEO: the task carries DataForSEO's filters, order_by, limit and then the offset of
// the next page; a filter DataForSEO cannot express is a 400 naming it, refunded.
func TestDataForSEOQuery(t *testing.T) {
	f := newFakeDataForSEO(t)
	s := dataForSEOStack(t, f, stackConfig{})
	key := registerBusy(t, s.testServer)
	body := map[string]any{"domain": "ourbrew.example", "competitors": []string{"beanery.example"}, "limit": 2,
		"filters": map[string]any{"search_volume": map[string]any{"min": 500}}, "order_by": []string{"keyword_difficulty.asc"}}
	r := do(t, "POST", s.URL+"/v1/keywords/gaps", key, body)
	if r.Status != 200 {
		t.Fatalf("gaps: %d %s", r.Status, r.Raw)
	}
	sent := f.sent()[len(f.sent())-1]
	for _, want := range []string{`"filters":["keyword_data.keyword_info.search_volume",">=",500]`,
		`"order_by":["keyword_data.keyword_properties.keyword_difficulty,asc","keyword_data.keyword,asc"]`, `"limit":2`} {
		if !strings.Contains(sent, want) {
			t.Errorf("task %s lacks %s", sent, want)
		}
	}
	if strings.Contains(sent, `"offset"`) {
		t.Errorf("first page sent an offset: %s", sent)
	}
	cursor, _ := r.data()["next_cursor"].(string)
	if cursor == "" || r.data()["total"] != float64(3) || len(r.data()["gaps"].([]any)) != 2 {
		t.Fatalf("first page: total %v, %d gaps, next_cursor %q", r.data()["total"], len(r.data()["gaps"].([]any)), cursor)
	}
	body["cursor"] = cursor
	r = do(t, "POST", s.URL+"/v1/keywords/gaps", key, body)
	if r.Status != 200 {
		t.Fatalf("second page: %d %s", r.Status, r.Raw)
	}
	if sent = f.sent()[len(f.sent())-1]; !strings.Contains(sent, `"offset":2`) {
		t.Errorf("second page task %s, want offset 2", sent)
	}

	before, calls := s.balanceOf(t, key), len(f.sent())
	delete(body, "cursor")
	body["filters"] = map[string]any{"opportunity_score": map[string]any{"min": 50}}
	r = do(t, "POST", s.URL+"/v1/keywords/gaps", key, body)
	if r.Status != 400 || r.errCode() != "VALIDATION_ERROR" || !strings.Contains(r.Raw, "filters.opportunity_score") {
		t.Errorf("unsupported filter: %d %s", r.Status, r.Raw)
	}
	if s.balanceOf(t, key) != before || len(f.sent()) != calls {
		t.Errorf("an unsupported filter was charged or sent")
	}
}
