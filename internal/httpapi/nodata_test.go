package httpapi_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/crawler"
	"github.com/contentapi/contentapi/internal/job"
	"github.com/contentapi/contentapi/internal/keywords/importer"
	"github.com/contentapi/contentapi/internal/testenv"
)

// The imported data set of these tests: keyword-tool and ranking exports loaded with the
// importer into market au/en, which the sample set does not use. The volumes are far above
// any other data's, so they are the market's most searched keywords.
const (
	importedCountry  = "au"
	importedKeywords = `Keyword,Search Volume,KD,CPC (USD)
honesty espresso grinder,90000000,30,1.50
honesty espresso tamper,80000000,20,0.90
honesty espresso ghost,n/a,,
honesty moka pot,70000000,40,
`
	importedRankings = `domain,keyword,position,url
honesty-rival.example,honesty espresso grinder,3,https://honesty-rival.example/grinder
honesty-rival.example,honesty espresso ghost,5,https://honesty-rival.example/ghost
honesty-rival.example,honesty moka pot,9,https://honesty-rival.example/moka
honesty-covered.example,honesty espresso grinder,2,https://honesty-covered.example/grinder
honesty-covered.example,honesty espresso ghost,8,https://honesty-covered.example/ghost
honesty-covered.example,honesty moka pot,4,https://honesty-covered.example/moka
`
)

var importOnce sync.Once

// importData loads the imported data set once per test database.
func importData(t *testing.T) {
	t.Helper()
	importOnce.Do(func() {
		ctx := context.Background()
		pool := testenv.Postgres(t)
		opts := importer.Options{Country: importedCountry, Language: "en", Source: "test-export"}
		if _, err := importer.ImportKeywords(ctx, pool, strings.NewReader(importedKeywords), opts); err != nil {
			t.Fatalf("import keywords: %v", err)
		}
		if _, err := importer.ImportRankings(ctx, pool, strings.NewReader(importedRankings), opts); err != nil {
			t.Fatalf("import rankings: %v", err)
		}
	})
}

// expectNoData checks a NO_DATA answer: 422 in the validation shape with the job's id and
// its refund, and a message with advice.
func expectNoData(t *testing.T, what string, r response, cost int, advice ...string) string {
	t.Helper()
	if r.Status != 422 || r.errCode() != "NO_DATA" || r.Body["success"] != false {
		t.Fatalf("%s: got %d %s, want 422 NO_DATA", what, r.Status, r.Raw)
	}
	e := r.Body["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if e["credits_refunded"] != float64(cost) || e["status"] != "failed" || e["job_id"] == nil || !strings.Contains(msg, "Nothing was charged") {
		t.Fatalf("%s: error body %v", what, e)
	}
	for _, a := range advice {
		if !strings.Contains(msg, a) {
			t.Errorf("%s: message %q does not contain %q", what, msg, a)
		}
	}
	return e["job_id"].(string)
}

// expectBalance checks the balance and that every reservation of the account ended as
// counted: refunded or settled.
func expectBalance(t *testing.T, s *stack, key string, balance int, reservations map[string]int) {
	t.Helper()
	if b := s.balanceOf(t, key); b != balance {
		t.Errorf("balance %d, want %d", b, balance)
	}
	got := reservationsOf(t, accountID(t, s.testServer, key))
	for status, n := range reservations {
		if got[status] != n {
			t.Errorf("reservations %v, want %v", got, reservations)
			return
		}
	}
	if len(got) != len(reservations) {
		t.Errorf("reservations %v, want %v", got, reservations)
	}
}

func TestResearchWithoutDataRefunds(t *testing.T) {
	importData(t)
	s := startStack(t, stackConfig{})
	key := register(t, s.testServer)
	body := map[string]any{"domain": "honesty-shop.example", "topic": "xqzvw plorf", "country": importedCountry}

	// Synchronous: 422, nothing charged, advice naming what the market holds.
	expectNoData(t, "research", do(t, "POST", s.URL+"/v1/keywords/research", key, body), 5,
		`"xqzvw plorf"`, `"honesty espresso grinder"`, "au/en")
	expectBalance(t, s, key, 50, map[string]int{"refunded": 1})

	// No topic, no keywords and no ranking data to start from: NO_DATA too (was a 400).
	expectNoData(t, "research without topic", do(t, "POST", s.URL+"/v1/keywords/research", key,
		map[string]any{"domain": "honesty-shop.example", "country": importedCountry}), 5, "no ranking data for honesty-shop.example")

	// A market without any data says so.
	expectNoData(t, "empty market", do(t, "POST", s.URL+"/v1/keywords/research", key,
		map[string]any{"domain": "honesty-shop.example", "topic": "coffee", "country": "pt", "language": "tr"}), 5, "no keyword data for pt/tr at all", "ctl import")
	expectBalance(t, s, key, 50, map[string]int{"refunded": 3})

	// Idempotency-Key: the replay answers the same failure and charges nothing.
	first := expectNoData(t, "keyed", do(t, "POST", s.URL+"/v1/keywords/research", key, body, "Idempotency-Key", "nodata-1"), 5)
	replay := do(t, "POST", s.URL+"/v1/keywords/research", key, body, "Idempotency-Key", "nodata-1")
	if id := expectNoData(t, "replay", replay, 5); id != first || replay.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay answered job %s (replayed %q), want %s", id, replay.Header.Get("Idempotent-Replayed"), first)
	}
	expectBalance(t, s, key, 50, map[string]int{"refunded": 4})

	// Asynchronous: the job ends failed with NO_DATA, refunded; GET /v1/jobs/{id} says so.
	r := do(t, "POST", s.URL+"/v1/keywords/research", key, body, "Prefer", "respond-async")
	if r.Status != 202 {
		t.Fatalf("async: %d %s", r.Status, r.Raw)
	}
	id := r.data()["job_id"].(string)
	j, err := s.Jobs.Wait(context.Background(), accountID(t, s.testServer, key), uuid.MustParse(id), 20*time.Second)
	if err != nil || j.Status != job.Failed || j.ErrorCode != "NO_DATA" || j.Attempts != 1 {
		t.Fatalf("async job: %s %s after %d attempts, %v; want failed NO_DATA after 1 (not retried)", j.Status, j.ErrorCode, j.Attempts, err)
	}
	expectNoData(t, "job status", do(t, "GET", s.URL+"/v1/jobs/"+id, key, nil), 5, `"honesty espresso grinder"`)
	expectBalance(t, s, key, 50, map[string]int{"refunded": 5})

	// dry_run cannot foresee NO_DATA: it prices the call and charges nothing.
	d := do(t, "POST", s.URL+"/v1/keywords/research?dry_run=true", key, body)
	if d.Status != 200 || d.data()["credits_cost"] != float64(5) || d.data()["balance_after"] != float64(45) {
		t.Fatalf("dry run: %d %s", d.Status, d.Raw)
	}
	expectBalance(t, s, key, 50, map[string]int{"refunded": 5})
}

func TestPlansWithoutDataRefund(t *testing.T) {
	importData(t)
	s := startStack(t, stackConfig{})
	key := registerBusy(t, s.testServer)
	before := s.balanceOf(t, key)
	_, site := testSite(t)

	// No focus topic, and no ranking data or gap for the site: nothing to recommend.
	expectNoData(t, "recommend", do(t, "POST", s.URL+"/v1/content/recommend", key,
		map[string]any{"domain": site, "country": importedCountry}), 15, "focus_topics", `"honesty espresso grinder"`)
	// Focus topics the data knows nothing about.
	expectNoData(t, "recommend with focus topics", do(t, "POST", s.URL+"/v1/content/recommend", key,
		map[string]any{"domain": site, "country": importedCountry, "focus_topics": []string{"xqzvw plorf"}}), 15, `"xqzvw plorf"`)
	// The content map of the same: an empty plan is not worth 25 credits.
	expectNoData(t, "content map", do(t, "POST", s.URL+"/v1/content-map", key,
		map[string]any{"domain": site, "country": importedCountry}), 25, "focus_topics")
	// Asynchronously too.
	r := do(t, "POST", s.URL+"/v1/content-map", key, map[string]any{"domain": site, "country": importedCountry,
		"competitors": []string{"nobody-here.example"}}, "Prefer", "respond-async")
	if r.Status != 202 {
		t.Fatalf("async map: %d %s", r.Status, r.Raw)
	}
	id := r.data()["job_id"].(string)
	j, err := s.Jobs.Wait(context.Background(), accountID(t, s.testServer, key), uuid.MustParse(id), 30*time.Second)
	if err != nil || j.Status != job.Failed || j.ErrorCode != "NO_DATA" {
		t.Fatalf("async map: %s %s %v", j.Status, j.ErrorCode, err)
	}
	expectNoData(t, "map job status", do(t, "GET", s.URL+"/v1/jobs/"+id, key, nil), 25, "competitors gave no keyword gap")
	expectBalance(t, s, key, before, map[string]int{"refunded": 4})

	// With data for the focus topic the plan is made and charged, for the recommendations
	// delivered (3 credits per started 2).
	ok := do(t, "POST", s.URL+"/v1/content/recommend", key, map[string]any{"domain": site, "country": importedCountry,
		"focus_topics": []string{"honesty espresso"}})
	if ok.Status != 200 || len(ok.data()["recommendations"].([]any)) == 0 {
		t.Fatalf("recommend with data: %d %s", ok.Status, ok.Raw)
	}
	expectBalance(t, s, key, before-3*blocksOf(len(ok.data()["recommendations"].([]any)), 2), map[string]int{"refunded": 4, "settled": 1})
}

func TestGapsWithoutCompetitorDataRefund(t *testing.T) {
	importData(t)
	s := startStack(t, stackConfig{})
	key := register(t, s.testServer)
	gaps := func(domain string, competitors ...string) response {
		return do(t, "POST", s.URL+"/v1/keywords/gaps", key, map[string]any{"domain": domain, "competitors": competitors, "country": importedCountry})
	}
	// No ranking data for any named competitor: nothing to compare.
	expectNoData(t, "gaps", gaps("honesty-shop.example", "nobody-here.example", "www.nobody-either.example"), 10,
		`"nobody-here.example" and "nobody-either.example"`, "ctl import rankings")
	expectBalance(t, s, key, 50, map[string]int{"refunded": 1})

	// A domain that ranks for every competitor keyword: no gap, a finding, charged.
	r := gaps("honesty-covered.example", "honesty-rival.example")
	if r.Status != 200 || r.data()["total_gaps"] != float64(0) || len(r.data()["gaps"].([]any)) != 0 {
		t.Fatalf("covered domain: %d %s", r.Status, r.Raw)
	}
	// One competitor with data and one without: the gaps of the one.
	r = gaps("honesty-shop.example", "honesty-rival.example", "nobody-here.example")
	if r.Status != 200 || r.data()["total_gaps"] != float64(3) {
		t.Fatalf("partly known competitors: %d %s", r.Status, r.Raw)
	}
	// Ordered by the search volume they show, unknown last.
	var order []string
	for _, g := range r.data()["gaps"].([]any) {
		order = append(order, g.(map[string]any)["keyword"].(string))
	}
	if strings.Join(order, ", ") != "honesty espresso grinder, honesty moka pot, honesty espresso ghost" {
		t.Errorf("gaps in order %q, want by search volume, unknown last", order)
	}
	expectBalance(t, s, key, 30, map[string]int{"refunded": 1, "settled": 2})
}

func TestNoDataCallback(t *testing.T) {
	importData(t)
	s := startStack(t, stackConfig{callbackClient: crawler.New(crawler.Config{AllowPrivate: true}).HTTPClient()})
	key := register(t, s.testServer)
	srv, got, _ := callbackReceiver(t, 0)
	r := do(t, "POST", s.URL+"/v1/keywords/research", key, map[string]any{"domain": "honesty-shop.example", "topic": "xqzvw plorf",
		"country": importedCountry, "callback_url": srv.URL + "/hook"}, "Prefer", "respond-async")
	if r.Status != 202 {
		t.Fatalf("submit: %d %s", r.Status, r.Raw)
	}
	var d delivery
	select {
	case d = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("no callback delivered")
	}
	var body struct {
		Event   string `json:"event"`
		Success bool   `json:"success"`
		Error   struct {
			Code            string `json:"code"`
			CreditsRefunded int    `json:"credits_refunded"`
		} `json:"error"`
	}
	if err := json.Unmarshal(d.body, &body); err != nil {
		t.Fatal(err)
	}
	if d.event != "job.failed" || body.Success || body.Error.Code != "NO_DATA" || body.Error.CreditsRefunded != 5 {
		t.Fatalf("callback %s %s", d.event, d.body)
	}
	expectBalance(t, s, key, 50, map[string]int{"refunded": 1})
}

func TestUnknownMetricsHaveNoScore(t *testing.T) {
	importData(t)
	s := startStack(t, stackConfig{})
	key := register(t, s.testServer)
	r := do(t, "POST", s.URL+"/v1/keywords/research", key, map[string]any{"domain": "honesty-shop.example", "topic": "honesty espresso",
		"country": importedCountry})
	if r.Status != 200 {
		t.Fatalf("research: %d %s", r.Status, r.Raw)
	}
	found := false
	for _, c := range r.data()["clusters"].([]any) {
		kws := c.(map[string]any)["keywords"].([]any)
		for i, k := range kws {
			km := k.(map[string]any)
			score, present := km["opportunity_score"]
			if !present {
				t.Fatalf("keyword without opportunity_score: %v", km)
			}
			if km["keyword"] != "honesty espresso ghost" {
				if score == nil {
					t.Errorf("%v has metrics but no score", km)
				}
				continue
			}
			found = true
			if score != nil || km["search_volume"] != nil || km["keyword_difficulty"] != nil || km["cpc"] != nil {
				t.Errorf("keyword without metrics: %v, want null metrics and a null score", km)
			}
			if i != len(kws)-1 {
				t.Errorf("the unscored keyword is #%d of %d in its cluster, want last", i+1, len(kws))
			}
		}
	}
	if !found {
		t.Fatalf("imported keyword without metrics not found: %s", r.Raw)
	}

	// CSV: an empty cell, never a number.
	c := do(t, "GET", s.URL+"/v1/jobs/"+r.Body["meta"].(map[string]any)["job_id"].(string), key, nil, "Accept", "text/csv")
	rows, err := csv.NewReader(strings.NewReader(c.Raw)).ReadAll()
	if err != nil || c.Status != 200 {
		t.Fatalf("csv: %d %v", c.Status, err)
	}
	for _, row := range rows[1:] {
		if row[1] == "honesty espresso ghost" && (row[6] != "" || row[2] != "" || row[3] != "" || row[4] != "") {
			t.Errorf("csv row %q: want empty metric and score cells", row)
		}
		if row[1] != "honesty espresso ghost" && row[6] == "" {
			t.Errorf("csv row %q has no score", row)
		}
	}
}
