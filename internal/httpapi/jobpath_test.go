package httpapi_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/credits"
	"github.com/contentapi/contentapi/internal/job"
	"github.com/contentapi/contentapi/internal/keywords/sample"
)

func sampleDomains(t *testing.T) []string {
	d := sample.Domains()
	if len(d) < 3 {
		t.Fatalf("sample domains %v", d)
	}
	return d
}

func TestKeywordResearchSync(t *testing.T) {
	s := startStack(t, stackConfig{})
	key := register(t, s.testServer)
	dom := sampleDomains(t)[0]
	r := do(t, "POST", s.URL+"/v1/keywords/research", key, map[string]any{"domain": dom, "topic": "coffee", "limit": 30, "country": "US"})
	if r.Status != 200 || r.Body["success"] != true {
		t.Fatalf("research: %d %s", r.Status, r.Raw)
	}
	meta := r.Body["meta"].(map[string]any)
	if meta["credits_used"] != float64(5) || meta["credits_remaining"] != float64(45) || meta["request_id"] != r.Header.Get("X-Request-ID") {
		t.Fatalf("meta %v", meta)
	}
	d := r.data()
	if d["domain"] != dom || d["topic"] != "coffee" || d["country"] != "us" {
		t.Fatalf("data %v", d)
	}
	clusters := d["clusters"].([]any)
	total := 0
	for _, c := range clusters {
		cm := c.(map[string]any)
		for _, f := range []string{"cluster_name", "total_volume", "avg_difficulty", "keywords"} {
			if _, ok := cm[f]; !ok {
				t.Fatalf("cluster lacks %s: %v", f, cm)
			}
		}
		for _, k := range cm["keywords"].([]any) {
			km := k.(map[string]any)
			total++
			if !strings.Contains(strings.ToLower(km["keyword"].(string)), "coffee") && !strings.Contains(strings.ToLower(km["keyword"].(string)), "brew") &&
				!strings.Contains(strings.ToLower(km["keyword"].(string)), "espresso") {
				t.Logf("keyword not obviously about coffee: %v", km["keyword"])
			}
			score, _ := km["opportunity_score"].(float64)
			if score < 1 || score > 100 || km["search_intent"] == "" {
				t.Fatalf("keyword record %v", km)
			}
		}
	}
	if total == 0 || total > 30 || d["total_keywords"] != float64(total) {
		t.Fatalf("total_keywords %v, counted %d (limit 30)", d["total_keywords"], total)
	}

	// The settled call shows in usage.
	u := do(t, "GET", s.URL+"/v1/usage", key, nil).data()
	calls := u["recent_calls"].([]any)
	if u["credits_used"] != float64(5) || len(calls) != 1 || calls[0].(map[string]any)["endpoint"] != "/v1/keywords/research" {
		t.Fatalf("usage %v", u)
	}
}

func TestKeywordGapsSync(t *testing.T) {
	s := startStack(t, stackConfig{})
	key := register(t, s.testServer)
	doms := sampleDomains(t)
	r := do(t, "POST", s.URL+"/v1/keywords/gaps", key, map[string]any{"domain": doms[0], "competitors": []string{doms[1], "www." + doms[2]}, "limit": 5})
	if r.Status != 200 {
		t.Fatalf("gaps: %d %s", r.Status, r.Raw)
	}
	d := r.data()
	gaps := d["gaps"].([]any)
	if d["total_gaps"].(float64) < float64(len(gaps)) || len(gaps) == 0 || len(gaps) > 5 {
		t.Fatalf("gaps %d of total %v", len(gaps), d["total_gaps"])
	}
	for _, g := range gaps {
		gm := g.(map[string]any)
		cp := gm["competitor_positions"].(map[string]any)
		if len(cp) == 0 {
			t.Fatalf("gap without competitor positions: %v", gm)
		}
		for dom := range cp {
			// A competitor is labelled by the key its data is held under: no "www.".
			if dom != doms[1] && dom != doms[2] {
				t.Fatalf("competitor %q not one named", dom)
			}
		}
	}
	if r.Body["meta"].(map[string]any)["credits_used"] != float64(10) {
		t.Fatal("gaps cost")
	}
}

func TestAnalysisValidationChargesNothing(t *testing.T) {
	s := startStack(t, stackConfig{noWorker: true})
	key := registerBusy(t, s.testServer)
	cases := []struct {
		path string
		body any
		msg  string
	}{
		{"/v1/keywords/research", map[string]any{"topic": "coffee"}, "domain is required"},
		{"/v1/keywords/research", map[string]any{"domain": "example.com", "country": "zz"}, "country must be one of"},
		{"/v1/keywords/research", map[string]any{"domain": "example.com", "language": "xx"}, "language must be one of"},
		{"/v1/keywords/research", map[string]any{"domain": "example.com", "limit": 0}, "limit must be from 1 to 1000"},
		{"/v1/keywords/research", map[string]any{"domain": "example.com", "limit": "ten"}, "limit must be a number"},
		{"/v1/keywords/research", map[string]any{"domain": "example.com", "keywords": "coffee"}, "keywords must be an array"},
		{"/v1/keywords/research", map[string]any{"domain": "example.com", "topic": strings.Repeat("t", 201)}, "topic must be at most 200"},
		{"/v1/keywords/gaps", map[string]any{"domain": "example.com"}, "competitors is required"},
		{"/v1/keywords/gaps", map[string]any{"domain": "example.com", "competitors": []string{"a.com", "b.com", "c.com", "d.com"}}, "at most 3"},
		{"/v1/keywords/gaps", map[string]any{"domain": "example.com", "competitors": []string{"example.com"}}, "the domain itself"},
		{"/v1/keywords/gaps", map[string]any{"domain": "example.com", "competitors": []string{"a.com"}, "limit": 1001}, "limit must be from 1 to 1000"},
		{"/v1/content/audit", map[string]any{"domain": "example.com", "max_pages": 501}, "max_pages must be from 1 to 500"},
		{"/v1/content/audit", map[string]any{"domain": "example.com", "check_external": "yes"}, "check_external must be true or false"},
		{"/v1/content/recommend", map[string]any{"focus_topics": []string{"x"}}, "domain is required"},
		{"/v1/content-map", map[string]any{"domain": "example.com", "limit": 51}, "limit must be from 1 to 50"},
		{"/v1/content-map", map[string]any{"domain": "example.com", "brand_context": strings.Repeat("b", 2001)}, "brand_context must be at most 2000"},
		{"/v1/content/recommend", map[string]any{"domain": "example.com", "competitor": []string{"a.com"}}, "unknown field"},
	}
	for _, c := range cases {
		r := do(t, "POST", s.URL+c.path, key, c.body)
		if r.Status != 400 || r.errCode() != "VALIDATION_ERROR" || r.Body["success"] != false {
			t.Errorf("%s %v: %d %s", c.path, c.body, r.Status, r.Raw)
			continue
		}
		if msg := r.Body["error"].(map[string]any)["message"].(string); !strings.Contains(msg, c.msg) {
			t.Errorf("%s %v: message %q lacks %q", c.path, c.body, msg, c.msg)
		}
	}
	if b := s.balanceOf(t, key); b != 50 {
		t.Fatalf("balance %d after rejected calls, want 50", b)
	}
}

func TestInsufficientCreditsChargesNothing(t *testing.T) {
	s := startStack(t, stackConfig{})
	key := register(t, s.testServer)
	acc := accountID(t, s.testServer, key)
	res, _ := s.Ledger.Reserve(context.Background(), acc, 48, "/test")
	_, _ = s.Ledger.Settle(context.Background(), res)
	r := do(t, "POST", s.URL+"/v1/keywords/research", key, map[string]any{"domain": "example.com", "topic": "coffee"})
	if r.Status != 402 || r.Body["code"] != "INSUFFICIENT_CREDITS" || r.Body["message"] == nil {
		t.Fatalf("402: %d %s", r.Status, r.Raw)
	}
	if b := s.balanceOf(t, key); b != 2 {
		t.Fatalf("balance %d, want 2", b)
	}
	var jobs int
	_ = s.Ledger // the job row was rolled back with the reservation
	if err := testPool(t).QueryRow(context.Background(), `SELECT count(*) FROM jobs WHERE account_id = $1`, acc).Scan(&jobs); err != nil || jobs != 0 {
		t.Fatalf("jobs %d %v", jobs, err)
	}
}

func TestAsyncJobAndOwnership(t *testing.T) {
	s := startStack(t, stackConfig{})
	key := register(t, s.testServer)
	r := do(t, "POST", s.URL+"/v1/keywords/research", key, map[string]any{"domain": sampleDomains(t)[0], "topic": "coffee"},
		"Prefer", "respond-async")
	if r.Status != 202 || r.Header.Get("Preference-Applied") != "respond-async" {
		t.Fatalf("async: %d %s", r.Status, r.Raw)
	}
	id := r.data()["job_id"].(string)
	if r.data()["status_url"] != "http://api.test/v1/jobs/"+id || (r.data()["status"] != "queued" && r.data()["status"] != "running") {
		t.Fatalf("202 data %v", r.data())
	}
	j, err := s.Jobs.Wait(context.Background(), accountID(t, s.testServer, key), uuid.MustParse(id), 20*time.Second)
	if err != nil || j.Status != job.Succeeded {
		t.Fatalf("wait: %v %v", j.Status, err)
	}
	got := do(t, "GET", s.URL+"/v1/jobs/"+id, key, nil)
	if got.Status != 200 || got.Body["success"] != true || got.data()["clusters"] == nil ||
		got.Body["meta"].(map[string]any)["credits_used"] != float64(5) {
		t.Fatalf("job: %d %s", got.Status, got.Raw)
	}
	other := register(t, s.testServer)
	if r := do(t, "GET", s.URL+"/v1/jobs/"+id, other, nil); r.Status != 404 || r.errCode() != "NOT_FOUND" {
		t.Fatalf("foreign job: %d %s", r.Status, r.Raw)
	}
	if r := do(t, "GET", s.URL+"/v1/jobs/"+uuid.NewString(), key, nil); r.Status != 404 {
		t.Fatalf("unknown job: %d", r.Status)
	}
}

func TestIdempotencyKey(t *testing.T) {
	s := startStack(t, stackConfig{})
	key := registerBusy(t, s.testServer)
	body := map[string]any{"domain": sampleDomains(t)[0], "topic": "coffee"}
	first := do(t, "POST", s.URL+"/v1/keywords/research", key, body, "Idempotency-Key", "order-42")
	second := do(t, "POST", s.URL+"/v1/keywords/research", key, body, "Idempotency-Key", "order-42")
	if first.Status != 200 || second.Status != 200 || second.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("statuses %d %d %v", first.Status, second.Status, second.Header)
	}
	if first.Body["meta"].(map[string]any)["job_id"] != second.Body["meta"].(map[string]any)["job_id"] {
		t.Fatal("a replay ran a new job")
	}
	if fmt.Sprint(first.data()) != fmt.Sprint(second.data()) {
		t.Fatal("a replay answered differently")
	}
	if b := s.balanceOf(t, key); b != 45 {
		t.Fatalf("balance %d, want 45 (charged once)", b)
	}
	r := do(t, "POST", s.URL+"/v1/keywords/research", key, map[string]any{"domain": "other.com", "topic": "espresso"}, "Idempotency-Key", "order-42")
	if r.Status != 422 || r.errCode() != "IDEMPOTENCY_KEY_REUSED" {
		t.Fatalf("reuse: %d %s", r.Status, r.Raw)
	}
	// Concurrent first uses of one key make one job.
	var wg sync.WaitGroup
	ids := make(chan any, 10)
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := do(t, "POST", s.URL+"/v1/keywords/research", key, body, "Idempotency-Key", "burst-1")
			if r.Status == 200 {
				ids <- r.Body["meta"].(map[string]any)["job_id"]
			} else {
				t.Errorf("burst: %d %s", r.Status, r.Raw)
			}
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[any]bool{}
	for id := range ids {
		seen[id] = true
	}
	if len(seen) != 1 || s.balanceOf(t, key) != 40 {
		t.Fatalf("burst made %d jobs; balance %d (want 1 job, 40)", len(seen), s.balanceOf(t, key))
	}
	// After 24 hours the key is free again.
	s.Clock.Advance(job.IdempotencyWindow + time.Minute)
	r = do(t, "POST", s.URL+"/v1/keywords/research", key, map[string]any{"domain": "other.com", "topic": "espresso"}, "Idempotency-Key", "order-42")
	if r.Status != 200 {
		t.Fatalf("lapsed key: %d %s", r.Status, r.Raw)
	}
}

func TestHundredConcurrentCallsBalanceExactly(t *testing.T) {
	s := startStack(t, stackConfig{})
	key := registerBusy(t, s.testServer)
	acc := accountID(t, s.testServer, key)
	now := s.Clock.Now()
	if _, err := s.Ledger.Grant(context.Background(), credits.Grant{AccountID: acc, Amount: 250, IssuedAt: now,
		ExpiresAt: now.Add(time.Hour), Source: credits.SourceOperator, SourceRef: "bench"}); err != nil {
		t.Fatal(err)
	}
	// 300 credits for 100 calls of 5: 60 succeed, 40 are refused with 402 and cost nothing.
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := do(t, "POST", s.URL+"/v1/keywords/research", key, map[string]any{"domain": sampleDomains(t)[i%3], "topic": "coffee", "limit": 10})
			mu.Lock()
			statuses[r.Status]++
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	if statuses[200] != 60 || statuses[402] != 40 {
		t.Fatalf("statuses %v, want 60×200 and 40×402", statuses)
	}
	if b := s.balanceOf(t, key); b != 0 {
		t.Fatalf("balance %d, want 0", b)
	}
	if rs := reservationsOf(t, acc); rs["settled"] != 60 || rs["reserved"] != 0 || rs["refunded"] != 0 {
		t.Fatalf("reservations %v", rs)
	}
	u := do(t, "GET", s.URL+"/v1/usage", key, nil).data()
	if u["credits_used"] != float64(300) || len(u["recent_calls"].([]any)) != 20 {
		t.Fatalf("usage %v", u)
	}
}

func TestSweepResendsAndRefunds(t *testing.T) {
	ctx := context.Background()
	s := startStack(t, stackConfig{noWorker: true, jobCfg: job.Config{MaxAttempts: 1, StaleAfter: time.Minute, Deadline: time.Hour, EnqueueGrace: 10 * time.Second}})
	key := registerBusy(t, s.testServer)
	acc := accountID(t, s.testServer, key)

	// A job whose task never reached the queue (the API died after its commit).
	lost := job.NewService(testPool(t), s.Ledger, s.Clock, dropQueue{}, job.NewSignals(testenvRedis(t)), job.DefaultConfig, quietLog())
	j1, err := lost.Submit(ctx, job.Submission{AccountID: acc, Kind: "keywords:research", Endpoint: "/v1/keywords/research", Cost: 5,
		Request: map[string]any{"domain": "example.com", "topic": "coffee"}})
	if err != nil {
		t.Fatal(err)
	}
	// A job whose runner died mid-run on its last attempt.
	j2, err := lost.Submit(ctx, job.Submission{AccountID: acc, Kind: "keywords:research", Endpoint: "/v1/keywords/research", Cost: 5,
		Request: map[string]any{"domain": "example.com", "topic": "tea"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Jobs.Claim(ctx, j2.ID); !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if b := s.balanceOf(t, key); b != 40 {
		t.Fatalf("balance %d with two reserved", b)
	}
	// Other tests' jobs share the database: check these two jobs, not the totals.
	if _, err := s.Jobs.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := asynqInspector(t).GetTaskInfo("analysis", j1.ID.String()); err == nil {
		t.Fatal("sweep re-sent a job still within its enqueue grace")
	}
	if j, _ := s.Jobs.Load(ctx, j2.ID); j.Status != job.Running {
		t.Fatalf("sweep touched a job still within its heartbeat window: %s", j.Status)
	}
	s.Clock.Advance(2 * time.Minute)
	r, err := s.Jobs.Sweep(ctx)
	if err != nil || r.Resent < 1 || r.Refunded < 1 {
		t.Fatalf("sweep %+v %v", r, err)
	}
	if b := s.balanceOf(t, key); b != 45 {
		t.Fatalf("balance %d: want the dead job refunded (45)", b)
	}
	got := do(t, "GET", s.URL+"/v1/jobs/"+j2.ID.String(), key, nil)
	if got.Status != 502 || got.errCode() != "JOB_FAILED" || got.Body["error"].(map[string]any)["credits_refunded"] != float64(5) {
		t.Fatalf("failed job: %d %s", got.Status, got.Raw)
	}
	// The resent task is on the queue, under the job's id.
	info, err := asynqInspector(t).GetTaskInfo("analysis", j1.ID.String())
	if err != nil || info.State.String() != "pending" {
		t.Fatalf("resent task: %v %v", info, err)
	}
	// A second sweep does not refund twice.
	if _, err := s.Jobs.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if b := s.balanceOf(t, key); b != 45 {
		t.Fatalf("balance %d after second sweep", b)
	}
	statuses := reservationsOf(t, acc)
	keys := make([]string, 0)
	for k := range statuses {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if statuses["refunded"] != 1 || statuses["reserved"] != 1 {
		t.Fatalf("reservations %v", statuses)
	}
}

// dropQueue loses every task, as an API that died between commit and enqueue would.
type dropQueue struct{}

func (dropQueue) Enqueue(context.Context, string, uuid.UUID, string) error { return nil }
