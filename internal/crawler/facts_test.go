package crawler

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestFactsFromCrawl: the answer's headers reach the page's facts through a real crawl:
// the Link canonical, X-Robots-Tag directives, HSTS and the time to first byte.
func TestFactsFromCrawl(t *testing.T) {
	s := newTestSite(t)
	doc := `<html lang="en"><head><title>T</title><link rel="canonical" href="/a"></head><body><p>Text</p></body></html>`
	s.serve("/a", "text/html", []byte(doc), "Link", `</b>; rel="canonical"`, "X-Robots-Tag", "nosnippet, noimageindex",
		"Strict-Transport-Security", "max-age=600")
	const wait = 50 * time.Millisecond
	s.mux.HandleFunc("/slow", func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(wait) // the delay is what is measured
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(doc))
	})
	s.serve("/sitemap.xml", "application/xml", s.urlset("/a", "/slow"))
	res, err := testCrawler(Config{}).Crawl(context.Background(), Request{Domain: s.domain()})
	if err != nil {
		t.Fatal(err)
	}
	var a, slow Page
	for _, p := range res.Pages {
		switch strings.TrimPrefix(p.URL, s.URL) {
		case "/a":
			a = p
		case "/slow":
			slow = p
		}
	}
	f := a.Facts
	if f.CanonicalHeader != s.URL+"/b" || !f.Nosnippet || !f.Noimageindex || f.Nofollow || !f.HSTS || !f.HasLang || f.Lang != "en" {
		t.Errorf("facts of /a = %+v", f)
	}
	if a.Canonical != s.URL+"/a" || !slices.Equal(f.Canonicals, []string{"/a"}) {
		t.Errorf("canonical %q, canonicals %q", a.Canonical, f.Canonicals)
	}
	if slow.Facts.TTFB < wait || slow.Facts.HSTS {
		t.Errorf("/slow: ttfb %v (want ≥ %v), hsts %v", slow.Facts.TTFB, wait, slow.Facts.HSTS)
	}
}

// TestFactsBounded: a hostile page (thousands of images, hreflangs and words, JSON-LD over
// the budget) gives bounded facts, and says which bounds it reached.
func TestFactsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("<html><head>")
	for i := range 400 {
		fmt.Fprintf(&b, `<link rel="alternate" hreflang="x%d" href="https://x.com/%d">`, i, i)
	}
	b.WriteString(`<script type="application/ld+json">{"a": "` + strings.Repeat("x", 300<<10) + `"}</script>`)
	b.WriteString(`<script type="application/ld+json">{"@type": "Product"}</script>`)
	b.WriteString("</head><body>")
	for range 3000 {
		b.WriteString(`<img src="/i.png">`)
	}
	b.WriteString("<p>" + strings.Repeat("word ", 30000) + "</p></body></html>")
	p := ParsePage("https://x.com/", nil, []byte(b.String()))
	f := p.Facts
	if f.Images != 3000 || f.ImagesNoAlt != maxImages || len(f.Hreflangs) != maxHreflangs || f.MainWords != maxHashedWords {
		t.Errorf("images %d (no alt %d), hreflangs %d, words hashed %d", f.Images, f.ImagesNoAlt, len(f.Hreflangs), f.MainWords)
	}
	if f.JSONLDBlocks != 2 || f.JSONLDSkipped != 1 || f.JSONLDInvalid != 0 || len(f.SchemaIssues) != 2 {
		t.Errorf("json-ld: %d blocks, %d skipped, %d invalid, issues %+v", f.JSONLDBlocks, f.JSONLDSkipped, f.JSONLDInvalid, f.SchemaIssues)
	}
	slices.Sort(f.Limits)
	if want := []string{LimitHreflangs, LimitImages, LimitJSONLD, LimitWords}; !slices.Equal(f.Limits, want) {
		t.Errorf("limits %q, want %q", f.Limits, want)
	}
	if p.WordCount != 30000 {
		t.Errorf("word count %d: the hash bound must not cut the count", p.WordCount)
	}
}

// TestLinkProblemsUnion: anchors of the rendered DOM the served HTML lacks are added, one
// both show counts once, and a list cut at its bound is not counted past what is known.
func TestLinkProblemsUnion(t *testing.T) {
	a, b, c := LinkProblem{Href: "/a", Text: "here"}, LinkProblem{Href: "/b", Text: "here"}, LinkProblem{Href: "/c", Text: "more"}
	served := LinkProblems{Count: 2, Examples: []LinkProblem{a, a}}
	served.union(LinkProblems{Count: 3, Examples: []LinkProblem{a, b, c}})
	if served.Count != 4 || len(served.Examples) != 4 || served.Examples[3] != c {
		t.Errorf("union = %+v, want a twice, b and c: 4", served)
	}
	cut := LinkProblems{Count: maxLinkProblems + 50}
	for range maxLinkProblems {
		cut.Examples = append(cut.Examples, a)
	}
	cut.union(LinkProblems{Count: 1, Examples: []LinkProblem{b}})
	if cut.Count != maxLinkProblems+50 || len(cut.Examples) != maxLinkProblems {
		t.Errorf("union of a cut list: count %d, %d examples; want %d, %d", cut.Count, len(cut.Examples), maxLinkProblems+50, maxLinkProblems)
	}
}
