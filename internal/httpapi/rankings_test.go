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
	if err != nil || strings.Join(rows[0], ",") != "keyword,position,url,search_volume,keyword_difficulty,cpc,search_intent,estimated_traffic" || len(rows) < 2 {
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

	for _, c := range []struct{ path, body, msg string }{
		{"/v1/keywords/rankings", `{}`, "domain is required"},
		{"/v1/keywords/rankings", `{"domain":"a.com","limit":0}`, "limit must be from 1 to 1000"},
		{"/v1/keywords/rankings", `{"domain":"a.com","limit":1001}`, "limit must be from 1 to 1000"},
		{"/v1/keywords/rankings", `{"domain":"a.com","country":"zz"}`, "country must be one of"},
		{"/v1/keywords/rankings", `{"domain":"a.com","competitors":["b.com"]}`, "competitors"},
		{"/v1/keywords/competitors", `{"domain":"b..com"}`, "domain is not a valid domain name"},
		{"/v1/keywords/competitors", `{"domain":"a.com","limit":101}`, "limit must be from 1 to 100"},
	} {
		expectInvalid(t, c.path+" "+c.body, call(t, "POST", u+c.path, free, c.body), c.msg)
	}
	expectNothingCharged(t, s, free)
}
