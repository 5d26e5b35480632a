package audit

import (
	"cmp"
	"slices"
	"strings"

	"github.com/contentapi/contentapi/internal/analysis"
	"github.com/contentapi/contentapi/internal/crawler"
)

// Page is one HTML page of the site as the checks see it.
type Page struct {
	crawler.Page
	// Indexable: not noindex, and its canonical link names itself or nothing.
	Indexable bool

	site *Site // the site it belongs to, for thresholds
}

// Site is a crawl with the indexes the checks need.
type Site struct {
	// Result is the whole crawl: every URL fetched, broken links, sitemaps. Never nil.
	Result *crawler.Result
	// Pages are the site's HTML pages that answered 2xx, one per final URL, sorted by it;
	// FinalURL is always set.
	Pages []*Page
	// ThinWords is the main-content word count under which a page is thin.
	ThinWords int

	listed  []*crawler.Page          // every fetched URL, sorted by URL as asked for
	byFinal map[string]*Page         // content pages by normalised final URL
	fetched map[string]*crawler.Page // every fetched URL, as asked for and as ended, normalised
}

// NewSite indexes a crawl. pages are its content pages (2xx HTML of the site, one per final
// URL, sorted by it), as the caller chose them from res; res may be nil.
func NewSite(res *crawler.Result, pages []crawler.Page, thinWords int) *Site {
	if res == nil {
		res = &crawler.Result{}
	}
	s := &Site{Result: res, ThinWords: thinWords, byFinal: map[string]*Page{}, fetched: map[string]*crawler.Page{}}
	for _, cp := range pages {
		cp.FinalURL = cmp.Or(cp.FinalURL, cp.URL)
		p := &Page{Page: cp, Indexable: excludedReason(cp) == "", site: s}
		s.Pages = append(s.Pages, p)
		s.byFinal[analysis.NormalizeURL(p.FinalURL)] = p
	}
	for i := range res.Pages {
		p := &res.Pages[i]
		s.listed = append(s.listed, p)
		for _, u := range []string{p.URL, p.FinalURL} {
			if k := analysis.NormalizeURL(u); k != "" {
				if _, ok := s.fetched[k]; !ok || u == p.URL {
					s.fetched[k] = p // a URL asked for wins over the same URL reached by redirect
				}
			}
		}
	}
	slices.SortStableFunc(s.listed, func(a, b *crawler.Page) int { return strings.Compare(a.URL, b.URL) })
	return s
}

// Fetched returns what the crawl got for a URL: the page fetched under that URL or, when
// none was, a page whose redirects ended there (seen as that URL, so not as a redirect);
// nil when it was not fetched.
func (s *Site) Fetched(u string) *crawler.Page {
	p := s.fetched[analysis.NormalizeURL(u)]
	if p == nil || analysis.NormalizeURL(p.URL) == analysis.NormalizeURL(u) {
		return p
	}
	arrived := *p
	arrived.URL, arrived.Redirected = arrived.FinalURL, false
	return &arrived
}

// ContentPage returns the site's HTML page whose final URL is u, nil when none.
func (s *Site) ContentPage(u string) *Page {
	if u == "" {
		return nil
	}
	return s.byFinal[analysis.NormalizeURL(u)]
}

// Listed returns every fetched URL of the crawl sorted by URL as asked for; the pages are
// the Result's, not to be changed.
func (s *Site) Listed() []*crawler.Page { return s.listed }

// excluded counts the pages left out of the checks of indexable pages, by reason.
func (s *Site) excluded() map[string]int {
	out := map[string]int{}
	for _, p := range s.Pages {
		if r := excludedReason(p.Page); r != "" {
			out[r]++
		}
	}
	return out
}

// Reasons a page is left out of the checks of indexable pages.
const (
	ExcludedNoindex       = "noindex"
	ExcludedCanonicalised = "canonicalised"
)

func excludedReason(p crawler.Page) string {
	switch {
	case p.Noindex:
		return ExcludedNoindex
	case CanonicalElsewhere(p):
		return ExcludedCanonicalised
	}
	return ""
}

// CanonicalElsewhere reports a page whose canonical link names another URL.
func CanonicalElsewhere(p crawler.Page) bool {
	return p.Canonical != "" && analysis.NormalizeURL(p.Canonical) != analysis.NormalizeURL(cmp.Or(p.FinalURL, p.URL))
}

// IsContent reports a page of the site that answered 2xx with an HTML document.
func IsContent(p crawler.Page) bool {
	return p.Status/100 == 2 && p.Error == "" && !p.OffSite && isHTML(p.ContentType)
}

func isHTML(mediaType string) bool {
	return mediaType == "text/html" || mediaType == "application/xhtml+xml"
}
