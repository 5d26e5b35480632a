package crawler

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Shape of the benchmark site: benchPages HTML pages, the first benchInSitemap of them in the
// sitemap (the rest reachable only by links), and benchFiles linked files, benchMissing of
// which do not exist. Pages plus files make 500 URLs, the audit's largest budget.
const (
	benchPages     = 450
	benchInSitemap = 400
	benchFiles     = 50
	benchMissing   = 10
)

// benchSite serves a 500-URL site whose pages link to one another (click depth grows with
// the page number), to PDFs and images, and to some files that are missing.
func benchSite(b *testing.B) *testSite {
	s := newTestSite(b)
	var locs []string
	for i := range benchPages {
		p := benchPagePath(i)
		if i < benchInSitemap {
			locs = append(locs, "{base}"+p)
		}
		s.page(p, benchLinkedArticle(i))
	}
	home := `<nav>`
	for i := range 10 {
		home += `<a href="` + benchPagePath(i) + `">Section ` + strconv.Itoa(i) + `</a> `
	}
	s.page("/", htmlPage("Home", home+`</nav><main>`+words(400)+`</main>`))
	for i := range benchFiles - benchMissing {
		s.serve(benchFilePath(i), benchFileType(i), make([]byte, 4096+i*1024))
	}
	s.serve("/sitemap.xml", "application/xml", s.urlset(locs...))
	return s
}

func benchPagePath(i int) string { return "/docs/" + strconv.Itoa(i) + "/" }

func benchFilePath(i int) string {
	if i%2 == 0 {
		return "/files/report-" + strconv.Itoa(i) + ".pdf"
	}
	return "/img/photo-" + strconv.Itoa(i) + ".png"
}

func benchFileType(i int) string {
	if i%2 == 0 {
		return "application/pdf"
	}
	return "image/png"
}

// benchLinkedArticle is page i: nav links, ~800 words, links to the next pages (so
// following links from the home page reaches every page) and to one file.
func benchLinkedArticle(i int) string {
	var body strings.Builder
	body.WriteString(`<header><a href="/">Logo</a><nav><a href="/docs/0/">Docs</a> <a href="/docs/1/">Guide</a></nav></header><main>`)
	body.WriteString("<h1>Article " + strconv.Itoa(i) + "</h1>")
	for s := range 8 {
		body.WriteString("<h2>Section " + strconv.Itoa(s) + "</h2><p>" + words(100) + "</p>")
	}
	for _, next := range []int{i * 2, i*2 + 1, i + 1, i + 10} {
		if next < benchPages && next != i {
			body.WriteString(`<a href="` + benchPagePath(next) + `">Next ` + strconv.Itoa(next) + `</a> `)
		}
	}
	file := benchFilePath(i % benchFiles)
	if i%benchFiles >= benchFiles-benchMissing {
		file = "/files/missing-" + strconv.Itoa(i%benchFiles) + ".pdf"
	}
	body.WriteString(`<a href="` + file + `">Download</a><img src="` + benchFilePath(1) + `" alt="photo">`)
	body.WriteString(`</main><footer>© Example</footer><script>console.log("x")</script>`)
	return `<!doctype html><html lang="en"><head><title>Article ` + strconv.Itoa(i) +
		`</title><meta name="description" content="About article ` + strconv.Itoa(i) +
		`"><link rel="canonical" href="` + benchPagePath(i) + `"></head><body>` + body.String() + `</body></html>`
}

// BenchmarkAuditSite500 crawls the 500-URL site as an audit does (every check on) and, in
// the same run, mirrors it with `wget --recursive`, reporting both times per run, the pages
// per second and the process's peak RSS (VmHWM, which includes the test's own server).
//
// Measured on the 2-core test machine under load from other jobs, three alternating runs of
// 20 each: before link discovery (sitemap pages, link checks of pages only: 450 requests)
// 0.077-0.132 s per crawl, 0.10 s CPU; after (sitemap and link-only pages, files checked:
// 501 requests, with the page facts of the audit's checks) 0.107-0.115 s, 0.12 s CPU, about
// 1.1x the time (1.2x the CPU); wget --recursive of the same site 0.35-0.78 s; peak RSS
// 33-36 MB.
func BenchmarkAuditSite500(b *testing.B) {
	s := benchSite(b)
	c := testCrawler(Config{Timeout: time.Minute})
	ctx := context.Background()
	wget, wgetErr := exec.LookPath("wget")
	if wgetErr != nil {
		b.Log("wget not found: only the crawl is timed")
	}
	b.ReportAllocs()
	b.ResetTimer()
	var crawlTime, wgetTime, cpuTime time.Duration
	pages, runs := 0, 0
	for b.Loop() {
		start, cpuStart := time.Now(), processCPU()
		res, err := c.Crawl(ctx, Request{Domain: s.domain(), MaxPages: 500, CheckLinks: true})
		if err != nil {
			b.Fatal(err)
		}
		crawlTime += time.Since(start)
		cpuTime += processCPU() - cpuStart
		pages += len(res.Pages)
		runs++
		if wgetErr == nil {
			b.StopTimer()
			d, err := runWget(b, wget, s.URL)
			if err != nil {
				b.Fatal(err)
			}
			wgetTime += d
			b.StartTimer()
		}
	}
	b.ReportMetric(crawlTime.Seconds()/float64(runs), "crawl-s/op")
	// CPU time (crawler and test server together) is steadier than wall time on a shared machine.
	b.ReportMetric(cpuTime.Seconds()/float64(runs), "cpu-s/op")
	b.ReportMetric(float64(pages)/crawlTime.Seconds(), "pages/s")
	if wgetErr == nil {
		b.ReportMetric(wgetTime.Seconds()/float64(runs), "wget-s/op")
	}
	if kb, err := peakRSSKiB(); err == nil {
		b.ReportMetric(float64(kb)/1024, "peak-RSS-MB")
	}
}

// runWget mirrors the site into a temporary directory and returns how long it took.
func runWget(b *testing.B, wget, base string) (time.Duration, error) {
	dir := b.TempDir()
	start := time.Now()
	cmd := exec.Command(wget, "--recursive", "--level=inf", "--quiet", "--no-host-directories",
		"--directory-prefix", dir, base+"/")
	err := cmd.Run()
	d := time.Since(start)
	// wget exits 8 when some link answered an error (the missing files): expected here.
	if ee, ok := errors.AsType[*exec.ExitError](err); ok && ee.ExitCode() == 8 {
		err = nil
	}
	if err != nil {
		return 0, fmt.Errorf("wget: %w", err)
	}
	return d, nil
}

// processCPU is the process's user plus system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSSKiB reads the process's peak resident set size from /proc (Linux only).
func peakRSSKiB() (int, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
		}
	}
	return 0, errors.New("no VmHWM in /proc/self/status")
}
