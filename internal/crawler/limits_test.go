package crawler

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// resultURLs lists every URL a result holds.
func resultURLs(res *Result) []string {
	out := append([]string(nil), res.Sitemaps...)
	for _, e := range res.SitemapErrors {
		out = append(out, e.URL)
	}
	for _, p := range res.Pages {
		out = append(out, p.URL, p.FinalURL, p.Canonical)
	}
	return out
}

// checkResultBounded fails unless every URL of res is at most maxURLBytes, every message
// at most maxMessageLen, and its JSON holds no NUL and only valid UTF-8.
func checkResultBounded(t *testing.T, res *Result) {
	t.Helper()
	for _, u := range resultURLs(res) {
		if len(u) > maxURLBytes {
			t.Errorf("URL of %d bytes kept: %.80s...", len(u), u)
		}
	}
	msgs := append([]string(nil), res.Warnings...)
	for _, p := range res.Pages {
		msgs = append(msgs, p.Error)
	}
	for _, e := range res.SitemapErrors {
		msgs = append(msgs, e.Error)
	}
	for _, m := range msgs {
		if len(m) > maxMessageLen {
			t.Errorf("message of %d bytes kept: %.80s...", len(m), m)
		}
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `\u0000`) || !utf8.Valid(b) {
		t.Errorf("result JSON holds NUL or invalid UTF-8")
	}
}

func TestCrawlDropsLongURLs(t *testing.T) {
	huge := strings.Repeat("x", 100<<10) // far over; a page must still fit its size limit
	long := strings.Repeat("y", 2100)    // just over the limit
	fits := strings.Repeat("z", 1900)    // a long URL still kept
	t.Run("sitemap, canonical and redirect", func(t *testing.T) {
		s := newTestSite(t)
		s.robots("Sitemap: {base}/sitemap.xml\nSitemap: {base}/" + long + "\n")
		s.serve("/sitemap.xml", "application/xml", s.urlset("{base}/"+huge, "/"+long, "/"+fits, "/canonical", "/to-long"))
		s.page("/"+fits, htmlPage("Fits", "ok"))
		s.page("/canonical", `<html><head><link rel="canonical" href="/`+huge+`"></head><body>c</body></html>`)
		s.redirect("/to-long", "/"+long, http.StatusFound)
		res, err := testCrawler(Config{}).Crawl(context.Background(), Request{Domain: s.domain(), MaxPages: 10})
		if err != nil {
			t.Fatal(err)
		}
		checkResultBounded(t, res)
		pages := pagesByPath(res)
		if len(res.Pages) != 4 || pages["/"+fits].Title != "Fits" || pages["/"].Status != http.StatusNotFound {
			t.Errorf("pages = %q, want the fitting URL, /canonical, /to-long and the home page", pagePaths(res))
		}
		if c := pages["/canonical"]; c.Status != 200 || c.Canonical != "" {
			t.Errorf("canonical page: %+v", c)
		}
		if r := pages["/to-long"]; !strings.Contains(r.Error, "URL longer than 2048 bytes") || r.WordCount != 0 {
			t.Errorf("redirect to a long URL: %+v", r)
		}
		if !hasWarning(res, "2 sitemap URL(s) longer than 2048 bytes skipped") {
			t.Errorf("warnings = %q", res.Warnings)
		}
		if len(res.SitemapErrors) != 1 || res.SitemapErrors[0].Error != errURLTooLong.Error() {
			t.Errorf("sitemap errors = %+v, want the long robots.txt Sitemap line", res.SitemapErrors)
		}
		if len(s.hitTimes("/"+long)) != 0 {
			t.Error("a URL over the limit was fetched")
		}
	})
	t.Run("links", func(t *testing.T) {
		s := newTestSite(t)
		s.page("/{$}", htmlPage("Home", `<a href="/`+long+`">long</a> <a href="/`+huge+`">huge</a> <a href="/`+fits+`">fits</a>`))
		s.page("/"+fits, htmlPage("Fits", "ok"))
		res, err := testCrawler(Config{}).Crawl(context.Background(), Request{Domain: s.domain(), MaxPages: 10})
		if err != nil {
			t.Fatal(err)
		}
		checkResultBounded(t, res)
		if got := pagePaths(res); len(got) != 2 || got[1] != "/"+fits {
			t.Errorf("pages = %q, want home and the fitting link", got)
		}
	})
}

// hostilePage has every extracted field at or past its bound, in characters JSON escapes.
func hostilePage(i int) string {
	text := strings.Repeat("<", 2*maxTextLen)
	return `<html><head><title>` + strconv.Itoa(i) + strings.Repeat("&lt;", 2*maxTextLen) + `</title>
		<meta name="description" content="` + strings.Repeat("&lt;", 2*maxTextLen) + `"></head><body>
		<h1>` + strings.Repeat("&amp;", 2*maxTextLen) + `</h1>` + strings.Repeat("<h2>"+text+"</h2>", 50) + `</body></html>`
}

func TestCrawlBoundsPageFields(t *testing.T) {
	s := newTestSite(t)
	s.page("/{$}", hostilePage(0))
	res, err := testCrawler(Config{}).Crawl(context.Background(), Request{Domain: s.domain(), MaxPages: 1})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Pages[0]
	h2Bytes := 0
	for _, h := range p.H2s {
		h2Bytes += len(h)
	}
	if len(p.Title) > maxTextLen || len(p.MetaDescription) > maxTextLen || len(p.H1) > maxTextLen || h2Bytes > maxH2Bytes || len(p.H2s) == 0 {
		t.Errorf("title %d, description %d, h1 %d bytes, %d h2s of %d bytes; want each <= %d, h2s <= %d",
			len(p.Title), len(p.MetaDescription), len(p.H1), len(p.H2s), h2Bytes, maxTextLen, maxH2Bytes)
	}
	// Each byte may take six in JSON (\u003c), hence 3 * 1000 * 6 + 8192 * 6 and some.
	if n := jsonSize(p); n > 80<<10 {
		t.Errorf("one page takes %d bytes of JSON", n)
	}
}

func TestCrawlFailsWhenResultTooLarge(t *testing.T) {
	const pages = 100
	s := newTestSite(t)
	var locs []string
	for i := range pages {
		path := "/p" + strconv.Itoa(i)
		s.page(path, hostilePage(i))
		locs = append(locs, path)
	}
	s.serve("/sitemap.xml", "application/xml", s.urlset(locs...))
	const limit = 256 << 10
	_, err := testCrawler(Config{MaxResultBytes: limit}).Crawl(context.Background(), Request{Domain: s.domain(), MaxPages: pages})
	if !errors.Is(err, ErrSiteTooLarge) {
		t.Fatalf("err = %v, want ErrSiteTooLarge", err)
	}
	fetched := 0
	for _, l := range locs {
		fetched += len(s.hitTimes(l))
	}
	if fetched > pages/2 {
		t.Errorf("%d of %d pages fetched: the crawl should stop once over the limit", fetched, pages)
	}

	// The same site within a larger limit is crawled whole.
	res, err := testCrawler(Config{MaxResultBytes: 64 << 20}).Crawl(context.Background(), Request{Domain: s.domain(), MaxPages: pages})
	if err != nil || len(res.Pages) != pages {
		t.Fatalf("larger limit: err = %v", err)
	}
	if n := jsonSize(res); n <= limit {
		t.Fatalf("result is %d bytes: the test site does not exceed the small limit", n)
	}
}

// TestCrawlStripsNUL serves NUL bytes and invalid UTF-8 in every text a page yields; the
// result must be storable in PostgreSQL's jsonb, which refuses \u0000.
func TestCrawlStripsNUL(t *testing.T) {
	s := newTestSite(t)
	s.page("/{$}", "<html><head><title>Ti\x00tle\xff</title><meta name=\"description\" content=\"de\x00sc\xc3\"></head><body>"+
		"<h1>He\x00ad</h1><h2>Sub\x00\x00 one</h2><h2>\x00</h2><h2>two\xfe</h2><p>word\x00s here</p></body></html>")
	res, err := testCrawler(Config{}).Crawl(context.Background(), Request{Domain: s.domain(), MaxPages: 1})
	if err != nil {
		t.Fatal(err)
	}
	checkResultBounded(t, res)
	p := res.Pages[0]
	// The tokenizer turns a NUL in a title or attribute into U+FFFD, as HTML says.
	if p.Title != "Ti\ufffdtle" || p.MetaDescription != "de\ufffdsc" || p.H1 != "Head" || len(p.H2s) != 2 || p.H2s[0] != "Sub one" || p.H2s[1] != "two" {
		t.Errorf("page = %+v", p)
	}
}
