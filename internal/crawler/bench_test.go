package crawler

import (
	"context"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkCrawl500 crawls a local 500-page site listed in a sitemap, with no delay, and
// reports pages per second. Pages look like real articles: boilerplate around ~800 words.
func BenchmarkCrawl500(b *testing.B) {
	const n = 500
	s := newTestSite(b)
	locs := make([]string, n)
	for i := range n {
		p := "/articles/" + strconv.Itoa(i)
		locs[i] = p
		s.page(p, benchArticle(i))
	}
	s.serve("/sitemap.xml", "application/xml", s.urlset(locs...))
	c := testCrawler(Config{})
	ctx := context.Background()

	b.ReportAllocs()
	b.ResetTimer()
	pages := 0
	for b.Loop() {
		res, err := c.Crawl(ctx, Request{Domain: s.domain(), MaxPages: n})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Pages) != n {
			b.Fatalf("%d pages, want %d", len(res.Pages), n)
		}
		pages += len(res.Pages)
	}
	b.ReportMetric(float64(pages)/b.Elapsed().Seconds(), "pages/s")
}

func benchArticle(i int) string {
	var body strings.Builder
	body.WriteString(`<header><a href="/">Logo</a><nav><a href="/a">A</a> <a href="/b">B</a> <a href="/c">C</a></nav></header><main>`)
	body.WriteString("<h1>Article " + strconv.Itoa(i) + "</h1>")
	for s := range 8 {
		body.WriteString("<h2>Section " + strconv.Itoa(s) + "</h2><p>" + words(100) + "</p>")
	}
	body.WriteString(`</main><aside>Related reading</aside><footer>© Example</footer><script>console.log("x")</script>`)
	return `<!doctype html><html><head><title>Article ` + strconv.Itoa(i) +
		`</title><meta name="description" content="About article ` + strconv.Itoa(i) +
		`"><link rel="canonical" href="/articles/` + strconv.Itoa(i) + `"></head><body>` + body.String() + `</body></html>`
}
