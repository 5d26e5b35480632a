package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/crawler"
	"github.com/contentapi/contentapi/internal/keywords/local"
	"github.com/contentapi/contentapi/internal/report"
	"github.com/contentapi/contentapi/internal/testenv"
)

// hostileSite serves pages headed by the given HTML fragment, listed in its sitemap.
func hostileSite(t *testing.T, pages int, head func(i int) string) string {
	t.Helper()
	mux := http.NewServeMux()
	var srv *httptest.Server
	mux.HandleFunc("/sitemap.xml", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprint(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		for i := range pages {
			fmt.Fprintf(w, "<url><loc>%s/p%d</loc></url>", srv.URL, i)
		}
		fmt.Fprint(w, "</urlset>")
	})
	for i := range pages {
		mux.HandleFunc(fmt.Sprintf("/p%d", i), func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, "<html><head>%s</head><body><p>%s</p></body></html>", head(i), strings.Repeat("word ", 50))
		})
	}
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestAuditOfTooLargeSiteRefunds: a site whose crawl exceeds the crawler's result limit
// fails the job with 422 SITE_TOO_LARGE at once (no retries) and refunds it.
func TestAuditOfTooLargeSiteRefunds(t *testing.T) {
	s := startStack(t, stackConfig{runner: &report.Builder{Keywords: local.New(testenv.Postgres(t)), Clock: clock.Real{},
		Crawler: crawler.New(crawler.Config{AllowPrivate: true, MaxResultBytes: 64 << 10})}})
	key := register(t, s.testServer)
	domain := hostileSite(t, 40, func(i int) string {
		return fmt.Sprintf("<title>%d %s</title>", i, strings.Repeat("&lt;", 1000))
	})
	r := do(t, "POST", s.URL+"/v1/content/audit", key, map[string]any{"domain": domain, "max_pages": 40})
	if r.Status != 422 || r.errCode() != "SITE_TOO_LARGE" {
		t.Fatalf("too large: %d %s", r.Status, r.Raw)
	}
	if b := s.balanceOf(t, key); b != 50 {
		t.Fatalf("balance %d, want 50", b)
	}
	var attempts int
	if err := testenv.Postgres(t).QueryRow(t.Context(), `SELECT attempts FROM jobs WHERE account_id = $1`,
		accountID(t, s.testServer, key)).Scan(&attempts); err != nil {
		t.Fatal(err)
	}
	if attempts != 1 {
		t.Fatalf("%d attempts: a site too large is not worth retrying", attempts)
	}
}

// TestAuditStoresCrawledNUL: NUL bytes in a site's headings do not make the result
// unstorable (PostgreSQL's jsonb refuses \u0000). Two untitled pages with one H1 are
// reported as cannibalizing under that H1, which puts it into the stored result.
func TestAuditStoresCrawledNUL(t *testing.T) {
	s := startStack(t, stackConfig{})
	key := register(t, s.testServer)
	domain := hostileSite(t, 2, func(int) string {
		return "<meta name=\"description\" content=\"a\x00b\"><h1>Cold\x00 brew coffee guide</h1><h2>x\x00y</h2>"
	})
	r := do(t, "POST", s.URL+"/v1/content/audit", key, map[string]any{"domain": domain, "max_pages": 2})
	if r.Status != 200 {
		t.Fatalf("audit: %d %s", r.Status, r.Raw)
	}
	risks := r.data()["cannibalization_risks"].([]any)
	if strings.Contains(r.Raw, `\u0000`) || len(risks) != 1 || risks[0].(map[string]any)["keyword"] != "cold brew coffee guide" {
		t.Fatalf("answer %s", r.Raw)
	}
}

// TestAuditOfHostileSiteAnswers: a site with an endless calendar, a relative link loop and
// a page of 100,000 links is audited within its bounds: 200, the traps and the links left
// unread reported as issues, and the limits hit named in meta.warnings.
func TestAuditOfHostileSiteAnswers(t *testing.T) {
	s := startStack(t, stackConfig{})
	key := register(t, s.testServer)
	mux := http.NewServeMux()
	html := func(w http.ResponseWriter, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<html><head><title>T</title></head><body>%s</body></html>", body)
	}
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, _ *http.Request) {
		html(w, `<a href="/calendar?day=0">calendar</a> <a href="/loop/">loop</a> <a href="/many">many</a>`)
	})
	mux.HandleFunc("/calendar", func(w http.ResponseWriter, r *http.Request) {
		html(w, fmt.Sprintf(`<a href="?day=%s1">next</a> <a href="/">home</a>`, r.URL.Query().Get("day")))
	})
	mux.HandleFunc("/loop/", func(w http.ResponseWriter, _ *http.Request) { html(w, `<a href="loop/">deeper</a>`) })
	mux.HandleFunc("/many", func(w http.ResponseWriter, _ *http.Request) {
		var b strings.Builder
		for i := range 100000 {
			fmt.Fprintf(&b, "<a href=/x%d></a>", i)
		}
		html(w, b.String())
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	r := do(t, "POST", s.URL+"/v1/content/audit", key, map[string]any{"domain": strings.TrimPrefix(srv.URL, "http://"), "max_pages": 60})
	if r.Status != 200 {
		t.Fatalf("audit: %d %s", r.Status, r.Raw)
	}
	issues := r.data()["summary"].(map[string]any)["issues"].(map[string]any)
	if issues["crawl_trap"] != float64(2) || issues["too_many_links"] != float64(1) {
		t.Errorf("summary.issues = %v, want 2 crawl traps and 1 page with too many links", issues)
	}
	warnings := fmt.Sprint(r.Body["meta"].(map[string]any)["warnings"])
	for _, w := range []string{"crawl traps bounded", "links per page limit", "page limit reached"} {
		if !strings.Contains(warnings, w) {
			t.Errorf("meta.warnings = %s, want %q", warnings, w)
		}
	}
}
