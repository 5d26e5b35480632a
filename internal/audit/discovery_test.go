package audit

import (
	"slices"
	"testing"

	"github.com/contentapi/contentapi/internal/crawler"
)

// discoveryTypes are the types of status.go, discovery.go and resources.go, tested here on
// crawl results (TestChecks covers the page facts' types).
var discoveryTypes = []string{Status3xx, Status4xx, Status5xx, Timeout, RedirectChain, RedirectLoop, MetaRefresh,
	BrokenFileLink, BrokenImage, LargeImage, BrokenExternalLink, LinkToRedirect, InternalNofollow, InsecureLink,
	TooManyLinks, DeadEndPage, DeepPage, SitemapOnlyPage, LinksOnlyPage, BlockedButReferenced, URLDuplicate, CrawlTrap}

// crawledSite builds a Site from a crawl result whose content pages are the 2xx HTML ones.
func crawledSite(res *crawler.Result) *Site {
	var pages []crawler.Page
	for _, p := range res.Pages {
		if p.Status/100 == 2 && p.Error == "" && !p.OffSite && p.ContentType == "text/html" {
			pages = append(pages, p)
		}
	}
	return NewSite(res, pages, 300)
}

// TestDiscoveryChecks: each status, link, discovery and resource check on a crawl that has
// its issue and on one that does not.
func TestDiscoveryChecks(t *testing.T) {
	const b = "https://example.com"
	chain := func(n int) []crawler.Hop { return make([]crawler.Hop, n) }
	links := func(o crawler.Outlinks) func(p *crawler.Page) { return func(p *crawler.Page) { p.Outlinks = &o } }
	img := func(u string, status int, size int64) crawler.Resource {
		return crawler.Resource{URL: b + u, Status: status, ContentLength: size, Image: true, LinkedFrom: []string{b + "/"}, LinkedFromTotal: 1}
	}
	tests := []struct {
		typ       string
		res       crawler.Result
		want      []string // item URLs
		wantValue string   // the first item's value, when set
	}{
		{Status4xx, crawler.Result{Pages: []crawler.Page{{URL: b + "/gone", Status: 404}, html(b+"/", nil)}}, []string{b + "/gone"}, "404"},
		{Status5xx, crawler.Result{Pages: []crawler.Page{{URL: b + "/err", Status: 503}, {URL: b + "/nf", Status: 404}}}, []string{b + "/err"}, "503"},
		{Timeout, crawler.Result{Pages: []crawler.Page{{URL: b + "/slow", Error: "Client.Timeout exceeded", ErrorKind: crawler.ErrorTimeout}, {URL: b + "/x", Error: "refused"}}}, []string{b + "/slow"}, ""},
		{RedirectLoop, crawler.Result{Pages: []crawler.Page{{URL: b + "/a", Error: "redirect loop", ErrorKind: crawler.ErrorRedirectLoop, RedirectChain: chain(2)}}}, []string{b + "/a"}, ""},
		{RedirectChain, crawler.Result{Pages: []crawler.Page{
			html(b+"/two", func(p *crawler.Page) { p.FinalURL, p.RedirectChain = b+"/end", chain(2) }),
			html(b+"/one", func(p *crawler.Page) { p.FinalURL, p.RedirectChain = b+"/end", chain(1) }),
			{URL: b + "/many", Error: "too many redirects", ErrorKind: crawler.ErrorTooManyRedirect}}}, []string{b + "/many", b + "/two"}, ""},
		{Status3xx, crawler.Result{Pages: []crawler.Page{html(b+"/one", func(p *crawler.Page) { p.FinalURL, p.RedirectChain = b+"/end", chain(1) }), html(b+"/end", nil)}}, []string{b + "/one"}, "1 redirect(s), then 200"},
		{MetaRefresh, crawler.Result{Pages: []crawler.Page{html(b+"/r", func(p *crawler.Page) { p.MetaRefresh = "0; url=/x" }), html(b+"/", nil)}}, []string{b + "/r"}, "0; url=/x"},
		{BrokenFileLink, crawler.Result{Resources: []crawler.Resource{{URL: b + "/a.pdf", Status: 404}, {URL: b + "/b.pdf", Status: 200}, {URL: b + "/c.json", Error: "refused"}, img("/i.png", 404, 0)}}, []string{b + "/a.pdf", b + "/c.json"}, "404"},
		{BrokenImage, crawler.Result{Resources: []crawler.Resource{img("/i.png", 410, 0), img("/ok.png", 200, 10), {URL: b + "/a.pdf", Status: 404}}}, []string{b + "/i.png"}, "410"},
		{LargeImage, crawler.Result{Resources: []crawler.Resource{img("/big.jpg", 200, 300<<10), img("/small.jpg", 200, 200<<10), img("/unknown.jpg", 200, -1)}}, []string{b + "/big.jpg"}, "300 KB"},
		{BrokenExternalLink, crawler.Result{Resources: []crawler.Resource{{URL: "https://other.example/x", Status: 404, External: true}, {URL: "https://other.example/y", Status: 200, External: true}, {URL: b + "/a.pdf", Status: 404}}}, []string{"https://other.example/x"}, ""},
		{LinkToRedirect, crawler.Result{RedirectLinks: []crawler.RedirectLink{{URL: b + "/old", Target: b + "/new", LinkedFrom: []string{b + "/"}, LinkedFromTotal: 1}}}, []string{b + "/old"}, ""},
		{InternalNofollow, crawler.Result{Pages: []crawler.Page{html(b+"/n", links(crawler.Outlinks{Nofollow: 2, NofollowURLs: []string{b + "/x"}})), html(b+"/", links(crawler.Outlinks{Internal: 3}))}}, []string{b + "/n"}, "2 link(s)"},
		{InsecureLink, crawler.Result{Pages: []crawler.Page{html(b+"/h", links(crawler.Outlinks{Insecure: 1, InsecureURLs: []string{"http://example.com/x"}})), html(b+"/", links(crawler.Outlinks{}))}}, []string{b + "/h"}, "1 link(s)"},
		{TooManyLinks, crawler.Result{Pages: []crawler.Page{html(b+"/many", links(crawler.Outlinks{Total: 100000, Read: 5000})), html(b+"/ok", links(crawler.Outlinks{Total: 500, Read: 500}))}}, []string{b + "/many"}, "100000 links (first 5000 read)"},
		{DeadEndPage, crawler.Result{Pages: []crawler.Page{html(b+"/end", links(crawler.Outlinks{External: 2})), html(b+"/", links(crawler.Outlinks{Internal: 1})), html(b+"/unread", nil)}}, []string{b + "/end"}, ""},
		{DeepPage, crawler.Result{Pages: []crawler.Page{html(b+"/d4", func(p *crawler.Page) { p.Depth = 4 }), html(b+"/d3", func(p *crawler.Page) { p.Depth = 3 }), html(b+"/none", func(p *crawler.Page) { p.Depth = -1 })}}, []string{b + "/d4"}, "4 clicks"},
		{SitemapOnlyPage, crawler.Result{FromSitemap: true, Pages: []crawler.Page{html(b+"/s", func(p *crawler.Page) { p.Source = crawler.SourceSitemap }), html(b+"/", func(p *crawler.Page) { p.Source = crawler.SourceSitemap }), html(b+"/both", func(p *crawler.Page) { p.Source = crawler.SourceBoth })}}, []string{b + "/s"}, ""},
		{LinksOnlyPage, crawler.Result{FromSitemap: true, Pages: []crawler.Page{html(b+"/l", func(p *crawler.Page) { p.Source = crawler.SourceLinks }), html(b+"/both", func(p *crawler.Page) { p.Source = crawler.SourceBoth })}}, []string{b + "/l"}, ""},
		{LinksOnlyPage, crawler.Result{Pages: []crawler.Page{html(b+"/l", func(p *crawler.Page) { p.Source = crawler.SourceLinks })}}, nil, ""}, // no sitemap: nothing to miss
		{BlockedButReferenced, crawler.Result{Blocked: []crawler.Blocked{{URL: b + "/private/a", InSitemap: true}, {URL: b + "/private/b", LinkedFrom: []string{b + "/"}, LinkedFromTotal: 3}, {URL: b + "/private/c"}}}, []string{b + "/private/a", b + "/private/b"}, "in a sitemap"},
		{CrawlTrap, crawler.Result{Traps: []crawler.Trap{{Kind: crawler.TrapQueryVariants, Path: "/calendar", Example: b + "/calendar?d=21", Dropped: 80}}}, []string{b + "/calendar?d=21"}, "80 URL(s) not crawled (query_variants)"},
		{URLDuplicate, crawler.Result{Pages: []crawler.Page{
			html(b+"/", nil), html(b+"/index.html", nil), // not redirected, not canonicalised
			html(b+"/docs/", nil), html(b+"/docs/index.html", func(p *crawler.Page) { p.Canonical = b + "/docs/" }), // canonicalised: one page
			html(b+"/old/index.html", func(p *crawler.Page) { p.FinalURL = b + "/old/" }), html(b+"/old/", nil), // redirected: one page
		}}, []string{b + "/index.html"}, ""},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		covered[tt.typ] = covered[tt.typ] || len(tt.want) > 0
	}
	for _, typ := range discoveryTypes {
		if !covered[typ] {
			t.Errorf("%s: no case flags a URL", typ)
		}
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			is := issue(t, Run(crawledSite(&tt.res)), tt.typ)
			var got []string
			for _, it := range is.Items {
				got = append(got, it.URL)
			}
			if !slices.Equal(got, tt.want) || is.Count != len(tt.want) {
				t.Fatalf("%s: items %q (count %d), want %q", tt.typ, got, is.Count, tt.want)
			}
			if tt.wantValue != "" && is.Items[0].Value != tt.wantValue {
				t.Errorf("%s: value %q, want %q", tt.typ, is.Items[0].Value, tt.wantValue)
			}
		})
	}
}
