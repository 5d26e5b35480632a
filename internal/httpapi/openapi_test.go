package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/billing"
	"github.com/contentapi/contentapi/internal/billing/billingtest"
	"github.com/contentapi/contentapi/internal/crawler"
	"github.com/contentapi/contentapi/internal/credits"
	"github.com/contentapi/contentapi/internal/httpapi"
	"github.com/contentapi/contentapi/internal/job"
	"github.com/contentapi/contentapi/internal/openapi"
	"github.com/contentapi/contentapi/internal/openapi/openapitest"
)

// validateAgainstSpec checks one response of the API against the OpenAPI document: its
// status must be documented for the operation, and its headers and body must match that
// response (strictly: an undocumented property or header fails). Routes the tests mount
// themselves (/test/...) and the operator routes (/metrics, /admin/...) are not part of the
// public API, and /mcp is the MCP transport (JSON-RPC, docs/mcp.md): they are skipped. do() calls it for every response, so no test can receive an
// answer the document does not describe.
func validateAgainstSpec(t testing.TB, method, rawURL string, r response) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Errorf("openapi: bad URL %q: %v", rawURL, err)
		return
	}
	if strings.HasPrefix(u.Path, "/test/") || strings.HasPrefix(u.Path, "/admin/") || u.Path == "/admin" || u.Path == "/metrics" || u.Path == "/mcp" {
		return
	}
	if err := openapitest.ValidateResponse(method, u.Path, r.Status, r.Header, []byte(r.Raw)); err != nil {
		t.Errorf("%v\nbody: %.2000s", err, r.Raw)
	}
	specCoverage.record(method, u.Path, r.Status)
}

type hookDelivery struct {
	header http.Header
	body   []byte
}

// specCoverage records which documented operations and statuses the package's tests saw.
var specCoverage = &coverage{seen: map[string]map[int]bool{}}

type coverage struct {
	mu   sync.Mutex
	seen map[string]map[int]bool // "METHOD /template" → statuses
}

func (c *coverage) record(method, path string, status int) {
	op := method + " " + templateOf(path)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen[op] == nil {
		c.seen[op] = map[int]bool{}
	}
	c.seen[op][status] = true
}

func (c *coverage) statuses(op string) map[int]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[int]bool{}
	for s := range c.seen[op] {
		out[s] = true
	}
	return out
}

// templateOf maps a request path to the document's path template.
func templateOf(path string) string {
	switch {
	case strings.HasPrefix(path, "/v1/jobs/"):
		return "/v1/jobs/{id}"
	case strings.HasPrefix(path, "/v1/keys/"):
		return "/v1/keys/{id}"
	case strings.HasPrefix(path, "/docs/"):
		return "/docs/{file}"
	}
	return path
}

// specDoc is the served document, decoded.
type specDoc struct {
	OpenAPI string `json:"openapi"`
	Info    struct {
		Version string `json:"version"`
	} `json:"info"`
	Servers []struct {
		URL string `json:"url"`
	} `json:"servers"`
	Paths map[string]map[string]json.RawMessage `json:"paths"`
}

func (d specDoc) operations() []string {
	var ops []string
	for p, item := range d.Paths {
		for m := range item {
			switch m {
			case "get", "post", "put", "patch", "delete":
				ops = append(ops, strings.ToUpper(m)+" "+p)
			}
		}
	}
	sort.Strings(ops)
	return ops
}

// call is do() plus validation against the document (do() will validate by itself once
// the lead wires validateAgainstSpec into it; validating twice is harmless).
func call(t *testing.T, method, url, key string, body any, headers ...string) response {
	t.Helper()
	r := do(t, method, url, key, body, headers...)
	validateAgainstSpec(t, method, url, r)
	return r
}

func expect(t *testing.T, what string, r response, status int, code string) response {
	t.Helper()
	if r.Status != status || (code != "" && r.errCode() != code) {
		t.Fatalf("%s: got %d %s, want %d %s", what, r.Status, r.Raw, status, code)
	}
	return r
}

var externalRef = regexp.MustCompile(`(?i)(src|href)\s*=\s*"(https?:)?//`)

func testDocumentAndDocs(t *testing.T) {
	if err := openapitest.ValidateDocument(); err != nil {
		t.Fatal(err)
	}
	s := startServer(t)
	r := expect(t, "openapi.json", call(t, "GET", s.URL+"/v1/openapi.json", "", nil), 200, "")
	var doc specDoc
	if err := json.Unmarshal([]byte(r.Raw), &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") || doc.Info.Version != httpapi.Version || len(doc.Servers) != 1 || doc.Servers[0].URL != "http://api.test" {
		t.Fatalf("document openapi %q version %q (API %s) servers %v", doc.OpenAPI, doc.Info.Version, httpapi.Version, doc.Servers)
	}

	page := expect(t, "docs", call(t, "GET", s.URL+"/docs", "", nil), 200, "")
	csp := page.Header.Get("Content-Security-Policy")
	if !strings.HasPrefix(page.Header.Get("Content-Type"), "text/html") || !strings.Contains(csp, "script-src 'self'") ||
		!strings.Contains(csp, "connect-src 'self'") || !strings.Contains(page.Raw, `spec-url="/v1/openapi.json"`) ||
		!strings.Contains(page.Raw, `src="/docs/redoc.standalone.js"`) {
		t.Fatalf("docs page: %v\n%s", page.Header, page.Raw)
	}
	if m := externalRef.FindString(page.Raw); m != "" {
		t.Fatalf("the docs page loads something from another host: %s", m)
	}
	js := expect(t, "redoc", call(t, "GET", s.URL+"/docs/redoc.standalone.js", "", nil), 200, "")
	etag := js.Header.Get("ETag")
	if !strings.HasPrefix(js.Header.Get("Content-Type"), "application/javascript") || etag == "" || len(js.Raw) < 500_000 ||
		!strings.Contains(js.Raw, "Redoc") {
		t.Fatalf("redoc bundle: %v, %d bytes", js.Header, len(js.Raw))
	}
	expect(t, "redoc revalidated", call(t, "GET", s.URL+"/docs/redoc.standalone.js", "", nil, "If-None-Match", etag), 304, "")
	expect(t, "unknown asset", call(t, "GET", s.URL+"/docs/nothing.js", "", nil), 404, "NOT_FOUND")

	// Compressed for browsers that accept it (the transport asked for gzip and unpacked it).
	req, _ := http.NewRequest("GET", s.URL+"/docs/redoc.standalone.js", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.Header.Get("Content-Encoding") != "gzip" || res.ContentLength >= int64(len(js.Raw)) {
		t.Fatalf("gzip: %v", res.Header)
	}
}

// Every route the server mounts is in the document and every documented operation exists.
func testRoutesDocumented(t *testing.T) {
	s := startServer(t)
	var doc specDoc
	if err := json.Unmarshal(openapi.JSON(""), &doc); err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, op := range doc.operations() {
		documented[op] = true
	}
	param := regexp.MustCompile(`:([a-z]+)`)
	mounted := map[string]bool{}
	for _, rt := range s.App.GetRoutes(true) {
		if rt.Method == "HEAD" || rt.Method == "CONNECT" || rt.Method == "TRACE" || rt.Method == "OPTIONS" {
			continue
		}
		path := param.ReplaceAllString(rt.Path, "{$1}")
		if path == "/docs/*" {
			path = "/docs/{file}"
		}
		// /mcp speaks JSON-RPC (the MCP transport), which docs/mcp.md describes, not REST.
		if strings.Contains(path, "*") || path == "/metrics" || strings.HasPrefix(path, "/admin") || path == "/mcp" {
			continue
		}
		mounted[rt.Method+" "+path] = true
	}
	for op := range mounted {
		if !documented[op] {
			t.Errorf("%s is served but not in the OpenAPI document", op)
		}
	}
	for op := range documented {
		if !mounted[op] {
			t.Errorf("%s is in the OpenAPI document but not served", op)
		}
	}
}

// testEveryEndpoint calls every operation, with its successes and main errors, and
// validates each answer against the document.
func testEveryEndpoint(t *testing.T) {
	s := startStack(t, stackConfig{callbackClient: crawler.New(crawler.Config{AllowPrivate: true}).HTTPClient()})
	u := s.URL
	doms := sampleDomains(t)
	hooks := make(chan hookDelivery, 4)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		hooks <- hookDelivery{header: r.Header.Clone(), body: body}
	}))
	t.Cleanup(receiver.Close)

	// Service routes.
	for _, p := range []string{"/", "/v1", "/healthz", "/readyz"} {
		expect(t, p, call(t, "GET", u+p, "", nil), 200, "")
	}
	expect(t, "unknown path", call(t, "GET", u+"/v1/no-such-thing", "", nil), 404, "NOT_FOUND")
	expect(t, "unknown method", call(t, "PUT", u+"/v1/usage", "", map[string]any{}), 405, "METHOD_NOT_ALLOWED")

	// Registration.
	reg := expect(t, "register", call(t, "POST", u+"/v1/auth/register", "", map[string]any{"email": uniqueEmail(), "name": "spec"}), 201, "")
	key := reg.data()["api_key"].(string)
	expect(t, "register invalid", call(t, "POST", u+"/v1/auth/register", "", map[string]any{"email": "nope"}), 400, "VALIDATION_ERROR")
	email := uniqueEmail()
	call(t, "POST", u+"/v1/auth/register", "", map[string]any{"email": email})
	expect(t, "register twice", call(t, "POST", u+"/v1/auth/register", "", map[string]any{"email": email}), 409, "EMAIL_ALREADY_REGISTERED")
	expect(t, "register too large", call(t, "POST", u+"/v1/auth/register", "", `{"email":"`+strings.Repeat("a", httpapi.BodyLimit)+`"}`), 413, "PAYLOAD_TOO_LARGE")

	// Account and keys, with a busy account so the rate limit stays out of the way.
	busy := registerBusy(t, s.testServer)
	now := s.Clock.Now()
	if _, err := s.Ledger.Grant(context.Background(), credits.Grant{AccountID: accountID(t, s.testServer, busy), Amount: 1000,
		IssuedAt: now, ExpiresAt: now.Add(72 * time.Hour), Source: credits.SourceOperator, SourceRef: "openapi"}); err != nil {
		t.Fatal(err)
	}
	expect(t, "usage", call(t, "GET", u+"/v1/usage", key, nil), 200, "")
	expect(t, "account", call(t, "GET", u+"/v1/account", key, nil), 200, "")
	expect(t, "keys", call(t, "GET", u+"/v1/keys", busy, nil), 200, "")
	nk := expect(t, "create key", call(t, "POST", u+"/v1/keys", busy, map[string]any{"name": "spec", "expires_in_days": 1}), 201, "")
	expiring, expiringID := nk.data()["api_key"].(string), nk.data()["id"].(string)
	nk = expect(t, "create key", call(t, "POST", u+"/v1/keys", busy, map[string]any{"name": "to revoke"}), 201, "")
	revoked := nk.data()["api_key"].(string)
	expect(t, "create key invalid", call(t, "POST", u+"/v1/keys", busy, map[string]any{"expires_in_days": 0}), 400, "VALIDATION_ERROR")
	expect(t, "create key too large", call(t, "POST", u+"/v1/keys", busy, `{"name":"`+strings.Repeat("n", httpapi.BodyLimit)+`"}`), 413, "PAYLOAD_TOO_LARGE")
	expect(t, "revoke", call(t, "DELETE", u+"/v1/keys/"+nk.data()["id"].(string), busy, nil), 200, "")
	expect(t, "revoke unknown", call(t, "DELETE", u+"/v1/keys/"+uuid.NewString(), busy, nil), 404, "NOT_FOUND")
	expect(t, "keys after", call(t, "GET", u+"/v1/keys", busy, nil), 200, "")

	// Authentication errors.
	expect(t, "no key", call(t, "GET", u+"/v1/usage", "", nil), 401, "MISSING_AUTH_HEADER")
	expect(t, "revoked key", call(t, "GET", u+"/v1/usage", revoked, nil), 401, "INVALID_API_KEY")
	expect(t, "malformed key", call(t, "POST", u+"/v1/keywords/research", "ap_nope", map[string]any{"domain": "example.com"}), 401, "INVALID_API_KEY")

	// Keyword research: synchronous, CSV, dry run, invalid, idempotent replay, reuse.
	research := map[string]any{"domain": doms[0], "topic": "coffee", "limit": 10}
	r := expect(t, "research", call(t, "POST", u+"/v1/keywords/research", busy, research), 200, "")
	jobID := r.Body["meta"].(map[string]any)["job_id"].(string)
	expect(t, "research csv", call(t, "POST", u+"/v1/keywords/research", busy, research, "Accept", "text/csv"), 200, "")
	expect(t, "research dry run", call(t, "POST", u+"/v1/keywords/research?dry_run=true", busy, research), 200, "")
	expect(t, "research invalid", call(t, "POST", u+"/v1/keywords/research", busy, map[string]any{"domain": "example.com", "country": "zz"}), 400, "VALIDATION_ERROR")
	expect(t, "research too large", call(t, "POST", u+"/v1/keywords/research", busy, `{"domain":"`+strings.Repeat("d", httpapi.BodyLimit)+`"}`), 413, "PAYLOAD_TOO_LARGE")
	idem := []string{"Idempotency-Key", "spec-" + uuid.NewString()}
	expect(t, "research keyed", call(t, "POST", u+"/v1/keywords/research", busy, research, idem...), 200, "")
	if r := expect(t, "research replay", call(t, "POST", u+"/v1/keywords/research", busy, research, idem...), 200, ""); r.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay header %v", r.Header)
	}
	expect(t, "key reused", call(t, "POST", u+"/v1/keywords/research", busy, map[string]any{"domain": doms[1], "topic": "tea"}, idem...), 422, "IDEMPOTENCY_KEY_REUSED")
	// A job that finds nothing to report: 422 NO_DATA with the job's fields, refunded.
	expect(t, "research without seeds", call(t, "POST", u+"/v1/keywords/research", busy, map[string]any{"domain": "nothing-ranks.example"}), 422, "NO_DATA")

	// Asynchronous: 202, then the job.
	r = expect(t, "research async", call(t, "POST", u+"/v1/keywords/research", busy, map[string]any{"domain": doms[1], "topic": "coffee"}, "Prefer", "respond-async"), 202, "")
	asyncID := r.data()["job_id"].(string)
	if _, err := s.Jobs.Wait(context.Background(), accountID(t, s.testServer, busy), uuid.MustParse(asyncID), 20*time.Second); err != nil {
		t.Fatal(err)
	}
	expect(t, "job", call(t, "GET", u+"/v1/jobs/"+asyncID, busy, nil), 200, "")
	expect(t, "job csv", call(t, "GET", u+"/v1/jobs/"+jobID, busy, nil, "Accept", "text/csv"), 200, "")
	expect(t, "job unknown", call(t, "GET", u+"/v1/jobs/"+uuid.NewString(), busy, nil), 404, "NOT_FOUND")
	expect(t, "job not an id", call(t, "GET", u+"/v1/jobs/nope", busy, nil), 404, "NOT_FOUND")
	expect(t, "jobs list", call(t, "GET", u+"/v1/jobs?limit=2", busy, nil), 200, "")
	expect(t, "jobs list unknown parameter", call(t, "GET", u+"/v1/jobs?before=x", busy, nil), 400, "VALIDATION_ERROR")
	// A job still queued answers 202 (no worker picks up a job of this stack's second
	// service, which enqueues nowhere).
	parked := job.NewService(testPool(t), s.Ledger, s.Clock, dropQueue{}, job.NewSignals(testenvRedis(t)), job.DefaultConfig, quietLog())
	pj, err := parked.Submit(context.Background(), job.Submission{AccountID: accountID(t, s.testServer, busy), Kind: "keywords:research",
		Endpoint: "/v1/keywords/research", Cost: 5, Request: map[string]any{"domain": "example.com", "topic": "coffee"}})
	if err != nil {
		t.Fatal(err)
	}
	expect(t, "job queued", call(t, "GET", u+"/v1/jobs/"+pj.ID.String(), busy, nil), 202, "")

	// Gaps, audit, recommend, content map.
	gaps := map[string]any{"domain": doms[0], "competitors": []string{doms[1], "www." + doms[2]}, "limit": 5}
	expect(t, "gaps", call(t, "POST", u+"/v1/keywords/gaps", busy, gaps), 200, "")
	expect(t, "gaps csv", call(t, "POST", u+"/v1/keywords/gaps", busy, gaps, "Accept", "text/csv"), 200, "")
	expect(t, "gaps invalid", call(t, "POST", u+"/v1/keywords/gaps", busy, map[string]any{"domain": doms[0]}), 400, "VALIDATION_ERROR")
	for _, path := range []string{"/v1/keywords/rankings", "/v1/keywords/competitors"} {
		expect(t, path, call(t, "POST", u+path, busy, map[string]any{"domain": doms[0], "limit": 5}), 200, "")
		expect(t, path+" csv", call(t, "POST", u+path, busy, map[string]any{"domain": doms[0]}, "Accept", "text/csv"), 200, "")
		expect(t, path+" invalid", call(t, "POST", u+path, busy, map[string]any{"domain": doms[0], "limit": 0}), 400, "VALIDATION_ERROR")
	}
	_, site := testSite(t)
	expect(t, "audit", call(t, "POST", u+"/v1/content/audit", busy, map[string]any{"domain": site, "max_pages": 20}), 200, "")
	expect(t, "audit csv", call(t, "POST", u+"/v1/content/audit", busy, map[string]any{"domain": site}, "Accept", "text/csv"), 200, "")
	expect(t, "audit invalid", call(t, "POST", u+"/v1/content/audit", busy, map[string]any{"domain": site, "max_pages": 501}), 400, "VALIDATION_ERROR")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	expect(t, "audit unreachable", call(t, "POST", u+"/v1/content/audit", busy, map[string]any{"domain": closed,
		"callback_url": receiver.URL + "/failed"}), 422, "SITE_UNREACHABLE")
	expect(t, "research with callback", call(t, "POST", u+"/v1/keywords/research", busy, map[string]any{"domain": doms[0], "topic": "coffee",
		"limit": 5, "callback_url": receiver.URL + "/succeeded"}), 200, "")
	// Both callbacks (job.failed, job.succeeded) are the documented jobFinished webhook.
	events := map[string]bool{}
	for len(events) < 2 {
		select {
		case h := <-hooks:
			events[h.header.Get("X-ContentAPI-Event")] = true
			if err := openapitest.ValidateWebhook("jobFinished", h.header, h.body); err != nil {
				t.Errorf("%v\nbody: %s", err, h.body)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("callbacks received: %v", events)
		}
	}
	if !events["job.failed"] || !events["job.succeeded"] {
		t.Fatalf("callback events %v", events)
	}
	expect(t, "recommend", call(t, "POST", u+"/v1/content/recommend", busy, map[string]any{"domain": site,
		"focus_topics": []string{"cold brew", "espresso"}, "brand_context": "Bean Lab roasts coffee.", "limit": 5}), 200, "")
	expect(t, "recommend dry run", call(t, "POST", u+"/v1/content/recommend?dry_run=1", busy, map[string]any{"domain": "example.com"}), 200, "")
	expect(t, "recommend invalid", call(t, "POST", u+"/v1/content/recommend", busy, map[string]any{"focus_topics": []string{"x"}}), 400, "VALIDATION_ERROR")
	expect(t, "content map", call(t, "POST", u+"/v1/content-map", busy, map[string]any{"domain": doms[0],
		"competitors": []string{doms[1], doms[2]}, "focus_topics": []string{"coffee"}}), 200, "")
	expect(t, "content map invalid", call(t, "POST", u+"/v1/content-map", busy, map[string]any{"domain": "example.com", "limit": 51}), 400, "VALIDATION_ERROR")
	for _, p := range []string{"/v1/jobs/" + jobID} { // a finished job of each kind answers as its call did
		expect(t, "job again", call(t, "GET", u+p, busy, nil), 200, "")
	}

	// 402: a free account without credits left.
	poor := register(t, s.testServer)
	res, err := s.Ledger.Reserve(context.Background(), accountID(t, s.testServer, poor), 48, "/test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ledger.Settle(context.Background(), res); err != nil {
		t.Fatal(err)
	}
	expect(t, "no credits", call(t, "POST", u+"/v1/keywords/research", poor, research), 402, "INSUFFICIENT_CREDITS")
	expect(t, "no credits, dry run", call(t, "POST", u+"/v1/content-map?dry_run=true", poor, map[string]any{"domain": "example.com"}), 402, "INSUFFICIENT_CREDITS")

	// 429: the free plan's 10 requests a minute, then Retry-After.
	limited := register(t, s.testServer)
	for i := 0; i < 10; i++ {
		expect(t, "within the limit", call(t, "GET", u+"/v1/account", limited, nil), 200, "")
	}
	if r := expect(t, "over the limit", call(t, "GET", u+"/v1/usage", limited, nil), 429, "RATE_LIMIT_EXCEEDED"); r.Header.Get("Retry-After") == "" {
		t.Fatalf("429 without Retry-After: %v", r.Header)
	}
	expect(t, "over the limit, analysis", call(t, "POST", u+"/v1/keywords/research", limited, research), 429, "RATE_LIMIT_EXCEEDED")

	// Billing on a deployment without it.
	expect(t, "checkout unconfigured", call(t, "POST", u+"/v1/billing/checkout", busy, checkoutBody("pro")), 503, "BILLING_NOT_CONFIGURED")
	expect(t, "unknown billing path", call(t, "GET", u+"/v1/billing/nothing", busy, nil), 404, "NOT_FOUND")

	// 403 last: it moves the clock a day on.
	s.Clock.Advance(25 * time.Hour)
	expect(t, "expired key", call(t, "GET", u+"/v1/usage", expiring, nil), 403, "EXPIRED_API_KEY")
	if r := call(t, "GET", u+"/v1/keys", busy, nil); !strings.Contains(r.Raw, `"expired"`) || !strings.Contains(r.Raw, expiringID) {
		t.Fatalf("expired key not listed as expired: %s", r.Raw)
	}
}

func testBilling(t *testing.T) {
	fake := billingtest.NewStripe(t)
	s := startServer(t, withBilling(fake.URL))
	fake.AddPromotionCode(billingtest.PromotionCode("promo_spec", "SPEC10", true, time.Time{}, map[string]any{"percent_off": 10}))
	key := register(t, s)
	u := s.URL

	expect(t, "checkout", call(t, "POST", u+"/v1/billing/checkout", key, checkoutBody("pro")), 200, "")
	expect(t, "checkout with promo", call(t, "POST", u+"/v1/billing/checkout", key, checkoutBody("scale", "billing_cycle", "annual", "promo_code", "SPEC10",
		"metadata", map[string]any{"team": "spec"})), 200, "")
	expect(t, "checkout plan", call(t, "POST", u+"/v1/billing/checkout", key, checkoutBody("free")), 400, "INVALID_PLAN")
	expect(t, "checkout url", call(t, "POST", u+"/v1/billing/checkout", key, checkoutBody("pro", "success_url", "http://a.example/x")), 400, "INVALID_URL")
	expect(t, "checkout promo", call(t, "POST", u+"/v1/billing/checkout", key, checkoutBody("pro", "promo_code", "NOPE")), 400, "PROMO_CODE_INVALID")
	expect(t, "checkout invalid", call(t, "POST", u+"/v1/billing/checkout", key, checkoutBody("pro", "billing_cycle", "weekly")), 400, "VALIDATION_ERROR")
	expect(t, "checkout no key", call(t, "POST", u+"/v1/billing/checkout", "", checkoutBody("pro")), 401, "MISSING_AUTH_HEADER")
	expect(t, "portal before checkout", call(t, "POST", u+"/v1/billing/portal", key, nil), 409, apperr.NoBillingAccount)

	id := accountID(t, s, key)
	payload := billingtest.Event("evt_"+uuid.NewString(), billing.EventCheckoutCompleted, s.Clock.Now(),
		billingtest.CheckoutSession("cs_"+uuid.NewString(), id.String(), "sub_"+uuid.NewString(), "cus_"+uuid.NewString(), "pro", "monthly"))
	expect(t, "webhook unsigned", call(t, "POST", u+"/v1/billing/webhook", "", payload, "Stripe-Signature", "t=1,v1=00"), 400, "VALIDATION_ERROR")
	expect(t, "webhook", call(t, "POST", u+"/v1/billing/webhook", "", payload, "Stripe-Signature", billingtest.Sign(payload, billingtest.WebhookSecret)), 200, "")

	expect(t, "portal", call(t, "POST", u+"/v1/billing/portal", key, map[string]any{"return_url": "https://app.example.com/settings"}), 200, "")
	expect(t, "portal bad url", call(t, "POST", u+"/v1/billing/portal", key, map[string]any{"return_url": "javascript:alert(1)"}), 400, "INVALID_URL")
	expect(t, "already subscribed", call(t, "POST", u+"/v1/billing/checkout", key, checkoutBody("pro")), 409, "ALREADY_SUBSCRIBED")
	expect(t, "account with paid plan", call(t, "GET", u+"/v1/account", key, nil), 200, "")
}

// A job whose provider fails answers 502 in the documented shape.
func testJobFailures(t *testing.T) {
	f := newFakeDataForSEO(t)
	s := dataForSEOStack(t, f, stackConfig{})
	key := register(t, s.testServer)
	f.setFail("error_40100")
	expect(t, "provider refused", call(t, "POST", s.URL+"/v1/keywords/research", key, map[string]any{"domain": "example.com", "topic": "coffee"}), 502, "PROVIDER_ERROR")
}

// TestOpenAPI checks the document, the reference page and that every route is documented,
// then calls every operation (successes and main errors) validating each answer against the
// document, and finally that every documented operation answered a success.
func TestOpenAPI(t *testing.T) {
	ran := map[string]bool{}
	for _, st := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"DocumentAndDocs", testDocumentAndDocs},
		{"RoutesDocumented", testRoutesDocumented},
		{"EveryEndpoint", testEveryEndpoint},
		{"Billing", testBilling},
		{"JobFailures", testJobFailures},
	} {
		t.Run(st.name, func(t *testing.T) {
			ran[st.name] = true
			st.fn(t)
		})
	}
	if len(ran) < 5 || t.Failed() {
		return // coverage is judged on a full, passing run
	}
	var doc specDoc
	if err := json.Unmarshal(openapi.JSON(""), &doc); err != nil {
		t.Fatal(err)
	}
	for _, op := range doc.operations() {
		ok := false
		for s := range specCoverage.statuses(op) {
			if s >= 200 && s < 300 {
				ok = true
			}
		}
		if !ok {
			t.Errorf("%s: no test received a success from it", op)
		}
	}
}
