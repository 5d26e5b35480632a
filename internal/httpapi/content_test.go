package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/contentapi/contentapi/internal/crawler"
	"github.com/contentapi/contentapi/internal/httpapi"
	"github.com/contentapi/contentapi/internal/report"
)

// testSite is a small local site: a sitemap index with a gzipped child, a 404 listed in the
// sitemap, thin pages, a duplicate-title pair and a redirect within the site.
func testSite(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	words := func(n int) string { return strings.Repeat("coffee brewing guide words ", n/4) }
	page := func(title, h1, body string, h2s ...string) string {
		var hs string
		for _, h := range h2s {
			hs += "<h2>" + h + "</h2>"
		}
		return fmt.Sprintf(`<html><head><title>%s</title><meta name="description" content="About %s"></head>
<body><nav>Home About Shop Blog Contact</nav><main><h1>%s</h1>%s<p>%s</p></main><footer>Copyright footer text</footer></body></html>`, title, title, h1, hs, body)
	}
	mux := http.NewServeMux()
	var base string
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "User-agent: *\nDisallow: /private/\nSitemap: %s/sitemap_index.xml\n", base)
	})
	mux.HandleFunc("/sitemap_index.xml", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>%s/pages.xml</loc></sitemap></sitemapindex>`, base)
	})
	mux.HandleFunc("/pages.xml", func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		fmt.Fprint(zw, `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		for _, p := range []string{"/", "/cold-brew-guide", "/blog/cold-brew-tips", "/espresso", "/thin", "/gone", "/old-page", "/private/secret"} {
			fmt.Fprintf(zw, "<url><loc>%s</loc></url>", p)
		}
		fmt.Fprint(zw, `</urlset>`)
		_ = zw.Close()
		w.Header().Set("Content-Type", "application/xml")
		_, _ = w.Write(buf.Bytes())
	})
	pages := map[string]string{
		"/":                    page("Bean Lab | Home", "Bean Lab coffee", words(400)),
		"/cold-brew-guide":     page("Cold Brew Coffee Guide | Bean Lab", "Cold brew coffee guide", words(900), "Cold Brew Ratio", "Steeping Time"),
		"/blog/cold-brew-tips": page("Cold Brew Coffee Guide | Bean Lab", "Cold brew coffee guide", words(350)),
		"/espresso":            page("Espresso Basics | Bean Lab", "Espresso basics", words(600)),
		"/thin":                page("Thin Page | Bean Lab", "Thin", words(40)),
		"/private/secret":      page("Secret", "Secret", words(400)),
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/gone":
			http.NotFound(w, r)
			return
		case "/old-page":
			http.Redirect(w, r, "/espresso", http.StatusMovedPermanently)
			return
		}
		if p, ok := pages[r.URL.Path]; ok {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, p)
			return
		}
		http.NotFound(w, r)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	base = srv.URL
	return srv, strings.TrimPrefix(srv.URL, "http://")
}

func TestContentAuditThroughAPI(t *testing.T) {
	s := startStack(t, stackConfig{})
	key := register(t, s.testServer)
	srv, domain := testSite(t)
	r := do(t, "POST", s.URL+"/v1/content/audit", key, map[string]any{"domain": domain, "max_pages": 50})
	if r.Status != 200 {
		t.Fatalf("audit: %d %s", r.Status, r.Raw)
	}
	d := r.data()
	if r.Body["meta"].(map[string]any)["credits_used"] != float64(15) || r.Body["meta"].(map[string]any)["credits_remaining"] != float64(35) {
		t.Fatalf("meta %v", r.Body["meta"])
	}
	crawled := int(d["pages_crawled"].(float64))
	pages := d["pages"].([]any)
	if crawled != 5 || len(pages) != crawled { // home, guide, tips, espresso, thin; 404 and robots-disallowed left out
		t.Fatalf("pages_crawled %d, pages %d: %s", crawled, len(pages), r.Raw)
	}
	for _, p := range pages {
		pm := p.(map[string]any)
		for _, f := range []string{"url", "title", "word_count", "meta_description"} {
			if _, ok := pm[f]; !ok {
				t.Fatalf("page lacks %s: %v", f, pm)
			}
		}
		if strings.Contains(pm["url"].(string), "/gone") || strings.Contains(pm["url"].(string), "/private/") {
			t.Fatalf("page %v should not be counted", pm["url"])
		}
	}
	thin := d["thin_content"].([]any)
	if len(thin) != 1 || !strings.HasSuffix(thin[0].(map[string]any)["url"].(string), "/thin") {
		t.Fatalf("thin_content %v", thin)
	}
	risks := d["cannibalization_risks"].([]any)
	if len(risks) != 1 {
		t.Fatalf("cannibalization_risks %v", risks)
	}
	urls := risks[0].(map[string]any)["urls"].([]any)
	if len(urls) != 2 || !strings.HasPrefix(urls[0].(string), srv.URL) {
		t.Fatalf("risk urls %v: want two absolute URLs", urls)
	}
	sum := d["summary"].(map[string]any)
	if sum["total"] != float64(crawled) || sum["thin"] != float64(len(thin)) || sum["cannibalization_issues"] != float64(len(risks)) {
		t.Fatalf("summary %v inconsistent", sum)
	}
	if !strings.Contains(r.Raw, "/gone") {
		t.Fatal("the 404 listed in the sitemap is not reported")
	}
}

func TestCrawlTargetsRefusedBeforeCharging(t *testing.T) {
	s := startStack(t, stackConfig{noWorker: true})
	strict := startServer(t, func(d *httpapi.Deps) {
		d.Jobs = s.Jobs
		d.SyncTimeout = s.testServer.App.Config().ReadTimeout
		d.AnalysisOptions = report.Options{AllowPrivate: true} // host:port accepted by validation...
		d.Hosts = crawler.New(crawler.Config{})                // ...but the crawler refuses private addresses
	})
	key := register(t, strict)
	for _, c := range []struct{ path, body string }{
		{"/v1/content/audit", `{"domain":"localhost"}`},
		{"/v1/content/audit", `{"domain":"127.0.0.1"}`},
		{"/v1/content/recommend", `{"domain":"example.com","competitors":["127.0.0.1"],"focus_topics":["coffee"]}`},
		{"/v1/content-map", `{"domain":"10.1.2.3"}`},
		{"/v1/keywords/research", `{"domain":"example.com","topic":"x","callback_url":"http://127.0.0.1:9/hook"}`},
	} {
		r := do(t, "POST", strict.URL+c.path, key, c.body)
		if r.Status != 400 || r.errCode() != "VALIDATION_ERROR" || !strings.Contains(r.Raw, "private or reserved") {
			t.Errorf("%s %s: %d %s", c.path, c.body, r.Status, r.Raw)
		}
	}
	if b, _ := strict.Ledger.Balance(t.Context(), accountID(t, strict, key)); b != 50 {
		t.Fatalf("balance %d: a refused crawl target was charged", b)
	}
}

func TestAuditOfUnreachableSiteRefunds(t *testing.T) {
	s := startStack(t, stackConfig{})
	key := register(t, s.testServer)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	r := do(t, "POST", s.URL+"/v1/content/audit", key, map[string]any{"domain": addr})
	if r.Status != 422 || r.errCode() != "SITE_UNREACHABLE" {
		t.Fatalf("unreachable: %d %s", r.Status, r.Raw)
	}
	if b := s.balanceOf(t, key); b != 50 {
		t.Fatalf("balance %d, want 50", b)
	}
}

func TestRecommendAndContentMapThroughAPI(t *testing.T) {
	s := startStack(t, stackConfig{})
	key := registerBusy(t, s.testServer)
	_, domain := testSite(t)
	doms := sampleDomains(t)
	r := do(t, "POST", s.URL+"/v1/content/recommend", key, map[string]any{"domain": domain, "focus_topics": []string{"cold brew", "espresso"},
		"brand_context": "Bean Lab roasts single-origin coffee for home brewers.", "limit": 5})
	if r.Status != 200 {
		t.Fatalf("recommend: %d %s", r.Status, r.Raw)
	}
	d := r.data()
	recs := d["recommendations"].([]any)
	// 3 credits per started 2 recommendations delivered.
	if d["plan_id"] != r.Body["meta"].(map[string]any)["job_id"] || r.Body["meta"].(map[string]any)["credits_used"] != float64(3*blocksOf(len(recs), 2)) {
		t.Fatalf("plan_id %v is not the job id, or credits_used %v is not the price of %d items", d["plan_id"],
			r.Body["meta"].(map[string]any)["credits_used"], len(recs))
	}
	if len(recs) == 0 || len(recs) > 5 || d["total_recommendations"] != float64(len(recs)) {
		t.Fatalf("recommendations %d, total %v", len(recs), d["total_recommendations"])
	}
	for i, rec := range recs {
		rm := rec.(map[string]any)
		if rm["priority"] != float64(i+1) || rm["title"] == "" || len(rm["outline"].([]any)) < 3 {
			t.Fatalf("recommendation %d: %v", i, rm)
		}
	}
	if got := do(t, "GET", s.URL+"/v1/jobs/"+d["plan_id"].(string), key, nil); got.Status != 200 || got.data()["plan_id"] != d["plan_id"] {
		t.Fatalf("plan not retrievable: %d", got.Status)
	}
	if c := d["cannibalization"].([]any); len(c) != 1 || !strings.HasPrefix(c[0].(map[string]any)["urls"].([]any)[0].(string), "/") ||
		c[0].(map[string]any)["recommendation"] == "" {
		t.Fatalf("cannibalization %v", c)
	}

	m := do(t, "POST", s.URL+"/v1/content-map", key, map[string]any{"domain": doms[0], "competitors": []string{doms[1], doms[2]},
		"focus_topics": []string{"coffee"}})
	if m.Status != 200 || m.Body["meta"].(map[string]any)["credits_used"] != float64(25) {
		t.Fatalf("content map: %d %s", m.Status, m.Raw)
	}
	md := m.data()
	sum := md["summary"].(map[string]any)
	if sum["pages_found"] != md["audit"].(map[string]any)["pages_found"] ||
		sum["current_rankings"] != md["current_rankings"].(map[string]any)["count"] ||
		sum["competitor_gaps"] != md["competitor_gaps"].(map[string]any)["count"] ||
		sum["recommendations"] != float64(len(md["recommendations"].([]any))) {
		t.Fatalf("summary %v does not match the sections", sum)
	}
	if md["current_rankings"].(map[string]any)["count"].(float64) == 0 || md["competitor_gaps"].(map[string]any)["count"].(float64) == 0 {
		t.Fatalf("sample domain has no rankings or gaps: %s", m.Raw)
	}
	if ws, _ := md["warnings"].([]any); len(ws) == 0 {
		t.Fatal("the sample domain cannot be crawled; the map should say so in warnings")
	}
}
