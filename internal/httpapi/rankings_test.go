package httpapi_test

import (
	"context"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// A domain's rankings and competitor discovery: answers (JSON, CSV, dry run, a 202 job)
// valid against the OpenAPI document and charged at their catalogue price; NO_DATA
// refunded; invalid requests refused with a 400 naming the field, charging nothing.
func TestRankingsAndCompetitorsEndpoints(t *testing.T) {
	s := startStack(t, stackConfig{})
	u := s.URL
	doms := sampleDomains(t)
	key := registerBusy(t, s.testServer)
	free := register(t, s.testServer)

	r := expect(t, "rankings", call(t, "POST", u+"/v1/keywords/rankings", key, map[string]any{"domain": "www." + doms[0], "limit": 3}), 200, "")
	d := r.data()
	if d["domain"] != "www."+doms[0] || len(d["rankings"].([]any)) == 0 || d["total"].(float64) < 1 || r.Body["meta"].(map[string]any)["credits_used"] != float64(5) {
		t.Fatalf("rankings %s %v", r.Raw, r.Header)
	}
	r = expect(t, "rankings csv", call(t, "POST", u+"/v1/keywords/rankings", key, map[string]any{"domain": doms[0]}, "Accept", "text/csv"), 200, "")
	rows, err := csv.NewReader(strings.NewReader(r.Raw)).ReadAll()
	if err != nil || strings.Join(rows[0], ",") != "keyword,position,url,search_volume,keyword_difficulty,cpc,search_intent,estimated_traffic,search_intent_inferred" || len(rows) < 2 {
		t.Fatalf("rankings csv %v %v", rows, err)
	}
	r = expect(t, "rankings dry run", call(t, "POST", u+"/v1/keywords/rankings?dry_run=true", key, map[string]any{"domain": doms[0]}), 200, "")
	if r.data()["credits_cost"] != float64(5) {
		t.Fatalf("dry run %s", r.Raw)
	}
	expectNoData(t, "rankings of a domain without data", call(t, "POST", u+"/v1/keywords/rankings", key, map[string]any{"domain": "nothing-ranks.example"}), 5)

	r = expect(t, "competitors", call(t, "POST", u+"/v1/keywords/competitors", key, map[string]any{"domain": doms[0], "limit": 2}), 200, "")
	if cs := r.data()["competitors"].([]any); len(cs) == 0 || len(cs) > 2 || r.Body["meta"].(map[string]any)["credits_used"] != float64(10) {
		t.Fatalf("competitors %s", r.Raw)
	}
	r = expect(t, "competitors csv", call(t, "POST", u+"/v1/keywords/competitors", key, map[string]any{"domain": doms[0]}, "Accept", "text/csv"), 200, "")
	if !strings.HasPrefix(r.Raw, "domain,shared_keywords,avg_position,domain_avg_position,total_keywords\n") {
		t.Fatalf("competitors csv %q", r.Raw)
	}
	expectNoData(t, "competitors of a domain without data", call(t, "POST", u+"/v1/keywords/competitors", key, map[string]any{"domain": "nothing-ranks.example"}), 10)

	// Asynchronous, then the job, answered as the call would have been.
	r = expect(t, "competitors async", call(t, "POST", u+"/v1/keywords/competitors", key, map[string]any{"domain": doms[1]}, "Prefer", "respond-async"), 202, "")
	id := r.data()["job_id"].(string)
	if _, err := s.Jobs.Wait(context.Background(), accountID(t, s.testServer, key), uuid.MustParse(id), 20*time.Second); err != nil {
		t.Fatal(err)
	}
	expect(t, "competitors job", call(t, "GET", u+"/v1/jobs/"+id, key, nil), 200, "")
	expect(t, "competitors job csv", call(t, "GET", u+"/v1/jobs/"+id, key, nil, "Accept", "text/csv"), 200, "")

	// Filters, order and a cursor: the next page continues the same query only.
	q := map[string]any{"domain": doms[0], "limit": 2, "order_by": []string{"estimated_traffic.desc"},
		"filters": map[string]any{"position": map[string]any{"max": 50}}}
	r = expect(t, "rankings filtered", call(t, "POST", u+"/v1/keywords/rankings", key, q), 200, "")
	next, _ := r.data()["next_cursor"].(string)
	if next == "" || r.data()["total"].(float64) <= 2 {
		t.Fatalf("rankings filtered %s", r.Raw)
	}
	q["cursor"] = next
	expect(t, "rankings next page", call(t, "POST", u+"/v1/keywords/rankings", key, q), 200, "")
	q["order_by"] = []string{"keyword.asc"}
	expect(t, "rankings cursor of another query", call(t, "POST", u+"/v1/keywords/rankings", key, q), 400, "INVALID_CURSOR")

	n := 0
	for _, c := range []struct{ path, body, msg string }{
		{"/v1/keywords/rankings", `{"domain":"a.com","filters":{"competitor_position":{"max":3}}}`, "filters.competitor_position does not apply"},
		{"/v1/keywords/rankings", `{"domain":"a.com","filters":{"volume":{"max":3}}}`, "filters.volume"},
		{"/v1/keywords/rankings", `{"domain":"a.com","filters":{"cpc":{"min":3,"max":1}}}`, "filters.cpc.min"},
		{"/v1/keywords/rankings", `{"domain":"a.com","order_by":["position.asc","traffic.desc"]}`, "order_by[1]"},
		{"/v1/keywords/competitors", `{"domain":"a.com","order_by":["search_volume.desc"]}`, "order_by[0]"},
		{"/v1/keywords/competitors", `{"domain":"a.com","filters":{"estimated_traffic":{"min":1}}}`, "filters.estimated_traffic"},
		{"/v1/keywords/rankings", `{}`, "domain is required"},
		{"/v1/keywords/rankings", `{"domain":"a.com","limit":0}`, "limit must be from 1 to 1000"},
		{"/v1/keywords/rankings", `{"domain":"a.com","limit":1001}`, "limit must be from 1 to 1000"},
		{"/v1/keywords/rankings", `{"domain":"a.com","country":"zz"}`, "country must be one of"},
		{"/v1/keywords/rankings", `{"domain":"a.com","competitors":["b.com"]}`, "competitors"},
		{"/v1/keywords/competitors", `{"domain":"b..com"}`, "domain is not a valid domain name"},
		{"/v1/keywords/competitors", `{"domain":"a.com","limit":101}`, "limit must be from 1 to 100"},
	} {
		if n++; n%8 == 0 { // a free account's rate limit is 10 calls a minute
			expectNothingCharged(t, s, free)
			free = register(t, s.testServer)
		}
		expectInvalid(t, c.path+" "+c.body, call(t, "POST", u+c.path, free, c.body), c.msg)
	}
	expectNothingCharged(t, s, free)
}
