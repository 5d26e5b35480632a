package report

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/contentapi/contentapi/internal/analysis"
	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/audit"
	"github.com/contentapi/contentapi/internal/crawler"
	"github.com/contentapi/contentapi/internal/keywords"
)

// defaultThinWords is the main-content word count under which a page is thin when
// Builder.ThinWords is not set.
const defaultThinWords = 300

// auditLanguage is the language titles are stemmed in for cannibalization; an audit request
// names no market, so the provider's rankings are read for us/en.
const (
	auditCountry  = "us"
	auditLanguage = "en"
)

// AuditPage is the API's audit page (docs/api.md), plus its HTTP status, noindex flag and canonical URL
// ("" when the page names none).
type AuditPage struct {
	URL             string `json:"url"` // final absolute URL, after redirects
	Title           string `json:"title"`
	WordCount       int    `json:"word_count"`
	MetaDescription string `json:"meta_description"`
	Status          int    `json:"status"`
	Noindex         bool   `json:"noindex"`
	Canonical       string `json:"canonical"`
	// Depth is the click depth from the home page; null when no chain of links reaches it.
	Depth *int `json:"depth"`
	// Source says how the crawl came to the page: sitemap, links or both.
	Source string `json:"source"`
	// Rendered is the page once its JavaScript ran, in an audit with render: javascript;
	// the fields above are read from the HTML as served.
	Rendered *crawler.Rendered `json:"rendered,omitempty"`
}

// ThinPage is the API's thin-content item.
type ThinPage struct {
	URL       string `json:"url"`
	WordCount int    `json:"word_count"`
	Title     string `json:"title"`
}

// CannibalRisk is an audit's cannibalization entry: URLs are absolute. Recommendation is the
// concrete advice (which URL to keep, which to merge and redirect); it is an addition to
// the two documented fields.
type CannibalRisk struct {
	Keyword        string   `json:"keyword"`
	URLs           []string `json:"urls"`
	Recommendation string   `json:"recommendation"`
}

// PageError is a URL of the site that gave no HTML page: an error status, a fetch error,
// a redirect to another site or a file that is not HTML. Status is null when no HTTP
// answer came.
type PageError struct {
	URL    string `json:"url"`
	Status *int   `json:"status"`
	Error  string `json:"error"`
}

// AuditSummary sums an audit up; every number agrees with the lists of the answer.
type AuditSummary struct {
	Total                 int `json:"total"` // = pages_crawled
	Thin                  int `json:"thin"`  // = len(thin_content)
	CannibalizationIssues int `json:"cannibalization_issues"`
	// AvgWords is the mean main-content word count of the counted pages, one decimal;
	// null when no page was counted.
	AvgWords *float64 `json:"avg_words"`
	// Issues counts the URLs of every issue type (0 when none): issues[i].count, an addition.
	Issues map[string]int `json:"issues"`
	// PagesFromSitemap counts the pages (of total) a sitemap lists; PagesFromLinks those
	// no sitemap lists, found by following links. Together they make total.
	PagesFromSitemap int `json:"pages_from_sitemap"`
	PagesFromLinks   int `json:"pages_from_links"`
	// HealthScore is 0-100: 100 × (pages without an error or warning + ½ × pages whose
	// worst issue is a warning) / pages; null when no page was counted.
	HealthScore *int `json:"health_score"`
	// Indexable counts the pages meant to rank (not noindex, not canonicalised elsewhere).
	Indexable int `json:"indexable"`
	// Excluded counts, by reason (noindex, canonicalised), the pages left out of the checks
	// that judge indexable pages only.
	Excluded map[string]int `json:"excluded"`
}

// AuditResult is the data of a content-audit answer. The documented fields come first; issues,
// errors, sitemaps, sitemap_errors, warnings and thin_threshold are additions.
type AuditResult struct {
	Domain               string                 `json:"domain"`
	PagesCrawled         int                    `json:"pages_crawled"`
	Pages                []AuditPage            `json:"pages"`
	ThinContent          []ThinPage             `json:"thin_content"`
	CannibalizationRisks []CannibalRisk         `json:"cannibalization_risks"`
	Summary              AuditSummary           `json:"summary"`
	Issues               []AuditIssue           `json:"issues"` // the types found, by impact (pages × severity weight)
	Errors               []PageError            `json:"errors"`
	Sitemaps             []string               `json:"sitemaps"`
	SitemapErrors        []crawler.SitemapError `json:"sitemap_errors"`
	Warnings             []string               `json:"warnings"`
	Changes              *AuditChanges          `json:"changes"` // since the account's previous audit of the domain (withChanges)
	ThinThreshold        int                    `json:"thin_threshold"`
	Render               string                 `json:"render"` // the request's render mode
	described                                   // data source "crawl"
}

// Audit crawls the site and reports its pages, thin content and cannibalization.
//
//   - pages_crawled and pages count the site's own pages that answered 2xx with HTML, one
//     per final URL (two listed URLs redirecting to one page count once), sorted by URL.
//     Error statuses, fetch errors, off-site redirects and non-HTML files are not content:
//     they are listed under errors instead.
//   - thin_content: counted pages with fewer main-content words than the threshold
//     (Builder.ThinWords, default 300), thinnest first; noindex pages and pages whose
//     canonical URL names another page are left out, since they are not meant to rank.
//   - cannibalization_risks: analysis.FindCannibalization over titles and H1s of the
//     counted pages plus the provider's rankings of the domain (us/en), with
//     analysis.CannibalAdvice as recommendation. When the provider fails, the title rule
//     alone is used and a warning says so.
//   - summary.avg_words is the mean word count of the counted pages, one decimal.
//   - issues: what site auditors check first (titles, descriptions, h1s, the sitemap's
//     URLs, broken internal links, orphan pages; see findIssues), counted per type in
//     summary.issues.
//
// A domain the crawler refuses is a VALIDATION_ERROR; a site that does not answer is
// SITE_UNREACHABLE. Both fail the job, which refunds it.
func (b *Builder) Audit(ctx context.Context, r AuditRequest) (AuditResult, error) {
	maxPages := crawler.DefaultMaxPages
	if r.MaxPages != nil {
		maxPages = *r.MaxPages
	}
	res, err := b.Crawler.Crawl(ctx, crawler.Request{Domain: r.Domain, SitemapURL: r.SitemapURL, MaxPages: maxPages,
		CheckLinks: true, CheckExternal: r.CheckExternal, Render: r.Rendered(), TTFBResampleOver: audit.MaxTTFB})
	if err != nil {
		return AuditResult{}, crawlFailure(r.Domain, err)
	}
	out := AuditResult{
		Domain:               r.Domain,
		Pages:                []AuditPage{},
		ThinContent:          []ThinPage{},
		CannibalizationRisks: []CannibalRisk{},
		Errors:               []PageError{},
		Sitemaps:             nonNil(res.Sitemaps),
		SitemapErrors:        nonNil(res.SitemapErrors),
		Warnings:             nonNil(slices.Clone(res.Warnings)),
		ThinThreshold:        b.thinWords(),
		Render:               r.Render,
	}
	if out.Render == "" {
		out.Render = RenderNone
	}
	site := splitPages(res)
	if site.duplicates > 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf("%d URL(s) led to a page already audited (redirects or duplicates); each page is counted once", site.duplicates))
	}
	totalWords := 0
	for _, p := range site.pages {
		out.Pages = append(out.Pages, AuditPage{URL: p.FinalURL, Title: p.Title, WordCount: p.WordCount,
			MetaDescription: p.MetaDescription, Status: p.Status, Noindex: p.Noindex, Canonical: p.Canonical,
			Depth: clickDepth(p), Source: p.Source, Rendered: p.Rendered})
		totalWords += p.WordCount
		if indexable(p) && p.WordCount < out.ThinThreshold {
			out.ThinContent = append(out.ThinContent, ThinPage{URL: p.FinalURL, WordCount: p.WordCount, Title: p.Title})
		}
	}
	slices.SortStableFunc(out.ThinContent, func(a, b ThinPage) int {
		if c := cmp.Compare(a.WordCount, b.WordCount); c != 0 {
			return c
		}
		return strings.Compare(a.URL, b.URL)
	})
	for _, p := range site.failed {
		out.Errors = append(out.Errors, pageError(p))
	}

	ranked, err := b.Keywords.Ranked(ctx, keywords.RankedRequest{Domain: stripWWW(r.Domain), Country: auditCountry, Language: auditLanguage})
	if err != nil {
		if ctx.Err() != nil {
			return AuditResult{}, fmt.Errorf("audit %s: ranked keywords: %w", r.Domain, err)
		}
		ranked = nil
		out.Warnings = append(out.Warnings, "ranking data unavailable; cannibalization was judged from titles and headings only")
	}
	signals := site.signals()
	for _, g := range analysis.FindCannibalization(signals, ranked, auditLanguage) {
		_, advice := analysis.CannibalAdvice(g, signals, ranked)
		out.CannibalizationRisks = append(out.CannibalizationRisks, CannibalRisk{Keyword: g.Keyword, URLs: g.URLs, Recommendation: advice})
	}

	issues, found := findIssues(res, site, out.ThinThreshold)
	for _, l := range slices.Sorted(maps.Keys(found.Limits)) {
		out.Warnings = append(out.Warnings, fmt.Sprintf("%d page(s) had %s", found.Limits[l], crawler.LimitReason(l)))
	}
	if found.Cut {
		out.Warnings = append(out.Warnings, fmt.Sprintf("issue lists were cut to %d MiB of URLs in all (errors first); every count is complete", audit.MaxListBytes>>20))
	}
	out.Issues = foundIssues(issues)
	out.PagesCrawled = len(out.Pages)
	out.Summary = AuditSummary{Total: out.PagesCrawled, Thin: len(out.ThinContent),
		CannibalizationIssues: len(out.CannibalizationRisks), AvgWords: mean1(totalWords, len(out.Pages)),
		Issues: issueSummary(issues), HealthScore: found.HealthScore, Indexable: found.Indexable, Excluded: found.Excluded}
	out.Summary.PagesFromSitemap, out.Summary.PagesFromLinks = pageSources(site.pages)
	out.meta = Meta{DataSource: sourceCrawl, Warnings: limitWarnings(res.Limits, maxPages)}
	return out, nil
}

// clickDepth is a page's depth, nil when links from the home page do not reach it.
func clickDepth(p crawler.Page) *int {
	if p.Depth < 0 {
		return nil
	}
	d := p.Depth
	return &d
}

// pageSources counts the pages a sitemap lists and those found by links alone.
func pageSources(pages []crawler.Page) (fromSitemap, fromLinks int) {
	for _, p := range pages {
		if p.Source == crawler.SourceLinks {
			fromLinks++
		} else {
			fromSitemap++
		}
	}
	return fromSitemap, fromLinks
}

// limitWarnings says which of the crawl's bounds were hit, for meta.warnings: an answer
// cut short by a limit must say so (the details are in data.warnings).
func limitWarnings(limits []string, maxPages int) []string {
	out := []string{}
	for _, l := range limits {
		switch l {
		case crawler.LimitPages:
			out = append(out, fmt.Sprintf("page limit reached: the site has more than max_pages (%d) URLs; raise max_pages to audit more", maxPages))
		case crawler.LimitLinksPerPage:
			out = append(out, "links per page limit reached: links beyond the first 5,000 of a page were not read")
		case crawler.LimitBytes:
			out = append(out, "page size limit reached: pages larger than the crawler's body limit were read up to it (page_too_large)")
		case crawler.LimitTraps:
			out = append(out, "crawl traps bounded: endless query-string variants or repeated path segments were not crawled")
		case crawler.LimitLinkGraph:
			out = append(out, "linked URL limit reached: links to further URLs were neither checked nor counted")
		case crawler.LimitExternal:
			out = append(out, "external link limit reached: only the first 100 external URLs were checked")
		}
	}
	return out
}

// RenderingUnavailable is the error of a rendered audit no browser can run: refused by the
// API before any charge, or failing (and refunded) on a worker without a browser.
func RenderingUnavailable() error {
	return apperr.New(apperr.RenderingUnavailable,
		`No worker can render JavaScript right now; nothing was charged. Retry later, or audit without "render": "javascript".`)
}

// crawlFailure turns a crawl error into what the caller is told: a refused domain is a
// VALIDATION_ERROR, a site that does not answer SITE_UNREACHABLE; cancellation and other
// errors pass through.
func crawlFailure(domain string, err error) error {
	switch {
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("crawl %s: %w", domain, err)
	case errors.Is(err, crawler.ErrForbiddenAddress), errors.Is(err, crawler.ErrInvalidDomain):
		return apperr.Invalid("domain %s cannot be crawled: it points to a private or reserved network address", domain)
	case errors.Is(err, crawler.ErrSiteUnreachable), errors.Is(err, crawler.ErrUnresolvable):
		return apperr.New(apperr.SiteUnreachable, "site %s could not be reached over https or http; check that the domain is spelled right and the site is up", domain)
	case errors.Is(err, crawler.ErrRenderUnavailable):
		return RenderingUnavailable()
	}
	return fmt.Errorf("crawl %s: %w", domain, err)
}

// crawlWarning is a short reason a crawl failed, for a warning of an answer that goes on
// without it.
func crawlWarning(domain string, err error) string {
	switch {
	case errors.Is(err, crawler.ErrForbiddenAddress), errors.Is(err, crawler.ErrInvalidDomain):
		return fmt.Sprintf("%s was not crawled: it points to a private or reserved network address", domain)
	case errors.Is(err, crawler.ErrSiteUnreachable), errors.Is(err, crawler.ErrUnresolvable):
		return fmt.Sprintf("%s could not be reached over https or http", domain)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("%s could not be crawled in time", domain)
	}
	return fmt.Sprintf("%s could not be crawled", domain)
}

// crawledSite is a crawl's pages split into the site's HTML pages and the rest.
type crawledSite struct {
	pages      []crawler.Page // 2xx HTML pages of the site, one per final URL, sorted by it
	failed     []crawler.Page // everything else, sorted by URL
	duplicates int            // listed URLs that led to a page already in pages
}

// splitPages sorts a crawl's pages into the site's HTML pages and the others. A nil result
// gives an empty site.
func splitPages(res *crawler.Result) crawledSite {
	var s crawledSite
	if res == nil {
		return s
	}
	all := slices.Clone(res.Pages)
	slices.SortStableFunc(all, func(a, b crawler.Page) int {
		if c := strings.Compare(finalURL(a), finalURL(b)); c != 0 {
			return c
		}
		return strings.Compare(a.URL, b.URL)
	})
	seen := make(map[string]bool)
	for _, p := range all {
		if !isContent(p) {
			s.failed = append(s.failed, p)
			continue
		}
		p.FinalURL = finalURL(p)
		key := analysis.NormalizeURL(p.FinalURL)
		if seen[key] {
			s.duplicates++
			continue
		}
		seen[key] = true
		s.pages = append(s.pages, p)
	}
	slices.SortStableFunc(s.failed, func(a, b crawler.Page) int { return strings.Compare(a.URL, b.URL) })
	return s
}

// isContent reports a page of the site that answered 2xx with an HTML document.
func isContent(p crawler.Page) bool { return audit.IsContent(p) }

func finalURL(p crawler.Page) string {
	if p.FinalURL != "" {
		return p.FinalURL
	}
	return p.URL
}

// indexable reports a content page meant to rank: not noindex, and not deferring to another
// URL through its canonical link.
func indexable(p crawler.Page) bool {
	return !p.Noindex && !audit.CanonicalElsewhere(p)
}

// signals are the pages as analysis sees them. Pages that cannot rank are passed as
// non-indexable, so ranking data pointing at them is ignored too.
func (s crawledSite) signals() []analysis.PageSignal {
	out := make([]analysis.PageSignal, 0, len(s.pages)+len(s.failed))
	for _, p := range s.pages {
		out = append(out, analysis.PageSignal{URL: p.FinalURL, Title: p.Title, H1: p.H1, Status: p.Status,
			Noindex: !indexable(p), WordCount: p.WordCount})
	}
	for _, p := range s.failed {
		if p.OffSite {
			continue // its status is another site's
		}
		status := p.Status
		if status/100 == 2 {
			status = 0 // answered, but not with a page: not indexable content
		}
		out = append(out, analysis.PageSignal{URL: p.URL, Status: status})
	}
	return out
}

// titles are the titles and H1s of the site's indexable pages: what its content covers.
func (s crawledSite) titles() []string {
	var out []string
	for _, p := range s.pages {
		if !indexable(p) {
			continue
		}
		for _, t := range []string{p.Title, p.H1} {
			if strings.TrimSpace(t) != "" {
				out = append(out, t)
			}
		}
	}
	return out
}

// urls are the final URLs of the site's pages.
func (s crawledSite) urls() []string {
	out := make([]string, len(s.pages))
	for i, p := range s.pages {
		out[i] = p.FinalURL
	}
	return out
}

func pageError(p crawler.Page) PageError {
	e := PageError{URL: p.URL}
	if p.Status > 0 {
		status := p.Status
		e.Status = &status
	}
	switch {
	case p.OffSite:
		e.Error = "redirects to another site: " + p.FinalURL
	case p.Error != "":
		e.Error = p.Error
	case p.Status/100 != 2:
		e.Error = fmt.Sprintf("HTTP %d %s", p.Status, http.StatusText(p.Status))
	default:
		ct := p.ContentType
		if ct == "" {
			ct = "unknown type"
		}
		e.Error = "not an HTML page (" + ct + ")"
	}
	e.Error = strings.TrimSpace(e.Error)
	return e
}

// mean1 is sum/n rounded to one decimal, nil when n is 0.
func mean1(sum, n int) *float64 {
	if n == 0 {
		return nil
	}
	v := math.Round(float64(sum)/float64(n)*10) / 10
	return &v
}

// nonNil makes a nil slice empty, so it is written as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// CSVRows are the answer's rows for CSV, the header first.
func (r AuditResult) CSVRows() [][]string {
	var rows [][]string
	thin := map[string]bool{}
	for _, t := range r.ThinContent {
		thin[t.URL] = true
	}
	cannibal := map[string][]string{}
	for _, c := range r.CannibalizationRisks {
		for _, u := range c.URLs {
			cannibal[u] = append(cannibal[u], c.Keyword)
		}
	}
	issues := pageIssues(r.Issues)
	rows = append(rows, []string{"url", "status", "title", "word_count", "meta_description", "thin", "noindex",
		"cannibalization_keywords", "depth", "source", "rendered_title", "rendered_word_count", "render_error", "issues"})
	for _, p := range r.Pages {
		row := []string{p.URL, strconv.Itoa(p.Status), p.Title, strconv.Itoa(p.WordCount), p.MetaDescription,
			strconv.FormatBool(thin[p.URL]), strconv.FormatBool(p.Noindex), strings.Join(cannibal[p.URL], "; "),
			intCell(p.Depth), p.Source, "", "", ""}
		if rd := p.Rendered; rd != nil && rd.Error != "" {
			row[12] = rd.Error
		} else if rd != nil {
			row[10], row[11] = rd.Title, strconv.Itoa(rd.WordCount)
		}
		rows = append(rows, append(row, strings.Join(issues[p.URL], "; ")))
	}
	for _, e := range r.Errors {
		status := ""
		if e.Status != nil {
			status = strconv.Itoa(*e.Status)
		}
		row := make([]string, 14)
		row[0], row[1], row[13] = e.URL, status, strings.Join(issues[e.URL], "; ")
		rows = append(rows, row)
	}
	return rows
}
