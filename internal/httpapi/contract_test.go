package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/billing/billingtest"
)

// allowed reads an Allow header as a sorted list of methods.
func allowed(h http.Header) string {
	var methods []string
	for _, v := range h.Values("Allow") {
		for _, m := range strings.Split(v, ",") {
			if m = strings.TrimSpace(m); m != "" {
				methods = append(methods, m)
			}
		}
	}
	sort.Strings(methods)
	return strings.Join(methods, " ")
}

// A path called with a method it does not take answers 405 METHOD_NOT_ALLOWED with an Allow
// header naming the methods it takes, before the key is looked at (paths with parameters
// too; the billing shape under /v1/billing, as its 404). A path no route takes stays 404.
func TestWrongMethodAnswers405WithAllow(t *testing.T) {
	s := startServer(t)
	key := register(t, s)
	for _, c := range []struct {
		method, path, allow string
	}{
		{"PUT", "/v1/usage", "GET HEAD"},
		{"POST", "/v1/jobs/" + uuid.NewString(), "GET HEAD"},
		{"DELETE", "/v1/jobs/not-an-id", "GET HEAD"},
		{"GET", "/v1/keys/" + uuid.NewString(), "DELETE"},
		{"PATCH", "/v1/keys", "GET HEAD POST"},
		{"GET", "/v1/keywords/research", "POST"},
		{"DELETE", "/v1/content-map", "POST"},
		{"GET", "/v1/auth/register", "POST"},
		{"POST", "/v1/jobs", "GET HEAD"},
	} {
		for _, k := range []string{key, ""} {
			r := do(t, c.method, s.URL+c.path, k, nil)
			e, _ := r.Body["error"].(map[string]any)
			if r.Status != 405 || r.Body["success"] != false || e["code"] != "METHOD_NOT_ALLOWED" || e["message"] == "" {
				t.Errorf("%s %s: %d %s, want 405 METHOD_NOT_ALLOWED in the validation shape", c.method, c.path, r.Status, r.Raw)
			}
			if got := allowed(r.Header); got != c.allow {
				t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, got, c.allow)
			}
		}
	}
	r := do(t, "GET", s.URL+"/v1/billing/checkout", key, nil)
	if r.Status != 405 || r.Body["status"] != "error" || r.Body["code"] != "METHOD_NOT_ALLOWED" || allowed(r.Header) != "POST" {
		t.Errorf("GET /v1/billing/checkout: %d Allow %q %s, want 405 in the billing shape with Allow: POST", r.Status, r.Header.Get("Allow"), r.Raw)
	}
	for _, p := range []string{"/v1/nothing", "/v1/jobs/" + uuid.NewString() + "/more", "/v2/usage"} {
		for _, m := range []string{"GET", "POST", "DELETE"} {
			if r := do(t, m, s.URL+p, key, nil); r.Status != 404 || r.errCode() != "NOT_FOUND" || r.Header.Get("Allow") != "" {
				t.Errorf("%s %s: %d Allow %q %s, want 404 NOT_FOUND", m, p, r.Status, r.Header.Get("Allow"), r.Raw)
			}
		}
	}
}

// postWithoutContentType sends body with no Content-Type header at all (do() always sets
// one) and validates the answer against the document as do() does.
func postWithoutContentType(t *testing.T, url, key string, body []byte) response {
	t.Helper()
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	return send(t, req)
}

// credits reads the account's balance.
func balanceOf(t *testing.T, s *testServer, key string) float64 {
	t.Helper()
	r := do(t, "GET", s.URL+"/v1/usage", key, nil)
	if r.Status != 200 {
		t.Fatalf("usage: %d %s", r.Status, r.Raw)
	}
	return r.data()["credits_remaining"].(float64)
}

// A body that is not declared JSON (text, XML, a form, or no Content-Type) on a JSON
// endpoint is 415 UNSUPPORTED_MEDIA_TYPE in the validation shape (under /v1/billing too)
// and charges nothing; application/json and application/*+json, with charset utf-8 or
// none, are accepted. An empty body is judged by the endpoint: POST /v1/keys and the
// billing portal, whose fields are all optional, read it as {}.
func TestNonJSONBodyAnswers415(t *testing.T) {
	fake := billingtest.NewStripe(t)
	s := startStack(t, stackConfig{configure: withBilling(fake.URL)})
	key := registerBusy(t, s.testServer)
	dom := sampleDomains(t)[0]
	research := map[string]any{"domain": dom, "topic": "coffee", "limit": 5}
	endpoints := []struct {
		path string
		body any
	}{
		{"/v1/auth/register", map[string]any{"email": uniqueEmail()}},
		{"/v1/keys", map[string]any{"name": "ci"}},
		{"/v1/keywords/research", research},
		{"/v1/keywords/gaps", map[string]any{"domain": dom, "competitors": []string{sampleDomains(t)[1]}}},
		{"/v1/content-map", map[string]any{"domain": dom}},
		{"/v1/billing/checkout", checkoutBody("pro")},
		{"/v1/billing/portal", map[string]any{"return_url": "https://app.example.com/back"}},
	}
	before := balanceOf(t, s.testServer, key)
	refused := func(what string, r response) {
		t.Helper()
		e, _ := r.Body["error"].(map[string]any)
		if r.Status != 415 || r.Body["success"] != false || e["code"] != "UNSUPPORTED_MEDIA_TYPE" || e["message"] == "" {
			t.Errorf("%s: %d %s, want 415 UNSUPPORTED_MEDIA_TYPE in the validation shape", what, r.Status, r.Raw)
		}
	}
	for _, ep := range endpoints {
		body, _ := json.Marshal(ep.body)
		for _, ct := range []string{"text/plain", "text/plain; charset=utf-8", "application/xml", "application/x-www-form-urlencoded",
			"multipart/form-data; boundary=x", "application/json; charset=iso-8859-1", "application/jsonx", "json", "application/"} {
			refused(ep.path+" as "+ct, do(t, "POST", s.URL+ep.path, key, body, "Content-Type", ct))
		}
		refused(ep.path+" without Content-Type", postWithoutContentType(t, s.URL+ep.path, key, body))
	}
	if after := balanceOf(t, s.testServer, key); after != before {
		t.Fatalf("balance %v after refused calls, was %v", after, before)
	}

	// JSON in its spellings is accepted (and the research call is charged).
	for i, ct := range []string{"application/json", "Application/JSON; charset=UTF-8", "application/json;charset=utf8", "application/vnd.contentapi+json"} {
		r := do(t, "POST", s.URL+"/v1/keys", key, map[string]any{"name": "k" + ct}, "Content-Type", ct)
		if r.Status != 201 {
			t.Errorf("keys as %s: %d %s", ct, r.Status, r.Raw)
		}
		if i == 0 {
			if r := do(t, "POST", s.URL+"/v1/keywords/research", key, research, "Content-Type", ct); r.Status != 200 {
				t.Fatalf("research as %s: %d %s", ct, r.Status, r.Raw)
			}
			if after := balanceOf(t, s.testServer, key); after != before-5 {
				t.Fatalf("balance %v after one research, want %v", after, before-5)
			}
		}
	}

	// An empty body: {} where every field is optional, else the missing field is named.
	for _, ct := range []string{"", "text/plain"} {
		var r response
		if ct == "" {
			r = postWithoutContentType(t, s.URL+"/v1/keys", key, nil)
		} else {
			r = do(t, "POST", s.URL+"/v1/keys", key, "", "Content-Type", ct)
		}
		if r.Status != 201 || r.data()["name"] != "Default" {
			t.Errorf("keys with an empty body (Content-Type %q): %d %s, want 201 with the default name", ct, r.Status, r.Raw)
		}
	}
	if r := postWithoutContentType(t, s.URL+"/v1/keywords/research", key, nil); r.Status != 400 || r.errCode() != "VALIDATION_ERROR" {
		t.Errorf("research with no body: %d %s, want 400 VALIDATION_ERROR", r.Status, r.Raw)
	}

	// The payment webhook is judged by its Stripe signature, not its Content-Type (Stripe
	// sends application/json; charset=utf-8): a bad signature is the 400 either way.
	for _, ct := range []string{"application/json; charset=utf-8", "text/plain"} {
		r := do(t, "POST", s.URL+"/v1/billing/webhook", "", `{"id":"evt_x"}`, "Content-Type", ct, "Stripe-Signature", "t=1,v1=00")
		if r.Status != 400 || r.errCode() != "VALIDATION_ERROR" {
			t.Errorf("webhook as %s with a bad signature: %d %s, want 400 VALIDATION_ERROR", ct, r.Status, r.Raw)
		}
	}
}

// An Idempotency-Key header sent empty (or blank, or twice) is a 400 VALIDATION_ERROR naming
// the header, dry run included: the call is not run without a key and charges nothing.
func TestEmptyIdempotencyKeyRefused(t *testing.T) {
	s := startStack(t, stackConfig{})
	key := register(t, s.testServer)
	before := balanceOf(t, s.testServer, key)
	body := map[string]any{"domain": sampleDomains(t)[0], "topic": "coffee", "limit": 5}
	for _, path := range []string{"/v1/keywords/research", "/v1/keywords/research?dry_run=true"} {
		for _, v := range []string{"", "   "} {
			r := do(t, "POST", s.URL+path, key, body, "Idempotency-Key", v)
			e, _ := r.Body["error"].(map[string]any)
			msg, _ := e["message"].(string)
			if r.Status != 400 || e["code"] != "VALIDATION_ERROR" || !strings.Contains(msg, "Idempotency-Key") {
				t.Errorf("%s with Idempotency-Key %q: %d %s, want 400 VALIDATION_ERROR naming the header", path, v, r.Status, r.Raw)
			}
		}
	}
	req, _ := json.Marshal(body)
	twice, _ := http.NewRequest("POST", s.URL+"/v1/keywords/research", bytes.NewReader(req))
	twice.Header.Set("Authorization", "Bearer "+key)
	twice.Header.Set("Content-Type", "application/json")
	twice.Header["Idempotency-Key"] = []string{"a-1", "a-2"}
	res, err := http.DefaultClient.Do(twice)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 400 {
		t.Errorf("two Idempotency-Key headers: %d, want 400", res.StatusCode)
	}
	if after := balanceOf(t, s.testServer, key); after != before {
		t.Fatalf("balance %v after refused calls, was %v", after, before)
	}
	// Without the header the same call runs and is charged.
	if r := do(t, "POST", s.URL+"/v1/keywords/research", key, body); r.Status != 200 {
		t.Fatalf("research without a key: %d %s", r.Status, r.Raw)
	}
	if after := balanceOf(t, s.testServer, key); after != before-5 {
		t.Fatalf("balance %v after one research, want %v", after, before-5)
	}
}

// GET /v1/jobs/{id} says the job's status in every state, beside its id: data.status while
// it runs, meta.status once it succeeded (the synchronous answer carries it too, and is
// otherwise the same body).
func TestJobStatusInEveryState(t *testing.T) {
	s := startStack(t, stackConfig{})
	key := register(t, s.testServer)
	body := map[string]any{"domain": sampleDomains(t)[0], "topic": "coffee", "limit": 5}
	sync := do(t, "POST", s.URL+"/v1/keywords/research", key, body)
	meta, _ := sync.Body["meta"].(map[string]any)
	if sync.Status != 200 || meta["status"] != "succeeded" {
		t.Fatalf("research: %d meta %v, want 200 with meta.status succeeded", sync.Status, meta)
	}
	id, _ := meta["job_id"].(string)
	got := do(t, "GET", s.URL+"/v1/jobs/"+id, key, nil)
	gotMeta, _ := got.Body["meta"].(map[string]any)
	if got.Status != 200 || gotMeta["status"] != "succeeded" || gotMeta["job_id"] != id {
		t.Fatalf("finished job: %d meta %v, want 200 with meta.status succeeded", got.Status, gotMeta)
	}
	syncData, _ := json.Marshal(sync.Body["data"])
	gotData, _ := json.Marshal(got.Body["data"])
	delete(meta, "request_id")
	delete(gotMeta, "request_id")
	syncMeta, _ := json.Marshal(meta)
	jobMeta, _ := json.Marshal(gotMeta)
	if !bytes.Equal(syncData, gotData) || !bytes.Equal(syncMeta, jobMeta) {
		t.Fatalf("the job's answer differs from the synchronous one:\n%s %s\n%s %s", syncData, syncMeta, gotData, jobMeta)
	}
}

// A job no worker has taken yet carries data.status queued, on the 202 and on GET alike. (A
// test of its own: a worker started by another test of this package would take the job.)
func TestQueuedJobCarriesStatus(t *testing.T) {
	held := startStack(t, stackConfig{noWorker: true})
	key := register(t, held.testServer)
	body := map[string]any{"domain": sampleDomains(t)[0], "topic": "coffee", "limit": 5}
	r := do(t, "POST", held.URL+"/v1/keywords/research", key, body, "Prefer", "respond-async")
	if r.Status != 202 || r.data()["status"] != "queued" {
		t.Fatalf("async: %d %s, want 202 with data.status queued", r.Status, r.Raw)
	}
	if r := do(t, "GET", held.URL+"/v1/jobs/"+r.data()["job_id"].(string), key, nil); r.Status != 202 || r.data()["status"] != "queued" {
		t.Fatalf("queued job: %d %s, want 202 with data.status queued", r.Status, r.Raw)
	}
}
