package audit

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contentapi/contentapi/internal/crawler"
)

const host = "https://x.com"

// pg is one URL of a test crawl: an HTML page (head and body markup added to a page that
// passes every check), or a redirect (to) or an error (status) with no body.
type pg struct {
	path       string
	head, body string
	header     http.Header
	raw        string // the whole document, instead of the sound page
	status     int    // non-200: an error page
	to         string // a redirect to this path
	edit       func(p *crawler.Page)
}

// vocabulary makes each page's text its own, so no two pages are duplicates.
var vocabulary = strings.Fields("coffee beans roast grind brew water filter press espresso crema milk foam " +
	"kettle scale timer origin farm harvest wash dry ferment acid sweet bitter body aroma flavour cup tasting " +
	"method ratio temperature pour bloom drip siphon moka cold brew grinder burr blade storage fresh stale " +
	"jar bag valve light medium dark single blend washed natural honey altitude variety arabica robusta")

// words returns n words picked from the vocabulary by seed: different seeds, different texts.
func words(seed, n int) string {
	out := make([]string, n)
	x := uint64(seed)*2654435761 + 1
	for i := range out {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		out[i] = vocabulary[x%uint64(len(vocabulary))]
	}
	return strings.Join(out, " ")
}

// has reports whether head lacks a marker, so the sound default goes in.
func lacks(head, marker string) bool { return !strings.Contains(head, marker) }

// document is a page that passes every check, changed by head and body markup: a head part
// naming a title, description, canonical, viewport or lang replaces the default one.
func (p pg) document(seed int) string {
	var b strings.Builder
	lang := ` lang="en"`
	if !lacks(p.head, "<!--nolang-->") || !lacks(p.head, "<!--lang=") {
		lang = ""
		if i := strings.Index(p.head, "<!--lang="); i >= 0 {
			lang = p.head[i+len("<!--lang=") : i+strings.Index(p.head[i:], "-->")]
		}
	}
	b.WriteString("<!doctype html><html" + lang + "><head>")
	if lacks(p.head, "<title") && lacks(p.head, "<!--notitle-->") {
		b.WriteString("<title>A sound page title for the page " + p.path + "</title>")
	}
	if lacks(p.head, `name="description"`) && lacks(p.head, "<!--nodesc-->") {
		b.WriteString(`<meta name="description" content="A description of ` + p.path + ` that is long enough to say what the page is about, and no longer.">`)
	}
	if lacks(p.head, "canonical") && lacks(p.head, "<!--nocanonical-->") {
		b.WriteString(`<link rel="canonical" href="` + host + p.path + `">`)
	}
	if lacks(p.head, "viewport") {
		b.WriteString(`<meta name="viewport" content="width=device-width">`)
	}
	b.WriteString(p.head + "</head><body><main>")
	if lacks(p.body, "<h1") {
		b.WriteString("<h1>Heading of " + p.path + "</h1>")
	}
	b.WriteString(p.body + "<p>" + words(seed, 400) + "</p></main></body></html>")
	return b.String()
}

// crawl builds the Site of a sitemap crawl of pages, every page linked from another.
func crawl(pages ...pg) *Site {
	res := &crawler.Result{FromSitemap: true}
	var content []crawler.Page
	for i, p := range pages {
		u := host + p.path
		var cp crawler.Page
		switch {
		case p.to != "":
			cp = crawler.Page{URL: u, FinalURL: host + p.to, Status: 200, ContentType: "text/html", Redirected: true}
		case p.status != 0:
			cp = crawler.Page{URL: u, FinalURL: u, Status: p.status}
		case p.raw != "":
			cp = crawler.ParsePage(u, p.header, []byte(p.raw))
			cp.Inlinks = 1
		default:
			cp = crawler.ParsePage(u, p.header, []byte(p.document(i)))
			cp.Inlinks = 1
		}
		if p.edit != nil {
			p.edit(&cp)
		}
		res.Pages = append(res.Pages, cp)
		if IsContent(cp) && !cp.Redirected {
			content = append(content, cp)
		}
	}
	slices.SortFunc(content, func(a, b crawler.Page) int { return strings.Compare(a.FinalURL, b.FinalURL) })
	return NewSite(res, content, 300)
}

// flagged lists the paths an issue type names.
func flagged(res Result, typ string) []string {
	for _, is := range res.Issues {
		if is.Type == typ {
			var out []string
			for _, u := range is.URLs {
				out = append(out, strings.TrimPrefix(u, host))
			}
			return out
		}
	}
	panic("no issue type " + typ)
}

// TestSoundPageHasNoIssue: the test's sound page passes every check, so each case below
// shows what one change does.
func TestSoundPageHasNoIssue(t *testing.T) {
	res := Run(crawl(pg{path: "/"}, pg{path: "/a"}))
	for _, is := range res.Issues {
		if is.Count > 0 && is.Type != MissingHSTS {
			t.Errorf("%s: %v %+v", is.Type, is.URLs, is.Items)
		}
	}
}

// TestChecks: one table of HTML snippets per issue type; each case names the paths the
// type must flag (none for a sound variant).
func TestChecks(t *testing.T) {
	long := strings.Repeat("x", 130)
	cases := []struct {
		typ   string
		name  string
		pages []pg
		want  []string
	}{
		// Titles and descriptions.
		{EmptyTitle, "empty", []pg{{path: "/a", head: "<title> </title>"}}, []string{"/a"}},
		{EmptyTitle, "absent is missing, not empty", []pg{{path: "/a", head: "<!--notitle-->"}}, nil},
		{MultipleTitles, "two", []pg{{path: "/a", head: "<title>A sound page title for this page here</title><title>Another</title>"}}, []string{"/a"}},
		{MultipleTitles, "svg title", []pg{{path: "/a", body: "<svg><title>icon</title></svg>"}}, nil},
		{TitleInBody, "in body", []pg{{path: "/a", body: "<title>Late title</title>"}}, []string{"/a"}},
		{TitleTooShort, "short", []pg{{path: "/a", head: "<title>Short</title>"}}, []string{"/a"}},
		{TitleTooLong, "long", []pg{{path: "/a", head: "<title>" + strings.Repeat("word ", 13) + "</title>"}}, []string{"/a"}},
		{TitleTooLong, "60 chars", []pg{{path: "/a", head: "<title>" + strings.Repeat("x", 60) + "</title>"}}, nil},
		{TitleTooLong, "61 chars", []pg{{path: "/a", head: "<title>" + strings.Repeat("x", 61) + "</title>"}}, []string{"/a"}},
		{TitleTooShort, "30 chars", []pg{{path: "/a", head: "<title>" + strings.Repeat("x", 30) + "</title>"}}, nil},
		{TitleTooShort, "29 chars", []pg{{path: "/a", head: "<title>" + strings.Repeat("x", 29) + "</title>"}}, []string{"/a"}},
		{MetaDescriptionTooLong, "160 chars", []pg{{path: "/a", head: `<meta name="description" content="` + strings.Repeat("x", 160) + `">`}}, nil},
		{MetaDescriptionTooLong, "161 chars", []pg{{path: "/a", head: `<meta name="description" content="` + strings.Repeat("x", 161) + `">`}}, []string{"/a"}},
		{MetaDescriptionTooShort, "70 chars", []pg{{path: "/a", head: `<meta name="description" content="` + strings.Repeat("x", 70) + `">`}}, nil},
		{MetaDescriptionTooShort, "69 chars", []pg{{path: "/a", head: `<meta name="description" content="` + strings.Repeat("x", 69) + `">`}}, []string{"/a"}},
		{EmptyMetaDescription, "blank", []pg{{path: "/a", head: `<meta name="description" content="  ">`}}, []string{"/a"}},
		{MultipleMetaDescriptions, "two", []pg{{path: "/a", head: `<meta name="description" content="` + strings.Repeat("d", 80) + `"><meta name="description" content="x">`}}, []string{"/a"}},
		{MetaDescriptionInBody, "in body", []pg{{path: "/a", body: `<meta name="description" content="late">`}}, []string{"/a"}},
		{MetaDescriptionTooShort, "short", []pg{{path: "/a", head: `<meta name="description" content="Too short.">`}}, []string{"/a"}},
		{MetaDescriptionTooLong, "long", []pg{{path: "/a", head: `<meta name="description" content="` + strings.Repeat("word ", 33) + `">`}}, []string{"/a"}},
		{MissingTitle, "none", []pg{{path: "/a", head: "<!--notitle-->"}}, []string{"/a"}},
		{MissingTitle, "noindex pages too", []pg{{path: "/a", head: `<!--notitle--><meta name="robots" content="noindex">`}}, []string{"/a"}},
		{ThinContent, "noindex pages are left out", []pg{{path: "/a", head: `<meta name="robots" content="noindex">`, edit: func(p *crawler.Page) { p.WordCount = 120 }}}, nil},

		// Content.
		{ThinContent, "thin", []pg{{path: "/a", edit: func(p *crawler.Page) { p.WordCount = 120 }}}, []string{"/a"}},
		{DuplicateContent, "same text", []pg{{path: "/a", body: "<p>" + words(99, 300) + "</p>"}, {path: "/b", body: "<p>" + words(99, 300) + "</p>"}}, nil},
		{HeadingsOutOfOrder, "h3 first", []pg{{path: "/a", body: "<h3>Detail</h3><h1>Title</h1>"}}, []string{"/a"}},
		{HeadingsOutOfOrder, "h4 after h2", []pg{{path: "/a", body: "<h2>Part</h2><h4>Detail</h4>"}}, []string{"/a"}},
		{HeadingsOutOfOrder, "in order", []pg{{path: "/a", body: "<h2>Part</h2><h3>Detail</h3><h2>Next</h2>"}}, nil},
		{EmptyHeading, "empty h2", []pg{{path: "/a", body: "<h2> </h2>"}}, []string{"/a"}},
		{EmptyHeading, "image heading", []pg{{path: "/a", body: `<h2><img src="/logo.png" alt="Logo" width="1" height="1"></h2>`}}, nil},
		{LowTextHTMLRatio, "markup heavy", []pg{{path: "/a", body: "<div>" + strings.Repeat(`<div class="wrapper-of-nothing"></div>`, 2000) + "</div>"}}, []string{"/a"}},
		{MissingH1, "none", []pg{{path: "/a", body: "<h1></h1>"}}, []string{"/a"}},

		// Indexability.
		{NoindexPage, "meta", []pg{{path: "/a", head: `<meta name="robots" content="noindex">`}}, []string{"/a"}},
		{NofollowPage, "header", []pg{{path: "/a", header: http.Header{"X-Robots-Tag": {"nofollow"}}}}, []string{"/a"}},
		{NosnippetPage, "googlebot", []pg{{path: "/a", head: `<meta name="googlebot" content="nosnippet">`}}, []string{"/a"}},
		{NoimageindexPage, "other bot", []pg{{path: "/a", header: http.Header{"X-Robots-Tag": {"otherbot: noimageindex"}}}}, nil},
		{NoimageindexPage, "meta", []pg{{path: "/a", head: `<meta name="robots" content="noimageindex, max-snippet:10">`}}, []string{"/a"}},

		// Canonical.
		{CanonicalMissing, "none", []pg{{path: "/a", head: "<!--nocanonical-->"}}, []string{"/a"}},
		{CanonicalMissing, "header only", []pg{{path: "/a", head: "<!--nocanonical-->", header: http.Header{"Link": {`<https://x.com/a>; rel="canonical"`}}}}, nil},
		{CanonicalMultiple, "two", []pg{{path: "/a", head: `<link rel="canonical" href="https://x.com/a"><link rel="canonical" href="https://x.com/b">`}}, []string{"/a"}},
		{CanonicalRelative, "relative", []pg{{path: "/a", head: `<link rel="canonical" href="/a">`}}, []string{"/a"}},
		{CanonicalToNon200, "to a 404", []pg{{path: "/a", head: `<link rel="canonical" href="https://x.com/gone">`}, {path: "/gone", status: 404}}, []string{"/a"}},
		{CanonicalToNon200, "not crawled", []pg{{path: "/a", head: `<link rel="canonical" href="https://x.com/elsewhere">`}}, nil},
		{CanonicalToRedirect, "to a redirect", []pg{{path: "/a", head: `<link rel="canonical" href="https://x.com/old">`}, {path: "/old", to: "/b"}, {path: "/b"}}, []string{"/a"}},
		{CanonicalToRedirect, "to where a redirect ends", []pg{{path: "/a", head: `<link rel="canonical" href="https://x.com/b">`}, {path: "/old", to: "/b"}, {path: "/b"}}, nil},
		{CanonicalToNoindex, "to noindex", []pg{{path: "/a", head: `<link rel="canonical" href="https://x.com/b">`}, {path: "/b", head: `<meta name="robots" content="noindex">`}}, []string{"/a"}},
		{CanonicalToNonCanonical, "chain", []pg{{path: "/a", head: `<link rel="canonical" href="https://x.com/b">`}, {path: "/b", head: `<link rel="canonical" href="https://x.com/c">`}, {path: "/c"}}, []string{"/a"}},
		{CanonicalHeaderMismatch, "differ", []pg{{path: "/a", header: http.Header{"Link": {`<https://x.com/b>; rel="canonical"`}}}}, []string{"/a"}},
		{CanonicalHeaderMismatch, "agree", []pg{{path: "/a", header: http.Header{"Link": {`</a>; rel=canonical, <https://x.com/a.pdf>; rel="alternate"`}}}}, nil},
		{CanonicalToOtherHost, "other host", []pg{{path: "/a", head: `<link rel="canonical" href="https://docs.example.org/a">`}}, []string{"/a"}},
		{CanonicalToOtherHost, "www is the same host", []pg{{path: "/a", head: `<link rel="canonical" href="https://www.x.com/a">`}}, nil},

		// Hreflang and language.
		{HreflangInvalidCode, "invalid", []pg{{path: "/a", head: hreflangs("/a", "en", "/a", "english", "/b")}, {path: "/b"}}, []string{"/a"}},
		{HreflangInvalidCode, "underscore", []pg{{path: "/a", head: hreflangs("/a", "en_US", "/a")}}, []string{"/a"}},
		{HreflangInvalidCode, "unknown region", []pg{{path: "/a", head: hreflangs("/a", "fr-XX", "/a")}}, []string{"/a"}},
		{HreflangInvalidCode, "valid", []pg{{path: "/a", head: hreflangs("/a", "en-GB", "/a", "es-419", "/a", "zh-Hant", "/a", "x-default", "/a")}}, nil},
		{HreflangMissingReturn, "one way", []pg{{path: "/a", head: hreflangs("/a", "en", "/a", "de", "/b")}, {path: "/b"}}, []string{"/a"}},
		{HreflangMissingReturn, "both ways", []pg{{path: "/a", head: hreflangs("/a", "en", "/a", "de", "/b")}, {path: "/b", head: hreflangs("/b", "en", "/a", "de", "/b")}}, nil},
		{HreflangMissingSelf, "no self", []pg{{path: "/a", head: hreflangs("/a", "de", "/b")}, {path: "/b", head: hreflangs("/b", "en", "/a", "de", "/b")}}, []string{"/a"}},
		{HreflangMissingXDefault, "none", []pg{{path: "/a", head: hreflangs("/a", "en", "/a")}}, []string{"/a"}},
		{HreflangRelative, "relative", []pg{{path: "/a", head: `<link rel="alternate" hreflang="en" href="/a">`}}, []string{"/a"}},
		{HreflangToError, "to a 404", []pg{{path: "/a", head: hreflangs("/a", "en", "/a", "de", "/gone")}, {path: "/gone", status: 404}}, []string{"/a"}},
		{HreflangToRedirect, "to a redirect", []pg{{path: "/a", head: hreflangs("/a", "en", "/a", "de", "/old")}, {path: "/old", to: "/a"}}, []string{"/a"}},
		{HreflangToNonCanonical, "to canonicalised", []pg{{path: "/a", head: hreflangs("/a", "en", "/a", "de", "/b")}, {path: "/b", head: `<link rel="canonical" href="https://x.com/a">`}}, []string{"/a"}},
		{MissingHTMLLang, "none", []pg{{path: "/a", head: "<!--nolang-->"}}, []string{"/a"}},
		{InvalidHTMLLang, "invalid", []pg{{path: "/a", head: `<!--lang= lang="en_GB"-->`}}, []string{"/a"}},
		{InvalidHTMLLang, "blank", []pg{{path: "/a", head: `<!--lang= lang=""-->`}}, []string{"/a"}},

		// Images.
		{ImageMissingAlt, "no alt", []pg{{path: "/a", body: `<img src="/a.png" width="1" height="1"><img src="/b.png" alt="" width="1" height="1">`}}, []string{"/a"}},
		{ImageAltTooLong, "long", []pg{{path: "/a", body: `<img src="/a.png" alt="` + long + `" width="1" height="1">`}}, []string{"/a"}},
		{ImageNoDimensions, "no height", []pg{{path: "/a", body: `<img src="/a.png" alt="A" width="1">`}}, []string{"/a"}},

		// Structured data.
		{JSONLDInvalid, "broken", []pg{{path: "/a", head: `<script type="application/ld+json">{"@type": "Article",</script>`}}, []string{"/a"}},
		{JSONLDInvalid, "valid", []pg{{path: "/a", head: `<script type="application/ld+json">{"@type": "Article", "headline": "H"}</script>`}}, nil},
		{SchemaArticleIncomplete, "no headline", []pg{{path: "/a", head: `<script type="application/ld+json">{"@context":"https://schema.org","@type":"BlogPosting","author":"A"}</script>`}}, []string{"/a"}},
		{SchemaProductIncomplete, "no offers", []pg{{path: "/a", head: `<script type="application/ld+json">[{"@type":"Product","name":"Mug"}]</script>`}}, []string{"/a"}},
		{SchemaProductIncomplete, "complete", []pg{{path: "/a", head: `<script type="application/ld+json">{"@type":"Product","name":"Mug","aggregateRating":{"@type":"AggregateRating"}}</script>`}}, nil},
		{SchemaFAQPageIncomplete, "in a graph", []pg{{path: "/a", head: `<script type="application/ld+json">{"@graph":[{"@type":"FAQPage"}]}</script>`}}, []string{"/a"}},
		{SchemaBreadcrumbIncomplete, "no items", []pg{{path: "/a", head: `<script type="application/ld+json">{"@type":"https://schema.org/BreadcrumbList"}</script>`}}, []string{"/a"}},
		{SchemaOrgIncomplete, "no url", []pg{{path: "/a", head: `<script type="application/ld+json">{"@type":["Organization"],"name":"Acme"}</script>`}}, []string{"/a"}},
		{SchemaOrgIncomplete, "nested publisher is not judged", []pg{{path: "/a", head: `<script type="application/ld+json">{"@type":"Article","headline":"H","publisher":{"@type":"Organization"}}</script>`}}, nil},

		// Performance and mobile.
		{SlowTTFB, "slow, median of 3", []pg{{path: "/a", edit: func(p *crawler.Page) { p.Facts.TTFB, p.Facts.TTFBSamples = 700*time.Millisecond, ms(900, 700, 650) }}}, []string{"/a"}},
		{SlowTTFB, "slow once only", []pg{{path: "/a", edit: func(p *crawler.Page) { p.Facts.TTFB, p.Facts.TTFBSamples = 200*time.Millisecond, ms(900, 200, 150) }}}, nil},
		{SlowTTFB, "one sample", []pg{{path: "/a", edit: func(p *crawler.Page) { p.Facts.TTFB, p.Facts.TTFBSamples = 900*time.Millisecond, ms(900) }}}, nil},
		{PageTooLarge, "over the body limit", []pg{{path: "/a", edit: func(p *crawler.Page) { p.BodyCut, p.BodyBytes = true, 8_100_000 }}}, []string{"/a"}},
		{LargeHTML, "over the body limit is page_too_large", []pg{{path: "/a", body: "<p>" + strings.Repeat("big text ", 130000) + "</p>", edit: func(p *crawler.Page) { p.BodyCut = true }}}, nil},
		{LargeHTML, "large", []pg{{path: "/a", body: "<p>" + strings.Repeat("big text ", 130000) + "</p>"}}, []string{"/a"}},
		{ExcessiveDOM, "many elements", []pg{{path: "/a", body: strings.Repeat("<span>x</span>", 1600)}}, []string{"/a"}},
		{RenderBlockingScript, "sync script", []pg{{path: "/a", head: `<script src="/app.js"></script><script src="/b.js" defer></script>`}}, []string{"/a"}},
		{RenderBlockingScript, "async, module, in body", []pg{{path: "/a", head: `<script src="/a.js" async></script><script type="module" src="/m.js"></script>`, body: `<script src="/late.js"></script>`}}, nil},
		{MissingViewport, "none", []pg{{path: "/a", head: "<!--viewport-->"}}, []string{"/a"}},

		// Security.
		{MixedContent, "http image", []pg{{path: "/a", body: `<img src="http://cdn.x.com/a.png" alt="" width="1" height="1">`}}, []string{"/a"}},
		{MixedContent, "http stylesheet", []pg{{path: "/a", head: `<link rel="stylesheet" href="http://cdn.x.com/a.css">`}}, []string{"/a"}},
		{MixedContent, "http link is not content", []pg{{path: "/a", body: `<a href="http://other.org/">x</a>`}}, nil},
		{FormPostsToHTTP, "http action", []pg{{path: "/a", body: `<form action="http://x.com/login" method="post"></form>`}}, []string{"/a"}},
		{MissingHSTS, "no header", []pg{{path: "/a"}}, []string{"/a"}},
		{MissingHSTS, "header", []pg{{path: "/a", header: http.Header{"Strict-Transport-Security": {"max-age=31536000"}}}}, nil},

		// URLs.
		{URLSessionID, "phpsessid", []pg{{path: "/a?PHPSESSID=abc"}}, []string{"/a?PHPSESSID=abc"}},
		{URLSessionID, "jsessionid", []pg{{path: "/a;jsessionid=abc"}}, []string{"/a;jsessionid=abc"}},
		{URLSpaces, "space", []pg{{path: "/a%20b"}}, []string{"/a%20b"}},
		{URLUnderscores, "underscore", []pg{{path: "/a_b"}}, []string{"/a_b"}},
		{URLUppercase, "upper case", []pg{{path: "/About"}}, []string{"/About"}},
		{URLUppercase, "upper-case query is fine", []pg{{path: "/a?Q=1"}}, nil},
		{URLRepeatedSlashes, "double slash", []pg{{path: "/a//b"}}, []string{"/a//b"}},
		{URLTooLong, "long", []pg{{path: "/" + strings.Repeat("a", 120)}}, []string{"/" + strings.Repeat("a", 120)}},
	}
	for _, c := range cases {
		t.Run(c.typ+"/"+c.name, func(t *testing.T) {
			got := flagged(Run(crawl(c.pages...)), c.typ)
			if !slices.Equal(got, c.want) {
				t.Errorf("flagged %q, want %q", got, c.want)
			}
		})
	}
	// Every type of this file's categories has a case that flags a page.
	covered := map[string]bool{}
	for _, c := range cases {
		if len(c.want) > 0 {
			covered[c.typ] = true
		}
	}
	for _, ch := range Checks() {
		if !covered[ch.Type] && !slices.Contains(portedTypes, ch.Type) && !slices.Contains(discoveryTypes, ch.Type) && slices.Contains(pageCategories, ch.Category) {
			t.Errorf("%s: no case flags a page", ch.Type)
		}
	}
}

// portedTypes are tested in internal/report with real crawls; pageCategories are the
// categories this file's table covers.
var (
	portedTypes    = []string{DuplicateTitle, DuplicateMetaDescription, MissingMetaDescription, MultipleH1, SitemapNon200, SitemapRedirect, SitemapNoindex, SitemapCanonicalised, BrokenInternalLink, OrphanPage, DuplicateContent, NearDuplicateContent}
	pageCategories = []string{CategoryTitles, CategoryContent, CategoryIndexability, CategoryCanonical, CategoryHreflang, CategoryImages, CategoryStructuredData, CategoryPerformance, CategorySecurity, CategoryURLs}
)

// ms makes TTFB samples of milliseconds.
func ms(v ...int) []time.Duration {
	out := make([]time.Duration, len(v))
	for i, n := range v {
		out[i] = time.Duration(n) * time.Millisecond
	}
	return out
}

// hreflangs writes alternates: pairs of code and path.
func hreflangs(_ string, pairs ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(pairs); i += 2 {
		fmt.Fprintf(&b, `<link rel="alternate" hreflang="%s" href="%s%s">`, pairs[i], host, pairs[i+1])
	}
	return b.String()
}

// TestDuplicateContent: the same main text is a duplicate whatever surrounds it; one word
// changed in 400 is a near-duplicate; another text is neither.
func TestDuplicateContent(t *testing.T) {
	text := words(7, 400)
	changed := strings.Replace(text, " ", " extra ", 1) // one word more, near the start
	doc := func(nav, main string) string {
		return "<html><body><nav>" + nav + "</nav><main><p>" + main + "</p></main></body></html>"
	}
	res := Run(crawl(
		pg{path: "/a", raw: doc("Home About", text)},
		pg{path: "/b", raw: doc("Other navigation entirely", strings.ToUpper(text))},
		pg{path: "/c", raw: doc("", changed)},
		pg{path: "/d", raw: doc("", words(8, 400))},
	))
	if got := flagged(res, DuplicateContent); !slices.Equal(got, []string{"/a", "/b"}) {
		t.Errorf("duplicate_content %q, want /a /b", got)
	}
	near := flagged(res, NearDuplicateContent)
	if !slices.Contains(near, "/c") || slices.Contains(near, "/d") {
		t.Errorf("near_duplicate_content %q, want /c (and its twins), not /d", near)
	}
	for _, is := range res.Issues {
		if is.Type == NearDuplicateContent {
			for _, it := range is.Items {
				if it.URL == host+"/c" && it.Twin != host+"/a" && it.Twin != host+"/b" {
					t.Errorf("/c twin %q", it.Twin)
				}
			}
		}
	}
}
