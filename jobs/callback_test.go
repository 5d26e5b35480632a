package jobs

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/crawler"
	"github.com/contentapi/contentapi/internal/job"
)

// TestCallbackDoesNotFollowRedirects: a receiver answering 3xx is a failed delivery; the
// signed body is never POSTed to where the redirect points, whatever the status.
func TestCallbackDoesNotFollowRedirects(t *testing.T) {
	var hooks, elsewhere atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/elsewhere":
			elsewhere.Add(1)
			w.WriteHeader(http.StatusNoContent)
		case "/ok":
			hooks.Add(1)
			w.WriteHeader(http.StatusNoContent)
		default:
			hooks.Add(1)
			code, _ := strings.CutPrefix(r.URL.Path, "/redirect/")
			w.Header().Set("Location", "/elsewhere")
			w.WriteHeader(map[string]int{"301": 301, "302": 302, "303": 303, "307": 307, "308": 308}[code])
		}
	}))
	t.Cleanup(srv.Close)
	// The crawler's client, as production uses, follows redirects by itself.
	c := &Callbacks{Client: crawler.New(crawler.Config{AllowPrivate: true}).HTTPClient()}
	j := job.Job{ID: uuid.New(), Status: job.Succeeded}
	for _, code := range []string{"301", "302", "303", "307", "308"} {
		err := c.post(context.Background(), srv.URL+"/redirect/"+code, j, []byte(`{}`), "secret")
		if err == nil || !strings.Contains(err.Error(), "status "+code+": redirects are not followed") {
			t.Errorf("%s: err = %v, want a failed delivery", code, err)
		}
	}
	if n := elsewhere.Load(); n != 0 {
		t.Fatalf("the redirect target was called %d times", n)
	}
	if err := c.post(context.Background(), srv.URL+"/ok", j, []byte(`{}`), "secret"); err != nil {
		t.Fatalf("2xx: %v", err)
	}
	if n := hooks.Load(); n != 6 {
		t.Fatalf("%d deliveries reached the receiver, want 6", n)
	}
}
