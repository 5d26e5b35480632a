package audit

import (
	"strconv"

	"github.com/contentapi/contentapi/internal/crawler"
)

// Indexability: what search engines may index, and what the sitemap offers them.

// Indexability issue types.
const (
	SitemapNon200        = "sitemap_non_200"
	SitemapRedirect      = "sitemap_redirect"
	SitemapNoindex       = "sitemap_noindex"
	SitemapCanonicalised = "sitemap_canonicalised"
	NoindexPage          = "noindex_page"
	NofollowPage         = "nofollow_page"
	NosnippetPage        = "nosnippet_page"
	NoimageindexPage     = "noimageindex_page"
)

func init() {
	register(Check{Type: SitemapNon200, Severity: SeverityError, Category: CategoryIndexability,
		Threshold: "sitemap URL whose final answer is not 200, or no answer",
		Site: unlinked(sitemapURLs(func(p crawler.Page) (Item, bool) {
			return Item{Value: statusValue(p)}, p.Status != 200
		}))})
	register(Check{Type: SitemapNoindex, Severity: SeverityError, Category: CategoryIndexability,
		Threshold: "sitemap URL answering 2xx with noindex (meta robots or X-Robots-Tag)",
		Site: sitemapURLs(func(p crawler.Page) (Item, bool) {
			return Item{}, p.Noindex && p.Status/100 == 2
		})})
	register(Check{Type: SitemapRedirect, Severity: SeverityWarning, Category: CategoryIndexability,
		Threshold: "sitemap URL that redirects",
		Site: sitemapURLs(func(p crawler.Page) (Item, bool) {
			return Item{Target: p.FinalURL, Value: strconv.Itoa(p.Status)}, p.Redirected
		})})
	register(Check{Type: SitemapCanonicalised, Severity: SeverityWarning, Category: CategoryIndexability,
		Threshold: "sitemap page whose canonical names another URL",
		Site: sitemapURLs(func(p crawler.Page) (Item, bool) {
			return Item{Target: p.Canonical}, IsContent(p) && CanonicalElsewhere(p)
		})})
	// Directives a site may mean: notices, so that one meant shows in the answer without
	// lowering the health score.
	for _, d := range []struct {
		typ, what string
		set       func(p *Page) bool
	}{
		{NoindexPage, "noindex: kept out of search results", func(p *Page) bool { return p.Noindex }},
		{NofollowPage, "nofollow: its links pass nothing", func(p *Page) bool { return p.Facts.Nofollow }},
		{NosnippetPage, "nosnippet: no text shown under its result", func(p *Page) bool { return p.Facts.Nosnippet }},
		{NoimageindexPage, "noimageindex: its images kept out of image search", func(p *Page) bool { return p.Facts.Noimageindex }},
	} {
		register(Check{Type: d.typ, Severity: SeverityNotice, Category: CategoryIndexability, Scope: Every,
			Threshold: "meta robots/googlebot or X-Robots-Tag says " + d.what,
			Page:      func(p *Page) (Item, bool) { return Item{}, d.set(p) }})
	}
}

// sitemapURLs runs a check over every URL the sitemaps listed, by URL as listed, when the
// pages came from sitemaps. A linked URL redirecting to a listed one is not listed itself:
// the redirect checks judge it.
func sitemapURLs(match func(p crawler.Page) (Item, bool)) func(s *Site) []Item {
	return func(s *Site) []Item {
		if !s.Result.FromSitemap {
			return nil
		}
		var items []Item
		for _, p := range s.Listed() {
			if !p.InSitemap {
				continue // found by following links: no sitemap entry to judge
			}
			if it, ok := match(*p); ok {
				it.URL = p.URL
				items = append(items, it)
			}
		}
		return items
	}
}

// statusValue is a page's final status, or its error when no answer came.
func statusValue(p crawler.Page) string {
	if p.Status > 0 {
		return strconv.Itoa(p.Status)
	}
	return p.Error
}
