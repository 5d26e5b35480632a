package crawler

import (
	"context"
	"runtime"
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

// BenchmarkCrawlRetainedMemory reports the heap a finished crawl keeps per page, for 100 and
// for 500 pages: equal figures show memory grows only with the Page records kept, not with
// the bodies fetched.
func BenchmarkCrawlRetainedMemory(b *testing.B) {
	const n = 500
	s := newTestSite(b)
	locs := make([]string, n)
	for i := range n {
		locs[i] = "/articles/" + strconv.Itoa(i)
		s.page(locs[i], benchArticle(i))
	}
	s.serve("/sitemap.xml", "application/xml", s.urlset(locs...))
	c := testCrawler(Config{})
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	for b.Loop() {
		for _, pages := range []int{100, 500} {
			before := heap()
			res, err := c.Crawl(context.Background(), Request{Domain: s.domain(), MaxPages: pages})
			if err != nil || len(res.Pages) != pages {
				b.Fatalf("%d pages, %v", len(res.Pages), err)
			}
			after := heap()
			b.ReportMetric(float64(int64(after)-int64(before))/float64(pages), "retained-B/page@"+strconv.Itoa(pages))
			runtime.KeepAlive(res)
		}
	}
}
