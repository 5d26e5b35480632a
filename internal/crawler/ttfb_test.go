package crawler

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// TestCrawlTTFBSamples: a page slow once is asked twice more and judged by its median
// (fast); a page slow every time keeps a slow median; a fast page is asked once.
func TestCrawlTTFBSamples(t *testing.T) {
	const slow = 150 * time.Millisecond
	s := newTestSite(t)
	s.page("/{$}", htmlPage("Home", `<a href="/flaky">flaky</a><a href="/slow">slow</a>`))
	var flaky atomic.Int32
	s.mux.HandleFunc("/flaky", func(w http.ResponseWriter, _ *http.Request) {
		if flaky.Add(1) == 1 {
			time.Sleep(slow)
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(htmlPage("Flaky", "x")))
	})
	s.mux.HandleFunc("/slow", func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(slow)
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(htmlPage("Slow", "x")))
	})
	res, err := testCrawler(Config{}).Crawl(context.Background(), Request{Domain: s.domain(), TTFBResampleOver: slow / 2})
	if err != nil {
		t.Fatal(err)
	}
	pages := pagesByPath(res)
	if f := pages["/flaky"].Facts; len(f.TTFBSamples) != TTFBSamples || f.TTFB >= slow/2 || flaky.Load() != TTFBSamples {
		t.Errorf("/flaky: TTFB %v, samples %v, %d requests; want a fast median of 3", f.TTFB, f.TTFBSamples, flaky.Load())
	}
	if f := pages["/slow"].Facts; len(f.TTFBSamples) != TTFBSamples || f.TTFB < slow {
		t.Errorf("/slow: TTFB %v, samples %v; want a slow median of 3", f.TTFB, f.TTFBSamples)
	}
	if f := pages["/"].Facts; len(f.TTFBSamples) != 0 {
		t.Errorf("/: samples %v, want none (fast at once)", f.TTFBSamples)
	}
}
