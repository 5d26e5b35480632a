package httpapi_test

import (
	"encoding/csv"
	"strings"
	"testing"
)

func TestCSVAnswers(t *testing.T) {
	s := startStack(t, stackConfig{})
	key := registerBusy(t, s.testServer)
	doms := sampleDomains(t)

	r := do(t, "POST", s.URL+"/v1/keywords/research", key, map[string]any{"domain": doms[0], "topic": "coffee", "limit": 10}, "Accept", "text/csv")
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/csv") || r.Header.Get("X-Credits-Used") != "5" ||
		r.Header.Get("X-Credits-Remaining") != "45" || r.Header.Get("X-Job-ID") == "" {
		t.Fatalf("research csv: %d %v", r.Status, r.Header)
	}
	rows, err := csv.NewReader(strings.NewReader(r.Raw)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rows[0], ",") != "cluster_name,keyword,search_volume,keyword_difficulty,cpc,search_intent,opportunity_score,search_intent_inferred,trend" || len(rows) < 2 || len(rows) > 11 {
		t.Fatalf("research rows %v", rows)
	}
	// The same job as JSON: one row per keyword.
	j := do(t, "GET", s.URL+"/v1/jobs/"+r.Header.Get("X-Job-ID"), key, nil)
	if j.data()["total_keywords"] != float64(len(rows)-1) {
		t.Fatalf("csv has %d rows, json %v keywords", len(rows)-1, j.data()["total_keywords"])
	}

	r = do(t, "POST", s.URL+"/v1/keywords/gaps", key, map[string]any{"domain": doms[0], "competitors": []string{doms[1]}}, "Accept", "text/csv")
	rows, _ = csv.NewReader(strings.NewReader(r.Raw)).ReadAll()
	if r.Status != 200 || len(rows) < 2 || rows[0][3] != "position_"+doms[1] {
		t.Fatalf("gaps csv: %d %v", r.Status, rows[:1])
	}

	_, site := testSite(t)
	r = do(t, "POST", s.URL+"/v1/content/audit", key, map[string]any{"domain": site}, "Accept", "text/csv")
	rows, _ = csv.NewReader(strings.NewReader(r.Raw)).ReadAll()
	if r.Status != 200 || rows[0][0] != "url" || len(rows) < 6 {
		t.Fatalf("audit csv: %d %v", r.Status, rows)
	}
	// Endpoints without rows answer JSON whatever the Accept header.
	r = do(t, "POST", s.URL+"/v1/content/recommend", key, map[string]any{"domain": doms[0], "focus_topics": []string{"coffee"}}, "Accept", "text/csv")
	if r.Status != 200 || r.Body["success"] != true {
		t.Fatalf("recommend with Accept csv: %d %s", r.Status, r.Raw)
	}
}

func TestDryRun(t *testing.T) {
	s := startStack(t, stackConfig{noWorker: true})
	key := registerBusy(t, s.testServer)
	r := do(t, "POST", s.URL+"/v1/content-map?dry_run=true", key, map[string]any{"domain": "example.com"})
	if r.Status != 200 {
		t.Fatalf("dry run: %d %s", r.Status, r.Raw)
	}
	d := r.data()
	if d["dry_run"] != true || d["credits_cost"] != float64(25) || d["credits_remaining"] != float64(50) || d["balance_after"] != float64(25) {
		t.Fatalf("dry run data %v", d)
	}
	if r := do(t, "POST", s.URL+"/v1/keywords/research?dry_run=true", key, map[string]any{"topic": "x"}); r.Status != 400 {
		t.Fatalf("invalid dry run: %d", r.Status)
	}
	do(t, "POST", s.URL+"/v1/content-map?dry_run=true", key, map[string]any{"domain": "example.com"})
	if b := s.balanceOf(t, key); b != 50 {
		t.Fatalf("dry runs charged: balance %d", b)
	}
	var jobs int
	_ = testPool(t).QueryRow(t.Context(), `SELECT count(*) FROM jobs WHERE account_id = $1`, accountID(t, s.testServer, key)).Scan(&jobs)
	if jobs != 0 {
		t.Fatalf("dry runs made %d jobs", jobs)
	}
	// Too few credits: the real call's 402.
	acc := accountID(t, s.testServer, key)
	res, _ := s.Ledger.Reserve(t.Context(), acc, 30, "/x")
	_, _ = s.Ledger.Settle(t.Context(), res)
	if r := do(t, "POST", s.URL+"/v1/content-map?dry_run=true", key, map[string]any{"domain": "example.com"}); r.Status != 402 || r.Body["code"] != "INSUFFICIENT_CREDITS" {
		t.Fatalf("dry run over balance: %d %s", r.Status, r.Raw)
	}
}
