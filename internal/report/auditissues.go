package report

import (
	"cmp"
	"net/url"
	"slices"
	"strings"

	"github.com/contentapi/contentapi/internal/analysis"
	"github.com/contentapi/contentapi/internal/crawler"
)

// Audit issue types: what site auditors check first. docs/analysis.md says how each is
// found.
const (
	IssueMissingTitle             = "missing_title"
	IssueDuplicateTitle           = "duplicate_title"
	IssueMissingMetaDescription   = "missing_meta_description"
	IssueDuplicateMetaDescription = "duplicate_meta_description"
	IssueMissingH1                = "missing_h1"
	IssueMultipleH1               = "multiple_h1"
	IssueSitemapNon200            = "sitemap_non_200"
	IssueSitemapRedirect          = "sitemap_redirect"
	IssueSitemapNoindex           = "sitemap_noindex"
	IssueSitemapCanonicalised     = "sitemap_canonicalised"
	IssueBrokenInternalLink       = "broken_internal_link"
	IssueOrphanPage               = "orphan_page"
)

// Issue severities.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
	SeverityNotice  = "notice"
)

// MaxIssueURLs bounds the URLs (and links, redirects) listed per issue; Count says how many
// there are in all. With at most 12 issues of URLs of at most 2,048 bytes the list stays far
// under the crawler's 8 MiB result limit, however large the site.
const MaxIssueURLs = 100

// issueTypes are the issue types in the order the answer lists them: errors first.
var issueTypes = []struct{ typ, severity string }{
	{IssueMissingTitle, SeverityError},
	{IssueSitemapNon200, SeverityError},
	{IssueSitemapNoindex, SeverityError},
	{IssueBrokenInternalLink, SeverityError},
	{IssueDuplicateTitle, SeverityWarning},
	{IssueMissingMetaDescription, SeverityWarning},
	{IssueMissingH1, SeverityWarning},
	{IssueSitemapRedirect, SeverityWarning},
	{IssueSitemapCanonicalised, SeverityWarning},
	{IssueOrphanPage, SeverityWarning},
	{IssueDuplicateMetaDescription, SeverityNotice},
	{IssueMultipleH1, SeverityNotice},
}

// AuditIssue is one type of problem found and the URLs that have it. Count is the number of
// URLs affected; URLs lists the first MaxIssueURLs of them. Broken links also carry their
// details (links) and sitemap redirects where they lead (redirects), bounded alike.
type AuditIssue struct {
	Type      string          `json:"type"`
	Severity  string          `json:"severity"`
	Count     int             `json:"count"`
	URLs      []string        `json:"urls"`
	Links     []BrokenLink    `json:"links,omitempty"`
	Redirects []IssueRedirect `json:"redirects,omitempty"`
}

// BrokenLink is a broken internal link: the URL linked to, its final status (null when no
// answer came) or the error, and the pages linking to it (the first five, sorted, with the
// total).
type BrokenLink struct {
	URL             string   `json:"url"`
	Status          *int     `json:"status"`
	Error           string   `json:"error,omitempty"`
	LinkedFrom      []string `json:"linked_from"`
	LinkedFromTotal int      `json:"linked_from_total"`
}

// IssueRedirect is a sitemap URL that redirected and where it ended.
type IssueRedirect struct {
	URL      string `json:"url"`
	FinalURL string `json:"final_url"`
	Status   int    `json:"status"` // the final answer's status
}

// findIssues runs every check on a crawl; the result has every type, in issueTypes order,
// with Count 0 for those not found.
func findIssues(res *crawler.Result, site crawledSite) []AuditIssue {
	found := map[string][]string{}
	var indexed []crawler.Page
	for _, p := range site.pages {
		if indexable(p) {
			indexed = append(indexed, p)
		}
	}
	found[IssueMissingTitle] = pagesWhere(indexed, func(p crawler.Page) bool { return blank(p.Title) })
	found[IssueDuplicateTitle] = duplicated(indexed, func(p crawler.Page) string { return p.Title })
	found[IssueMissingMetaDescription] = pagesWhere(indexed, func(p crawler.Page) bool { return blank(p.MetaDescription) })
	found[IssueDuplicateMetaDescription] = duplicated(indexed, func(p crawler.Page) string { return p.MetaDescription })
	found[IssueMissingH1] = pagesWhere(indexed, func(p crawler.Page) bool { return p.H1Count == 0 })
	found[IssueMultipleH1] = pagesWhere(indexed, func(p crawler.Page) bool { return p.H1Count > 1 })

	var redirects []IssueRedirect
	if res != nil && res.FromSitemap {
		listed := slices.Clone(res.Pages)
		slices.SortStableFunc(listed, func(a, b crawler.Page) int { return strings.Compare(a.URL, b.URL) })
		for _, p := range listed {
			if p.Source == crawler.SourceLinks {
				continue // found by links: no sitemap entry to judge
			}
			if p.Status != 200 {
				found[IssueSitemapNon200] = append(found[IssueSitemapNon200], p.URL)
			}
			if p.Redirected {
				found[IssueSitemapRedirect] = append(found[IssueSitemapRedirect], p.URL)
				redirects = append(redirects, IssueRedirect{URL: p.URL, FinalURL: p.FinalURL, Status: p.Status})
			}
			if p.Noindex && p.Status/100 == 2 {
				found[IssueSitemapNoindex] = append(found[IssueSitemapNoindex], p.URL)
			}
			if isContent(p) && canonicalElsewhere(p) {
				found[IssueSitemapCanonicalised] = append(found[IssueSitemapCanonicalised], p.URL)
			}
		}
		found[IssueOrphanPage] = pagesWhere(site.pages, func(p crawler.Page) bool { return p.Inlinks == 0 && !isHome(p.FinalURL) })
	}

	var broken []BrokenLink
	if res != nil {
		for _, b := range res.BrokenLinks {
			found[IssueBrokenInternalLink] = append(found[IssueBrokenInternalLink], b.URL)
			item := BrokenLink{URL: b.URL, Error: b.Error, LinkedFrom: nonNil(b.LinkedFrom), LinkedFromTotal: b.LinkedFromTotal}
			if b.Status > 0 {
				item.Status = &b.Status
			}
			broken = append(broken, item)
		}
	}

	out := make([]AuditIssue, 0, len(issueTypes))
	for _, it := range issueTypes {
		urls := found[it.typ]
		issue := AuditIssue{Type: it.typ, Severity: it.severity, Count: len(urls), URLs: capped(urls)}
		switch it.typ {
		case IssueBrokenInternalLink:
			issue.Links = capped(broken)
		case IssueSitemapRedirect:
			issue.Redirects = capped(redirects)
		}
		out = append(out, issue)
	}
	return out
}

// issueSummary counts every type's URLs, 0 included, so a client sees what was checked.
func issueSummary(all []AuditIssue) map[string]int {
	m := make(map[string]int, len(all))
	for _, is := range all {
		m[is.Type] = is.Count
	}
	return m
}

// foundIssues keeps the issues that have URLs.
func foundIssues(all []AuditIssue) []AuditIssue {
	out := []AuditIssue{}
	for _, is := range all {
		if is.Count > 0 {
			out = append(out, is)
		}
	}
	return out
}

// pagesWhere lists the final URLs of the pages that match, in page order (by URL).
func pagesWhere(pages []crawler.Page, match func(crawler.Page) bool) []string {
	var out []string
	for _, p := range pages {
		if match(p) {
			out = append(out, p.FinalURL)
		}
	}
	return out
}

// duplicated lists the pages whose text (title or description) another page shares,
// compared case-insensitively with whitespace folded; blank texts are left to the missing
// checks. Pages sharing a text are listed together, groups ordered by their first URL.
func duplicated(pages []crawler.Page, text func(crawler.Page) string) []string {
	groups := map[string][]string{}
	for _, p := range pages {
		if k := foldText(text(p)); k != "" {
			groups[k] = append(groups[k], p.FinalURL)
		}
	}
	var dups [][]string
	for _, urls := range groups {
		if len(urls) > 1 {
			dups = append(dups, urls) // pages come sorted by URL, so each group is too
		}
	}
	slices.SortFunc(dups, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	return slices.Concat(dups...)
}

func foldText(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

func blank(s string) bool { return strings.TrimSpace(s) == "" }

// isHome reports the site's root URL, the entry point, which needs no link to it.
func isHome(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Path == "" || u.Path == "/") && u.RawQuery == ""
}

// capped keeps the first MaxIssueURLs items; never nil, so it is written as [].
func capped[T any](s []T) []T {
	return nonNil(slices.Clone(s[:min(len(s), MaxIssueURLs)]))
}

// canonicalElsewhere reports a page whose canonical link names another URL.
func canonicalElsewhere(p crawler.Page) bool {
	return p.Canonical != "" && analysis.NormalizeURL(p.Canonical) != analysis.NormalizeURL(cmp.Or(p.FinalURL, p.URL))
}
