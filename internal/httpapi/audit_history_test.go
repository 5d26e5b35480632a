package httpapi_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"
)

// changingSite is a three-page site listed by its sitemap whose pages change between
// audits: fixed makes /a's title appear and /b link to /gone (a 404) and have a description.
type changingSite struct {
	mu    sync.Mutex
	fixed bool
}

func (c *changingSite) set(fixed bool) { c.mu.Lock(); c.fixed = fixed; c.mu.Unlock() }

func (c *changingSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	fixed := c.fixed
	c.mu.Unlock()
	page := func(title, description, links string) {
		if description != "" {
			description = `<meta name="description" content="` + description + `">`
		}
		fmt.Fprintf(w, `<html><head><title>%s</title>%s</head><body><h1>Coffee %s</h1>%s<p>Beans.</p></body></html>`,
			title, description, r.URL.Path, links)
	}
	switch r.URL.Path {
	case "/sitemap.xml":
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprint(w, `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		for _, p := range []string{"/", "/a", "/b"} {
			fmt.Fprintf(w, "<url><loc>http://%s%s</loc></url>", r.Host, p)
		}
		fmt.Fprint(w, `</urlset>`)
	case "/":
		page("Home", "The home page.", `<a href="/a">A</a> <a href="/b">B</a>`)
	case "/a":
		if fixed {
			page("Page A", "", "")
		} else {
			page("", "", "")
		}
	case "/b":
		if fixed {
			page("Page B", "About B.", `<a href="/gone">gone</a>`)
		} else {
			page("Page B", "", "")
		}
	default:
		http.NotFound(w, r)
	}
}

// An audit says what changed since the same account's previous audit of the domain: the
// title fixed on /a, the broken link that appeared on /b, the description added to /b. The
// answer is stored: polling the job or replaying the request says the same. Another account's audit of the same
// domain is not compared with the first account's, and once the jobs are purged their
// snapshots go with them: the next audit is a first one again.
func TestAuditChangesSincePreviousAudit(t *testing.T) {
	site := &changingSite{}
	srv := httptest.NewServer(site)
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	domain := "127.0.0.1:" + port
	base := "http://" + domain

	s := startStack(t, stackConfig{})
	key, other := register(t, s.testServer), register(t, s.testServer)
	audit := func(key string, headers ...string) response {
		t.Helper()
		s.Clock.Advance(time.Minute) // audits finish in order
		r := do(t, "POST", s.URL+"/v1/content/audit", key, map[string]any{"domain": domain, "max_pages": 20}, headers...)
		if r.Status != 200 {
			t.Fatalf("audit: %d %s", r.Status, r.Raw)
		}
		return r
	}
	jobID := func(r response) string { return r.Body["meta"].(map[string]any)["job_id"].(string) }

	first := audit(key)
	if c, ok := first.data()["changes"]; !ok || c != nil {
		t.Fatalf("first audit: changes = %v (present %v), want null", c, ok)
	}
	site.set(true)
	second := audit(key, "Idempotency-Key", "history-second")
	c, _ := second.data()["changes"].(map[string]any)
	if c == nil {
		t.Fatalf("second audit: no changes: %s", second.Raw)
	}
	if c["previous_job_id"] != jobID(first) {
		t.Errorf("previous_job_id %v, want the first audit's job %s", c["previous_job_id"], jobID(first))
	}
	if !contains(c["fixed"], "missing_title") || !contains(c["new"], "broken_internal_link") || contains(c["new"], "missing_title") {
		t.Errorf("fixed %v, new %v: want missing_title fixed and broken_internal_link new", c["fixed"], c["new"])
	}
	wantShrunk := map[string]any{"type": "missing_meta_description", "from": float64(2), "to": float64(1)}
	if !slices.ContainsFunc(c["shrunk"].([]any), func(x any) bool { return reflect.DeepEqual(x, wantShrunk) }) {
		t.Errorf("shrunk %v, want %v", c["shrunk"], wantShrunk)
	}
	appeared, disappeared := c["urls_appeared"].(map[string]any), c["urls_disappeared"].(map[string]any)
	if !reflect.DeepEqual(appeared["broken_internal_link"], []any{base + "/gone"}) {
		t.Errorf("urls_appeared %v, want broken_internal_link: [%s/gone]", appeared, base)
	}
	if !reflect.DeepEqual(disappeared["missing_title"], []any{base + "/a"}) ||
		!reflect.DeepEqual(disappeared["missing_meta_description"], []any{base + "/b"}) {
		t.Errorf("urls_disappeared %v, want missing_title [/a] and missing_meta_description [/b]", disappeared)
	}
	if polled := do(t, "GET", s.URL+"/v1/jobs/"+jobID(second), key, nil); polled.Status != 200 ||
		!reflect.DeepEqual(polled.data()["changes"], second.data()["changes"]) {
		t.Errorf("polled job: %d, changes %v, want the answer's %v", polled.Status, polled.data()["changes"], c)
	}
	if replay := audit(key, "Idempotency-Key", "history-second"); jobID(replay) != jobID(second) ||
		!reflect.DeepEqual(replay.data()["changes"], second.data()["changes"]) {
		t.Errorf("replayed audit: job %s, changes %v, want the stored answer's (job %s)", jobID(replay), replay.data()["changes"], jobID(second))
	}

	if o := audit(other); o.data()["changes"] != nil {
		t.Errorf("another account's first audit of the domain: changes %v, want null", o.data()["changes"])
	}
	s.Clock.Advance(48 * time.Hour)
	if _, err := s.Jobs.Purge(context.Background(), 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	var kept int
	if err := s.Graph.Pool.QueryRow(context.Background(), `SELECT count(*) FROM audit_snapshots WHERE domain = $1`, domain).Scan(&kept); err != nil || kept != 0 {
		t.Fatalf("after the purge %d snapshots of %s are left (%v), want 0", kept, domain, err)
	}
	if r := audit(key); r.data()["changes"] != nil { // the account's third audit: 45 of its 50 credits
		t.Errorf("audit after the purge: changes %v, want null (the earlier audits are gone)", r.data()["changes"])
	}
}

// contains reports whether a decoded JSON array holds s.
func contains(list any, s string) bool {
	l, _ := list.([]any)
	return slices.Contains(l, any(s))
}
