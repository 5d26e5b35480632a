package report

import (
	"github.com/contentapi/contentapi/internal/audit"
	"github.com/contentapi/contentapi/internal/crawler"
)

// Audit issue types of the first audits, kept by name for callers; internal/audit has
// every type, and docs/audit-checks.md says how each is found.
const (
	IssueMissingTitle             = audit.MissingTitle
	IssueDuplicateTitle           = audit.DuplicateTitle
	IssueMissingMetaDescription   = audit.MissingMetaDescription
	IssueDuplicateMetaDescription = audit.DuplicateMetaDescription
	IssueMissingH1                = audit.MissingH1
	IssueMultipleH1               = audit.MultipleH1
	IssueSitemapNon200            = audit.SitemapNon200
	IssueSitemapRedirect          = audit.SitemapRedirect
	IssueSitemapNoindex           = audit.SitemapNoindex
	IssueSitemapCanonicalised     = audit.SitemapCanonicalised
	IssueBrokenInternalLink       = audit.BrokenInternalLink
	IssueOrphanPage               = audit.OrphanPage
)

// Issue severities.
const (
	SeverityError   = audit.SeverityError
	SeverityWarning = audit.SeverityWarning
	SeverityNotice  = audit.SeverityNotice
)

// MaxIssueURLs bounds the URLs, items (and links, redirects) listed per issue; Count says
// how many there are in all. With about a hundred issue types of URLs of at most 2,048
// bytes the lists stay far under the crawler's 8 MiB result limit, however large the site.
const MaxIssueURLs = audit.MaxItems

// AuditIssue is one type of problem found and the URLs that have it. Count is the number of
// URLs affected; URLs lists the first MaxIssueURLs of them, and Items the same URLs with
// the detail that makes them actionable (the linking page, the redirect's target, the
// duplicate's twin, the measured value). Broken links and broken fragments also carry their
// details and linking pages (links, fragments), sitemap redirects where they lead
// (redirects), bounded alike.
type AuditIssue struct {
	Type     string       `json:"type"`
	Severity string       `json:"severity"`
	Category string       `json:"category"`
	Count    int          `json:"count"`
	URLs     []string     `json:"urls"`
	Items    []audit.Item `json:"items"`
	// Pages counts the site's pages the issue is held against; Impact is pages × the
	// severity's weight (error 9, warning 3, notice 1): issues are listed by it.
	Pages  int `json:"pages"`
	Impact int `json:"impact"`
	// Canonicalised and Noindex count the URLs found on pages not meant to rank; their
	// items say so (excluded).
	Canonicalised int             `json:"canonicalised"`
	Noindex       int             `json:"noindex"`
	Links         []BrokenLink    `json:"links,omitempty"`
	Redirects     []IssueRedirect `json:"redirects,omitempty"`
	// Fragments details broken_fragment as Links details broken links: each missing
	// fragment with the pages linking to it (the first five, sorted, with the total).
	Fragments []crawler.BrokenFragment `json:"fragments,omitempty"`
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
	// InSitemap says a sitemap lists the URL too: the fault is reported here, not again
	// as sitemap_non_200.
	InSitemap bool `json:"in_sitemap"`
}

// IssueRedirect is a sitemap URL that redirected and where it ended.
type IssueRedirect struct {
	URL      string `json:"url"`
	FinalURL string `json:"final_url"`
	Status   int    `json:"status"` // the final answer's status
}

// findIssues runs every check of internal/audit on a crawl; the result has every type, by
// impact (the greatest first, see audit.SeverityWeight), with Count 0 for those not found.
func findIssues(res *crawler.Result, site crawledSite, thinWords int) ([]AuditIssue, audit.Result) {
	found := audit.Run(audit.NewSite(res, site.pages, thinWords))
	out := make([]AuditIssue, 0, len(found.Issues))
	for _, is := range found.Issues {
		issue := AuditIssue{Type: is.Type, Severity: is.Severity, Category: is.Category, Count: is.Count,
			URLs: nonNil(is.URLs), Items: nonNil(is.Items), Pages: is.Pages, Impact: is.Impact,
			Canonicalised: is.Canonicalised, Noindex: is.Noindex}
		switch is.Type {
		case IssueBrokenInternalLink:
			issue.Links = brokenLinks(res)
		case IssueSitemapRedirect:
			issue.Redirects = sitemapRedirects(res, is.URLs)
		case audit.BrokenFragment:
			issue.Fragments = brokenFragments(res)
		}
		out = append(out, issue)
	}
	return out, found
}

// brokenLinks details the crawl's broken links, the first MaxIssueURLs of them.
func brokenLinks(res *crawler.Result) []BrokenLink {
	var broken []BrokenLink
	if res == nil {
		return []BrokenLink{}
	}
	for _, b := range res.BrokenLinks[:min(len(res.BrokenLinks), MaxIssueURLs)] {
		item := BrokenLink{URL: b.URL, Error: b.Error, LinkedFrom: nonNil(b.LinkedFrom), LinkedFromTotal: b.LinkedFromTotal, InSitemap: b.InSitemap}
		if b.Status > 0 {
			item.Status = &b.Status
		}
		broken = append(broken, item)
	}
	return nonNil(broken)
}

// brokenFragments details the crawl's broken fragments, the first MaxIssueURLs of them.
func brokenFragments(res *crawler.Result) []crawler.BrokenFragment {
	if res == nil {
		return []crawler.BrokenFragment{}
	}
	return nonNil(res.BrokenFragments[:min(len(res.BrokenFragments), MaxIssueURLs)])
}

// sitemapRedirects says where each listed sitemap URL that redirected ended.
func sitemapRedirects(res *crawler.Result, urls []string) []IssueRedirect {
	byURL := map[string]crawler.Page{}
	for _, p := range res.Pages {
		byURL[p.URL] = p
	}
	out := []IssueRedirect{}
	for _, u := range urls {
		p := byURL[u]
		out = append(out, IssueRedirect{URL: u, FinalURL: p.FinalURL, Status: p.Status})
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
