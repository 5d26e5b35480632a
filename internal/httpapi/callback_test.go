package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/crawler"
	"github.com/contentapi/contentapi/jobs"
)

type delivery struct {
	body      []byte
	signature string
	event     string
}

// callbackReceiver answers 500 to the first failures deliveries, then 200, and hands every
// successful delivery to the test.
func callbackReceiver(t *testing.T, failures int) (*httptest.Server, <-chan delivery, func() int) {
	var mu sync.Mutex
	attempts := 0
	got := make(chan delivery, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		attempts++
		n := attempts
		mu.Unlock()
		if n <= failures {
			http.Error(w, "not now", http.StatusInternalServerError)
			return
		}
		got <- delivery{body: body, signature: r.Header.Get(jobs.SignatureHeader), event: r.Header.Get("X-ContentAPI-Event")}
	}))
	t.Cleanup(srv.Close)
	return srv, got, func() int { mu.Lock(); defer mu.Unlock(); return attempts }
}

func TestJobCallbackSignedAndRetried(t *testing.T) {
	s := startStack(t, stackConfig{callbackClient: crawler.New(crawler.Config{AllowPrivate: true}).HTTPClient()})
	key := registerBusy(t, s.testServer)
	srv, got, attempts := callbackReceiver(t, 2)
	r := do(t, "POST", s.URL+"/v1/keywords/research", key, map[string]any{"domain": sampleDomains(t)[0], "topic": "coffee",
		"callback_url": srv.URL + "/hooks/contentapi"}, "Prefer", "respond-async")
	if r.Status != 202 {
		t.Fatalf("submit: %d %s", r.Status, r.Raw)
	}
	id := r.data()["job_id"].(string)
	var d delivery
	select {
	case d = <-got:
	case <-time.After(30 * time.Second):
		t.Fatalf("no callback delivered after %d attempts", attempts())
	}
	secret := do(t, "GET", s.URL+"/v1/account", key, nil).data()["callbacks"].(map[string]any)["signing_secret"].(string)
	if d.signature != jobs.Sign(secret, d.body) || d.event != "job.succeeded" {
		t.Fatalf("signature %q event %q do not verify", d.signature, d.event)
	}
	if jobs.Sign("another secret", d.body) == d.signature {
		t.Fatal("signature does not depend on the secret")
	}
	var body map[string]any
	if err := json.Unmarshal(d.body, &body); err != nil {
		t.Fatal(err)
	}
	if body["job_id"] != id || body["success"] != true || body["data"].(map[string]any)["clusters"] == nil ||
		body["meta"].(map[string]any)["credits_used"] != float64(5) || body["meta"].(map[string]any)["data_source"] != "synthetic" {
		t.Fatalf("callback body %s", d.body)
	}
	cb := waitCallback(t, s, id, "delivered")
	if cb.Attempts != 3 || attempts() != 3 {
		t.Fatalf("attempts recorded %d, made %d; want 3", cb.Attempts, attempts())
	}
}

func TestCallbackToPrivateAddressRefusedAtDelivery(t *testing.T) {
	// Validation lets a loopback URL through (local-test settings); the delivery client has
	// the production address rules and must refuse it when connecting.
	s := startStack(t, stackConfig{callbackClient: crawler.New(crawler.Config{}).HTTPClient()})
	key := registerBusy(t, s.testServer)
	srv, _, attempts := callbackReceiver(t, 0)
	r := do(t, "POST", s.URL+"/v1/keywords/research", key, map[string]any{"domain": sampleDomains(t)[0], "topic": "coffee",
		"callback_url": srv.URL + "/hook"})
	if r.Status != 200 {
		t.Fatalf("the job itself must not depend on its callback: %d %s", r.Status, r.Raw)
	}
	cb := waitCallback(t, s, r.Body["meta"].(map[string]any)["job_id"].(string), "failed")
	if cb.Attempts != 1 || attempts() != 0 || cb.Error == "" {
		t.Fatalf("callback %+v, receiver saw %d requests", cb, attempts())
	}
	if b := s.balanceOf(t, key); b != 45 {
		t.Fatalf("balance %d", b)
	}
}

// waitCallback polls the job row until its callback reaches status; delivery happens in the
// worker after the job, so the test has nothing else to wait on.
func waitCallback(t *testing.T, s *stack, id, status string) (cb struct {
	Attempts int
	Error    string
}) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		c, err := s.Jobs.CallbackOf(context.Background(), uuid.MustParse(id))
		if err != nil {
			t.Fatal(err)
		}
		if c.Status == status {
			cb.Attempts, cb.Error = c.Attempts, c.Error
			return cb
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("callback of %s never reached %s", id, status)
	return cb
}
