package crawler

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/contentapi/contentapi/internal/crawler/crawltest"
)

// browserPath is the Chromium the tests render with; tests skip, saying why, without one.
func browserPath(t testing.TB) string {
	t.Helper()
	p := FindBrowser(os.Getenv("CHROME_PATH"))
	if p == "" {
		t.Skip("no Chromium found (CHROME_PATH, chromium, chromium-browser, google-chrome): `make test` installs it")
	}
	return p
}

// renderCrawler is testCrawler with rendering on; its browser ends with the test.
func renderCrawler(t testing.TB, rc RenderConfig) *Crawler {
	t.Helper()
	rc.BrowserPath = browserPath(t)
	c := testCrawler(Config{Render: rc, Timeout: 30 * time.Second})
	t.Cleanup(c.Close)
	return c
}

// sharedRenderer is the renderer, at the default settings, of the tests whose pages load and
// end as pages do (sharedRenderCrawler): starting Chromium costs more CPU than rendering such
// a test's pages, so its browsers serve one test after another. The first test to render
// starts it; stopSharedRenderer ends it (TestMain, and samplePeak). Tests that kill, stall or
// slow a browser, or read a renderer's settings or counts, have a renderer of their own
// (renderCrawler).
var sharedRenderer struct {
	mu sync.Mutex
	r  *Renderer
}

// sharedRenderCrawler is testCrawler rendering with the shared renderer, which outlives it.
func sharedRenderCrawler(t testing.TB) *Crawler {
	t.Helper()
	path := browserPath(t)
	c := testCrawler(Config{Timeout: 30 * time.Second})
	sharedRenderer.mu.Lock()
	defer sharedRenderer.mu.Unlock()
	if sharedRenderer.r == nil {
		sharedRenderer.r = NewRenderer(RenderConfig{BrowserPath: path}, c.cfg.UserAgent)
	}
	c.renderer = sharedRenderer.r
	return c
}

// stopSharedRenderer ends the shared renderer's browsers; the next test that renders with
// it starts another.
func stopSharedRenderer() {
	sharedRenderer.mu.Lock()
	r := sharedRenderer.r
	sharedRenderer.r = nil
	sharedRenderer.mu.Unlock()
	r.Close()
}

func TestMain(m *testing.M) {
	code := m.Run()
	stopSharedRenderer()
	os.Exit(code)
}

func TestRenderedCrawlFindsSPAPages(t *testing.T) {
	spa := crawltest.NewSPA(t)
	c := sharedRenderCrawler(t)
	ctx := context.Background()

	plain, err := c.Crawl(ctx, Request{Domain: spa.Domain()})
	if err != nil {
		t.Fatal(err)
	}
	if got := pagePaths(plain); len(got) != 1 || plain.Pages[0].Rendered != nil {
		t.Fatalf("plain crawl: pages %v, want the home page alone, unrendered", got)
	}

	res, err := c.Crawl(ctx, Request{Domain: spa.Domain(), Render: true})
	if err != nil {
		t.Fatal(err)
	}
	pages := pagesByPath(res)
	if len(pages) != len(crawltest.SPARoutes) {
		t.Fatalf("rendered crawl: pages %v, want the %d routes", pagePaths(res), len(crawltest.SPARoutes))
	}
	for path, title := range crawltest.SPARoutes {
		p := pages[path]
		r := p.Rendered
		if r == nil || r.Error != "" {
			t.Fatalf("%s: rendered %+v", path, r)
		}
		if p.Title != "Loading" || r.Title != title+" | SPA" || r.H1 != title || r.H1Count != 1 {
			t.Errorf("%s: raw title %q, rendered title %q h1 %q (%d)", path, p.Title, r.Title, r.H1, r.H1Count)
		}
		if p.WordCount > 5 || r.WordCount < 150 {
			t.Errorf("%s: words raw %d rendered %d", path, p.WordCount, r.WordCount)
		}
		if r.RawLinks != 0 || r.Links != len(crawltest.SPARoutes) || r.NewLinksTotal != r.Links || len(r.NewLinks) != r.Links {
			t.Errorf("%s: links raw %d rendered %d new %d %v", path, r.RawLinks, r.Links, r.NewLinksTotal, r.NewLinks)
		}
		wantErrors := 0
		if path == crawltest.SPABrokenRoute {
			wantErrors = 2 // console.error, then the uncaught exception
		}
		if r.ConsoleErrorsTotal != wantErrors || len(r.ConsoleErrors) != wantErrors {
			t.Errorf("%s: console errors %d %q, want %d", path, r.ConsoleErrorsTotal, r.ConsoleErrors, wantErrors)
		}
	}
	if r := pages[crawltest.SPABrokenRoute].Rendered; !strings.Contains(strings.Join(r.ConsoleErrors, "|"), "boom on /blog/first-post") {
		t.Errorf("console errors %q lack the exception", r.ConsoleErrors)
	}
	// The documents were answered from the crawl's own fetch; images were never fetched.
	if n := spa.Hits("/about"); n != 1 {
		t.Errorf("/about fetched %d times, want once", n)
	}
	if n := spa.Hits("/logo.png"); n != 0 {
		t.Errorf("the image was fetched %d times", n)
	}
}

// TestRenderRefusesPrivateAddresses: a page's script reaching for an address the crawl
// may not contact gets a network error, and the server there sees nothing.
func TestRenderRefusesPrivateAddresses(t *testing.T) {
	var secretHits atomic.Int32
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no second loopback address: %v", err)
	}
	secret := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		secretHits.Add(1)
		w.Header().Set("Access-Control-Allow-Origin", "*")
		fmt.Fprint(w, "secret")
	}))
	secret.Listener = ln
	secret.Start()
	t.Cleanup(secret.Close)

	site := newTestSite(t)
	site.page("/", `<!doctype html><html><head><title>t</title></head><body><p id="out">waiting</p><script>
fetch("`+secret.URL+`/x").then(r => r.text()).then(t => { document.getElementById("out").textContent = "got " + t })
  .catch(() => { document.getElementById("out").textContent = "refused request" });
</script></body></html>`)

	c := sharedRenderCrawler(t)
	c.checkAddr = func(a netip.Addr) error { // the site's address only
		if a.Unmap() == netip.MustParseAddr("127.0.0.1") {
			return nil
		}
		return fmt.Errorf("%w %s (test)", ErrForbiddenAddress, a)
	}
	res, err := c.Crawl(context.Background(), Request{Domain: site.domain(), Render: true})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Pages[0].Rendered
	if r == nil || r.Error != "" || r.WordCount != 2 {
		t.Fatalf("rendered %+v, want the two words of the refusal", r)
	}
	if n := secretHits.Load(); n != 0 {
		t.Errorf("the private server got %d request(s)", n)
	}
}

// TestRenderTimeout: a page whose request never ends is reported as failing to render,
// and the crawl goes on.
func TestRenderTimeout(t *testing.T) {
	site := newTestSite(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	site.mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	site.page("/", htmlPage("home", `<a href="/ok">ok</a><script src="/slow"></script>`))
	site.page("/ok", htmlPage("ok", "fine"))
	// A page renders in well under a second alone, but CI runs this beside other packages on
	// two cores. The page's requests may wait longer than its render (or /slow would fail as
	// a request, and the page render without it). One tab: with two, the page after the
	// timeout would start a browser of its own beside the one replacing the killed browser,
	// and the spare after it.
	c := renderCrawler(t, RenderConfig{Timeout: 6 * time.Second, Concurrency: 1})
	c.cfg.RequestTimeout = 30 * time.Second
	res, err := c.Crawl(context.Background(), Request{Domain: site.domain(), Render: true})
	if err != nil {
		t.Fatal(err)
	}
	pages := pagesByPath(res)
	if r := pages["/"].Rendered; r == nil || !strings.Contains(r.Error, "timed out") {
		t.Fatalf("home rendered %+v, want a timeout", r)
	}
	if r := pages["/ok"].Rendered; r == nil || r.Error != "" || r.Title != "ok" {
		t.Fatalf("/ok rendered %+v", r)
	}
}

func TestRenderUnavailable(t *testing.T) {
	c := testCrawler(Config{})
	_, err := c.Crawl(context.Background(), Request{Domain: "127.0.0.1:1", Render: true})
	if !errors.Is(err, ErrRenderUnavailable) {
		t.Fatalf("err %v, want ErrRenderUnavailable", err)
	}
	if err := c.StartRenderer(context.Background()); !errors.Is(err, ErrRenderUnavailable) {
		t.Fatalf("StartRenderer: %v", err)
	}
	bad := New(Config{Render: RenderConfig{BrowserPath: "/bin/false"}})
	defer bad.Close()
	if err := bad.StartRenderer(context.Background()); !errors.Is(err, ErrRenderUnavailable) {
		t.Fatalf("StartRenderer of /bin/false: %v", err)
	}
}

// TestRenderResourceLimit: a script may be larger than a page (up to resourceFactor times
// MaxBodyBytes); one past that is refused, so it never runs.
func TestRenderResourceLimit(t *testing.T) {
	site := newTestSite(t)
	script := func(word string, size int) []byte {
		code := `document.getElementById("out").textContent += " ` + word + `";`
		return []byte(code + "\n//" + strings.Repeat("x", size-len(code)-3))
	}
	site.serve("/big.js", "text/javascript", script("big", 3500))
	site.serve("/huge.js", "text/javascript", script("huge", 4500))
	site.page("/", htmlPage("t", `<p id="out">start</p><script src="/big.js"></script><script src="/huge.js"></script>`))
	c := sharedRenderCrawler(t)
	c.cfg.MaxBodyBytes = 1000
	res, err := c.Crawl(context.Background(), Request{Domain: site.domain(), Render: true})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Pages[0].Rendered; r == nil || r.WordCount != 2 {
		t.Fatalf("rendered %+v, want the words start and big only", r)
	}
}

// TestRenderPageBytesLimit: a page's requests load at most maxPageResources times
// MaxBodyBytes in all. Once an answer is larger than what the page has left, what was read
// of it is counted too, so the page's later requests are refused without being sent. (A
// page reading answers one at a time makes this exact: with the refused answer uncounted,
// each of its 40 requests was sent.)
func TestRenderPageBytesLimit(t *testing.T) {
	site := newTestSite(t)
	const size = 1500
	site.serve("/r", "text/plain", []byte(strings.Repeat("x", size)))
	site.page("/", htmlPage("t", `<p id="out">start</p><script>(async () => { let n = 0;
for (let i = 0; i < 40; i++) { try { await (await fetch("/r?" + i)).text(); n++ } catch (e) {} }
document.getElementById("out").textContent = "got " + n })()</script>`))
	c := sharedRenderCrawler(t)
	c.cfg.MaxBodyBytes = 1000
	res, err := c.Crawl(context.Background(), Request{Domain: site.domain(), Render: true})
	if err != nil {
		t.Fatal(err)
	}
	whole := maxPageResources * 1000 / size // the answers the page's bytes hold
	if r := res.Pages[0].Rendered; r == nil || r.Error != "" || r.WordCount != 2 {
		t.Fatalf("rendered %+v, want the words got %d", r, whole)
	}
	// The whole answers, then the one read past the page's bytes: nothing after it.
	if n := len(site.hitTimes("/r")); n != whole+1 {
		t.Errorf("the page's requests reached the site %d times, want %d", n, whole+1)
	}
}

// TestRenderedAnchorsJudged: anchors a script inserts after load (a javascript:void(0)
// toggle, a "click here" link, an empty link) are judged in a rendered crawl as in the HTML
// as served, and an anchor both show counts once; a plain crawl sees the served HTML only.
func TestRenderedAnchorsJudged(t *testing.T) {
	site := newTestSite(t)
	site.page("/", htmlPage("Home", `<p><a href="/b">read more</a> <a onclick="go()">served toggle</a></p>
<nav id="side"></nav><script>
const nav = document.getElementById("side");
nav.innerHTML = '<a href="javascript:void(0)">Fold</a> <a href="/c">click here</a> <a href="/d"></a>';
</script>`))
	for _, p := range []string{"/b", "/c", "/d"} {
		site.page(p, htmlPage("Page "+p, `<a href="/">Home page</a>`))
	}
	c := sharedRenderCrawler(t)
	for _, tt := range []struct {
		render                       bool
		notCrawlable, generic, empty []string // hrefs
	}{
		{false, []string{""}, []string{"/b"}, nil},
		{true, []string{"", "javascript:void(0)"}, []string{"/b", "/c"}, []string{"/d"}},
	} {
		res, err := c.Crawl(context.Background(), Request{Domain: site.domain(), Render: tt.render, MaxPages: 1})
		if err != nil {
			t.Fatal(err)
		}
		f := pagesByPath(res)["/"].Facts
		for _, l := range []struct {
			name string
			got  LinkProblems
			want []string
		}{{"not crawlable", f.NotCrawlableLinks, tt.notCrawlable}, {"generic", f.GenericTextLinks, tt.generic}, {"empty", f.EmptyTextLinks, tt.empty}} {
			var hrefs []string
			for _, e := range l.got.Examples {
				hrefs = append(hrefs, e.Href)
			}
			if !slices.Equal(hrefs, l.want) || l.got.Count != len(l.want) {
				t.Errorf("render %t: %s links %q (count %d), want %q", tt.render, l.name, hrefs, l.got.Count, l.want)
			}
		}
	}
}

// TestRenderRestartsAfterBrowserDeath: a browser that died (killed, or a page crashed its
// single process) is started again by the next render; the crawl after it renders every
// page.
func TestRenderRestartsAfterBrowserDeath(t *testing.T) {
	spa := crawltest.NewSPA(t)
	c := renderCrawler(t, RenderConfig{})
	ctx := context.Background()
	if err := c.StartRenderer(ctx); err != nil {
		t.Fatal(err)
	}
	first := c.renderer.process(t)
	if err := first.Kill(); err != nil {
		t.Fatal(err)
	}
	_, _ = first.Wait()

	res, err := c.Crawl(ctx, Request{Domain: spa.Domain(), Render: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Pages {
		if p.Rendered == nil || p.Rendered.Error != "" {
			t.Errorf("%s after the restart: rendered %+v", p.URL, p.Rendered)
		}
	}
	if len(res.Pages) != len(crawltest.SPARoutes) {
		t.Errorf("pages %v, want the %d routes", pagePaths(res), len(crawltest.SPARoutes))
	}
	if again := c.renderer.process(t); again.Pid == first.Pid {
		t.Errorf("still browser pid %d: no restart", again.Pid)
	}
}

// process is the process of the browser waiting in the pool (the last one idle).
func (r *Renderer) process(t *testing.T) *os.Process {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.idle) == 0 {
		t.Fatal("no browser idle")
	}
	c := chromedp.FromContext(r.idle[len(r.idle)-1].ctx)
	if c == nil || c.Browser == nil || c.Browser.Process() == nil {
		t.Fatal("the browser has no process")
	}
	return c.Browser.Process()
}

// TestRenderHeapBomb: a page whose script allocates without end hits the JavaScript heap
// cap instead of the machine's memory; it is reported as failed to render and the page
// after it renders in a restarted browser.
func TestRenderHeapBomb(t *testing.T) {
	mux := http.NewServeMux()
	page := func(title, body string) string {
		return `<!doctype html><html lang="en"><head><title>` + title + `</title></head><body>` + body + `</body></html>`
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, page("Home", `<h1>Home</h1><a href="/bomb">bomb</a> <a href="/after">after</a>`))
	})
	mux.HandleFunc("/bomb", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, page("Bomb", `<h1>Bomb</h1><script>const keep = []; for (;;) keep.push(new Array(1 << 20).fill(keep.length));</script>`))
	})
	mux.HandleFunc("/after", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, page("After", `<h1>After</h1><p>rendered after the bomb</p>`))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c := renderCrawler(t, RenderConfig{Concurrency: 1, Timeout: time.Minute})

	stop, _ := samplePeak(t)
	res, err := c.Crawl(context.Background(), Request{Domain: strings.TrimPrefix(srv.URL, "http://"), Render: true})
	peak := stop().rss
	if err != nil {
		t.Fatal(err)
	}
	pages := pagesByPath(res)
	// The cap ended the page, not the timeout, and before the process grew past a bound
	// that the uncapped heap (V8's default is several GiB) passes.
	if r := pages["/bomb"].Rendered; r == nil || !(strings.Contains(r.Error, "browser process exited") || strings.Contains(r.Error, "MiB")) {
		t.Errorf("/bomb rendered %+v, want the browser ended by the page (heap cap) or killed over its memory bound", r)
	}
	if limit := int64(RenderHeapMB+768) << 20; peak > limit {
		t.Errorf("test process and browser peaked at %d MiB, over %d MiB", peak>>20, limit>>20)
	}
	if r := pages["/after"].Rendered; r == nil || r.Error != "" || r.H1 != "After" {
		t.Errorf("/after rendered %+v, want its page", r)
	}
}

// TestRenderStartCancelled: a browser start cut short (the worker shutting down while
// Chromium starts) leaves no process behind once Start returns, at any point of the start:
// `make run` with its API port taken left a Chromium running after the worker ended.
func TestRenderStartCancelled(t *testing.T) {
	path := browserPath(t)
	before := map[int]bool{} // browsers of earlier tests may still be ending
	for _, pid := range childBrowsers() {
		before[pid] = true
	}
	for delay := time.Duration(0); delay <= 400*time.Millisecond; delay += 40 * time.Millisecond {
		r := NewRenderer(RenderConfig{BrowserPath: path}, "test")
		ctx, cancel := context.WithTimeout(context.Background(), delay)
		err := r.Start(ctx)
		cancel()
		if err == nil {
			r.Close() // started in time: Close must end it
		}
		left := slices.DeleteFunc(childBrowsers(), func(pid int) bool { return before[pid] })
		if len(left) > 0 {
			cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(left[0]) + "/cmdline")
			t.Fatalf("start cancelled after %s (err %v): browser processes %v left running: %q", delay, err, left, cmd)
		}
		r.Close()
	}
}

// childBrowsers are this process's live (not ended) child processes.
func childBrowsers() []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		if f := statFields(e.Name()); len(f) > 1 && f[0] != "Z" && f[1] == strconv.Itoa(os.Getpid()) {
			pid, _ := strconv.Atoi(e.Name())
			pids = append(pids, pid)
		}
	}
	return pids
}
