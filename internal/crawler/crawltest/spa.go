// Package crawltest serves sites for crawler tests in other packages: a single-page app
// whose navigation, titles and text exist only once its JavaScript has run.
package crawltest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// SPARoutes are the app's pages, by path; every one serves the same HTML shell.
var SPARoutes = map[string]string{
	"/":                "Home",
	"/about":           "About us",
	"/pricing":         "Pricing",
	"/blog":            "Blog",
	"/blog/first-post": "First post",
}

// SPABrokenRoute is the page whose script throws once it has drawn the page.
const SPABrokenRoute = "/blog/first-post"

// spaShell is the HTML every route serves: no links, no text, a placeholder title.
const spaShell = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Loading</title>
<script src="/app.js" defer></script></head>
<body><div id="app"></div><img src="/logo.png" alt="logo"><noscript>Turn on JavaScript</noscript></body></html>`

// spaScript draws the route's page from /api/page (an asynchronous request, as single-page
// apps do): title, navigation to every route, an h1 and the text.
const spaScript = `
fetch("/api/page?path=" + encodeURIComponent(location.pathname))
  .then(r => r.json())
  .then(p => {
    document.title = p.title + " | SPA";
    const nav = p.routes.map(r => '<a href="' + r + '">' + r + '</a>').join(" ");
    document.getElementById("app").innerHTML =
      "<nav>" + nav + "</nav><main><h1>" + p.title + "</h1><p>" + p.text + "</p></main>";
    if (p.broken) { console.error("widget failed to load"); throw new Error("boom on " + location.pathname); }
  });
`

// SPA is a running single-page app that counts the requests for each path.
type SPA struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

// NewSPA starts the app of SPARoutes; the test's end stops it.
func NewSPA(t testing.TB) *SPA { return newSPA(t, SPARoutes, len(SPARoutes)) }

// NewLargeSPA starts an app of n routes (/, /p/1 … /p/n-1), each linking to the next five,
// for benchmarks.
func NewLargeSPA(t testing.TB, n int) *SPA {
	routes := map[string]string{"/": "Home"}
	for i := 1; i < n; i++ {
		routes[fmt.Sprintf("/p/%d", i)] = fmt.Sprintf("Page %d", i)
	}
	return newSPA(t, routes, 5)
}

func newSPA(t testing.TB, titles map[string]string, links int) *SPA {
	t.Helper()
	s := &SPA{hits: map[string]int{}}
	var order []string
	for r := range titles {
		order = append(order, r)
	}
	slices.Sort(order)
	mux := http.NewServeMux()
	mux.HandleFunc("/app.js", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, spaScript)
	})
	mux.HandleFunc("/api/page", func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Query().Get("path")
		title, ok := titles[path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		// The route's links: the next ones in path order, wrapping around.
		i := slices.Index(order, path)
		routes := make([]string, 0, links)
		for k := range min(links, len(order)) {
			routes = append(routes, order[(i+k)%len(order)])
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"title": title, "routes": routes,
			"text": strings.Repeat("Rendered words about "+title+". ", 40), "broken": path == SPABrokenRoute})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if _, ok := titles[r.URL.Path]; !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, spaShell)
	})
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// Domain is the app's host:port, as an audit request names it.
func (s *SPA) Domain() string { return strings.TrimPrefix(s.URL, "http://") }

// Hits counts the requests for path so far.
func (s *SPA) Hits(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}
