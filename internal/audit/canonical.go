package audit

import (
	"net/url"

	"github.com/contentapi/contentapi/internal/analysis"
	"github.com/contentapi/contentapi/internal/crawler"
)

// Canonical: the URL a page names as the one to index, and where that leads.

// Canonical issue types.
const (
	CanonicalMissing        = "canonical_missing"
	CanonicalMultiple       = "canonical_multiple"
	CanonicalRelative       = "canonical_relative"
	CanonicalToNon200       = "canonical_to_non_200"
	CanonicalToRedirect     = "canonical_to_redirect"
	CanonicalToNoindex      = "canonical_to_noindex"
	CanonicalToNonCanonical = "canonical_to_non_canonical"
	CanonicalHeaderMismatch = "canonical_header_mismatch"
	CanonicalToOtherHost    = "canonical_to_other_host"
)

func init() {
	register(Check{Type: CanonicalToNon200, Severity: SeverityError, Category: CategoryCanonical, Scope: Every,
		Threshold: "the canonical URL was crawled and its final answer is not 200, or none came",
		Page: canonicalTarget(func(t *crawler.Page) (string, bool) {
			return statusValue(*t), t.Status != 200
		})})
	register(Check{Type: CanonicalToNoindex, Severity: SeverityError, Category: CategoryCanonical, Scope: Every,
		Threshold: "the canonical URL was crawled and is noindex",
		Page: canonicalTarget(func(t *crawler.Page) (string, bool) {
			return "", t.Noindex && t.Status/100 == 2
		})})
	register(Check{Type: CanonicalMultiple, Severity: SeverityWarning, Category: CategoryCanonical, Scope: Every,
		Threshold: "more than one <link rel=canonical>: search engines may ignore them all",
		Page:      over(func(p *Page) int { return len(p.Facts.Canonicals) }, 1, "canonicals")})
	register(Check{Type: CanonicalToRedirect, Severity: SeverityWarning, Category: CategoryCanonical, Scope: Every,
		Threshold: "the canonical URL was crawled and redirects",
		Page: canonicalTarget(func(t *crawler.Page) (string, bool) {
			return t.FinalURL, t.Redirected // Fetched found t under the canonical URL, so that URL redirects
		})})
	register(Check{Type: CanonicalToNonCanonical, Severity: SeverityWarning, Category: CategoryCanonical, Scope: Every,
		Threshold: "the canonical URL was crawled and names yet another URL as canonical",
		Page: canonicalTarget(func(t *crawler.Page) (string, bool) {
			return t.Canonical, IsContent(*t) && CanonicalElsewhere(*t)
		})})
	register(Check{Type: CanonicalHeaderMismatch, Severity: SeverityWarning, Category: CategoryCanonical, Scope: Every,
		Threshold: "the <link rel=canonical> and the Link: rel=canonical header name different URLs",
		Page: func(p *Page) (Item, bool) {
			h := p.Facts.CanonicalHeader
			return Item{Target: h, Value: "html: " + p.Canonical},
				h != "" && p.Canonical != "" && analysis.NormalizeURL(h) != analysis.NormalizeURL(p.Canonical)
		}})
	register(Check{Type: CanonicalToOtherHost, Severity: SeverityWarning, Category: CategoryCanonical, Scope: Every,
		Threshold: "the canonical URL (HTML or header) is on another host: the page gives its ranking away",
		Page: func(p *Page) (Item, bool) {
			c := canonicalOf(p)
			return Item{Target: c}, c != "" && hostOf(c) != hostOf(p.FinalURL)
		}})
	register(Check{Type: CanonicalMissing, Severity: SeverityNotice, Category: CategoryCanonical, Scope: Every,
		Threshold: "no canonical link, in HTML or header",
		Page:      func(p *Page) (Item, bool) { return Item{}, canonicalOf(p) == "" }})
	register(Check{Type: CanonicalRelative, Severity: SeverityNotice, Category: CategoryCanonical, Scope: Every,
		Threshold: "the canonical link is written without scheme and host",
		Page: func(p *Page) (Item, bool) {
			if len(p.Facts.Canonicals) == 0 {
				return Item{}, false
			}
			u, err := url.Parse(p.Facts.Canonicals[0])
			return Item{Value: p.Facts.Canonicals[0]}, err != nil || u.Scheme == "" || u.Host == ""
		}})
}

// canonicalOf is the page's canonical URL: its <link rel=canonical>, else its header's.
func canonicalOf(p *Page) string {
	if p.Canonical != "" {
		return p.Canonical
	}
	return p.Facts.CanonicalHeader
}

// canonicalTarget judges the crawled page a page's canonical names, when it names another
// URL and that URL was crawled; bad returns the item's value and whether it is at fault.
func canonicalTarget(bad func(t *crawler.Page) (string, bool)) func(*Page) (Item, bool) {
	return func(p *Page) (Item, bool) {
		c := canonicalOf(p)
		if c == "" || analysis.NormalizeURL(c) == analysis.NormalizeURL(p.FinalURL) {
			return Item{}, false
		}
		t := p.site.Fetched(c)
		if t == nil {
			return Item{}, false
		}
		v, ok := bad(t)
		return Item{Target: c, Value: v}, ok
	}
}

// hostOf is a URL's host, lower-case, without www.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return analysis.NormalizeURL(u.Scheme + "://" + u.Host)
}
