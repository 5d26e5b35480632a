package audit

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/contentapi/contentapi/internal/analysis"
	"github.com/contentapi/contentapi/internal/crawler"
)

// Discovery: how the crawl reached the site's pages and what their links look like; the
// crawler's link reading, robots.txt and trap bounds feed these checks.

// Thresholds of the discovery checks.
const (
	// maxClickDepth: pages more clicks from the home page than this are hard to reach for
	// visitors and crawlers alike (Screaming Frog and Sitebulb flag depth > 3).
	maxClickDepth = 3
	// manyLinks: more links than this on one page dilute each one (Semrush: > 3,000,
	// SEOnaut: > 100; 500 keeps navigation-heavy docs quiet).
	manyLinks = 500
)

// Discovery issue types.
const (
	LinkToRedirect       = "link_to_redirect"
	InternalNofollow     = "internal_nofollow"
	InsecureLink         = "http_link_from_https"
	TooManyLinks         = "too_many_links"
	DeadEndPage          = "dead_end_page"
	DeepPage             = "deep_page"
	SitemapOnlyPage      = "sitemap_only_page"
	LinksOnlyPage        = "not_in_sitemap"
	BlockedButReferenced = "blocked_by_robots"
	URLDuplicate         = "url_duplicate"
	CrawlTrap            = "crawl_trap"
)

func init() {
	register(Check{Type: BlockedButReferenced, Severity: SeverityWarning, Category: CategoryIndexability,
		Threshold: "URL robots.txt disallows yet a sitemap lists or a crawled page links to",
		Site: func(s *Site) []Item {
			var items []Item
			for _, b := range s.Result.Blocked {
				if !b.InSitemap && b.LinkedFromTotal == 0 {
					continue
				}
				it := Item{URL: b.URL, Value: "in a sitemap"}
				if b.LinkedFromTotal > 0 {
					it.Source, it.Value = b.LinkedFrom[0], "linked from "+strconv.Itoa(b.LinkedFromTotal)+" page(s)"
				}
				items = append(items, it)
			}
			return items
		}})
	register(Check{Type: InsecureLink, Severity: SeverityWarning, Category: CategoryLinks, Scope: Every,
		Threshold: "an https page links to http:// URLs; value counts them, target names the first",
		Page:      outlinks(func(o *crawler.Outlinks) (int, []string) { return o.Insecure, o.InsecureURLs })})
	register(Check{Type: TooManyLinks, Severity: SeverityWarning, Category: CategoryLinks, Scope: Every,
		Threshold: "> " + strconv.Itoa(manyLinks) + " links on a page; beyond 5,000 they are not read",
		Page: func(p *Page) (Item, bool) {
			o := p.Outlinks
			if o == nil || o.Total <= manyLinks {
				return Item{}, false
			}
			v := strconv.Itoa(o.Total) + " links"
			if o.Read < o.Total {
				v += " (first " + strconv.Itoa(o.Read) + " read)"
			}
			return Item{URL: p.FinalURL, Value: v}, true
		}})
	register(Check{Type: CrawlTrap, Severity: SeverityWarning, Category: CategoryURLs,
		Threshold: "> 20 query-string variants of one path, or a path segment repeated 3 times; not crawled",
		Site: func(s *Site) []Item {
			var items []Item
			for _, t := range s.Result.Traps {
				items = append(items, Item{URL: t.Example, Target: t.Path, Value: strconv.Itoa(t.Dropped) + " URL(s) not crawled (" + t.Kind + ")"})
			}
			return items
		}})
	register(Check{Type: URLDuplicate, Severity: SeverityWarning, Category: CategoryURLs,
		Threshold: "two pages of the site whose URLs differ only by index file or trailing slash, neither redirecting nor canonicalised to the other",
		Site:      urlDuplicates})
	register(Check{Type: LinkToRedirect, Severity: SeverityNotice, Category: CategoryLinks,
		Threshold: "a crawled page links to a URL of the site that redirects; target is where it ends",
		Site: func(s *Site) []Item {
			var items []Item
			for _, r := range s.Result.RedirectLinks {
				it := Item{URL: r.URL, Target: r.Target}
				if len(r.LinkedFrom) > 0 {
					it.Source = r.LinkedFrom[0]
				}
				items = append(items, it)
			}
			return items
		}})
	register(Check{Type: InternalNofollow, Severity: SeverityNotice, Category: CategoryLinks, Scope: Every,
		Threshold: "rel=nofollow links to the site's own URLs; value counts them, target names the first",
		Page:      outlinks(func(o *crawler.Outlinks) (int, []string) { return o.Nofollow, o.NofollowURLs })})
	register(Check{Type: DeadEndPage, Severity: SeverityNotice, Category: CategoryLinks, Scope: Every,
		Threshold: "a page with no link to another URL of the site",
		Page: func(p *Page) (Item, bool) {
			return Item{URL: p.FinalURL}, p.Outlinks != nil && p.Outlinks.Internal == 0
		}})
	register(Check{Type: DeepPage, Severity: SeverityNotice, Category: CategoryLinks, Scope: Every,
		Threshold: "> " + strconv.Itoa(maxClickDepth) + " clicks from the home page (shortest chain of links between crawled pages)",
		Page: func(p *Page) (Item, bool) {
			return Item{URL: p.FinalURL, Value: strconv.Itoa(p.Depth) + " clicks"}, p.Depth > maxClickDepth
		}})
	register(Check{Type: SitemapOnlyPage, Severity: SeverityNotice, Category: CategoryLinks, Scope: Every,
		Threshold: "listed in a sitemap, but no chain of links from the home page reaches it",
		Page: func(p *Page) (Item, bool) {
			return Item{URL: p.FinalURL}, p.Source == crawler.SourceSitemap && !isHome(p.FinalURL)
		}})
	register(Check{Type: LinksOnlyPage, Severity: SeverityNotice, Category: CategoryLinks, Scope: Every,
		Threshold: "found by following links, listed in no sitemap; only when the site has one",
		Site: func(s *Site) []Item {
			if !s.Result.FromSitemap {
				return nil
			}
			var items []Item
			for _, p := range s.Pages {
				if p.Source == crawler.SourceLinks {
					items = append(items, Item{URL: p.FinalURL})
				}
			}
			return items
		}})
}

// outlinks is a page check on a count of the page's links and the first of them.
func outlinks(count func(o *crawler.Outlinks) (int, []string)) func(p *Page) (Item, bool) {
	return func(p *Page) (Item, bool) {
		if p.Outlinks == nil {
			return Item{}, false
		}
		n, urls := count(p.Outlinks)
		if n == 0 {
			return Item{}, false
		}
		it := Item{URL: p.FinalURL, Value: strconv.Itoa(n) + " link(s)"}
		if len(urls) > 0 {
			it.Target = urls[0]
		}
		return it, true
	}
}

// indexFiles are the names servers give a directory's page: /docs/ and /docs/index.html are
// one page.
var indexFiles = []string{"index.html", "index.htm", "index.php", "default.aspx", "default.htm"}

// variantKey folds the URL variants that usually serve one page: an index file name and a
// trailing slash (scheme, www and default ports are folded by NormalizeURL too).
func variantKey(raw string) string {
	n := analysis.NormalizeURL(raw)
	path, query, _ := strings.Cut(n, "?")
	for _, f := range indexFiles {
		if strings.HasSuffix(strings.ToLower(path), "/"+f) {
			path = strings.TrimRight(path[:len(path)-len(f)], "/")
			break
		}
	}
	return path + "?" + query
}

// urlDuplicates lists the HTML pages fetched under two URL variants (by final URL, so a
// variant redirecting to the other is one page) when neither names the other as canonical.
func urlDuplicates(s *Site) []Item {
	groups := map[string][]crawler.Page{}
	var order []string
	for _, p := range s.Listed() {
		if p.Status/100 != 2 || p.Error != "" || p.OffSite || (p.ContentType != "text/html" && p.ContentType != "application/xhtml+xml") {
			continue
		}
		final := cmp.Or(p.FinalURL, p.URL)
		k := variantKey(final)
		if len(groups[k]) == 0 {
			order = append(order, k)
		}
		if !slices.ContainsFunc(groups[k], func(o crawler.Page) bool { return cmp.Or(o.FinalURL, o.URL) == final }) {
			groups[k] = append(groups[k], *p)
		}
	}
	var items []Item
	for _, k := range order {
		g := groups[k]
		for _, p := range g[min(1, len(g)):] {
			first := g[0]
			if canonicalTo(p, first) || canonicalTo(first, p) {
				continue
			}
			items = append(items, Item{URL: cmp.Or(p.FinalURL, p.URL), Twin: cmp.Or(first.FinalURL, first.URL)})
		}
	}
	return items
}

// canonicalTo reports that p names other's final URL as its canonical.
func canonicalTo(p, other crawler.Page) bool {
	return p.Canonical != "" && analysis.NormalizeURL(p.Canonical) == analysis.NormalizeURL(cmp.Or(other.FinalURL, other.URL))
}
