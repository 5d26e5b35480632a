// Package audit holds the site audit's checks: each issue type is one Check, registered by
// the file of its category (titles.go, content.go, links.go, ...), with its severity, its
// threshold and the reason beside it. Run applies every check to a crawl and returns the
// issues in the order the answer lists them. The package does no I/O: checks read the
// crawler's pages and facts only, so each is tested with a table of HTML snippets.
package audit

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Severities, worst first.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
	SeverityNotice  = "notice"
)

// Categories group issue types in the answer and in docs/audit-checks.md. categoryOrder
// lists them in the order issues of one severity are listed.
const (
	CategoryTitles         = "titles"
	CategoryContent        = "content"
	CategoryIndexability   = "indexability"
	CategoryLinks          = "links"
	CategoryStatus         = "status"
	CategoryCanonical      = "canonical"
	CategoryHreflang       = "hreflang"
	CategoryImages         = "images"
	CategoryStructuredData = "structured_data"
	CategoryPerformance    = "performance"
	CategorySecurity       = "security"
	CategoryURLs           = "urls"
	CategoryRendering      = "rendering"
)

var categoryOrder = []string{CategoryTitles, CategoryContent, CategoryIndexability, CategoryLinks,
	CategoryStatus, CategoryCanonical, CategoryHreflang, CategoryImages, CategoryStructuredData,
	CategoryPerformance, CategorySecurity, CategoryURLs, CategoryRendering}

// MaxItems bounds the URLs and items listed per issue; Count says how many there are in all.
const MaxItems = 100

// MaxListBytes bounds the bytes of the URLs and items of all issues together: with about
// a hundred types of a hundred URLs each, URLs of 2,048 bytes could otherwise fill tens of
// MiB. Issues are filled in answer order (errors first); past the budget the lists are
// cut, Count stays exact and Result.Cut says so.
const MaxListBytes = 2 << 20

// Scope says which pages a page check runs on.
type Scope int

const (
	// Indexable: content and template checks (the zero value). They run on every HTML
	// page, since a template fault hidden by a canonical or a noindex is still a fault,
	// but the items of pages not meant to rank (noindex, or canonicalised to another URL)
	// say so (Item.Excluded) and the issue counts them (Issue.Canonicalised, Issue.Noindex).
	Indexable Scope = iota
	// Every HTML page of the site.
	Every
	// OnlyIndexable: pages meant to rank only; the others are left out (thin content,
	// whose list in the answer is of indexable pages).
	OnlyIndexable
)

// Check is one issue type: what it is, how bad, and how it is found. Exactly one of Page
// and Site is set. Threshold says, in a few words, the rule or limit applied; it is the
// same text as the row of docs/audit-checks.md.
type Check struct {
	Type      string
	Severity  string
	Category  string
	Threshold string
	// Page judges one page; Scope says which pages it sees.
	Page  func(p *Page) (Item, bool)
	Scope Scope
	// Site judges the whole crawl, returning one item per URL with the issue.
	Site func(s *Site) []Item
}

// Item is one URL with an issue and the detail that makes it actionable.
type Item struct {
	URL    string `json:"url"`
	Source string `json:"source,omitempty"` // the page linking to URL
	Target string `json:"target,omitempty"` // where URL redirects, links or points to
	Twin   string `json:"twin,omitempty"`   // another URL with the same content
	Value  string `json:"value,omitempty"`  // what was measured, e.g. "712 ms", "81 chars"
	// InSitemap says a broken link's URL is also listed in a sitemap: one fault, reported
	// as the broken link, not again as a sitemap URL.
	InSitemap bool `json:"in_sitemap,omitempty"`
	// Excluded says why the page is not meant to rank (ExcludedCanonicalised,
	// ExcludedNoindex), for an issue of content and template checks found on such a page.
	Excluded string `json:"excluded,omitempty"`
}

// Issue is one issue type's findings: Count URLs have it, URLs and Items list the first
// MaxItems of them (one item per URL, in the same order).
type Issue struct {
	Type     string
	Severity string
	Category string
	Count    int
	URLs     []string
	Items    []Item
	// Canonicalised and Noindex count the items found on pages not meant to rank
	// (canonicalised elsewhere, noindex): a content check runs on them too.
	Canonicalised, Noindex int
	// Pages counts the site's pages the issue is held against (see impactOf); Impact is
	// Pages × the severity's weight, the key issues are ordered by.
	Pages, Impact int
}

// SeverityWeight is what one affected page weighs in an issue's impact: an error
// (a page or link that fails) outweighs three pages with a warning, a warning three with
// a notice. docs/audit-checks.md ("Order") lists the same weights.
var SeverityWeight = map[string]int{SeverityError: 9, SeverityWarning: 3, SeverityNotice: 1}

var registry []Check

// register adds a check; a duplicate type or an unknown severity or category is a
// programming error caught by any test of the package.
func register(c Check) {
	switch {
	case c.Type == "" || (c.Page == nil) == (c.Site == nil):
		panic(fmt.Sprintf("audit: check %q needs a type and exactly one of Page and Site", c.Type))
	case severityRank(c.Severity) < 0:
		panic(fmt.Sprintf("audit: check %q: unknown severity %q", c.Type, c.Severity))
	case !slices.Contains(categoryOrder, c.Category):
		panic(fmt.Sprintf("audit: check %q: unknown category %q", c.Type, c.Category))
	case slices.ContainsFunc(registry, func(o Check) bool { return o.Type == c.Type }):
		panic(fmt.Sprintf("audit: check %q registered twice", c.Type))
	}
	registry = append(registry, c)
}

// Checks returns every registered check in the order issues are listed: errors first,
// then warnings, then notices; within a severity by category, then as registered.
func Checks() []Check {
	out := slices.Clone(registry)
	slices.SortStableFunc(out, func(a, b Check) int {
		if c := cmp.Compare(severityRank(a.Severity), severityRank(b.Severity)); c != 0 {
			return c
		}
		return cmp.Compare(slices.Index(categoryOrder, a.Category), slices.Index(categoryOrder, b.Category))
	})
	return out
}

func severityRank(s string) int {
	return slices.Index([]string{SeverityError, SeverityWarning, SeverityNotice}, s)
}

// Result is what Run finds.
type Result struct {
	// Issues has every registered type, in Checks order, Count 0 for those not found.
	Issues []Issue
	// Indexable counts the site's pages meant to rank.
	Indexable int
	// Excluded counts, by reason, the pages left out of the checks of indexable pages.
	Excluded map[string]int
	// HealthScore is 0-100 (see healthScore); nil when the site has no page.
	HealthScore *int
	// Cut is set when MaxListBytes cut some issue's lists short.
	Cut bool
	// Limits counts, per bound (crawler.LimitImages, ...), the pages that reached it.
	Limits map[string]int
}

// Run applies every check to the site.
func Run(s *Site) Result {
	checks := Checks()
	res := Result{Issues: make([]Issue, 0, len(checks)), Excluded: s.excluded()}
	worst := map[string]int{} // page URL → worst severity rank found on it
	budget := MaxListBytes
	for _, c := range checks {
		items := c.run(s)
		pages := map[string]bool{}
		unplaced := 0 // items naming no page of the site: each is one place to fix
		for _, it := range items {
			if !s.blame(worst, pages, it, severityRank(c.Severity)) {
				unplaced++
			}
		}
		urls := make([]string, 0, min(len(items), MaxItems))
		for _, it := range items[:min(len(items), MaxItems)] {
			if budget -= 2*len(it.URL) + len(it.Source) + len(it.Target) + len(it.Twin) + len(it.Value); budget < 0 {
				res.Cut = true
				break
			}
			urls = append(urls, it.URL)
		}
		is := Issue{Type: c.Type, Severity: c.Severity, Category: c.Category,
			Count: len(items), URLs: urls, Items: slices.Clone(items[:len(urls)]),
			Pages: len(pages) + unplaced}
		is.Impact = is.Pages * SeverityWeight[c.Severity]
		for _, it := range items {
			switch it.Excluded {
			case ExcludedCanonicalised:
				is.Canonicalised++
			case ExcludedNoindex:
				is.Noindex++
			}
		}
		res.Issues = append(res.Issues, is)
	}
	// By impact, the greatest first; ties (and the types not found) keep Checks order.
	slices.SortStableFunc(res.Issues, func(a, b Issue) int { return cmp.Compare(b.Impact, a.Impact) })
	res.Limits = map[string]int{}
	for _, p := range s.Pages {
		if p.Indexable {
			res.Indexable++
		}
		for _, l := range p.Facts.Limits {
			res.Limits[l]++
		}
	}
	res.HealthScore = healthScore(s, worst)
	return res
}

func (c Check) run(s *Site) []Item {
	if c.Site != nil {
		return c.Site(s)
	}
	var items []Item
	for _, p := range s.Pages {
		if c.Scope == OnlyIndexable && !p.Indexable {
			continue
		}
		if it, ok := c.Page(p); ok {
			if it.URL == "" {
				it.URL = p.FinalURL
			}
			if c.Scope != Every {
				it.Excluded = excludedReason(p.Page)
			}
			items = append(items, it)
		}
	}
	return items
}

// blame records an item's severity against the site's pages it names: the URL itself, or
// the page linking to it (a broken link is its source page's fault), and adds them to
// pages; it reports whether the item named any page of the site. An item whose Target
// holds a #fragment (a link to a missing anchor) is its source page's fault alone.
func (s *Site) blame(worst map[string]int, pages map[string]bool, it Item, rank int) bool {
	named := false
	for i, u := range []string{it.URL, it.Source} {
		if i == 0 && it.Source != "" && strings.Contains(it.URL, "#") {
			continue
		}
		p := s.ContentPage(u)
		if p == nil {
			continue
		}
		named = true
		pages[p.FinalURL] = true
		if r, ok := worst[p.FinalURL]; !ok || rank < r {
			worst[p.FinalURL] = rank
		}
	}
	return named
}

// healthScore is 100 × (pages without an error or warning + ½ × pages whose worst issue
// is a warning) / pages, rounded: a page with an error counts 0, one with warnings ½, one
// with notices or nothing 1.
func healthScore(s *Site, worst map[string]int) *int {
	if len(s.Pages) == 0 {
		return nil
	}
	var points float64
	for _, p := range s.Pages {
		r, ok := worst[p.FinalURL]
		switch {
		case !ok || r == severityRank(SeverityNotice):
			points++
		case r == severityRank(SeverityWarning):
			points += 0.5
		}
	}
	score := int(100*points/float64(len(s.Pages)) + 0.5)
	return &score
}

// fold compares texts case-insensitively with whitespace runs folded.
func fold(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

func blank(s string) bool { return strings.TrimSpace(s) == "" }
