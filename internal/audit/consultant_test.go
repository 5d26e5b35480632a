package audit

import (
	"slices"
	"testing"

	"github.com/contentapi/contentapi/internal/crawler"
)

func issueOf(t *testing.T, res Result, typ string) Issue {
	t.Helper()
	for _, is := range res.Issues {
		if is.Type == typ {
			return is
		}
	}
	t.Fatalf("no issue type %s", typ)
	return Issue{}
}

// TestContentChecksOnCanonicalisedPages: a template fault hidden by a canonical (or a
// noindex) is still reported, its item saying why the page does not rank, and the issue
// counting such pages; duplicates among them are not faults.
func TestContentChecksOnCanonicalisedPages(t *testing.T) {
	res := Run(crawl(
		pg{path: "/a", head: `<!--nodesc--><link rel="canonical" href="https://docs.other.org/a">`},
		pg{path: "/b", head: `<!--nodesc--><meta name="robots" content="noindex">`},
		pg{path: "/c", head: `<!--nodesc-->`},
		pg{path: "/p", head: `<title>Shared title of a print version here</title><link rel="canonical" href="https://x.com/q">`},
		pg{path: "/q", head: `<title>Shared title of a print version here</title>`},
	))
	is := issueOf(t, res, MissingMetaDescription)
	if got := flagged(res, MissingMetaDescription); !slices.Equal(got, []string{"/a", "/b", "/c"}) {
		t.Fatalf("missing_meta_description %q", got)
	}
	want := map[string]string{host + "/a": ExcludedCanonicalised, host + "/b": ExcludedNoindex, host + "/c": ""}
	for _, it := range is.Items {
		if it.Excluded != want[it.URL] {
			t.Errorf("%s excluded %q, want %q", it.URL, it.Excluded, want[it.URL])
		}
	}
	if is.Canonicalised != 1 || is.Noindex != 1 {
		t.Errorf("canonicalised %d noindex %d, want 1 and 1", is.Canonicalised, is.Noindex)
	}
	if got := flagged(res, DuplicateTitle); len(got) != 0 {
		t.Errorf("duplicate_title %q: a canonicalised twin is expected", got)
	}
	if res.Excluded[ExcludedCanonicalised] != 2 {
		t.Errorf("excluded %v", res.Excluded)
	}
}

// TestBrokenLinkReportedOnce: a linked URL of the site answering 404 is a broken link (with
// the pages linking to it), not also a status_4xx; a sitemap URL no page links to is.
func TestBrokenLinkReportedOnce(t *testing.T) {
	s := crawl(pg{path: "/a"}, pg{path: "/gone", status: 404}, pg{path: "/listed", status: 404})
	s.Result.BrokenLinks = []crawler.BrokenLink{{URL: host + "/gone", Status: 404, LinkedFrom: []string{host + "/a"}, LinkedFromTotal: 1}}
	res := Run(s)
	if got := flagged(res, BrokenInternalLink); !slices.Equal(got, []string{"/gone"}) {
		t.Errorf("broken_internal_link %q", got)
	}
	if got := flagged(res, Status4xx); !slices.Equal(got, []string{"/listed"}) {
		t.Errorf("status_4xx %q, want only the unlinked /listed", got)
	}
}

// TestIssuesByImpact: issues come by pages × severity weight, greatest first: a notice on
// ten pages (10) before an error on one page (9); the types not found last.
func TestIssuesByImpact(t *testing.T) {
	var pages []pg
	for _, p := range []string{"/a", "/b", "/c", "/d", "/e", "/f", "/g", "/h", "/i", "/j"} {
		pages = append(pages, pg{path: p, head: "<title>Short</title>"})
	}
	pages[0].head += "<!--notitle-->"
	pages[0].head = "<!--notitle-->"
	res := Run(crawl(pages...))
	short, missing := issueOf(t, res, TitleTooShort), issueOf(t, res, MissingTitle)
	if short.Pages != 9 || short.Impact != 9 || missing.Pages != 1 || missing.Impact != 9 {
		t.Errorf("too short %d pages impact %d; missing %d pages impact %d", short.Pages, short.Impact, missing.Pages, missing.Impact)
	}
	for i := 1; i < len(res.Issues); i++ {
		if res.Issues[i].Impact > res.Issues[i-1].Impact {
			t.Fatalf("%s (impact %d) after %s (%d)", res.Issues[i].Type, res.Issues[i].Impact, res.Issues[i-1].Type, res.Issues[i-1].Impact)
		}
		if res.Issues[i-1].Count == 0 && res.Issues[i].Count > 0 {
			t.Fatalf("%s found after %s not found", res.Issues[i].Type, res.Issues[i-1].Type)
		}
	}
	// Equal impact: the error comes first (Checks order).
	if slices.IndexFunc(res.Issues, func(is Issue) bool { return is.Type == MissingTitle }) >
		slices.IndexFunc(res.Issues, func(is Issue) bool { return is.Type == TitleTooShort }) {
		t.Errorf("at equal impact the error should come first")
	}
}

// TestLinkChecks: Lighthouse's link-text and crawlable-anchors rules, and links with no
// name at all, each case one page's body.
func TestLinkChecks(t *testing.T) {
	cases := []struct {
		typ, name, body string
		flagged         bool
	}{
		{LinkTextGeneric, "click here", `<a href="/b">Click  here</a>`, true},
		{LinkTextGeneric, "read more in a span", `<a href="/b"><span>Read</span> more</a>`, true},
		{LinkTextGeneric, "a URL as text (not in Lighthouse 12's rule)", `<a href="/b">https://x.com/b</a>`, false},
		{LinkTextGeneric, "descriptive", `<a href="/b">Brewing with a moka pot</a>`, false},
		{LinkTextGeneric, "to a fragment of the page", `<a href="#part">here</a>`, false},
		{LinkTextGeneric, "to the page itself", `<a href="https://x.com/a#x">more</a>`, false},
		{LinkTextGeneric, "nofollow", `<a href="/b" rel="nofollow">here</a>`, false},
		{LinkTextGeneric, "mailto", `<a href="mailto:a@x.com">here</a>`, false},
		{LinkTextGeneric, "javascript", `<a href="javascript:go()">more</a>`, false},
		{LinkTextEmpty, "icon only", `<a href="/b"><i class="icon"></i></a>`, true},
		{LinkTextEmpty, "image with alt", `<a href="/b"><img src="/i.png" alt="Brewing" width="1" height="1"></a>`, false},
		{LinkTextEmpty, "image without alt text", `<a href="/b"><img src="/i.png" alt="" width="1" height="1"></a>`, true},
		{LinkTextEmpty, "aria-label", `<a href="/b" aria-label="Brewing"><i></i></a>`, false},
		{LinkTextEmpty, "svg title", `<a href="/b"><svg><title>Brewing</title></svg></a>`, false},
		{LinkTextEmpty, "placeholder without href", `<a></a>`, false},
		{LinkNotCrawlable, "javascript:void(0)", `<a href="javascript:void(0)">Open</a>`, true},
		{LinkNotCrawlable, "no href, onclick", `<a onclick="go()">Open</a>`, true},
		{LinkNotCrawlable, "file:", `<a href="file:///c:/x.html">File</a>`, true},
		{LinkNotCrawlable, "javascript call", `<a href="javascript:go()">Open</a>`, false},
		{LinkNotCrawlable, "hash only", `<a href="#">Top</a>`, false},
		{LinkNotCrawlable, "jump target", `<a id="part"></a>`, false},
		{LinkNotCrawlable, "named", `<a name="part"></a>`, false},
		{LinkNotCrawlable, "role button", `<a role="button" onclick="go()">Open</a>`, false},
		{LinkNotCrawlable, "current page placeholder", `<a aria-current="page">Home</a>`, false},
		{LinkNotCrawlable, "mailto", `<a href="mailto:a@x.com">Mail</a>`, false},
	}
	for _, c := range cases {
		t.Run(c.typ+"/"+c.name, func(t *testing.T) {
			got := flagged(Run(crawl(pg{path: "/a", body: c.body}, pg{path: "/b"})), c.typ)
			if want := []string{"/a"}; c.flagged != slices.Equal(got, want) || (!c.flagged && len(got) > 0) {
				t.Errorf("flagged %q, want flagged %v", got, c.flagged)
			}
		})
	}
	res := Run(crawl(pg{path: "/a", body: `<a href="/b">here</a><a href="/c">more</a>`}, pg{path: "/b"}))
	if is := issueOf(t, res, LinkTextGeneric); is.Items[0].Value != `2 link(s), first "here"` || is.Items[0].Target != "/b" {
		t.Errorf("item %+v", is.Items[0])
	}
}

// TestBrokenFragment: a link to a missing #fragment is the linking page's fault, not the
// target's: the item names both and the fragment, and only the source loses score.
func TestBrokenFragment(t *testing.T) {
	s := crawl(pg{path: "/a"}, pg{path: "/b"})
	s.Result.BrokenFragments = []crawler.BrokenFragment{{URL: host + "/b#gone", Target: host + "/b", Fragment: "gone",
		LinkedFrom: []string{host + "/a"}, LinkedFromTotal: 1}}
	res := Run(s)
	is := issueOf(t, res, BrokenFragment)
	if is.Count != 1 || is.Items[0] != (Item{URL: host + "/b#gone", Source: host + "/a", Target: host + "/b", Value: "#gone"}) || is.Pages != 1 {
		t.Errorf("broken_fragment %+v", is)
	}
	// /a has a warning (½), /b none (1), save for the notice of missing HSTS: 75.
	if res.HealthScore == nil || *res.HealthScore != 75 {
		t.Errorf("health %v, want 75", deref(res.HealthScore))
	}
}
