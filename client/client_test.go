package client_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contentapi/contentapi/client"
)

// fakeAPI answers from a script, one answer per request, and records every request.
type fakeAPI struct {
	*httptest.Server
	mu       sync.Mutex
	answers  []fakeAnswer
	requests []*http.Request
	bodies   []string
	times    []time.Time
}

type fakeAnswer struct {
	status int
	header map[string]string
	body   string
}

func newFake(t *testing.T, answers ...fakeAnswer) *fakeAPI {
	f := &fakeAPI{answers: answers}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.requests = append(f.requests, r)
		f.bodies = append(f.bodies, string(body))
		f.times = append(f.times, time.Now())
		var a fakeAnswer
		if len(f.answers) > 0 {
			a, f.answers = f.answers[0], f.answers[1:]
		} else {
			a = fakeAnswer{status: 500, body: `{"success":false,"error":{"code":"INTERNAL_ERROR","message":"script ran out"}}`}
		}
		f.mu.Unlock()
		for k, v := range a.header {
			w.Header().Set(k, v)
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.Header().Set("X-Request-ID", "req-fake")
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeAPI) script(answers ...fakeAnswer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers = append(f.answers, answers...)
}

func (f *fakeAPI) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

func (f *fakeAPI) header(i int, name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[i].Header.Get(name)
}

// fast keeps backoffs short; Retry-After is honoured as sent.
var fast = client.RetryPolicy{MaxAttempts: 4, InitialBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond, MaxRetryAfter: 5 * time.Second}

const researchOK = `{"success":true,"data":{"domain":"a.example","topic":"coffee","country":"us","clusters":[{"cluster_name":"coffee","total_volume":10,"avg_difficulty":null,"keywords":[{"keyword":"coffee","search_volume":null,"keyword_difficulty":20,"cpc":null,"search_intent":"commercial","opportunity_score":null}]}],"total_keywords":1,"source":"local"},"meta":{"credits_used":5,"credits_remaining":45,"request_id":"req-fake","job_id":"job-1","data_source":"synthetic","warnings":["made up"]}}`

func TestRetryAfter429ThenSuccessSameIdempotencyKey(t *testing.T) {
	f := newFake(t,
		fakeAnswer{status: 429, header: map[string]string{"Retry-After": "1", "X-RateLimit-Limit": "10", "X-RateLimit-Remaining": "0"},
			body: `{"error":"Too Many Requests","message":"slow down","code":"RATE_LIMIT_EXCEEDED"}`},
		fakeAnswer{status: 200, header: map[string]string{"X-RateLimit-Limit": "10", "X-RateLimit-Remaining": "3", "X-RateLimit-Reset": "7"}, body: researchOK},
	)
	c := client.New("ap_test", client.WithBaseURL(f.URL), client.WithRetryPolicy(fast))
	res, err := c.KeywordResearch(context.Background(), client.ResearchRequest{Domain: "a.example", Topic: "coffee"})
	if err != nil {
		t.Fatal(err)
	}
	if f.count() != 2 {
		t.Fatalf("%d requests, want 2", f.count())
	}
	f.mu.Lock()
	gap := f.times[1].Sub(f.times[0])
	same := f.bodies[0] == f.bodies[1]
	f.mu.Unlock()
	if gap < time.Second {
		t.Fatalf("retried after %v, before Retry-After's 1 s", gap)
	}
	k0, k1 := f.header(0, "Idempotency-Key"), f.header(1, "Idempotency-Key")
	if k0 == "" || k0 != k1 {
		t.Fatalf("Idempotency-Key %q then %q: want one key for both attempts", k0, k1)
	}
	if !same || f.header(0, "Authorization") != "Bearer ap_test" {
		t.Fatal("the attempts differ")
	}
	if res.TotalKeywords != 1 || res.Clusters[0].Keywords[0].SearchVolume != nil || *res.Clusters[0].Keywords[0].KeywordDifficulty != 20 {
		t.Fatalf("result %+v", res)
	}
	if res.Meta.CreditsUsed != 5 || res.Meta.CreditsRemaining != 45 || res.Meta.JobID != "job-1" || res.Meta.RateLimit.Remaining != 3 ||
		res.Meta.RateLimit.Reset != 7*time.Second || res.Meta.DataSource != "synthetic" || len(res.Meta.Warnings) != 1 {
		t.Fatalf("meta %+v", res.Meta)
	}
	if res.Clusters[0].Keywords[0].OpportunityScore != nil {
		t.Fatalf("a null opportunity_score decoded as %d", *res.Clusters[0].Keywords[0].OpportunityScore)
	}

	// A second logical call gets a new key.
	f.script(fakeAnswer{status: 200, body: researchOK})
	if _, err := c.KeywordResearch(context.Background(), client.ResearchRequest{Domain: "a.example"}); err != nil {
		t.Fatal(err)
	}
	if k2 := f.header(2, "Idempotency-Key"); k2 == "" || k2 == k0 {
		t.Fatalf("second call's key %q, first %q", k2, k0)
	}
}

func TestRetry503ThenSuccess(t *testing.T) {
	f := newFake(t,
		fakeAnswer{status: 503, body: `{"success":false,"error":{"code":"SERVICE_UNAVAILABLE","message":"db down"}}`},
		fakeAnswer{status: 503, body: `<html>bad gateway</html>`, header: map[string]string{"Content-Type": "text/html"}},
		fakeAnswer{status: 200, body: researchOK},
	)
	c := client.New("ap_test", client.WithBaseURL(f.URL), client.WithRetryPolicy(fast))
	key := "caller-key-1"
	if _, err := c.KeywordResearch(context.Background(), client.ResearchRequest{Domain: "a.example"}, client.WithIdempotencyKey(key)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if got := f.header(i, "Idempotency-Key"); got != key {
			t.Fatalf("attempt %d key %q, want %q", i, got, key)
		}
	}
}

func TestNoRetryOnPermanentErrors(t *testing.T) {
	for _, a := range []fakeAnswer{
		{status: 503, body: `{"status":"error","error":"Service Unavailable","message":"no billing","code":"BILLING_NOT_CONFIGURED"}`},
		{status: 400, body: `{"success":false,"error":{"code":"VALIDATION_ERROR","message":"domain is required"}}`},
		{status: 429, header: map[string]string{"Retry-After": "3600"}, body: `{"error":"Too Many Requests","message":"hourly","code":"RATE_LIMIT_EXCEEDED"}`},
	} {
		f := newFake(t, a, fakeAnswer{status: 200, body: `{}`})
		c := client.New("ap_test", client.WithBaseURL(f.URL), client.WithRetryPolicy(fast))
		_, err := c.Checkout(context.Background(), client.CheckoutRequest{Plan: "pro"})
		var e *client.Error
		if !errors.As(err, &e) || e.Status != a.status || f.count() != 1 {
			t.Fatalf("%d: err %v after %d requests", a.status, err, f.count())
		}
		if a.status == 429 && e.RetryAfter != time.Hour {
			t.Fatalf("RetryAfter %v", e.RetryAfter)
		}
	}
}

// The three error shapes become one typed error.
func TestErrorShapes(t *testing.T) {
	cases := []struct {
		a       fakeAnswer
		code    string
		message string
	}{
		{fakeAnswer{status: 401, body: `{"error":"Unauthorized","message":"The Authorization header is missing.","code":"MISSING_AUTH_HEADER"}`}, client.CodeMissingAuthHeader, "The Authorization header is missing."},
		{fakeAnswer{status: 400, body: `{"success":false,"error":{"code":"VALIDATION_ERROR","message":"domain is required"}}`}, client.CodeValidation, "domain is required"},
		{fakeAnswer{status: 400, body: `{"status":"error","error":"Bad Request","message":"plan must be pro or scale.","code":"INVALID_PLAN"}`}, client.CodeInvalidPlan, "plan must be pro or scale."},
		{fakeAnswer{status: 502, header: map[string]string{"Content-Type": "text/html"}, body: `<html>upstream died</html>`}, "", "Bad Gateway"},
		{fakeAnswer{status: 200, body: `{"status":"error","error":"Conflict","message":"already","code":"ALREADY_SUBSCRIBED"}`}, client.CodeAlreadySubscribed, "already"},
	}
	for _, tc := range cases {
		f := newFake(t, tc.a)
		_, err := client.New("ap_x", client.WithBaseURL(f.URL), client.WithRetryPolicy(client.NoRetry)).Usage(context.Background())
		var e *client.Error
		if !errors.As(err, &e) || e.Code != tc.code || e.Message != tc.message || e.RequestID != "req-fake" {
			t.Errorf("%s: %#v", tc.a.body, err)
		}
		if tc.code != "" && !client.IsCode(err, tc.code) {
			t.Errorf("IsCode(%v, %s) false", err, tc.code)
		}
	}
	// A failed job carries its refund.
	f := newFake(t, fakeAnswer{status: 502, body: `{"success":false,"error":{"code":"PROVIDER_ERROR","message":"down","job_id":"j-9","status":"failed","credits_refunded":5}}`})
	_, err := client.New("ap_x", client.WithBaseURL(f.URL)).GetJob(context.Background(), "j-9")
	var e *client.Error
	if !errors.As(err, &e) || e.JobID != "j-9" || e.CreditsRefunded != 5 || e.Code != client.CodeProviderError {
		t.Fatalf("job failure %#v", err)
	}
}

// Both envelopes: the status one, with credits_remaining at the top level and credits_used
// in data; the fields this API does not send (difficulty, competition) are ignored.
func TestBothEnvelopes(t *testing.T) {
	f := newFake(t, fakeAnswer{status: 200, body: `{"status":"success","credits_remaining":95,"data":{"domain":"a.example","topic":"t","country":"us","credits_used":5,
		"clusters":[{"cluster_name":"c","total_volume":5,"avg_difficulty":3,"keywords":[{"keyword":"k","search_volume":5,"difficulty":3,"competition":"low","trend":"stable","search_intent":"informational","opportunity_score":9}]}],"total_keywords":1}}`})
	res, err := client.New("ap_x", client.WithBaseURL(f.URL)).KeywordResearch(context.Background(), client.ResearchRequest{Domain: "a.example"})
	if err != nil {
		t.Fatal(err)
	}
	k := res.Clusters[0].Keywords[0]
	if res.Meta.CreditsRemaining != 95 || res.Meta.CreditsUsed != 5 || res.Meta.RequestID != "req-fake" || k.Trend != "stable" ||
		*k.OpportunityScore != 9 {
		t.Fatalf("result %+v meta %+v", res, res.Meta)
	}
}

// A 202 is waited for: the job is polled until it answers with its result.
func TestAnalysisWaitsForAcceptedJob(t *testing.T) {
	accepted := `{"success":true,"data":{"job_id":"job-7","status":"queued","status_url":"http://x/v1/jobs/job-7","created_at":"2026-03-01T10:00:00Z"}}`
	running := strings.Replace(accepted, "queued", "running", 1)
	f := newFake(t,
		fakeAnswer{status: 202, body: accepted},
		fakeAnswer{status: 202, body: running},
		fakeAnswer{status: 429, header: map[string]string{"Retry-After": "0"}, body: `{"error":"Too Many Requests","message":"m","code":"RATE_LIMIT_EXCEEDED"}`},
		fakeAnswer{status: 200, body: strings.Replace(researchOK, "job-1", "job-7", 1)},
	)
	c := client.New("ap_x", client.WithBaseURL(f.URL), client.WithRetryPolicy(fast),
		client.WithPollPolicy(client.PollPolicy{Initial: time.Millisecond, Max: 2 * time.Millisecond}))
	res, err := c.KeywordResearch(context.Background(), client.ResearchRequest{Domain: "a.example"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Meta.JobID != "job-7" || res.TotalKeywords != 1 || f.count() != 4 {
		t.Fatalf("result %+v after %d requests", res.Meta, f.count())
	}
	f.mu.Lock()
	for i := 1; i < 4; i++ {
		if f.requests[i].Method != "GET" || f.requests[i].URL.Path != "/v1/jobs/job-7" {
			t.Errorf("request %d: %s %s", i, f.requests[i].Method, f.requests[i].URL.Path)
		}
	}
	f.mu.Unlock()

	// Submit does not wait; WaitJob does, until the context ends.
	f.script(fakeAnswer{status: 202, body: accepted}, fakeAnswer{status: 202, body: running}, fakeAnswer{status: 202, body: running})
	j, err := c.Submit(context.Background(), client.OpKeywordResearch, client.ResearchRequest{Domain: "a.example"})
	if err != nil || j.ID != "job-7" || j.Status != client.JobQueued || j.Done() {
		t.Fatalf("submit %+v %v", j, err)
	}
	if got := f.header(4, "Prefer"); got != "respond-async" {
		t.Fatalf("Prefer %q", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.script(fakeAnswer{status: 202, body: running})
	go func() {
		for f.count() < 7 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	if _, err := c.WaitJob(ctx, "job-7"); !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitJob after cancel: %v", err)
	}
}

// A connection that fails is retried for a GET, not for a POST without an idempotency key.
func TestTransportErrors(t *testing.T) {
	var mu sync.Mutex
	n := 0
	requests := func() int { mu.Lock(); defer mu.Unlock(); return n }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		if first {
			hj, _ := w.(http.Hijacker)
			conn, _, _ := hj.Hijack()
			conn.Close() // cut without an answer
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"success":true,"data":{"plan":"free","credits_used":0,"credits_limit":50,"credits_remaining":50,"rate_limit":10,"recent_calls":[],"upgrade_url":"u"}}`)
	}))
	t.Cleanup(srv.Close)
	c := client.New("ap_x", client.WithBaseURL(srv.URL), client.WithRetryPolicy(fast))
	u, err := c.Usage(context.Background())
	if err != nil || u.CreditsRemaining != 50 || requests() != 2 {
		t.Fatalf("usage %+v %v after %d requests", u, err, requests())
	}
	mu.Lock()
	n = 0
	mu.Unlock()
	if _, err := c.Register(context.Background(), client.RegisterRequest{Email: "a@example.com"}); err == nil || requests() != 1 {
		t.Fatalf("register after a cut connection: %v after %d requests (a retry could lose the key shown once)", err, requests())
	}
}

func TestParseCallback(t *testing.T) {
	body := []byte(`{"event":"job.succeeded","job_id":"j1","endpoint":"/v1/keywords/research","status":"succeeded","created_at":"2026-03-01T10:00:00Z","finished_at":"2026-03-01T10:00:01Z","sent_at":"` +
		time.Now().UTC().Format(time.RFC3339) + `","success":true,"data":{"total_keywords":1},"meta":{"credits_used":5,"job_id":"j1","request_id":"r"}}`)
	m := hmac.New(sha256.New, []byte("secret"))
	m.Write(body)
	sig := "sha256=" + hex.EncodeToString(m.Sum(nil))
	cb, err := client.ParseCallback("secret", body, sig, time.Minute)
	if err != nil || cb.JobID != "j1" || cb.Meta.CreditsUsed != 5 {
		t.Fatalf("%+v %v", cb, err)
	}
	var res client.ResearchResult
	if err := json.Unmarshal(cb.Data, &res); err != nil || res.TotalKeywords != 1 {
		t.Fatal(err)
	}
	if _, err := client.ParseCallback("other", body, sig, 0); !client.IsCode(err, "INVALID_SIGNATURE") {
		t.Fatalf("wrong secret: %v", err)
	}
	old := []byte(strings.Replace(string(body), time.Now().UTC().Format(time.RFC3339), "2020-01-01T00:00:00Z", 1))
	m = hmac.New(sha256.New, []byte("secret"))
	m.Write(old)
	if _, err := client.ParseCallback("secret", old, "sha256="+hex.EncodeToString(m.Sum(nil)), time.Minute); !client.IsCode(err, "STALE_CALLBACK") {
		t.Fatalf("stale: %v", err)
	}
}

// A 503 naming a job (the call may have been accepted as it) is followed by fetching that
// job, polled until it finishes, never by a second POST; when the job is not found (the
// call was not recorded) the call is made again under the same Idempotency-Key.
func TestMaybeAccepted503FetchesTheJob(t *testing.T) {
	maybe := fakeAnswer{status: 503, header: map[string]string{"Retry-After": "0", "Location": "http://x/v1/jobs/job-9"},
		body: `{"success":false,"error":{"code":"SERVICE_UNAVAILABLE","message":"may have been accepted as job job-9","job_id":"job-9"}}`}
	running := fakeAnswer{status: 202, body: `{"success":true,"data":{"job_id":"job-9","status":"running","status_url":"http://x/v1/jobs/job-9","created_at":"2026-03-01T10:00:00Z"}}`}
	done := fakeAnswer{status: 200, body: strings.Replace(researchOK, "job-1", "job-9", 1)}
	notFound := fakeAnswer{status: 404, body: `{"success":false,"error":{"code":"NOT_FOUND","message":"Job not found."}}`}
	f := newFake(t, maybe, running, running, done)
	c := client.New("ap_x", client.WithBaseURL(f.URL), client.WithRetryPolicy(fast),
		client.WithPollPolicy(client.PollPolicy{Initial: time.Millisecond, Max: 2 * time.Millisecond}))
	requests := func(from int) string {
		f.mu.Lock()
		defer f.mu.Unlock()
		var out []string
		for _, r := range f.requests[from:] {
			out = append(out, r.Method+" "+r.URL.Path)
		}
		return strings.Join(out, ", ")
	}

	res, err := c.KeywordResearch(context.Background(), client.ResearchRequest{Domain: "a.example"})
	if err != nil || res.Meta.JobID != "job-9" || res.TotalKeywords != 1 {
		t.Fatalf("research: %+v %v", res, err)
	}
	want := "POST /v1/keywords/research, GET /v1/jobs/job-9, GET /v1/jobs/job-9, GET /v1/jobs/job-9"
	if got := requests(0); got != want {
		t.Fatalf("requests %s, want %s", got, want)
	}

	// Not recorded: the call is made again, with the same key.
	f.script(maybe, notFound, done)
	if _, err := c.KeywordResearch(context.Background(), client.ResearchRequest{Domain: "a.example"}); err != nil {
		t.Fatal(err)
	}
	want = "POST /v1/keywords/research, GET /v1/jobs/job-9, POST /v1/keywords/research"
	if got := requests(4); got != want {
		t.Fatalf("requests %s, want %s", got, want)
	}
	if k4, k6 := f.header(4, "Idempotency-Key"), f.header(6, "Idempotency-Key"); k4 == "" || k4 != k6 {
		t.Fatalf("Idempotency-Key %q then %q: want one key", k4, k6)
	}

	// Submit returns the job as found, without waiting.
	f.script(maybe, running)
	j, err := c.Submit(context.Background(), client.OpKeywordResearch, client.ResearchRequest{Domain: "a.example"})
	if err != nil || j.ID != "job-9" || j.Status != client.JobRunning {
		t.Fatalf("submit: %+v %v", j, err)
	}
	if got := requests(7); got != "POST /v1/keywords/research, GET /v1/jobs/job-9" {
		t.Fatalf("requests %s", got)
	}
}
