package audit

import (
	"net/url"
	"strconv"

	"github.com/contentapi/contentapi/internal/crawler"
)

// Links: between the site's pages.

// Link issue types.
const (
	BrokenInternalLink = "broken_internal_link"
	OrphanPage         = "orphan_page"
	BrokenFragment     = "broken_fragment"
	LinkNotCrawlable   = "link_not_crawlable"
	LinkTextEmpty      = "link_text_empty"
	LinkTextGeneric    = "link_text_generic"
)

func init() {
	register(Check{Type: BrokenInternalLink, Severity: SeverityError, Category: CategoryLinks,
		Threshold: "URL of the site linked from a crawled page answering 4xx/5xx (after redirects) or not at all",
		Site: func(s *Site) []Item {
			var items []Item
			for _, b := range s.Result.BrokenLinks {
				it := Item{URL: b.URL, Value: b.Error, InSitemap: b.InSitemap}
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
	register(Check{Type: BrokenFragment, Severity: SeverityWarning, Category: CategoryLinks,
		Threshold: "a link to #fragment of a crawled page of the site that has no element with that id and no <a name> of it",
		Site: func(s *Site) []Item {
			var items []Item
			for _, b := range s.Result.BrokenFragments {
				it := Item{URL: b.URL, Target: b.Target, Value: "#" + b.Fragment}
				if len(b.LinkedFrom) > 0 {
					it.Source = b.LinkedFrom[0]
				}
				items = append(items, it)
			}
			return items
		}})
	register(Check{Type: LinkNotCrawlable, Severity: SeverityWarning, Category: CategoryLinks,
		Threshold: "an <a> search engines cannot follow (Lighthouse's crawlable-anchors rule): href missing, javascript:void(0), file: or not a URL",
		Page:      linkProblems(func(p *Page) crawler.LinkProblems { return p.Facts.NotCrawlableLinks })})
	register(Check{Type: LinkTextEmpty, Severity: SeverityWarning, Category: CategoryLinks,
		Threshold: "a link with no text, no image alt, no aria-label or title: nothing says where it leads",
		Page:      linkProblems(func(p *Page) crawler.LinkProblems { return p.Facts.EmptyTextLinks })})
	register(Check{Type: LinkTextGeneric, Severity: SeverityNotice, Category: CategoryLinks,
		Threshold: `link text from Lighthouse's English list ("click here", "here", "read more", "more", "this", ...) ; links to the page itself, javascript:, mailto: and nofollow links left out`,
		Page:      linkProblems(func(p *Page) crawler.LinkProblems { return p.Facts.GenericTextLinks })})
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

// linkProblems finds a page with anchors of one kind; the value counts them and quotes
// the first, the target is its href as written.
func linkProblems(list func(p *Page) crawler.LinkProblems) func(p *Page) (Item, bool) {
	return func(p *Page) (Item, bool) {
		l := list(p)
		if l.Count == 0 {
			return Item{}, false
		}
		first := l.Examples[0]
		v := strconv.Itoa(l.Count) + " link(s)"
		if first.Text != "" {
			v += ", first " + strconv.Quote(first.Text)
		}
		return Item{Target: first.Href, Value: v}, true
	}
}

// isHome reports the site's root URL, the entry point, which needs no link to it.
func isHome(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Path == "" || u.Path == "/") && u.RawQuery == ""
}
