package crawler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/gocolly/colly/v2"
)

// ErrRenderUnavailable means a crawl asked for JavaScript rendering but this process has no
// browser (none configured or found, or it would not start).
var ErrRenderUnavailable = errors.New("crawler: JavaScript rendering unavailable")

// Rendering defaults.
const (
	DefaultRenderConcurrency = 2
	DefaultRenderTimeout     = 15 * time.Second
	// renderIdle is how long a page's network must stay quiet after the load event before
	// its DOM is read: scripts that fetch content after load (most single-page apps) have
	// started their requests by then. Puppeteer's networkidle0 waits 500 ms; the pages are
	// rendered over a fast local proxy here, so less does.
	renderIdle = 100 * time.Millisecond
	// maxConsoleErrors bounds the console errors kept per page (all are counted).
	maxConsoleErrors = 5
	// maxNewLinks bounds the links kept per page that only rendering showed (all are counted).
	maxNewLinks = 20
	// deadProxy is where the browser would send any request the Fetch interception does not
	// see (WebSockets, a service worker's fetches): nothing listens on the discard port, so
	// they fail. Every request the page makes is answered through the crawler's own transport.
	deadProxy = "http://127.0.0.1:9"
)

// browserNames are the executables FindBrowser looks for on the PATH, in order.
var browserNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// RenderHeapMB caps, in MiB, the JavaScript heap of the browser's pages (V8's old space),
// which the tabs rendering at once share.
const RenderHeapMB = 256

// FindBrowser returns the Chromium executable to render with: path when set (CHROME_PATH),
// else the first of chromium, chromium-browser, google-chrome on the PATH; "" when none.
func FindBrowser(path string) string {
	if path != "" {
		if p, err := exec.LookPath(path); err == nil {
			return p
		}
		return ""
	}
	for _, name := range browserNames {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// RenderConfig configures JavaScript rendering. A zero BrowserPath turns rendering off.
type RenderConfig struct {
	BrowserPath string        // Chromium executable (see FindBrowser)
	Concurrency int           // tabs rendering at once, default DefaultRenderConcurrency
	Timeout     time.Duration // per page, default DefaultRenderTimeout
}

// Rendered is what a page showed once its JavaScript had run in headless Chromium, read
// by the same extractor as the HTML as served, so the two can be compared.
type Rendered struct {
	Title     string `json:"title"`
	H1        string `json:"h1"`
	H1Count   int    `json:"h1_count"`
	WordCount int    `json:"word_count"` // main-content words, as Page.WordCount
	// Links counts the distinct links of the rendered DOM; RawLinks those of the HTML as
	// served. NewLinks are the first links only the rendered DOM has (NewLinksTotal: all).
	Links         int      `json:"links"`
	RawLinks      int      `json:"raw_links"`
	NewLinks      []string `json:"new_links,omitempty"`
	NewLinksTotal int      `json:"new_links_total"`
	// ConsoleErrors are the first uncaught exceptions and console.error messages of the
	// page (ConsoleErrorsTotal: all).
	ConsoleErrors      []string `json:"console_errors,omitempty"`
	ConsoleErrorsTotal int      `json:"console_errors_total"`
	// Error says why the page could not be rendered (timeout, browser crash); the other
	// fields are then empty.
	Error string `json:"error,omitempty"`
}

// Renderer runs pages in one headless Chromium, started on first use and restarted after
// a crash, through a pool of reusable tabs.
type Renderer struct {
	cfg       RenderConfig
	userAgent string

	mu      sync.Mutex
	browser context.Context // the first tab's context: it owns the browser process
	stop    func()
	slots   chan struct{} // one token per tab that may render at once
	idle    []*tab        // tabs free to reuse
	closed  bool
}

// NewRenderer returns a renderer over cfg's browser; nil when cfg names none.
func NewRenderer(cfg RenderConfig, userAgent string) *Renderer {
	if cfg.BrowserPath == "" {
		return nil
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultRenderConcurrency
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultRenderTimeout
	}
	return &Renderer{cfg: cfg, userAgent: userAgent, slots: make(chan struct{}, cfg.Concurrency)}
}

// Start launches the browser now rather than at the first render, so a worker learns at
// start whether it can render.
func (r *Renderer) Start(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, err := r.startLocked(ctx)
	return err
}

// startLocked returns the running browser, starting it when none runs (or the last one
// died). r.mu is held.
func (r *Renderer) startLocked(ctx context.Context) (context.Context, error) {
	if r.closed {
		return nil, fmt.Errorf("%w: renderer closed", ErrRenderUnavailable)
	}
	if r.browser != nil && r.browser.Err() == nil {
		return r.browser, nil
	}
	r.stopLocked()
	dir, err := os.MkdirTemp("", "crawler-chromium-")
	if err != nil {
		return nil, fmt.Errorf("%w: profile directory: %w", ErrRenderUnavailable, err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(r.cfg.BrowserPath), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.UserDataDir(dir), chromedp.UserAgent(r.userAgent),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true), chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("mute-audio", true), chromedp.Flag("blink-settings", "imagesEnabled=false"),
		chromedp.Flag("disable-dev-shm-usage", true),
		// One process, for memory: the renderer, the GPU code and the network service all run
		// in the browser process (--single-process), with no zygote, no spare renderer and no
		// back/forward cache. Each renderer process of a multi-process browser maps its own
		// copy of Blink's and V8's startup state and keeps its own heap growing between GCs:
		// with one renderer the tabs shared (process-per-site) beside the browser and the
		// first tab's renderer, the Cargo book (BenchmarkRenderedCrawlRustBook) peaked at
		// 1,188-1,293 MB summed RSS; in one process 885-900 MB, and with the heap cap below
		// 732-780 MB at the same CPU time per page (324-390 ms before, 340-393 after, runs
		// interleaved), the 100-page SPA (BenchmarkRenderedCrawl) 881-983 -> 480-525 MB. The
		// price: a page that crashes
		// its renderer ends the browser, which the next render restarts (its page and any
		// page rendering beside it fail and are reported, as a timed-out page is). Crawls of
		// different sites on one worker share that process, as they shared one renderer
		// before: rendering never had site isolation between audits.
		chromedp.Flag("single-process", true),
		// The JavaScript heap, shared by the tabs, is capped: V8 otherwise lets it grow
		// between collections with the allocation rate (the Cargo book's pages took the one
		// process to 881-1,152 MB; capped 655-658 MB), and a page that needs more than the
		// cap ends the browser, is reported as failed to render, and the next page restarts
		// it (TestRenderHeapBomb).
		chromedp.Flag("js-flags", fmt.Sprintf("--max-old-space-size=%d", RenderHeapMB)),
		chromedp.Flag("no-zygote", true), chromedp.Flag("in-process-gpu", true),
		chromedp.Flag("disable-features", "SpareRendererForSitePerProcess,Translate,MediaRouter,OptimizationHints,BackForwardCache"),
		chromedp.Flag("enable-features", "NetworkServiceInProcess2"),
		chromedp.ProxyServer(deadProxy), chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	browser, cancelBrowser := chromedp.NewContext(allocCtx)
	stop := func() { cancelBrowser(); cancelAlloc(); _ = os.RemoveAll(dir) }
	// The first Run starts the browser and binds it to browser's own context, not ctx's
	// deadline; ctx only bounds the wait.
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(browser, chromedp.Navigate("about:blank")) }()
	select {
	case err = <-started:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		stop()
		return nil, fmt.Errorf("%w: start %s: %w", ErrRenderUnavailable, r.cfg.BrowserPath, err)
	}
	r.browser, r.stop = browser, stop
	return browser, nil
}

// stopLocked ends the browser and forgets its tabs. r.mu is held.
func (r *Renderer) stopLocked() {
	for _, t := range r.idle {
		t.close()
	}
	r.idle = nil
	if r.stop != nil {
		r.stop()
	}
	r.browser, r.stop = nil, nil
}

// Close ends the browser; later renders fail with ErrRenderUnavailable.
func (r *Renderer) Close() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	r.stopLocked()
}

// acquire waits for a free slot and returns an idle tab or a new one.
func (r *Renderer) acquire(ctx context.Context) (*tab, error) {
	select {
	case r.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.idle); n > 0 && r.browser != nil && r.browser.Err() == nil {
		t := r.idle[n-1]
		r.idle = r.idle[:n-1]
		return t, nil
	}
	browser, err := r.startLocked(ctx)
	if err != nil {
		<-r.slots
		return nil, err
	}
	t, err := openTab(ctx, browser)
	if err != nil {
		<-r.slots
		return nil, fmt.Errorf("%w: open tab: %w", ErrRenderUnavailable, err)
	}
	return t, nil
}

// release returns a tab to the pool, or closes it when it failed: a tab whose page timed
// out may still be busy with it.
func (r *Renderer) release(t *tab, ok bool) {
	r.mu.Lock()
	if ok && !r.closed && t.browser == r.browser {
		r.idle = append(r.idle, t)
	} else {
		t.close()
	}
	r.mu.Unlock()
	<-r.slots
}

// tab is one browser tab answering its page's requests through the current job.
type tab struct {
	browser context.Context // the browser the tab belongs to
	ctx     context.Context
	cancel  func()
	job     atomic.Pointer[renderJob]
}

// openTab opens a tab that intercepts every request its pages make.
func openTab(ctx context.Context, browser context.Context) (*tab, error) {
	tctx, cancel := chromedp.NewContext(browser)
	t := &tab{browser: browser, ctx: tctx, cancel: cancel}
	// Listening opens the tab; the listener must not block, so requests are answered on
	// goroutines of their own.
	err := chromedp.Listen(tctx, func(ev any) {
		j := t.job.Load()
		switch ev := ev.(type) {
		case *fetch.EventRequestPaused:
			if j == nil {
				go t.fail(ev.RequestID, network.ErrorReasonAborted)
				return
			}
			j.started()
			go j.answer(t, ev)
		case *runtime.EventExceptionThrown:
			if j != nil && ev.ExceptionDetails != nil {
				j.consoleError(exceptionText(ev.ExceptionDetails))
			}
		case *runtime.EventConsoleAPICalled:
			if j != nil && ev.Type == runtime.ConsoleAPICalledTypeError {
				j.consoleError(consoleText(ev.Args))
			}
		}
	})
	if err == nil {
		// Without patterns every request pauses, at the request stage, before any network.
		_, err = chromedp.Call(tctx, fetch.Enable, fetch.EnableParams{})
	}
	if err == nil {
		_, err = chromedp.Call(tctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: busyScript})
	}
	if err != nil {
		cancel()
		return nil, err
	}
	_ = ctx // opening a tab is quick; the browser's context bounds it
	return t, nil
}

func (t *tab) close() { t.cancel() }

func (t *tab) fail(id fetch.RequestID, reason network.ErrorReason) {
	_, _ = chromedp.Call(t.ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: id, ErrorReason: reason})
}

// busyScript counts, inside each page, the fetch and XMLHttpRequest calls whose answers
// the page's scripts have not finished with: a fetch until its promise settles, a body read
// (json, text, ...) until it settles, an XMLHttpRequest until loadend, each released a task
// later so the callbacks chained on it (drawing the page) run first. The browser-side count
// of requests in flight cannot see a response still being read and used; this can.
const busyScript = `(() => {
  let n = 0;
  const hold = p => { n++; const done = () => setTimeout(() => n--, 0); p.then(done, done); return p; };
  Object.defineProperty(window, "__crawlerBusy", { value: () => n });
  if (window.fetch) {
    const f = window.fetch;
    window.fetch = function (...a) { return hold(f.apply(this, a)); };
    for (const m of ["json", "text", "arrayBuffer", "blob", "formData"]) {
      const r = Response.prototype[m];
      if (r) Response.prototype[m] = function (...a) { return hold(r.apply(this, a)); };
    }
  }
  if (window.XMLHttpRequest) {
    const send = XMLHttpRequest.prototype.send;
    XMLHttpRequest.prototype.send = function (...a) {
      n++;
      this.addEventListener("loadend", () => setTimeout(() => n--, 0));
      return send.apply(this, a);
    };
  }
})()`

// busyPoll is how often settle asks a page whose network is quiet whether its scripts are
// still busy with answers.
const busyPoll = 20 * time.Millisecond

// renderSession renders one crawl's pages, fetching what they load through the crawl's
// guarded client.
type renderSession struct {
	r       *Renderer
	client  *http.Client
	maxBody int64 // the rendered document read back, as a page
	// maxResource bounds each script, stylesheet or answer the page loads: a single-page
	// app's script bundle is often larger than its HTML could be.
	maxResource int64
	ua          string
}

// renderJob is one page being rendered: its document, answered from the body already
// fetched, its requests in flight and what its console said.
type renderJob struct {
	ctx     context.Context
	s       *renderSession
	docURL  string
	docType string
	doc     []byte

	mu       sync.Mutex
	pending  int    // requests paused and not yet answered
	seq      uint64 // requests seen, to tell a quiet spell from a busy one
	errors   []string
	errTotal int
	wake     chan struct{}
}

func (j *renderJob) started() {
	j.mu.Lock()
	j.pending++
	j.seq++
	j.mu.Unlock()
}

func (j *renderJob) done() {
	j.mu.Lock()
	j.pending--
	j.mu.Unlock()
	select {
	case j.wake <- struct{}{}:
	default:
	}
}

func (j *renderJob) consoleError(msg string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.errTotal++
	if len(j.errors) < maxConsoleErrors {
		j.errors = append(j.errors, cleanText(msg, 300))
	}
}

// blockedTypes are resources a DOM does not need: never downloaded.
var blockedTypes = map[network.ResourceType]bool{
	network.ResourceTypeImage: true, network.ResourceTypeMedia: true, network.ResourceTypeFont: true,
	network.ResourceTypeManifest: true, network.ResourceTypePing: true, network.ResourceTypePrefetch: true,
	network.ResourceTypeCSPViolationReport: true,
}

// answer answers one paused request: the page's own document from the body the crawl
// read, images, fonts and media refused, anything else fetched through the crawl's client,
// so the crawler's address rules hold for every request the page makes.
func (j *renderJob) answer(t *tab, ev *fetch.EventRequestPaused) {
	defer j.done()
	if blockedTypes[ev.ResourceType] {
		t.fail(ev.RequestID, network.ErrorReasonBlockedByClient)
		return
	}
	if ev.ResourceType == network.ResourceTypeDocument && ev.Request.URL == j.docURL {
		hdr := []*fetch.HeaderEntry{{Name: "Content-Type", Value: j.docType}}
		_, _ = chromedp.Call(t.ctx, fetch.FulfillRequest, fetch.FulfillRequestParams{RequestID: ev.RequestID,
			ResponseCode: http.StatusOK, ResponseHeaders: hdr, Body: j.doc})
		return
	}
	status, hdr, body, err := j.s.fetch(j.ctx, ev.Request)
	if err != nil {
		reason := network.ErrorReasonFailed
		if errors.Is(err, ErrForbiddenAddress) {
			reason = network.ErrorReasonAddressUnreachable
		}
		t.fail(ev.RequestID, reason)
		return
	}
	_, _ = chromedp.Call(t.ctx, fetch.FulfillRequest, fetch.FulfillRequestParams{RequestID: ev.RequestID,
		ResponseCode: int64(status), ResponseHeaders: hdr, Body: body})
}

// skippedHeaders are response headers not passed on: the body handed over is already
// decoded and whole.
var skippedHeaders = map[string]bool{"Content-Encoding": true, "Content-Length": true, "Transfer-Encoding": true, "Connection": true}

// fetch makes a page's request through the crawl's client (redirects followed, as the
// crawl's rules allow) and returns its answer, body bounded by maxResource.
func (s *renderSession) fetch(ctx context.Context, in *network.Request) (int, []*fetch.HeaderEntry, []byte, error) {
	u, err := url.Parse(in.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return 0, nil, nil, fmt.Errorf("render: unsupported URL %q", in.URL)
	}
	var body io.Reader
	if in.HasPostData {
		var buf bytes.Buffer
		for _, e := range in.PostDataEntries {
			buf.Write(e.Bytes)
		}
		body = &buf
	}
	req, err := http.NewRequestWithContext(ctx, in.Method, in.URL, body)
	if err != nil {
		return 0, nil, nil, err
	}
	for k, v := range in.Headers {
		if s, ok := v.(string); ok {
			req.Header.Set(k, s)
		}
	}
	req.Header.Set("User-Agent", s.ua)
	req.Header.Del("Accept-Encoding") // Go's transport asks for gzip and undoes it itself
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, s.maxResource+1))
	if err != nil {
		return 0, nil, nil, err
	}
	if int64(len(b)) > s.maxResource {
		return 0, nil, nil, fmt.Errorf("render: %s: body larger than %d bytes", in.URL, s.maxResource)
	}
	var hdr []*fetch.HeaderEntry
	for k, vs := range resp.Header {
		if skippedHeaders[k] {
			continue
		}
		for _, v := range vs {
			hdr = append(hdr, &fetch.HeaderEntry{Name: k, Value: v})
		}
	}
	return resp.StatusCode, hdr, b, nil
}

// outerHTML reads the rendered document, bounded to the page limit (in UTF-16 units,
// close enough to bytes for a bound).
const outerHTML = `(() => { const h = document.documentElement ? document.documentElement.outerHTML : ""; return h.length > %d ? h.slice(0, %d) : h })()`

// render loads a page in a tab, its document answered with the body the crawl fetched,
// waits for its network to settle and returns the rendered HTML and console errors.
func (s *renderSession) render(ctx context.Context, pageURL, contentType string, doc []byte) ([]byte, *renderJob, error) {
	t, err := s.r.acquire(ctx)
	if err != nil {
		return nil, nil, err
	}
	ok := false
	defer func() { s.r.release(t, ok) }()
	pctx, cancel := context.WithTimeout(t.ctx, s.r.cfg.Timeout)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	docURL := pageURL
	if u, err := url.Parse(pageURL); err == nil {
		u.Fragment, u.RawFragment = "", ""
		docURL = u.String()
	}
	j := &renderJob{ctx: pctx, s: s, docURL: docURL, docType: contentType, doc: doc, wake: make(chan struct{}, 1)}
	t.job.Store(j)
	defer t.job.Store(nil)
	if err := chromedp.Do(pctx, chromedp.Navigate(docURL)); err != nil {
		return nil, j, renderError(pctx, s.r.cfg.Timeout, err)
	}
	if err := j.settle(pctx); err != nil {
		return nil, j, renderError(pctx, s.r.cfg.Timeout, err)
	}
	if err := waitScripts(pctx, j); err != nil {
		return nil, j, renderError(pctx, s.r.cfg.Timeout, err)
	}
	limit := min(s.maxBody, 1<<30)
	html, err := chromedp.Run(pctx, chromedp.Evaluate[string](fmt.Sprintf(outerHTML, limit, limit)))
	if err != nil {
		return nil, j, renderError(pctx, s.r.cfg.Timeout, err)
	}
	ok = true
	return []byte(html), j, nil
}

// settle waits until no request has been in flight for renderIdle.
func (j *renderJob) settle(ctx context.Context) error {
	for {
		j.mu.Lock()
		pending, seq := j.pending, j.seq
		j.mu.Unlock()
		var quiet <-chan time.Time
		if pending == 0 {
			quiet = time.After(renderIdle)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-j.wake:
		case <-quiet:
			j.mu.Lock()
			still := j.pending == 0 && j.seq == seq
			j.mu.Unlock()
			if still {
				return nil
			}
		}
	}
}

// waitScripts waits until the page's scripts hold no answer (see busyScript), settling the
// network again after each wait: using one answer may start another request.
func waitScripts(ctx context.Context, j *renderJob) error {
	for {
		busy, err := chromedp.Run(ctx, chromedp.Evaluate[int](`window.__crawlerBusy ? window.__crawlerBusy() : 0`))
		if err != nil || busy == 0 {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(busyPoll):
		}
		if err := j.settle(ctx); err != nil {
			return err
		}
	}
}

// renderError says why a page did not render, in words for the report.
func renderError(ctx context.Context, timeout time.Duration, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("rendering timed out after %s", timeout)
	}
	return fmt.Errorf("rendering failed: %w", err)
}

// renderPage renders a fetched page and records what it showed in p.Rendered. It returns
// the links of the HTML as served plus those only the rendered DOM has, for the crawl to
// follow and record.
func (s *renderSession) renderPage(ctx context.Context, p *Page, r *colly.Response, base *url.URL, raw []link) []link {
	html, j, err := s.render(ctx, r.Request.URL.String(), r.Headers.Get("Content-Type"), r.Body)
	out := &Rendered{}
	p.Rendered = out
	if j != nil {
		j.mu.Lock()
		out.ConsoleErrors, out.ConsoleErrorsTotal = j.errors, j.errTotal
		j.mu.Unlock()
	}
	if err != nil {
		out.Error = cleanText(err.Error(), maxMessageLen)
		return raw
	}
	info := extractPage(html, true)
	out.Title, out.H1, out.H1Count, out.WordCount = info.title, info.h1, info.h1s, info.words
	seen := make(map[string]bool, len(raw))
	for _, l := range raw {
		if l.kind.file() { // files the page loads are not links between pages
			continue
		}
		if u := resolveHTTP(base, l.href); u != nil {
			seen[u.String()] = true
		}
	}
	out.RawLinks = len(seen)
	links, counted := raw, make(map[string]bool, len(info.links))
	for _, l := range info.links {
		if l.kind.file() {
			continue
		}
		u := resolveHTTP(base, l.href)
		if u == nil || counted[u.String()] {
			continue
		}
		counted[u.String()] = true
		if !seen[u.String()] {
			out.NewLinksTotal++
			if len(out.NewLinks) < maxNewLinks {
				out.NewLinks = append(out.NewLinks, cleanText(u.String(), maxURLBytes))
			}
			if len(links) < maxLinks {
				links = append(links, link{href: u.String(), kind: l.kind, nofollow: l.nofollow})
			}
		}
	}
	out.Links = len(counted)
	return links
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d.Exception != nil && d.Exception.Description != "" {
		first, _, _ := strings.Cut(d.Exception.Description, "\n")
		return first
	}
	return d.Text
}

func consoleText(args []*runtime.RemoteObject) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		switch {
		case a == nil:
		case len(a.Value) > 0:
			parts = append(parts, strings.Trim(string(a.Value), `"`))
		case a.Description != "":
			parts = append(parts, a.Description)
		}
	}
	return strings.Join(parts, " ")
}

// renderSession is the rendering of one crawl's pages, nil when req does not ask for it.
func (c *Crawler) renderSession(req Request, t http.RoundTripper) *renderSession {
	if !req.Render || c.renderer == nil {
		return nil
	}
	return &renderSession{r: c.renderer, client: c.newClient(t), maxBody: c.cfg.MaxBodyBytes,
		maxResource: resourceFactor * c.cfg.MaxBodyBytes, ua: c.cfg.UserAgent}
}

// resourceFactor times Config.MaxBodyBytes bounds each resource a rendered page loads.
const resourceFactor = 4

// crawlTimeout is the crawl's time budget: rendering a page costs far more than fetching
// it, so a rendered crawl gets three times Config.Timeout.
func (c *Crawler) crawlTimeout(req Request) time.Duration {
	if req.Render {
		return 3 * c.cfg.Timeout
	}
	return c.cfg.Timeout
}

// Close ends the crawler's browser, if it started one.
func (c *Crawler) Close() { c.renderer.Close() }

// StartRenderer starts the browser now, so a worker knows at start whether it can render;
// ErrRenderUnavailable when none is configured or it does not start.
func (c *Crawler) StartRenderer(ctx context.Context) error {
	if c.renderer == nil {
		return fmt.Errorf("%w: no browser configured", ErrRenderUnavailable)
	}
	return c.renderer.Start(ctx)
}
