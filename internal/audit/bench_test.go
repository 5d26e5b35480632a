package audit

import (
	"strconv"
	"testing"

	"github.com/contentapi/contentapi/internal/crawler"
)

// BenchmarkRun500 runs every check over 500 article pages (about 800 words each, parsed as
// the crawler parses them): the checks' share of an audit of a 500-page site.
func BenchmarkRun500(b *testing.B) {
	var pages []pg
	for i := range 500 {
		pages = append(pages, pg{path: "/articles/" + strconv.Itoa(i), body: "<h2>Section</h2><p>" + words(1000+i, 400) + "</p>"})
	}
	s := crawl(pages...)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		_ = Run(s)
	}
}

// BenchmarkParsePage is the extractor's cost for one such page, facts included.
func BenchmarkParsePage(b *testing.B) {
	doc := []byte(pg{path: "/a", body: "<h2>Section</h2><p>" + words(1, 400) + "</p>"}.document(2))
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		_ = crawler.ParsePage("https://x.com/a", nil, doc)
	}
}
