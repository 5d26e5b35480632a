package audit

import (
	"net/url"
	"strconv"
)

// Links: between the site's pages.

// Link issue types.
const (
	BrokenInternalLink = "broken_internal_link"
	OrphanPage         = "orphan_page"
)

func init() {
	register(Check{Type: BrokenInternalLink, Severity: SeverityError, Category: CategoryLinks,
		Threshold: "URL of the site linked from a crawled page answering 4xx/5xx (after redirects) or not at all",
		Site: func(s *Site) []Item {
			var items []Item
			for _, b := range s.Result.BrokenLinks {
				it := Item{URL: b.URL, Value: b.Error}
				if b.Status > 0 {
					it.Value = strconv.Itoa(b.Status)
				}
				if len(b.LinkedFrom) > 0 {
					it.Source = b.LinkedFrom[0]
				}
				items = append(items, it)
			}
			return items
		}})
	register(Check{Type: OrphanPage, Severity: SeverityWarning, Category: CategoryLinks,
		Threshold: "sitemap page (not the home page) no crawled page links to; only when pages came from sitemaps",
		Site: func(s *Site) []Item {
			if !s.Result.FromSitemap {
				return nil
			}
			var items []Item
			for _, p := range s.Pages {
				if p.Inlinks == 0 && !isHome(p.FinalURL) {
					items = append(items, Item{URL: p.FinalURL})
				}
			}
			return items
		}})
}

// isHome reports the site's root URL, the entry point, which needs no link to it.
func isHome(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Path == "" || u.Path == "/") && u.RawQuery == ""
}
