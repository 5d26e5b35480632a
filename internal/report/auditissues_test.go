package report

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/contentapi/contentapi/internal/audit"
	"github.com/contentapi/contentapi/internal/crawler"
)

// doc is an HTML page with a title, a description, h1s and links (paths or URLs); an empty
// title or description leaves the element out.
type doc struct {
	title, description string
	h1s                []string
	links              []string
	head               string // more head markup: robots meta, canonical
}

func (d doc) String() string {
	var b strings.Builder
	b.WriteString("<!doctype html><html><head>")
	if d.title != "" {
		b.WriteString("<title>" + html.EscapeString(d.title) + "</title>")
	}
	if d.description != "" {
		b.WriteString(`<meta name="description" content="` + html.EscapeString(d.description) + `">`)
	}
	b.WriteString(d.head + "</head><body><nav>")
	for _, l := range d.links {
		b.WriteString(`<a href="` + l + `">link</a> `)
	}
	b.WriteString("</nav><main>")
	for _, h := range d.h1s {
		b.WriteString("<h1>" + html.EscapeString(h) + "</h1>")
	}
	b.WriteString("<p>" + words(350) + "</p></main></body></html>")
	return b.String()
}

// issueSite is a sitemap site with one case of every issue type, each page otherwise sound.
func issueSite(t *testing.T) *testSite {
	s := newTestSite(t)
	listed := []string{"/", "/no-title", "/dup-a", "/dup-b", "/no-desc", "/desc-a", "/desc-b", "/no-h1", "/two-h1",
		"/gone", "/old", "/hidden", "/variant", "/lonely", "/dropped"}
	// Home links to every listed page but the orphan and /dropped (a 404 no page links),
	// and to an unlisted 404; every other page links home.
	var homeLinks []string
	for _, p := range listed[1:] {
		if p != "/lonely" && p != "/dropped" {
			homeLinks = append(homeLinks, p)
		}
	}
	homeLinks = append(homeLinks, "/missing")
	pages := map[string]doc{
		"/":         {title: "Acme", description: "Acme home", h1s: []string{"Acme"}, links: homeLinks},
		"/no-title": {description: "A page without a title", h1s: []string{"Untitled"}},
		"/dup-a":    {title: "Coffee Guide", description: "Guide one", h1s: []string{"Guide one"}},
		"/dup-b":    {title: " coffee  GUIDE ", description: "Guide two", h1s: []string{"Guide two"}},
		"/no-desc":  {title: "No description", h1s: []string{"No description"}},
		"/desc-a":   {title: "Desc A", description: "The same words", h1s: []string{"Desc A"}},
		"/desc-b":   {title: "Desc B", description: "the same  words", h1s: []string{"Desc B"}},
		"/no-h1":    {title: "No heading", description: "No h1 here"},
		"/two-h1":   {title: "Two headings", description: "Two h1s", h1s: []string{"First", "Second"}},
		"/hidden":   {title: "Hidden", description: "Noindex page", h1s: []string{"Hidden"}, head: `<meta name="robots" content="noindex">`},
		"/variant":  {title: "Variant", description: "Print version", h1s: []string{"Variant"}, head: `<link rel="canonical" href="/dup-b">`},
		"/lonely":   {title: "Lonely", description: "Nobody links here", h1s: []string{"Lonely"}},
	}
	for path, d := range pages {
		if path != "/" {
			d.links = append(d.links, "/")
		}
		s.serve(path, "text/html; charset=utf-8", d.String())
	}
	s.handle("/old", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/dup-a", http.StatusMovedPermanently)
	})
	s.sitemap(listed...)
	return s
}

func TestAuditIssues(t *testing.T) {
	t.Parallel()
	b := newBuilder(t)
	s := issueSite(t)
	res, err := b.Audit(context.Background(), normalized(t, &AuditRequest{Domain: s.domain()}).deref())
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		typ, severity string
		paths         []string
	}{
		{IssueMissingTitle, SeverityError, []string{"/no-title"}},
		{IssueSitemapNon200, SeverityError, []string{"/dropped"}},
		{IssueSitemapNoindex, SeverityError, []string{"/hidden"}},
		{IssueBrokenInternalLink, SeverityError, []string{"/gone", "/missing"}},
		{IssueDuplicateTitle, SeverityWarning, []string{"/dup-a", "/dup-b"}},
		{IssueMissingMetaDescription, SeverityWarning, []string{"/no-desc"}},
		{IssueMissingH1, SeverityWarning, []string{"/no-h1"}},
		{IssueSitemapRedirect, SeverityWarning, []string{"/old"}},
		{IssueSitemapCanonicalised, SeverityWarning, []string{"/variant"}},
		{IssueOrphanPage, SeverityWarning, []string{"/lonely"}},
		{IssueDuplicateMetaDescription, SeverityNotice, []string{"/desc-a", "/desc-b"}},
		{IssueMultipleH1, SeverityNotice, []string{"/two-h1"}},
	}
	// The discovery checks see /old redirecting; /gone and /missing, fetched as 4xx pages,
	// are broken links, reported once (not also status_4xx, nor /gone, which the sitemap
	// lists, sitemap_non_200); /dropped, which no page links, is a sitemap and status fault.
	discovered := map[string][]string{}
	for _, is := range res.Issues {
		for _, u := range is.URLs {
			discovered[is.Type] = append(discovered[is.Type], strings.TrimPrefix(u, s.URL))
		}
	}
	for typ, paths := range map[string][]string{"status_4xx": {"/dropped"}, "status_3xx": {"/old"}, "link_to_redirect": {"/old"}} {
		if !slices.Equal(discovered[typ], paths) {
			t.Errorf("%s = %v, want %v", typ, discovered[typ], paths)
		}
	}
	found := legacyIssues(res.Issues)
	// Issues come by impact; compare them in the order of want.
	var order []string
	for _, w := range want {
		order = append(order, w.typ)
	}
	slices.SortStableFunc(found, func(a, b AuditIssue) int {
		return slices.Index(order, a.Type) - slices.Index(order, b.Type)
	})
	if len(found) != len(want) {
		t.Errorf("%d issues of the first types, want %d: %+v", len(found), len(want), found)
	}
	for i, w := range want {
		if i >= len(found) {
			break
		}
		is := found[i]
		var paths []string
		for _, u := range is.URLs {
			paths = append(paths, strings.TrimPrefix(u, s.URL))
		}
		if is.Type != w.typ || is.Severity != w.severity || !slices.Equal(paths, w.paths) || is.Count != len(w.paths) {
			t.Errorf("issues[%d] = %s %s %d %v, want %s %s %v", i, is.Type, is.Severity, is.Count, paths, w.typ, w.severity, w.paths)
		}
	}
	checkIssueSummary(t, res)

	for _, is := range res.Issues {
		switch is.Type {
		case IssueBrokenInternalLink:
			var got []string
			for _, l := range is.Links {
				got = append(got, fmt.Sprintf("%s %d %v %d %t", strings.TrimPrefix(l.URL, s.URL), deref(l.Status), l.LinkedFrom, l.LinkedFromTotal, l.InSitemap))
			}
			if want := []string{"/gone 404 [" + s.abs("/") + "] 1 true", "/missing 404 [" + s.abs("/") + "] 1 false"}; !slices.Equal(got, want) {
				t.Errorf("broken links = %q, want %q", got, want)
			}
			if len(is.Items) != 2 || !is.Items[0].InSitemap || is.Items[1].InSitemap {
				t.Errorf("broken link items = %+v, want /gone in the sitemap, /missing not", is.Items)
			}
		case IssueSitemapRedirect:
			if len(is.Redirects) != 1 || is.Redirects[0] != (IssueRedirect{URL: s.abs("/old"), FinalURL: s.abs("/dup-a"), Status: 200}) {
				t.Errorf("redirects = %+v, want /old to /dup-a", is.Redirects)
			}
		}
	}
}

// TestAuditIssuesCleanSite: a sound site reports no issue, and every count is 0.
func TestAuditIssuesCleanSite(t *testing.T) {
	t.Parallel()
	b := newBuilder(t)
	s := newTestSite(t)
	paths := []string{"/", "/beans", "/brewing", "/grinders"}
	for i, p := range paths {
		d := doc{title: "Page " + p, description: "About " + p, h1s: []string{"Heading " + p}, links: paths}
		if i == 1 {
			d.head = `<link rel="canonical" href="` + s.abs(p) + `">` // names itself: fine
		}
		s.serve(p, "text/html", d.String())
	}
	s.sitemap(paths...)
	res, err := b.Audit(context.Background(), normalized(t, &AuditRequest{Domain: s.domain()}).deref())
	if err != nil {
		t.Fatal(err)
	}
	if found := legacyIssues(res.Issues); res.PagesCrawled != 4 || len(found) != 0 {
		t.Errorf("%d pages, issues %+v; want 4 pages and no issue of the first types", res.PagesCrawled, found)
	}
	checkIssueSummary(t, res)
}

// TestAuditIssuesLinkDiscovery: without a sitemap, pages are found through links, so the
// sitemap and orphan checks do not apply, while broken links are still found.
func TestAuditIssuesLinkDiscovery(t *testing.T) {
	t.Parallel()
	b := newBuilder(t)
	s := newTestSite(t)
	s.serve("/robots.txt", "text/plain", "User-agent: *\nAllow: /\n")
	s.serve("/", "text/html", doc{title: "Home", description: "Home page", h1s: []string{"Home"}, links: []string{"/a", "/dead"}}.String())
	s.serve("/a", "text/html", doc{title: "A", description: "Page A", h1s: []string{"A"}, links: []string{"/"}}.String())
	res, err := b.Audit(context.Background(), normalized(t, &AuditRequest{Domain: s.domain()}).deref())
	if err != nil {
		t.Fatal(err)
	}
	if found := legacyIssues(res.Issues); len(found) != 1 || found[0].Type != IssueBrokenInternalLink || found[0].URLs[0] != s.abs("/dead") {
		t.Errorf("issues = %+v, want only the broken link to /dead", found)
	}
	checkIssueSummary(t, res)
}

// TestAuditIssuesBoundedOnLargeSite: on a site with more affected pages than an issue lists,
// every list stops at MaxIssueURLs and count still says how many there are.
func TestAuditIssuesBoundedOnLargeSite(t *testing.T) {
	t.Parallel()
	b := newBuilder(t)
	s := newTestSite(t)
	const n = MaxIssueURLs + 30
	var paths []string
	for i := range n {
		p := fmt.Sprintf("/p%03d", i)
		paths = append(paths, p)
		// No title, no description, no h1, linked from nowhere, linking to a 404 of its own.
		s.serve(p, "text/html", doc{links: []string{p + "-gone"}}.String())
	}
	s.sitemap(paths...)
	max := n
	res, err := b.Audit(context.Background(), normalized(t, &AuditRequest{Domain: s.domain(), MaxPages: &max}).deref())
	if err != nil {
		t.Fatal(err)
	}
	checkIssueSummary(t, res)
	for _, typ := range []string{IssueMissingTitle, IssueMissingMetaDescription, IssueMissingH1, IssueOrphanPage} {
		if got := res.Summary.Issues[typ]; got != n {
			t.Errorf("%s: count %d, want %d", typ, got, n)
		}
	}
	// The page limit is spent on pages: the linked 404s cannot be checked, and the
	// answer says so.
	if res.Summary.Issues[IssueBrokenInternalLink] != 0 || !containsAny(res.Warnings, "not checked for broken links") {
		t.Errorf("broken links %d, warnings %q; want 0 and a note on unchecked links", res.Summary.Issues[IssueBrokenInternalLink], res.Warnings)
	}
}

// TestFindIssuesBounds: the worst a crawl can hold (500 pages, URLs of 2,048 bytes, every
// page and link at fault) gives issue lists of at most MaxIssueURLs, far under the crawler's
// result limit.
func TestFindIssuesBounds(t *testing.T) {
	const pages = 500
	long := strings.Repeat("x", 2000)
	res := &crawler.Result{FromSitemap: true}
	for i := range pages {
		u := fmt.Sprintf("https://x.com/%s/%03d", long, i)
		res.Pages = append(res.Pages, crawler.Page{URL: u, FinalURL: u + "/final", Status: 200, ContentType: "text/html",
			Redirected: true, InSitemap: true, Noindex: i%2 == 0, Canonical: "https://x.com/elsewhere", Title: "same", MetaDescription: "same", H1Count: 2})
		from := make([]string, 5)
		for j := range from {
			from[j] = u
		}
		res.BrokenLinks = append(res.BrokenLinks, crawler.BrokenLink{URL: u + "/gone", Status: 404, LinkedFrom: from, LinkedFromTotal: pages})
	}
	all, found := findIssues(res, splitPages(res), defaultThinWords)
	if !found.Cut {
		t.Error("lists of 2 KiB URLs for every type were not cut")
	}
	for _, is := range all {
		if len(is.URLs) > MaxIssueURLs || len(is.Links) > MaxIssueURLs || len(is.Redirects) > MaxIssueURLs || len(is.URLs) > min(is.Count, MaxIssueURLs) || len(is.Items) != len(is.URLs) {
			t.Errorf("%s: %d urls, %d links, %d redirects of %d", is.Type, len(is.URLs), len(is.Links), len(is.Redirects), is.Count)
		}
	}
	b, _ := json.Marshal(all)
	if len(b) > 4<<20 {
		t.Errorf("issues take %d bytes, want well under the 8 MiB result limit", len(b))
	}
	if sum := issueSummary(all); sum[IssueSitemapRedirect] != pages || sum[IssueBrokenInternalLink] != pages || sum[IssueSitemapNoindex] != pages/2 {
		t.Errorf("summary = %v", sum)
	}
}

// checkIssueSummary: summary.issues has every type, each count agrees with its issue and its
// listed URLs, and types without URLs are not listed as issues.
func checkIssueSummary(t *testing.T, res AuditResult) {
	t.Helper()
	if len(res.Summary.Issues) != len(audit.Checks()) {
		t.Errorf("summary.issues = %v, want all %d types", res.Summary.Issues, len(audit.Checks()))
	}
	listed := map[string]bool{}
	for _, is := range res.Issues {
		listed[is.Type] = true
		if is.Count == 0 || res.Summary.Issues[is.Type] != is.Count || len(is.URLs) != min(is.Count, MaxIssueURLs) {
			t.Errorf("%s: count %d, summary %d, %d urls", is.Type, is.Count, res.Summary.Issues[is.Type], len(is.URLs))
		}
		if is.Type == IssueBrokenInternalLink && len(is.Links) != len(is.URLs) {
			t.Errorf("broken links: %d links for %d urls", len(is.Links), len(is.URLs))
		}
	}
	for typ, n := range res.Summary.Issues {
		if n > 0 && !listed[typ] {
			t.Errorf("summary counts %d %s, not listed", n, typ)
		}
	}
}

// legacyIssues keeps the issues of the first audits' 12 types, whose cases these tests
// build; internal/audit's tables test the others.
func legacyIssues(all []AuditIssue) []AuditIssue {
	legacy := []string{IssueMissingTitle, IssueDuplicateTitle, IssueMissingMetaDescription, IssueDuplicateMetaDescription,
		IssueMissingH1, IssueMultipleH1, IssueSitemapNon200, IssueSitemapRedirect, IssueSitemapNoindex,
		IssueSitemapCanonicalised, IssueBrokenInternalLink, IssueOrphanPage}
	var out []AuditIssue
	for _, is := range all {
		if slices.Contains(legacy, is.Type) {
			out = append(out, is)
		}
	}
	return out
}

// TestAuditCanonicalisedElsewhere: a site whose every page is canonicalised to another
// host, without descriptions, is not a clean site: each page carries
// canonical_to_other_host and missing_meta_description (its items saying the page is
// canonicalised, the issue counting them), the summary counts the canonicalised pages, and
// the health score falls.
func TestAuditCanonicalisedElsewhere(t *testing.T) {
	t.Parallel()
	b := newBuilder(t)
	s := newTestSite(t)
	paths := []string{"/", "/guide", "/reference"}
	for _, p := range paths {
		s.serve(p, "text/html", doc{title: "Docs " + p, h1s: []string{"Docs"}, links: paths,
			head: `<link rel="canonical" href="https://docs.example.org` + p + `">`}.String())
	}
	s.sitemap(paths...)
	res, err := b.Audit(context.Background(), normalized(t, &AuditRequest{Domain: s.domain()}).deref())
	if err != nil {
		t.Fatal(err)
	}
	sm := res.Summary
	if sm.Issues[audit.CanonicalToOtherHost] != 3 || sm.Indexable != 0 || sm.Excluded[audit.ExcludedCanonicalised] != 3 {
		t.Errorf("canonical_to_other_host %d, indexable %d, excluded %v; want 3, 0, canonicalised 3",
			sm.Issues[audit.CanonicalToOtherHost], sm.Indexable, sm.Excluded)
	}
	if sm.HealthScore == nil || *sm.HealthScore > 50 {
		t.Errorf("health score %v, want at most 50: every page has warnings", deref(sm.HealthScore))
	}
	for _, is := range res.Issues {
		if is.Type != IssueMissingMetaDescription {
			continue
		}
		if is.Count != 3 || is.Canonicalised != 3 || len(is.Items) != 3 || is.Items[0].Excluded != audit.ExcludedCanonicalised {
			t.Errorf("missing_meta_description = %+v, want 3 canonicalised pages", is)
		}
	}
	if sm.Issues[IssueMissingMetaDescription] != 3 {
		t.Errorf("missing_meta_description %d, want 3", sm.Issues[IssueMissingMetaDescription])
	}
	checkIssueSummary(t, res)
}

// TestAuditBrokenFragmentLinkedFrom: a missing fragment linked from several pages names
// them all (the first five, with the total), as a broken link does.
func TestAuditBrokenFragmentLinkedFrom(t *testing.T) {
	t.Parallel()
	b := newBuilder(t)
	s := newTestSite(t)
	s.serve("/robots.txt", "text/plain", "User-agent: *\nAllow: /\n")
	paths := []string{"/", "/a", "/b", "/c", "/d", "/e", "/f"}
	for _, p := range paths {
		s.serve(p, "text/html", doc{title: "Page " + p, description: "About " + p, h1s: []string{"Page"},
			links: append(slices.Clone(paths), "/target#nowhere")}.String())
	}
	s.serve("/target", "text/html", doc{title: "Target", description: "The target", h1s: []string{"Target"}, links: []string{"/"}}.String())
	res, err := b.Audit(context.Background(), normalized(t, &AuditRequest{Domain: s.domain()}).deref())
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(res.Issues, func(is AuditIssue) bool { return is.Type == audit.BrokenFragment })
	if i < 0 {
		t.Fatalf("no broken_fragment issue in %+v", res.Issues)
	}
	is := res.Issues[i]
	want := []string{s.abs("/"), s.abs("/a"), s.abs("/b"), s.abs("/c"), s.abs("/d")}
	if is.Count != 1 || len(is.Fragments) != 1 || is.Fragments[0].URL != s.abs("/target#nowhere") ||
		!slices.Equal(is.Fragments[0].LinkedFrom, want) || is.Fragments[0].LinkedFromTotal != len(paths) {
		t.Fatalf("broken_fragment = %+v, fragments %+v; want /target#nowhere linked from %v of %d", is, is.Fragments, want, len(paths))
	}
	if is.Items[0].Source != s.abs("/") {
		t.Errorf("item source %q, want the first page linking", is.Items[0].Source)
	}
}

// TestAuditRedirectToSitemapURL: a linked URL that redirects to a URL the sitemap lists is
// judged by the redirect checks alone; the sitemap checks judge the listed URLs, each once.
func TestAuditRedirectToSitemapURL(t *testing.T) {
	t.Parallel()
	b := newBuilder(t)
	s := newTestSite(t)
	paths := []string{"/", "/guide"}
	for _, p := range paths {
		s.serve(p, "text/html", doc{title: "Docs " + p, description: "About " + p, h1s: []string{"Docs"}, links: []string{"/index.html", "/guide"},
			head: `<link rel="canonical" href="https://docs.example.org` + p + `">`}.String())
	}
	s.handle("/index.html", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/", http.StatusMovedPermanently)
	})
	s.sitemap(paths...)
	res, err := b.Audit(context.Background(), normalized(t, &AuditRequest{Domain: s.domain()}).deref())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, is := range res.Issues {
		for _, u := range is.URLs {
			got[is.Type] = append(got[is.Type], strings.TrimPrefix(u, s.URL))
		}
	}
	for typ, want := range map[string][]string{
		IssueSitemapCanonicalised: {"/", "/guide"}, IssueSitemapRedirect: nil, IssueSitemapNon200: nil,
		audit.LinkToRedirect: {"/index.html"}, audit.Status3xx: {"/index.html"},
	} {
		if !slices.Equal(got[typ], want) {
			t.Errorf("%s = %v, want %v", typ, got[typ], want)
		}
	}
	if res.PagesCrawled != 2 || res.Summary.PagesFromSitemap != 2 {
		t.Errorf("%d pages, %d from the sitemap; want the 2 listed", res.PagesCrawled, res.Summary.PagesFromSitemap)
	}
}
