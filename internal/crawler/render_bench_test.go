package crawler

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contentapi/contentapi/internal/crawler/crawltest"
)

// BenchmarkRenderedCrawl renders a 100-page single-page app (every page's title, text and
// links written by a script from an asynchronous request) with the default two tabs, and
// reports pages/s and memory: the Go process's and its browser's peak resident sets
// (VmHWM, summed over the browser's processes: an upper bound, since they share pages) and
// their proportional share at the end (Pss, which counts shared pages once).
func BenchmarkRenderedCrawl(b *testing.B) {
	const pages = 100
	spa := crawltest.NewLargeSPA(b, pages)
	c := renderCrawler(b, RenderConfig{})
	c.cfg.Timeout = 5 * time.Minute
	if err := c.StartRenderer(context.Background()); err != nil {
		b.Fatal(err)
	}
	stop, cpu := samplePeak(b)
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		res, err := c.Crawl(context.Background(), Request{Domain: spa.Domain(), MaxPages: pages, Render: true})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Pages) != pages {
			b.Fatalf("%d pages rendered, want %d (warnings %v)", len(res.Pages), pages, res.Warnings)
		}
		for _, p := range res.Pages {
			if p.Rendered == nil || p.Rendered.Error != "" || p.Rendered.WordCount == 0 {
				b.Fatalf("%s rendered %+v", p.URL, p.Rendered)
			}
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	reportRendered(b, stop(), cpu(), pages*b.N, elapsed)
}

// memPeak is what samplePeak saw of this process and its descendants (the browsers), in bytes.
type memPeak struct {
	rss     int64 // the largest summed resident set (pages shared between processes count in each)
	hwm     int64 // summed VmHWM: each process's own peak, reached at different times (looser)
	pss     int64 // summed Pss at the end: each shared page counted once, in shares
	peakPss int64 // the largest summed Pss seen: what a memory limit on the family charges
}

// samplePeak samples, every 50 ms until stopped, the memory of this process and its
// descendants (the browser); stop returns what it saw. cpu returns the CPU time the family
// used since the start (each process's user + system time as last seen, processes that ended
// included): unlike pages/s it barely moves with the machine's other load, so it compares
// two builds on a busy machine. The shared renderer's browsers are ended first: what is
// measured is the caller's.
func samplePeak(b testing.TB) (stop func() memPeak, cpu func() time.Duration) {
	stopSharedRenderer()
	var mu sync.Mutex
	var m memPeak
	start, last := familyTicks(), map[int]int64{}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			rss, pss := sumProcs(b, "VmRSS:"), sumPss(b)
			ticks := familyTicks()
			mu.Lock()
			m.rss, m.peakPss = max(m.rss, rss), max(m.peakPss, pss)
			for pid, n := range ticks {
				last[pid] = n
			}
			mu.Unlock()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	stop = func() memPeak {
		close(done)
		<-finished
		mu.Lock()
		defer mu.Unlock()
		m.hwm, m.pss = sumProcs(b, "VmHWM:"), sumPss(b)
		return m
	}
	cpu = func() time.Duration {
		mu.Lock()
		defer mu.Unlock()
		var ticks int64
		for pid, n := range last {
			ticks += n - start[pid]
		}
		return time.Duration(ticks) * time.Second / 100 // USER_HZ
	}
	return stop, cpu
}

// familyTicks is each family process's user + system time, in clock ticks.
func familyTicks() map[int]int64 {
	out := map[int]int64{}
	for _, pid := range family() {
		if f := statFields(strconv.Itoa(pid)); len(f) > 13 {
			u, _ := strconv.ParseInt(f[11], 10, 64)
			st, _ := strconv.ParseInt(f[12], 10, 64)
			out[pid] = u + st
		}
	}
	return out
}

// family is this process and its descendants, by pid.
func family() []int {
	return append([]int{os.Getpid()}, crawltest.Descendants(os.Getpid())...)
}

func sumProcs(b testing.TB, field string) int64 {
	var total int64
	for _, pid := range family() {
		total += statusKB("/proc/"+strconv.Itoa(pid)+"/status", field) << 10
	}
	return total
}

func sumPss(b testing.TB) int64 {
	var total int64
	for _, pid := range family() {
		total += statusKB("/proc/"+strconv.Itoa(pid)+"/smaps_rollup", "Pss:") << 10
	}
	return total
}

// statusKB reads a "Field:  123 kB" line of a /proc file; 0 when absent.
func statusKB(path, field string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// BenchmarkRenderedCrawlRustBook renders real pages nobody here wrote, a second shape of
// data beside the SPA: the Cargo book shipped with the Rust toolchain (mdBook: long pages,
// a sidebar of every chapter, theme and search scripts), up to 100 pages found by links
// from its home page. Skipped where the toolchain's docs are not installed.
func BenchmarkRenderedCrawlRustBook(b *testing.B) {
	root := rustDocs(b, "cargo")
	srv := httptest.NewServer(http.FileServer(http.Dir(root)))
	b.Cleanup(srv.Close)
	c := renderCrawler(b, RenderConfig{})
	c.cfg.Timeout = 5 * time.Minute
	if err := c.StartRenderer(context.Background()); err != nil {
		b.Fatal(err)
	}
	domain := strings.TrimPrefix(srv.URL, "http://")
	stop, cpu := samplePeak(b)
	b.ResetTimer()
	start, rendered := time.Now(), 0
	for b.Loop() {
		res, err := c.Crawl(context.Background(), Request{Domain: domain, MaxPages: 100, Render: true})
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range res.Pages {
			if p.Rendered != nil && p.Rendered.Error == "" {
				rendered++
			}
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	if rendered == 0 {
		b.Fatal("no page rendered")
	}
	reportRendered(b, stop(), cpu(), rendered, elapsed)
}

// reportRendered reports a rendered-crawl benchmark's rate, CPU and memory.
func reportRendered(b *testing.B, m memPeak, cpu time.Duration, pages int, elapsed time.Duration) {
	b.ReportMetric(float64(pages)/elapsed.Seconds(), "pages/s")
	b.ReportMetric(float64(cpu.Milliseconds())/float64(pages), "cpu-ms/page")
	b.ReportMetric(float64(m.rss)/(1<<20), "peak-RSS-MB")
	b.ReportMetric(float64(m.hwm)/(1<<20), "sum-HWM-MB")
	b.ReportMetric(float64(m.peakPss)/(1<<20), "peak-PSS-MB")
	b.ReportMetric(float64(m.pss)/(1<<20), "end-PSS-MB")
}

// rustDocs is the directory of one of the Rust toolchain's html books, or skips.
func rustDocs(b *testing.B, book string) string {
	out, err := exec.Command("rustc", "--print", "sysroot").Output()
	if err != nil {
		b.Skipf("no rustc to find the Rust docs: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "share", "doc", "rust", "html", book)
	if _, err := os.Stat(filepath.Join(dir, "index.html")); err != nil {
		b.Skipf("no %s book under the Rust sysroot: %v", book, err)
	}
	return dir
}
