package crawler

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// sitemapSite is a site with a sitemap index whose children cover the cases the audit
// meets: a gzip child under a .xml name, relative locs, a Content-Encoding gzip child,
// a broken and a missing child, and pages that redirect, fail or are not HTML.
func sitemapSite(t *testing.T) (*testSite, *testSite) {
	other := newTestSite(t)
	other.page("/landing", htmlPage("Elsewhere", "<p>"+words(50)+"</p>"))

	s := newTestSite(t)
	s.robots("User-agent: *\nDisallow: /private/\n\nSitemap: {base}/sitemap_index.xml\n")
	s.serve("/sitemap_index.xml", "application/xml", s.index(
		"{base}/sitemaps/pages.xml", "sitemaps/more.xml", "/sitemaps/encoded.xml",
		"/sitemaps/broken.xml", "/sitemaps/missing.xml",
	))
	// Gzip bytes under a .xml name and an XML content type: found by magic bytes only.
	s.serve("/sitemaps/pages.xml", "application/xml", gzipBytes(t, s.urlset(
		"{base}/", "{base}/thin", "{base}/long", "{base}/missing-page",
		"{base}/private/secret", "http://other.example/elsewhere",
	)))
	s.serve("/sitemaps/more.xml", "text/xml", s.urlset(
		"/redirect-in", "../redirect-out", "/noindex", "/canonical", "relative-page",
		"/thin", "/report.pdf", "/big", "/big-declared", "/chain/0",
	))
	s.serve("/sitemaps/encoded.xml", "application/xml", gzipBytes(t, s.urlset("/xrobots")), "Content-Encoding", "gzip")
	s.serve("/sitemaps/broken.xml", "application/xml", []byte(`<?xml version="1.0"?><urlset><url><loc>/never</loc></ur`))

	s.page("/{$}", htmlPage("Home", "<h1>Welcome</h1><p>"+words(20)+"</p>"))
	s.page("/thin", htmlPage("Thin", "<nav>Home About Contact</nav><main><p>Just five words here now.</p></main>"))
	s.page("/long", htmlPage("Long", `<header><a href="/">Logo</a> menu words</header>
		<nav><ul><li>Home</li><li>Blog</li></ul></nav>
		<main><h1>Long read</h1><p>`+words(400)+`</p><h2>Part one</h2><p>`+words(100)+`</p><h2>Part two</h2></main>
		<aside>related links here</aside><script>var x = "code words";</script><style>.a{}</style>
		<footer>copyright words</footer>`))
	s.page("/private/secret", htmlPage("Secret", "hidden"))
	s.page("/sitemaps/relative-page", htmlPage("Relative", "resolved against the sitemap URL"))
	s.redirect("/redirect-in", "/target", http.StatusMovedPermanently)
	s.page("/target", htmlPage("Target", "<p>"+words(30)+"</p>"))
	s.redirect("/redirect-out", other.URL+"/landing", http.StatusFound)
	s.page("/noindex", `<html><head><title>Hidden</title><meta name="robots" content="noindex, follow"></head><body>x</body></html>`)
	s.page("/canonical", `<html><head><link rel="canonical" href="/long?ref=a#frag"></head><body>c</body></html>`)
	s.serve("/report.pdf", "application/pdf", []byte("%PDF-1.4 not html"))
	big := []byte(htmlPage("Big", strings.Repeat("<p>"+words(100)+"</p>", 200)))
	s.mux.HandleFunc("/big", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.(http.Flusher).Flush() // chunked: no Content-Length, the body limit must catch it
		_, _ = w.Write(big)
	})
	s.serve("/big-declared", "text/html", big, "Content-Length", strconv.Itoa(len(big)))
	for i := range 7 {
		s.redirect("/chain/"+strconv.Itoa(i), "/chain/"+strconv.Itoa(i+1), http.StatusFound)
	}
	s.serve("/xrobots", "text/html", []byte(htmlPage("XR", "x")), "X-Robots-Tag", "noindex")
	return s, other
}

func TestCrawlSitemapSite(t *testing.T) {
	s, other := sitemapSite(t)
	c := testCrawler(Config{MaxBodyBytes: 64 << 10})
	res, err := c.Crawl(context.Background(), Request{Domain: s.domain(), MaxPages: 50})
	if err != nil {
		t.Fatal(err)
	}
	if !res.FromSitemap || res.Scheme != "http" {
		t.Errorf("FromSitemap = %v, Scheme = %q", res.FromSitemap, res.Scheme)
	}
	wantSitemaps := []string{s.URL + "/sitemap_index.xml", s.URL + "/sitemaps/pages.xml", s.URL + "/sitemaps/more.xml", s.URL + "/sitemaps/encoded.xml"}
	if !slices.Equal(res.Sitemaps, wantSitemaps) {
		t.Errorf("Sitemaps = %q\nwant %q", res.Sitemaps, wantSitemaps)
	}
	if len(res.SitemapErrors) != 2 || !strings.HasSuffix(res.SitemapErrors[0].URL, "/broken.xml") ||
		!strings.HasSuffix(res.SitemapErrors[1].URL, "/missing.xml") || !strings.Contains(res.SitemapErrors[1].Error, "404") {
		t.Errorf("SitemapErrors = %+v", res.SitemapErrors)
	}
	wantPaths := []string{
		"/", "/thin", "/long", "/missing-page",
		"/redirect-in", "/redirect-out", "/noindex", "/canonical", "/sitemaps/relative-page",
		"/report.pdf", "/big", "/big-declared", "/chain/0", "/xrobots",
		"/long?ref=a", // found through /canonical's canonical link
	}
	if got := pagePaths(res); !slices.Equal(got, wantPaths) {
		t.Errorf("pages = %q\nwant %q", got, wantPaths)
	}
	if len(s.hitTimes("/private/secret")) != 0 {
		t.Error("robots.txt-disallowed page was fetched")
	}
	if !hasWarning(res, "robots.txt disallows 1 URL") || !hasWarning(res, "1 sitemap URL(s) on other hosts") {
		t.Errorf("warnings = %q", res.Warnings)
	}
	checkSitemapPages(t, pagesByPath(res), s, other)
}

func checkSitemapPages(t *testing.T, pages map[string]Page, s, other *testSite) {
	t.Helper()
	check := func(path string, ok bool, format string, args ...any) {
		t.Helper()
		if !ok {
			t.Errorf("%s: "+format, append([]any{path}, args...)...)
		}
	}
	home := pages["/"]
	check("/", home.Status == 200 && home.Title == "Home" && home.H1 == "Welcome" && home.WordCount == 21 && home.FinalURL == s.URL+"/", "%+v", home)
	thin := pages["/thin"]
	check("/thin", thin.WordCount == 5 && thin.ContentType == "text/html", "%+v", thin)
	long := pages["/long"]
	check("/long", long.WordCount == 506 && long.H1 == "Long read" && slices.Equal(long.H2s, []string{"Part one", "Part two"}), "%+v", long)
	check("/missing-page", pages["/missing-page"].Status == 404 && pages["/missing-page"].Error == "", "%+v", pages["/missing-page"])
	in := pages["/redirect-in"]
	check("/redirect-in", in.Status == 200 && in.FinalURL == s.URL+"/target" && in.Title == "Target" && in.WordCount == 30 && !in.OffSite, "%+v", in)
	out := pages["/redirect-out"]
	check("/redirect-out", out.OffSite && out.Status == 200 && out.FinalURL == other.URL+"/landing" && out.WordCount == 0 && out.Title == "" && out.Error == "", "%+v", out)
	check("/sitemaps/relative-page", pages["/sitemaps/relative-page"].Title == "Relative", "%+v", pages["/sitemaps/relative-page"])
	check("/noindex", pages["/noindex"].Noindex, "not noindex")
	check("/xrobots", pages["/xrobots"].Noindex, "X-Robots-Tag noindex missed")
	check("/canonical", pages["/canonical"].Canonical == s.URL+"/long?ref=a", "canonical = %q", pages["/canonical"].Canonical)
	pdf := pages["/report.pdf"]
	check("/report.pdf", pdf.Status == 200 && pdf.ContentType == "application/pdf" && pdf.WordCount == 0 && pdf.Error == "", "%+v", pdf)
	// Over the body limit: read up to it, marked cut, with the declared size when given.
	for _, p := range []string{"/big", "/big-declared"} {
		check(p, pages[p].BodyCut && pages[p].Error == "" && pages[p].Title == "Big" && pages[p].WordCount > 0, "%+v", pages[p])
	}
	check("/big-declared", pages["/big-declared"].BodyBytes > 64<<10, "body bytes %d", pages["/big-declared"].BodyBytes)
	check("/big", pages["/big"].BodyBytes == 0, "body bytes %d", pages["/big"].BodyBytes)
	chain := pages["/chain/0"]
	check("/chain/0", strings.Contains(chain.Error, "too many redirects") && chain.ErrorKind == ErrorTooManyRedirect && len(chain.RedirectChain) == 6, "%+v", chain)
	check("/redirect-in", slices.Equal(in.RedirectChain, []Hop{{URL: s.URL + "/redirect-in", Status: http.StatusMovedPermanently}}), "chain %+v", in.RedirectChain)
}

func TestCrawlRefusesRedirectToPrivateAddress(t *testing.T) {
	s := newTestSite(t)
	s.page("/{$}", htmlPage("Home", `<a href="/to-private">a</a> <a href="/to-metadata">b</a> <a href="/to-alibaba">c</a>`))
	s.redirect("/to-private", "http://10.0.0.1/admin", http.StatusFound)
	s.redirect("/to-metadata", "http://169.254.169.254/latest/meta-data/", http.StatusFound)
	s.redirect("/to-alibaba", "http://100.100.100.200/latest/meta-data/", http.StatusMovedPermanently)
	res, err := testCrawler(Config{}).Crawl(context.Background(), Request{Domain: s.domain(), MaxPages: 10})
	if err != nil {
		t.Fatal(err)
	}
	pages := pagesByPath(res)
	for path, addr := range map[string]string{"/to-private": "10.0.0.1", "/to-metadata": "169.254.169.254", "/to-alibaba": "100.100.100.200"} {
		p, ok := pages[path]
		if !ok || !strings.Contains(p.Error, "forbidden address "+addr) || p.Status != 0 || p.WordCount != 0 {
			t.Errorf("%s: %+v, want refused %s", path, p, addr)
		}
	}
}

func TestCrawlFollowsLinksWithoutSitemap(t *testing.T) {
	s := newTestSite(t)
	s.robots("User-agent: *\nDisallow: /private/\n")
	s.page("/{$}", htmlPage("Home", `<nav><a href="/a">A</a></nav>
		<a href="/b">B</a> <a href="c">C</a> <a href="/a#top">A again</a> <a href="http://elsewhere.example/x">out</a>
		<a href="mailto:me@example.com">mail</a> <a href="javascript:void(0)">js</a> <a href="/logo.png">img</a>`))
	s.page("/a", htmlPage("A", `<a href="/d">D</a> <a href="/e">E</a> <a href="/">home</a>`))
	s.page("/b", htmlPage("B", `<a href="/private/x">secret</a>`))
	s.page("/c", `<html><head><meta name="robots" content="nofollow"></head><body><a href="/f">F</a></body></html>`)
	for _, p := range []string{"/d", "/e", "/f", "/private/x"} {
		s.page(p, htmlPage(p, "leaf"))
	}

	res, err := testCrawler(Config{}).Crawl(context.Background(), Request{Domain: s.domain(), MaxPages: 20})
	if err != nil {
		t.Fatal(err)
	}
	if res.FromSitemap || len(res.Sitemaps) != 0 || len(res.SitemapErrors) != 0 {
		t.Errorf("FromSitemap = %v, Sitemaps = %q, SitemapErrors = %+v", res.FromSitemap, res.Sitemaps, res.SitemapErrors)
	}
	if got, want := pagePaths(res), []string{"/", "/a", "/b", "/c", "/d", "/e"}; !slices.Equal(got, want) {
		t.Errorf("pages = %q, want %q", got, want)
	}
	for _, p := range []string{"/private/x", "/f", "/logo.png"} {
		if len(s.hitTimes(p)) != 0 {
			t.Errorf("%s fetched", p)
		}
	}
	if !hasWarning(res, "robots.txt disallows 1 URL") {
		t.Errorf("warnings = %q", res.Warnings)
	}
}

func TestCrawlRespectsMaxPages(t *testing.T) {
	t.Run("links", func(t *testing.T) {
		s := newTestSite(t)
		s.page("/{$}", htmlPage("Home", `<a href="/a">A</a> <a href="/b">B</a> <a href="/c">C</a>`))
		s.page("/a", htmlPage("A", `<a href="/d">D</a> <a href="/e">E</a>`))
		for _, p := range []string{"/b", "/c", "/d", "/e"} {
			s.page(p, htmlPage(p, "leaf"))
		}
		res, err := testCrawler(Config{}).Crawl(context.Background(), Request{Domain: s.domain(), MaxPages: 4})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := pagePaths(res), []string{"/", "/a", "/b", "/c"}; !slices.Equal(got, want) {
			t.Errorf("pages = %q, want %q", got, want)
		}
		if len(s.hitTimes("/d"))+len(s.hitTimes("/e")) != 0 || !hasWarning(res, "page limit of 4") {
			t.Errorf("over the limit: /d, /e fetched or no warning (%q)", res.Warnings)
		}
	})
	t.Run("sitemap", func(t *testing.T) {
		s := newTestSite(t)
		var locs []string
		for i := range 10 {
			p := "/p" + strconv.Itoa(i)
			locs = append(locs, p)
			s.page(p, htmlPage(p, "x"))
		}
		s.serve("/sitemap.xml", "application/xml", s.urlset(locs...))
		res, err := testCrawler(Config{}).Crawl(context.Background(), Request{Domain: s.domain(), MaxPages: 3})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := pagePaths(res), []string{"/p0", "/p1", "/p2"}; !slices.Equal(got, want) {
			t.Errorf("pages = %q, want %q", got, want)
		}
		if len(s.hitTimes("/p3")) != 0 {
			t.Error("/p3 fetched beyond max pages")
		}
	})
}

func TestCrawlRobotsGroupAndCrawlDelay(t *testing.T) {
	s := newTestSite(t)
	// The * group forbids everything; ours is more specific and replaces it.
	s.robots("User-agent: *\nDisallow: /\n\nUser-agent: ContentStrategyBot\nCrawl-delay: 1\nDisallow: /secret\n")
	s.serve("/sitemap.xml", "application/xml", s.urlset("/", "/page", "/secret"))
	s.page("/{$}", htmlPage("Home", "home"))
	s.page("/page", htmlPage("Page", "page"))
	s.page("/secret", htmlPage("Secret", "secret"))

	res, err := testCrawler(Config{}).Crawl(context.Background(), Request{Domain: s.domain(), MaxPages: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := pagePaths(res), []string{"/", "/page"}; !slices.Equal(got, want) {
		t.Errorf("pages = %q, want %q", got, want)
	}
	if len(s.hitTimes("/secret")) != 0 {
		t.Error("/secret fetched despite Disallow")
	}
	if !hasWarning(res, "Crawl-delay 1s") {
		t.Errorf("warnings = %q", res.Warnings)
	}
	home, page := s.hitTimes("/"), s.hitTimes("/page")
	if len(home) != 1 || len(page) != 1 {
		t.Fatalf("hits: / %d, /page %d", len(home), len(page))
	}
	gap := page[0].Sub(home[0])
	if gap < 0 {
		gap = -gap
	}
	if gap < 900*time.Millisecond {
		t.Errorf("requests %s apart, want about 1s (Crawl-delay)", gap)
	}
}

func TestCrawlExplicitSitemapURL(t *testing.T) {
	s := newTestSite(t)
	s.robots("Sitemap: {base}/ignored.xml\n")
	s.serve("/maps/custom.xml.gz", "application/octet-stream", gzipBytes(t, s.urlset("page")))
	s.page("/maps/page", htmlPage("P", "one two"))
	res, err := testCrawler(Config{}).Crawl(context.Background(), Request{Domain: s.domain(), SitemapURL: s.URL + "/maps/custom.xml.gz"})
	if err != nil {
		t.Fatal(err)
	}
	// The home page follows the sitemap's pages: it answers 404 here.
	if got := pagePaths(res); !slices.Equal(got, []string{"/maps/page", "/"}) || res.Pages[0].WordCount != 2 {
		t.Errorf("pages = %+v", res.Pages)
	}
	if len(s.hitTimes("/ignored.xml")) != 0 {
		t.Error("robots.txt sitemap read although a sitemap URL was given")
	}
}

func TestCrawlBrokenSitemapFallsBackToLinks(t *testing.T) {
	s := newTestSite(t)
	s.serve("/sitemap.xml", "text/html", []byte("<html><body>soft 404</body></html>"))
	s.page("/{$}", htmlPage("Home", `<a href="/a">a</a>`))
	s.page("/a", htmlPage("A", "a"))
	res, err := testCrawler(Config{}).Crawl(context.Background(), Request{Domain: s.domain()})
	if err != nil {
		t.Fatal(err)
	}
	if res.FromSitemap || !slices.Equal(pagePaths(res), []string{"/", "/a"}) {
		t.Errorf("FromSitemap = %v, pages = %q", res.FromSitemap, pagePaths(res))
	}
	// A guessed location that answers but is no sitemap is worth reporting; a 404 is not.
	if len(res.SitemapErrors) != 1 || !strings.Contains(res.SitemapErrors[0].Error, "not a sitemap") {
		t.Errorf("SitemapErrors = %+v", res.SitemapErrors)
	}
}

func TestCrawlSitemapDepthAndFileLimits(t *testing.T) {
	s := newTestSite(t)
	s.serve("/sitemap.xml", "application/xml", s.index("/level1.xml"))
	s.serve("/level1.xml", "application/xml", s.index("/level2.xml", "/other1.xml", "/other2.xml"))
	s.serve("/level2.xml", "application/xml", s.index("/deep.xml"))
	for _, p := range []string{"/other1.xml", "/other2.xml", "/deep.xml"} {
		s.serve(p, "application/xml", s.urlset(strings.TrimSuffix(p, ".xml")))
	}
	for _, p := range []string{"/other1", "/other2", "/deep"} {
		s.page(p, htmlPage(p, "x"))
	}
	res, err := testCrawler(Config{MaxSitemapDepth: 2, MaxSitemaps: 4}).Crawl(context.Background(), Request{Domain: s.domain()})
	if err != nil {
		t.Fatal(err)
	}
	if got := pagePaths(res); !slices.Equal(got, []string{"/other1", "/"}) {
		t.Errorf("pages = %q, want [/other1 /]", got)
	}
	if len(s.hitTimes("/deep.xml")) != 0 || !hasWarning(res, "nesting deeper than 2") || !hasWarning(res, "sitemap limit of 4") {
		t.Errorf("deep.xml hits = %d, warnings = %q", len(s.hitTimes("/deep.xml")), res.Warnings)
	}
}

func TestCrawlHTTPSFirst(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(htmlPage("Secure", "safe words")))
	}))
	defer srv.Close()
	c := testCrawler(Config{})
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	c.tlsConfig = &tls.Config{RootCAs: pool}
	res, err := c.Crawl(context.Background(), Request{Domain: srv.Listener.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Scheme != "https" || len(res.Pages) != 1 || res.Pages[0].Title != "Secure" {
		t.Errorf("Scheme = %q, pages = %+v", res.Scheme, res.Pages)
	}
}

func TestCrawlUnreachable(t *testing.T) {
	srv := httptest.NewServer(nil)
	domain := srv.Listener.Addr().String()
	srv.Close() // nothing listens there any more
	_, err := testCrawler(Config{}).Crawl(context.Background(), Request{Domain: domain})
	if !errors.Is(err, ErrSiteUnreachable) {
		t.Errorf("err = %v, want ErrSiteUnreachable", err)
	}
}

func TestCrawlTimeBudget(t *testing.T) {
	s := newTestSite(t)
	release := make(chan struct{})
	defer close(release)
	s.serve("/sitemap.xml", "application/xml", s.urlset("/", "/slow1", "/slow2"))
	s.page("/{$}", htmlPage("Home", "fast"))
	for _, p := range []string{"/slow1", "/slow2"} {
		s.mux.HandleFunc(p, func(_ http.ResponseWriter, r *http.Request) {
			select { // hang until the crawler gives up (or the test ends)
			case <-r.Context().Done():
			case <-release:
			}
		})
	}
	start := time.Now()
	res, err := testCrawler(Config{Timeout: 500 * time.Millisecond}).Crawl(context.Background(), Request{Domain: s.domain()})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("crawl took %s with a 500ms budget", took)
	}
	if got := pagePaths(res); !slices.Equal(got, []string{"/"}) || !hasWarning(res, "stopped early") {
		t.Errorf("pages = %q, warnings = %q", got, res.Warnings)
	}
}

func TestCrawlCancelled(t *testing.T) {
	s := newTestSite(t)
	entered := make(chan struct{})
	var once sync.Once
	s.mux.HandleFunc("/{$}", func(_ http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(entered) })
		<-r.Context().Done()
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-entered
		cancel()
	}()
	_, err := testCrawler(Config{}).Crawl(ctx, Request{Domain: s.domain()})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestCrawlerConcurrentUse(t *testing.T) {
	s, _ := sitemapSite(t)
	c := testCrawler(Config{MaxBodyBytes: 64 << 10})
	var wg sync.WaitGroup
	results := make([]*Result, 4)
	errs := make([]error, 4)
	for i := range results {
		wg.Go(func() {
			results[i], errs[i] = c.Crawl(context.Background(), Request{Domain: s.domain(), MaxPages: 50})
		})
	}
	wg.Wait()
	for i := range results {
		if errs[i] != nil || len(results[i].Pages) != len(results[0].Pages) {
			t.Errorf("crawl %d: err %v, %d pages", i, errs[i], len(results[i].Pages))
		}
	}
}

func TestCrawlSitemapWithoutSitePagesFallsBackToLinks(t *testing.T) {
	s := newTestSite(t)
	s.serve("/sitemap.xml", "application/xml", s.urlset("https://other.example/a", "https://other.example/b"))
	s.page("/{$}", htmlPage("Home", "home"))
	res, err := testCrawler(Config{}).Crawl(context.Background(), Request{Domain: s.domain()})
	if err != nil {
		t.Fatal(err)
	}
	if res.FromSitemap || !slices.Equal(pagePaths(res), []string{"/"}) || len(res.Sitemaps) != 1 {
		t.Errorf("FromSitemap = %v, pages = %q, sitemaps = %q", res.FromSitemap, pagePaths(res), res.Sitemaps)
	}
	if !hasWarning(res, "2 sitemap URL(s) on other hosts") || !hasWarning(res, "following links") {
		t.Errorf("warnings = %q", res.Warnings)
	}
}
