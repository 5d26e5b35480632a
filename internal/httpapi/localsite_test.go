package httpapi_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/contentapi/contentapi/internal/crawler"
	"github.com/contentapi/contentapi/internal/httpapi"
)

// localSite serves three pages and a sitemap at /maps/site.xml (a path the crawler never
// guesses, so only sitemap_url finds it) listing them on whatever host the sitemap was asked
// for, as a site served at shop.localhost:PORT lists its own name. The home page links to
// nothing: the other two pages are crawled only through the sitemap.
func localSite(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/maps/site.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprint(w, `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		for _, p := range []string{"/", "/beans", "/grinders"} {
			fmt.Fprintf(w, "<url><loc>http://%s%s</loc></url>", r.Host, p)
		}
		fmt.Fprint(w, `</urlset>`)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/", "/beans", "/grinders":
			fmt.Fprintf(w, `<html><head><title>Local %s</title></head><body><h1>Local %s</h1><p>Coffee.</p></body></html>`, r.URL.Path, r.URL.Path)
		default:
			http.NotFound(w, r)
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// With CRAWLER_ALLOW_PRIVATE a developer audits a site running on their machine, named
// 127.0.0.1:PORT, localhost:PORT or name.localhost:PORT, with a sitemap on the same host and
// port; without it each of these is refused before anything is charged.
func TestAuditOfLocalSite(t *testing.T) {
	port := localSite(t)
	cases := []struct{ name, domain string }{
		{"loopback address", "127.0.0.1:" + port},
		{"localhost", "localhost:" + port},
		{"name under localhost", "shop.localhost:" + port},
	}
	body := func(domain string) map[string]any {
		return map[string]any{"domain": domain, "sitemap_url": "http://" + domain + "/maps/site.xml", "max_pages": 10}
	}

	s := startStack(t, stackConfig{}) // AllowPrivate, as CRAWLER_ALLOW_PRIVATE=true sets it
	key := register(t, s.testServer)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := do(t, "POST", s.URL+"/v1/content/audit", key, body(c.domain))
			if r.Status != 200 {
				t.Fatalf("audit of %s: %d %s", c.domain, r.Status, r.Raw)
			}
			d := r.data()
			if d["domain"] != c.domain {
				t.Errorf("domain %v, want %s", d["domain"], c.domain)
			}
			if sm := d["sitemaps"].([]any); len(sm) != 1 || sm[0] != "http://"+c.domain+"/maps/site.xml" {
				t.Errorf("sitemaps %v, want the one given", sm)
			}
			pages := d["pages"].([]any)
			if len(pages) != 3 {
				t.Fatalf("%d pages crawled, want the sitemap's 3: %s", len(pages), r.Raw)
			}
			for _, p := range pages {
				if u := p.(map[string]any)["url"].(string); !strings.HasPrefix(u, "http://"+c.domain+"/") {
					t.Errorf("page %s is not on %s", u, c.domain)
				}
			}
		})
	}

	strict := startServer(t, func(d *httpapi.Deps) { // the defaults: CRAWLER_ALLOW_PRIVATE unset
		d.Jobs = s.Jobs
		d.Hosts = crawler.New(crawler.Config{})
	})
	strictKey := register(t, strict)
	for _, c := range cases {
		r := do(t, "POST", strict.URL+"/v1/content/audit", strictKey, body(c.domain))
		if r.Status != 400 || r.errCode() != "VALIDATION_ERROR" {
			t.Errorf("without CRAWLER_ALLOW_PRIVATE, audit of %s: %d %s, want 400 VALIDATION_ERROR", c.domain, r.Status, r.Raw)
		}
	}
	if b, _ := strict.Ledger.Balance(t.Context(), accountID(t, strict, strictKey)); b != 50 {
		t.Fatalf("balance %d: a refused local site was charged", b)
	}
}
