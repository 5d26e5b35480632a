package crawler

import (
	"context"
	"maps"
	"net/http"
	"net/url"
	"reflect"
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
	// /missing and /fails are found by links and fetched as pages.
	want := map[string]int{"/": 2, "/a": 2, "/b": 2, "/orphan": 0, "/old": 2, "/gone": 1, "/quiet": 0, "/missing": 1, "/fails?x=1": 1}
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
	// The unlisted pages were fetched once each; only the image was checked as a file;
	// disallowed and nofollow links were not requested.
	if res.LinksChecked != 1 || len(s.hitTimes("/missing")) != 1 || len(s.hitTimes("/fails")) != 1 || len(s.hitTimes("/img.png")) != 1 {
		t.Errorf("links checked %d, /missing hit %d, /fails hit %d, /img.png hit %d; want 1, 1, 1, 1", res.LinksChecked,
			len(s.hitTimes("/missing")), len(s.hitTimes("/fails")), len(s.hitTimes("/img.png")))
	}
	for _, p := range []string{"/private/x", "/unfollowed"} {
		if len(s.hitTimes(p)) != 0 {
			t.Errorf("%s requested", p)
		}
	}
	if len(res.Resources) != 1 || pathOf(res.Resources[0].URL) != "/img.png" || res.Resources[0].Status != http.StatusNotFound ||
		len(res.Resources[0].LinkedFrom) != 1 || pathOf(res.Resources[0].LinkedFrom[0]) != "/b" {
		t.Errorf("resources = %+v; want /img.png 404 from /b", res.Resources)
	}
	if len(res.Blocked) != 1 || pathOf(res.Blocked[0].URL) != "/private/x" || res.Blocked[0].InSitemap ||
		len(res.Blocked[0].LinkedFrom) != 1 || pathOf(res.Blocked[0].LinkedFrom[0]) != "/b" {
		t.Errorf("blocked = %+v; want /private/x linked from /b", res.Blocked)
	}
	if len(res.RedirectLinks) != 1 || pathOf(res.RedirectLinks[0].URL) != "/old" || pathOf(res.RedirectLinks[0].Target) != "/a" {
		t.Errorf("redirect links = %+v; want /old to /a", res.RedirectLinks)
	}
	place := map[string]string{}
	for p, page := range pages {
		place[p] = page.Source + " " + strconv.Itoa(page.Depth)
	}
	wantPlace := map[string]string{"/": "both 0", "/a": "both 1", "/b": "both 1", "/orphan": "sitemap -1", "/old": "both 1",
		"/gone": "both 1", "/quiet": "sitemap -1", "/missing": "links 1", "/fails?x=1": "links 2"}
	if !maps.Equal(place, wantPlace) {
		t.Errorf("source and depth = %v, want %v", place, wantPlace)
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
	// The home page and the sitemap's 6 other URLs come first; one URL found by links
	// fills the budget, and nothing is left for checks.
	if len(res.Pages) != 8 || res.LinksChecked != 0 || len(s.hitTimes("/img.png")) != 0 {
		t.Errorf("%d pages, %d links checked, /img.png hit %d; want 8, 0, 0",
			len(res.Pages), res.LinksChecked, len(s.hitTimes("/img.png")))
	}
	if !hasWarning(res, "linked URL(s) not checked") || !slices.Contains(res.Limits, LimitPages) {
		t.Errorf("warnings = %q, limits %q", res.Warnings, res.Limits)
	}
	fetched := pagesByPath(res)
	for _, b := range res.BrokenLinks {
		if _, ok := fetched[pathOf(b.URL)]; !ok {
			t.Errorf("unchecked %s reported broken: %+v", b.URL, b)
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
	if res.LinksChecked != 0 || len(s.hitTimes("/missing"))+len(s.hitTimes("/fails")) != 2 || hasWarning(res, "not checked") {
		t.Errorf("links checked %d, warnings %q; want no check and no note", res.LinksChecked, res.Warnings)
	}
	if len(res.BrokenLinks) != 3 || len(s.hitTimes("/img.png")) != 0 || pagesByPath(res)["/orphan"].Inlinks != 0 || pagesByPath(res)["/b"].Inlinks != 2 {
		t.Errorf("broken links %+v; want the fetched /fails, /gone and /missing, no file checked", res.BrokenLinks)
	}
}

// TestLinkGraphBounds: a page's links are recorded once each, other sites and over-long
// URLs are left out, and the graph stops growing at its limit, counting what it left out.
func TestLinkGraphBounds(t *testing.T) {
	base, _ := url.Parse("https://example.com/dir/")
	g := newLinkGraph(3)
	long := "/" + strings.Repeat("x", maxURLBytes)
	ids := g.addPage("src", "example.com", anchors(base, "a", "/dir/a#x", "https://www.example.com/dir/a", "https://other.example/", long, "b", "javascript:x"), false)
	if len(ids) != 2 || len(g.urls) != 2 || g.urls[ids[0]] != "https://example.com/dir/a" {
		t.Fatalf("ids %v, urls %q; want a and b once", ids, g.urls)
	}
	ids = g.addPage("src", "example.com", anchors(base, "c", "d", "e", "a"), false)
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
		g.addPage("src", "example.com", anchors(base, hrefs...), false)
	}
	if g.bytes > maxLinkBytes || len(g.urls) >= maxLinkTargets || g.dropped == 0 || len(g.urls)+g.dropped != 2*maxLinks {
		t.Errorf("%d URLs of %d bytes, %d dropped; want at most %d bytes and the rest dropped", len(g.urls), g.bytes, g.dropped, maxLinkBytes)
	}
}

// anchors resolves hrefs as <a> links of a page at base.
func anchors(base *url.URL, hrefs ...string) []resolvedLink {
	links := make([]link, len(hrefs))
	for i, h := range hrefs {
		links[i] = link{href: h, kind: linkAnchor}
	}
	return resolveLinks(base, links)
}

// TestOutlinkStats: only links to pages count (files a page loads and canonicals do not);
// nofollow and http:// links are counted among them, with the first named.
func TestOutlinkStats(t *testing.T) {
	base, _ := url.Parse("https://example.com/dir/")
	links := resolveLinks(base, []link{
		{href: "/img.png", kind: linkImage}, {href: "/app.js", kind: linkScript}, {href: "/", kind: linkCanonical},
		{href: "https://other.example/", kind: linkAnchor}, {href: "http://example.com/old", kind: linkAnchor},
		{href: "a", kind: linkAnchor, nofollow: true}, {href: "/frame", kind: linkFrame}, {href: "mailto:x@example.com", kind: linkAnchor},
	})
	o := outlinkStats(links, "example.com", true, 8, 9)
	want := Outlinks{Total: 9, Read: 8, Internal: 3, External: 1, Nofollow: 1, NofollowURLs: []string{"https://example.com/dir/a"},
		Insecure: 1, InsecureURLs: []string{"http://example.com/old"}}
	if !reflect.DeepEqual(*o, want) {
		t.Errorf("outlinks = %+v\nwant %+v", *o, want)
	}
	if o := outlinkStats(resolveLinks(base, []link{{href: "/img.png", kind: linkImage}}), "example.com", true, 1, 1); o.Internal != 0 {
		t.Errorf("a page loading only an image has %d internal links, want 0: a dead end", o.Internal)
	}
}

func TestRefreshTarget(t *testing.T) {
	for content, want := range map[string]string{
		"5; url=/next": "/next", "0;URL='/a b'": "/a b", `3; url="https://x.example/"`: "https://x.example/",
		"10": "", "0; /no-url-key": "", "0; url": "",
	} {
		if got := refreshTarget(content); got != want {
			t.Errorf("refreshTarget(%q) = %q, want %q", content, got, want)
		}
	}
}
