package crawler

import (
	"context"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// linkSite is a sitemap site whose pages link to each other, to a listed 404, to unlisted
// URLs that answer 404 and 500, through a redirect, to a robots-disallowed path and to an
// image, with a page nothing links to and a nofollow page whose links do not count.
func linkSite(t *testing.T) *testSite {
	s := newTestSite(t)
	s.robots("User-agent: *\nDisallow: /private/\n\nSitemap: {base}/sitemap.xml\n")
	s.serve("/sitemap.xml", "application/xml", s.urlset("/", "/a", "/b", "/orphan", "/old", "/gone", "/quiet"))
	s.page("/{$}", htmlPage("Home", `<h1>Home</h1><a href="/a">A</a> <a href="/b">B</a> <a href="/b#part">B again</a>
		<a href="/missing">missing</a> <a href="/old">old</a> <a href="http://elsewhere.example/x">out</a>
		<a href="/gone">gone</a> <a href="mailto:me@example.com">mail</a>`))
	s.page("/a", htmlPage("A", `<h1>A</h1><h1>A again</h1><a href="/">home</a> <a href="/b">B</a>
		<a href="/fails?x=1">fails</a> <a href="/a">self</a>`))
	s.page("/b", htmlPage("B", `<a href="/a">A</a> <a href="/private/x">secret</a> <a href="/img.png">image</a>`))
	s.page("/orphan", htmlPage("Orphan", `<a href="/">home</a>`))
	s.page("/quiet", `<html><head><meta name="robots" content="nofollow"></head><body><a href="/unfollowed">x</a></body></html>`)
	s.redirect("/old", "/a", http.StatusMovedPermanently)
	s.mux.HandleFunc("/fails", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "boom", http.StatusInternalServerError)
	})
	for _, p := range []string{"/private/x", "/unfollowed"} {
		s.page(p, htmlPage(p, "never asked for"))
	}
	return s
}

func TestCrawlLinkGraph(t *testing.T) {
	s := linkSite(t)
	res, err := testCrawler(Config{}).Crawl(context.Background(), Request{Domain: s.domain(), MaxPages: 20, CheckLinks: true})
	if err != nil {
		t.Fatal(err)
	}
	pages := pagesByPath(res)
	inlinks := map[string]int{}
	for p, page := range pages {
		inlinks[p] = page.Inlinks
	}
	// /old ends at /a, so links to either count; sources are named by final URL, so /a and
	// /old's copy of it are one page.
	want := map[string]int{"/": 2, "/a": 2, "/b": 2, "/orphan": 0, "/old": 2, "/gone": 1, "/quiet": 0}
	if !maps.Equal(inlinks, want) {
		t.Errorf("inlinks = %v, want %v", inlinks, want)
	}
	if old := pages["/old"]; !old.Redirected || old.FinalURL != s.URL+"/a" || pages["/a"].Redirected {
		t.Errorf("/old = %+v, /a redirected %v; want only /old redirected, to /a", old, pages["/a"].Redirected)
	}
	if a, home := pages["/a"], pages["/"]; a.H1Count != 2 || a.H1 != "A" || home.H1Count != 1 || pages["/b"].H1Count != 0 {
		t.Errorf("h1 counts: / %d, /a %d (%q), /b %d; want 1, 2 (A), 0", home.H1Count, a.H1Count, a.H1, pages["/b"].H1Count)
	}

	var broken []string
	for _, b := range res.BrokenLinks {
		var from []string
		for _, f := range b.LinkedFrom {
			from = append(from, pathOf(f))
		}
		broken = append(broken, pathOf(b.URL)+" "+strconv.Itoa(b.Status)+" "+strings.Join(from, ",")+" "+strconv.Itoa(b.LinkedFromTotal))
	}
	wantBroken := []string{"/fails?x=1 500 /a 1", "/gone 404 / 1", "/missing 404 / 1"}
	if !slices.Equal(broken, wantBroken) {
		t.Errorf("broken links = %q, want %q", broken, wantBroken)
	}
	// Only the two unlisted URLs were checked, once each; disallowed, nofollow and image
	// links were not requested.
	if res.LinksChecked != 2 || len(s.hitTimes("/missing")) != 1 || len(s.hitTimes("/fails")) != 1 {
		t.Errorf("links checked %d, /missing hit %d, /fails hit %d; want 2, 1, 1", res.LinksChecked,
			len(s.hitTimes("/missing")), len(s.hitTimes("/fails")))
	}
	for _, p := range []string{"/private/x", "/unfollowed", "/img.png"} {
		if len(s.hitTimes(p)) != 0 {
			t.Errorf("%s requested", p)
		}
	}
}

// TestCrawlLinkChecksShareThePageBudget: link checks count against max pages, in URL
// order, and what is left unchecked is said.
func TestCrawlLinkChecksShareThePageBudget(t *testing.T) {
	s := linkSite(t)
	res, err := testCrawler(Config{}).Crawl(context.Background(), Request{Domain: s.domain(), MaxPages: 8, CheckLinks: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Pages) != 7 || res.LinksChecked != 1 || len(s.hitTimes("/fails")) != 1 || len(s.hitTimes("/missing")) != 0 {
		t.Errorf("%d pages, %d links checked, /fails hit %d, /missing hit %d; want 7, 1, 1, 0",
			len(res.Pages), res.LinksChecked, len(s.hitTimes("/fails")), len(s.hitTimes("/missing")))
	}
	if !hasWarning(res, "1 linked URL(s) not checked") {
		t.Errorf("warnings = %q", res.Warnings)
	}
	for _, b := range res.BrokenLinks {
		if pathOf(b.URL) == "/missing" {
			t.Errorf("unchecked /missing reported broken: %+v", b)
		}
	}
}

// TestCrawlWithoutLinkChecks: a crawl that does not ask for link checks makes no request
// beyond its pages and still judges links to the pages it fetched.
func TestCrawlWithoutLinkChecks(t *testing.T) {
	s := linkSite(t)
	res, err := testCrawler(Config{}).Crawl(context.Background(), Request{Domain: s.domain(), MaxPages: 20})
	if err != nil {
		t.Fatal(err)
	}
	if res.LinksChecked != 0 || len(s.hitTimes("/missing"))+len(s.hitTimes("/fails")) != 0 || hasWarning(res, "not checked") {
		t.Errorf("links checked %d, warnings %q; want no check and no note", res.LinksChecked, res.Warnings)
	}
	if len(res.BrokenLinks) != 1 || pathOf(res.BrokenLinks[0].URL) != "/gone" || pagesByPath(res)["/orphan"].Inlinks != 0 || pagesByPath(res)["/b"].Inlinks != 2 {
		t.Errorf("broken links %+v; want only the fetched /gone", res.BrokenLinks)
	}
}

// TestLinkGraphBounds: a page's links are recorded once each, other sites and over-long
// URLs are left out, and the graph stops growing at its limit, counting what it left out.
func TestLinkGraphBounds(t *testing.T) {
	base, _ := url.Parse("https://example.com/dir/")
	g := newLinkGraph(3)
	long := "/" + strings.Repeat("x", maxURLBytes)
	ids := g.addPage(base, "example.com", []string{"a", "/dir/a#x", "https://www.example.com/dir/a", "https://other.example/", long, "b", "javascript:x"})
	if len(ids) != 2 || len(g.urls) != 2 || g.urls[ids[0]] != "https://example.com/dir/a" {
		t.Fatalf("ids %v, urls %q; want a and b once", ids, g.urls)
	}
	ids = g.addPage(base, "example.com", []string{"c", "d", "e", "a"})
	if len(ids) != 2 || len(g.urls) != 3 || g.dropped != 2 {
		t.Errorf("ids %v, urls %q, dropped %d; want c and a, 3 URLs, 2 dropped", ids, g.urls, g.dropped)
	}
}

// TestLinkGraphByteBound: URLs of 2,000 bytes fill the graph's byte budget long before its
// URL limit; what does not fit is counted, not kept.
func TestLinkGraphByteBound(t *testing.T) {
	base, _ := url.Parse("https://example.com/")
	g := newLinkGraph(maxLinkTargets)
	long := strings.Repeat("x", 2000)
	for page := range 2 {
		hrefs := make([]string, maxLinks)
		for i := range hrefs {
			hrefs[i] = "/" + long + strconv.Itoa(page*maxLinks+i)
		}
		g.addPage(base, "example.com", hrefs)
	}
	if g.bytes > maxLinkBytes || len(g.urls) >= maxLinkTargets || g.dropped == 0 || len(g.urls)+g.dropped != 2*maxLinks {
		t.Errorf("%d URLs of %d bytes, %d dropped; want at most %d bytes and the rest dropped", len(g.urls), g.bytes, g.dropped, maxLinkBytes)
	}
}
