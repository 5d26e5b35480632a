package audit

import (
	"slices"
	"testing"

	"github.com/contentapi/contentapi/internal/crawler"
)

// html is a content page answering 200 with HTML at u.
func html(u string, edit func(p *crawler.Page)) crawler.Page {
	p := crawler.Page{URL: u, FinalURL: u, Status: 200, ContentType: "text/html", Title: "Title of " + u,
		MetaDescription: "About " + u, H1Count: 1, Inlinks: 1, WordCount: 400}
	if edit != nil {
		edit(&p)
	}
	return p
}

// site builds a Site of content pages from a sitemap crawl of them.
func site(pages ...crawler.Page) *Site {
	return NewSite(&crawler.Result{Pages: pages, FromSitemap: true}, pages, 300)
}

// issue returns the issue of type typ that Run found.
func issue(t *testing.T, res Result, typ string) Issue {
	t.Helper()
	i := slices.IndexFunc(res.Issues, func(is Issue) bool { return is.Type == typ })
	if i < 0 {
		t.Fatalf("no issue type %s", typ)
	}
	return res.Issues[i]
}

// TestChecksOrder: errors come first, then warnings, then notices, and every check is
// complete.
func TestChecksOrder(t *testing.T) {
	checks := Checks()
	if len(checks) < 12 {
		t.Fatalf("%d checks registered", len(checks))
	}
	for i, c := range checks {
		if c.Threshold == "" {
			t.Errorf("%s: no threshold documented", c.Type)
		}
		if i > 0 && severityRank(c.Severity) < severityRank(checks[i-1].Severity) {
			t.Errorf("%s (%s) listed after %s (%s)", c.Type, c.Severity, checks[i-1].Type, checks[i-1].Severity)
		}
	}
	want := []string{MissingTitle, SitemapNon200, SitemapNoindex, BrokenInternalLink}
	var errs []string
	for _, c := range checks {
		if slices.Contains(want, c.Type) {
			errs = append(errs, c.Type)
		}
	}
	if !slices.Equal(errs, want) {
		t.Errorf("error types in order %v, want %v", errs, want)
	}
}

// TestRunScopeAndSummary: content checks run on noindex and canonicalised pages too, their
// items saying so, and the result counts such pages; the health score follows its formula.
func TestRunScopeAndSummary(t *testing.T) {
	s := crawl(
		pg{path: "/"},
		pg{path: "/a", head: "<!--notitle-->"}, // error
		pg{path: "/b", head: "<!--nodesc-->"},  // warning
		pg{path: "/c", head: `<!--notitle--><meta name="robots" content="noindex">`},       // excluded, error; noindex notice, sitemap_noindex error
		pg{path: "/d", head: `<!--notitle--><link rel="canonical" href="https://x.com/">`}, // excluded, error; sitemap_canonicalised warning
		pg{path: "/e", body: "<h1>One</h1><h1>Two</h1>"},                                   // notice
	)
	res := Run(s)
	if got := issue(t, res, MissingTitle); got.Count != 3 || got.URLs[0] != "https://x.com/a" || got.Items[0].URL != got.URLs[0] ||
		got.Items[1].Excluded != ExcludedNoindex || got.Items[2].Excluded != ExcludedCanonicalised || got.Canonicalised != 1 || got.Noindex != 1 {
		t.Errorf("missing_title = %+v, want /a, /c (noindex), /d (canonicalised)", got)
	}
	if got := issue(t, res, MultipleH1); got.Count != 1 || got.Items[0].Value != "2 h1" {
		t.Errorf("multiple_h1 = %+v", got)
	}
	if res.Indexable != 4 || res.Excluded[ExcludedNoindex] != 1 || res.Excluded[ExcludedCanonicalised] != 1 {
		t.Errorf("indexable %d, excluded %v; want 4, noindex 1, canonicalised 1", res.Indexable, res.Excluded)
	}
	// 6 pages: /a, /c and /d (missing title) errors 0, /b (no description) warning ½,
	// / and /e (notices only) 1: 2.5/6.
	if res.HealthScore == nil || *res.HealthScore != 42 {
		t.Errorf("health score %v, want 42", deref(res.HealthScore))
	}
	if Run(NewSite(nil, nil, 300)).HealthScore != nil {
		t.Error("health score of no page, want nil")
	}
}

// TestRunBoundsAndTwins: lists stop at MaxItems while Count counts all; duplicates name
// their twin.
func TestRunBoundsAndTwins(t *testing.T) {
	var pages []crawler.Page
	for i := range MaxItems + 20 {
		pages = append(pages, html("https://x.com/p"+string(rune('a'+i/26))+string(rune('a'+i%26)), func(p *crawler.Page) { p.Title = "Same" }))
	}
	res := Run(site(pages...))
	dup := issue(t, res, DuplicateTitle)
	if dup.Count != MaxItems+20 || len(dup.URLs) != MaxItems || len(dup.Items) != MaxItems {
		t.Errorf("duplicate_title: count %d, %d urls, %d items", dup.Count, len(dup.URLs), len(dup.Items))
	}
	if dup.Items[0].Twin != pages[1].URL || dup.Items[1].Twin != pages[0].URL {
		t.Errorf("twins %q %q", dup.Items[0].Twin, dup.Items[1].Twin)
	}
}

// TestRegisterRefusesBadChecks: a malformed check is a programming error.
func TestRegisterRefusesBadChecks(t *testing.T) {
	page := func(*Page) (Item, bool) { return Item{}, false }
	for name, c := range map[string]Check{
		"twice":        {Type: MissingTitle, Severity: SeverityError, Category: CategoryTitles, Page: page},
		"no severity":  {Type: "x_new", Category: CategoryTitles, Page: page},
		"bad category": {Type: "x_new", Severity: SeverityError, Category: "misc", Page: page},
		"no callback":  {Type: "x_new", Severity: SeverityError, Category: CategoryTitles},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: registered", name)
				}
			}()
			register(c)
		}()
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// A canonical naming a URL the crawl only link-checked (it answered 404 and was reported as
// a broken link, not fetched as a page) points to a non-200 all the same.
func TestCanonicalToABrokenLinkIsNon200(t *testing.T) {
	page := crawler.Page{URL: "https://x.com/a", FinalURL: "https://x.com/a", Status: 200, ContentType: "text/html",
		Title: "A", Canonical: "https://x.com/gone"}
	res := &crawler.Result{Pages: []crawler.Page{page},
		BrokenLinks: []crawler.BrokenLink{{URL: "https://x.com/gone", Status: 404, LinkedFrom: []string{"https://x.com/a"}, LinkedFromTotal: 1}}}
	for _, is := range Run(NewSite(res, []crawler.Page{page}, 300)).Issues {
		if is.Type == CanonicalToNon200 {
			if is.Count != 1 || is.URLs[0] != "https://x.com/a" {
				t.Fatalf("canonical_to_non_200: %+v", is)
			}
			return
		}
	}
	t.Fatal("canonical_to_non_200 not reported for a canonical to a broken link")
}
