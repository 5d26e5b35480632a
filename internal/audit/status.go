package audit

import (
	"slices"
	"strconv"

	"github.com/contentapi/contentapi/internal/analysis"
	"github.com/contentapi/contentapi/internal/crawler"
)

// Status: how the site's URLs answered, every URL the crawl fetched (from sitemaps or
// links), by URL as asked for.

// Status issue types.
const (
	Status3xx     = "status_3xx"
	Status4xx     = "status_4xx"
	Status5xx     = "status_5xx"
	Timeout       = "timeout"
	RedirectChain = "redirect_chain"
	RedirectLoop  = "redirect_loop"
	MetaRefresh   = "meta_refresh"
)

func init() {
	register(Check{Type: Status4xx, Severity: SeverityError, Category: CategoryStatus,
		Threshold: "a fetched URL of the site whose final answer was 4xx",
		Site:      unlinked(fetchedURLs(func(p crawler.Page) bool { return p.Status/100 == 4 }))})
	register(Check{Type: Status5xx, Severity: SeverityError, Category: CategoryStatus,
		Threshold: "a fetched URL of the site whose final answer was 5xx",
		Site:      unlinked(fetchedURLs(func(p crawler.Page) bool { return p.Status/100 == 5 }))})
	register(Check{Type: Timeout, Severity: SeverityError, Category: CategoryStatus,
		Threshold: "no answer within the crawler's request timeout (15 s)",
		Site:      unlinked(fetchedURLs(func(p crawler.Page) bool { return p.ErrorKind == crawler.ErrorTimeout }))})
	register(Check{Type: RedirectLoop, Severity: SeverityError, Category: CategoryStatus,
		Threshold: "redirects lead back to a URL already on the way",
		Site:      fetchedURLs(func(p crawler.Page) bool { return p.ErrorKind == crawler.ErrorRedirectLoop })})
	register(Check{Type: RedirectChain, Severity: SeverityWarning, Category: CategoryStatus,
		Threshold: "more than 1 redirect before the final answer (or more than 5: not followed)",
		Site: fetchedURLs(func(p crawler.Page) bool {
			return len(p.RedirectChain) > 1 || p.ErrorKind == crawler.ErrorTooManyRedirect
		})})
	register(Check{Type: MetaRefresh, Severity: SeverityWarning, Category: CategoryStatus, Scope: Every,
		Threshold: `a <meta http-equiv="refresh"> tag: a slow, client-side redirect`,
		Page: func(p *Page) (Item, bool) {
			return Item{URL: p.FinalURL, Value: p.MetaRefresh}, p.MetaRefresh != ""
		}})
	register(Check{Type: Status3xx, Severity: SeverityNotice, Category: CategoryStatus,
		Threshold: "a fetched URL of the site that answered with a redirect; target is where it ended",
		Site:      fetchedURLs(func(p crawler.Page) bool { return len(p.RedirectChain) > 0 || p.Status/100 == 3 })})
}

// fetchedURLs runs a status check over every URL of the site the crawl fetched, by URL as
// asked for. Items name where redirects ended (target) and the status or error (value).
func fetchedURLs(match func(p crawler.Page) bool) func(s *Site) []Item {
	return func(s *Site) []Item {
		var items []Item
		for _, p := range s.Listed() {
			if p.OffSite || !match(*p) {
				continue
			}
			it := Item{URL: p.URL, Value: statusValue(*p)}
			if len(p.RedirectChain) > 0 {
				it.Target = p.FinalURL
				it.Value = strconv.Itoa(len(p.RedirectChain)) + " redirect(s), then " + it.Value
			}
			items = append(items, it)
		}
		return items
	}
}

// unlinked leaves out the URLs a crawled page links to that are broken: they are one fault,
// reported once, as broken_internal_link with the pages linking to them (saying when a
// sitemap lists them too). A URL no page links to (a sitemap's) stays a status or sitemap
// issue.
func unlinked(check func(s *Site) []Item) func(s *Site) []Item {
	return func(s *Site) []Item {
		broken := map[string]bool{}
		for _, b := range s.Result.BrokenLinks {
			broken[analysis.NormalizeURL(b.URL)] = true
		}
		items := check(s)
		return slices.DeleteFunc(items, func(it Item) bool { return broken[analysis.NormalizeURL(it.URL)] })
	}
}
