package crawler

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// bombSize is how far each decompression bomb inflates.
const bombSize = 200 << 20

// gzipBomb gzips prefix followed by filler repeated to about bombSize bytes, streaming, so
// the test itself never holds the inflated form. It is about 200 KB on the wire.
func gzipBomb(prefix, filler string) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	chunk := []byte(strings.Repeat(filler, (1<<20)/len(filler)))
	_, _ = zw.Write([]byte(prefix))
	for range bombSize / len(chunk) {
		_, _ = zw.Write(chunk) // a bytes.Buffer does not fail
	}
	_ = zw.Close()
	return buf.Bytes()
}

const urlsetStart = `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`

var (
	htmlBomb    = sync.OnceValue(func() []byte { return gzipBomb("<!doctype html><html><body><h1>", "a") })
	sitemapBomb = sync.OnceValue(func() []byte { return gzipBomb(urlsetStart+"<url><loc>/", "a") })
	commentBomb = sync.OnceValue(func() []byte { return gzipBomb(urlsetStart+"<!--", "<") })
	nestingBomb = sync.OnceValue(func() []byte { return gzipBomb(urlsetStart, "<a>") })
)

// allocatedBy reports the bytes the Go heap allocated while f ran (in this whole process:
// the test servers' allocations count too, which only makes the check stricter).
func allocatedBy(f func()) uint64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestCrawlBoundsDecompression serves 200 MB gzip bombs (~200 KB sent) everywhere a crawl
// may inflate a body: pages whose Content-Type or .xml.gz name made colly inflate them,
// pages and robots.txt with Content-Encoding gzip (undone by Go's transport), and sitemaps
// whose single text, comment or nesting would otherwise be held whole. A crawl must
// allocate a small multiple of its limits, not the inflated size.
func TestCrawlBoundsDecompression(t *testing.T) {
	const maxBody = 1 << 20
	const budget = 40 << 20
	tests := []struct {
		name  string
		setup func(s *testSite)
		check func(t *testing.T, res *Result)
	}{
		{
			name: "page with gzip in its Content-Type",
			setup: func(s *testSite) {
				s.serve("/", "text/html; charset=gzip", htmlBomb())
			},
			check: func(t *testing.T, res *Result) {
				if len(res.Pages) != 1 || !res.Pages[0].BodyCut || !slices.Contains(res.Limits, LimitBytes) {
					t.Errorf("pages = %+v", res.Pages)
				}
			},
		},
		{
			name: "page named .xml.gz from a sitemap",
			setup: func(s *testSite) {
				s.serve("/sitemap.xml", "application/xml", s.urlset("{base}/feed.xml.gz"))
				s.mux.HandleFunc("/feed.xml.gz", func(w http.ResponseWriter, _ *http.Request) {
					w.Header()["Content-Type"] = nil // no type, no sniffing: colly went by the name
					_, _ = w.Write(htmlBomb())
				})
			},
			check: func(t *testing.T, res *Result) {
				if len(res.Pages) != 2 || !res.Pages[0].BodyCut || !slices.Contains(res.Limits, LimitBytes) {
					t.Errorf("pages = %+v", res.Pages)
				}
			},
		},
		{
			name: "page with Content-Encoding gzip",
			setup: func(s *testSite) {
				s.serve("/", "text/html", htmlBomb(), "Content-Encoding", "gzip")
			},
			check: func(t *testing.T, res *Result) {
				if len(res.Pages) != 1 || !res.Pages[0].BodyCut || !slices.Contains(res.Limits, LimitBytes) {
					t.Errorf("pages = %+v", res.Pages)
				}
			},
		},
		{
			name: "robots.txt with Content-Encoding gzip",
			setup: func(s *testSite) {
				s.serve("/robots.txt", "text/plain", gzipBomb("User-agent: *\nDisallow: /x\n#", "a"), "Content-Encoding", "gzip")
				s.page("/{$}", htmlPage("Home", "hi"))
			},
			check: func(t *testing.T, res *Result) {
				if len(res.Pages) != 1 || res.Pages[0].Title != "Home" {
					t.Errorf("pages = %+v", res.Pages)
				}
			},
		},
		{
			name: "sitemap.xml.gz with one huge loc",
			setup: func(s *testSite) {
				s.serve("/sitemap.xml", "application/gzip", sitemapBomb())
				s.page("/{$}", htmlPage("Home", "hi"))
			},
			check: checkSitemapRefused,
		},
		{
			name: "sitemap with Content-Encoding gzip and one huge comment",
			setup: func(s *testSite) {
				s.serve("/sitemap.xml", "application/xml", commentBomb(), "Content-Encoding", "gzip")
				s.page("/{$}", htmlPage("Home", "hi"))
			},
			check: checkSitemapRefused,
		},
		{
			name: "sitemap nested without end",
			setup: func(s *testSite) {
				s.serve("/sitemap.xml", "application/xml", nestingBomb())
				s.page("/{$}", htmlPage("Home", "hi"))
			},
			check: checkSitemapRefused,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestSite(t)
			tt.setup(s)
			c := testCrawler(Config{MaxBodyBytes: maxBody})
			var res *Result
			var err error
			alloc := allocatedBy(func() {
				res, err = c.Crawl(context.Background(), Request{Domain: s.domain(), MaxPages: 5})
			})
			t.Logf("allocated %.1f MiB", float64(alloc)/(1<<20))
			if err != nil {
				t.Fatal(err)
			}
			if alloc > budget {
				t.Errorf("crawl allocated %d MiB, want under %d MiB", alloc>>20, budget>>20)
			}
			tt.check(t, res)
		})
	}
}

// checkSitemapRefused expects the sitemap to be reported as an error and the crawl to go on
// from the home page.
func checkSitemapRefused(t *testing.T, res *Result) {
	t.Helper()
	if len(res.SitemapErrors) != 1 || len(res.Pages) != 1 || res.Pages[0].Title != "Home" {
		t.Errorf("sitemap errors = %+v, pages = %+v", res.SitemapErrors, res.Pages)
	}
}

func TestParseSitemapBoundsTokens(t *testing.T) {
	base, _ := url.Parse("https://example.com/sitemap.xml")
	head := `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>/a</loc></url>`
	tests := []struct {
		name string
		doc  string
		err  error
	}{
		{"long text", head + "<url><loc>/" + strings.Repeat("b", maxXMLToken) + "</loc></url></urlset>", errXMLTokenTooLong},
		{"long comment", head + "<!--" + strings.Repeat("<", maxXMLToken) + "--></urlset>", errXMLTokenTooLong},
		{"long tag", head + `<url x="` + strings.Repeat("c", maxXMLToken) + `"/></urlset>`, errXMLTokenTooLong},
		{"deep", head + strings.Repeat("<url>", maxXMLDepth) + strings.Repeat("</url>", maxXMLDepth) + "</urlset>", errXMLTooDeep},
		// A charset decoder reads a few KiB ahead, so the bound is approximate there.
		{"latin-1 long text", `<?xml version="1.0" encoding="ISO-8859-1"?>` + head + "<url><loc>/" + strings.Repeat("\xe9", 2*maxXMLToken) + "</loc></url></urlset>", errXMLTokenTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var pages []string
			_, err := parseSitemap(strings.NewReader(tt.doc), base, func(u *url.URL) bool { pages = append(pages, u.String()); return true }, 10)
			if !errors.Is(err, tt.err) {
				t.Errorf("err = %v, want %v", err, tt.err)
			}
			if !slices.Equal(pages, []string{"https://example.com/a"}) {
				t.Errorf("pages = %q, want the entry before the fault", pages)
			}
		})
	}
}

// TestCrawlReadsGzipPageWithinLimit: inflating is bounded, not refused.
func TestCrawlReadsGzipPageWithinLimit(t *testing.T) {
	s := newTestSite(t)
	s.serve("/", "text/html", gzipBytes(t, []byte(htmlPage("Zipped", "<p>"+words(10)+"</p>"))))
	res, err := testCrawler(Config{}).Crawl(context.Background(), Request{Domain: s.domain(), MaxPages: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Pages) != 1 || res.Pages[0].Title != "Zipped" || res.Pages[0].WordCount != 10 {
		t.Errorf("pages = %+v", res.Pages)
	}
}
