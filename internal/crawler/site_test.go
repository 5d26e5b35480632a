package crawler

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// testSite is a web site on a local httptest server that records which paths were asked for.
type testSite struct {
	*httptest.Server
	mux  *http.ServeMux
	mu   sync.Mutex
	hits map[string][]time.Time
}

func newTestSite(t testing.TB) *testSite {
	t.Helper()
	s := &testSite{mux: http.NewServeMux(), hits: make(map[string][]time.Time)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path] = append(s.hits[r.URL.Path], time.Now())
		s.mu.Unlock()
		s.mux.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// domain is the site's host:port, as Request.Domain takes it.
func (s *testSite) domain() string { return strings.TrimPrefix(s.URL, "http://") }

func (s *testSite) hitTimes(path string) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

func (s *testSite) page(path, body string) {
	s.mux.HandleFunc(path, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, body)
	})
}

func (s *testSite) serve(path, contentType string, body []byte, headers ...string) {
	s.mux.HandleFunc(path, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		_, _ = w.Write(body)
	})
}

func (s *testSite) redirect(path, to string, code int) {
	s.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, to, code)
	})
}

// robots serves robots.txt; {base} in text becomes the site's URL.
func (s *testSite) robots(text string) {
	s.serve("/robots.txt", "text/plain", []byte(strings.ReplaceAll(text, "{base}", s.URL)))
}

// urlset renders a sitemap of locs; {base} becomes the site's URL.
func (s *testSite) urlset(locs ...string) []byte {
	return s.sitemapXML("urlset", "url", locs)
}

func (s *testSite) index(locs ...string) []byte {
	return s.sitemapXML("sitemapindex", "sitemap", locs)
}

func (s *testSite) sitemapXML(root, entry string, locs []string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<%s xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`+"\n", root)
	for _, loc := range locs {
		fmt.Fprintf(&b, "  <%s><loc>%s</loc></%s>\n", entry, strings.ReplaceAll(loc, "{base}", s.URL), entry)
	}
	fmt.Fprintf(&b, "</%s>\n", root)
	return []byte(b.String())
}

// htmlPage builds a small document.
func htmlPage(title, body string) string {
	return "<!doctype html><html><head><title>" + title + "</title></head><body>" + body + "</body></html>"
}

func words(n int) string {
	return strings.TrimSpace(strings.Repeat("lorem ", n))
}

// testCrawler allows loopback (the test servers) and, through the address-check hook,
// nothing else private: redirects to 10.x or metadata addresses are still refused.
func testCrawler(cfg Config) *Crawler {
	cfg.AllowPrivate = true
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = 5 * time.Second
	}
	c := New(cfg)
	c.checkAddr = func(a netip.Addr) error {
		if a.Unmap().IsLoopback() {
			return nil
		}
		return forbiddenAddr(a)
	}
	return c
}

// pathOf is a URL's path and query, the key tests look pages up by.
func pathOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.RequestURI()
}

func pagesByPath(res *Result) map[string]Page {
	m := make(map[string]Page, len(res.Pages))
	for _, p := range res.Pages {
		m[pathOf(p.URL)] = p
	}
	return m
}

func pagePaths(res *Result) []string {
	var out []string
	for _, p := range res.Pages {
		out = append(out, pathOf(p.URL))
	}
	return out
}

func hasWarning(res *Result, substr string) bool {
	for _, w := range res.Warnings {
		if strings.Contains(w, substr) {
			return true
		}
	}
	return false
}
