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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
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
	// DefaultRenderMemoryMB bounds each browser's memory (see RenderConfig.MemoryMB).
	DefaultRenderMemoryMB = 384
	// cdpTimeout bounds every call into a browser outside a page's own render time (answering a
	// request, dismissing a dialog, closing a pop-up): a browser that does not answer one in
	// time hangs, and is killed.
	cdpTimeout = 5 * time.Second
	// startTimeout bounds a browser's start.
	startTimeout = 30 * time.Second
	// killWait bounds the wait for a killed browser's processes to end.
	killWait = 2 * time.Second
	// memoryPoll is how often a browser's memory is read while a page renders in it, and
	// idleMemoryPoll while none does (the last page it rendered stays loaded, and its timers
	// may still run). A read costs the kernel a walk of the browser's page tables, about
	// half a millisecond for a started Chromium: at memoryPoll, a worker's idle browsers
	// held most of its CPU (8.7% of a core, with its queues polled every 50 ms).
	memoryPoll     = 100 * time.Millisecond
	idleMemoryPoll = time.Second
	// fetchesPerPage bounds a rendered page's requests fetched at once, and maxPageResources
	// times Config.MaxBodyBytes all the bytes it loads: a page asking for hundreds of large
	// files gets network errors past them instead of filling the worker's memory.
	fetchesPerPage   = 6
	maxPageResources = 8
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
	// MemoryMB bounds each browser's resident memory in MiB, default DefaultRenderMemoryMB: a
	// browser over it is killed, failing the page it was rendering.
	MemoryMB int
	// Idle is how long the browsers stay started with no page rendering, default
	// DefaultRenderIdle: a worker that ran only plain audits since holds no browser. The
	// next rendered page starts one again.
	Idle time.Duration
}

// DefaultRenderIdle is RenderConfig.Idle's default.
const DefaultRenderIdle = time.Minute

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

// Renderer renders pages in a pool of headless Chromium browsers, each a single process with
// one tab that renders one page at a time: a page that hangs its browser (an endless script,
// a dialog, a DOM too large) stalls only that browser, which is killed and replaced, never
// the pages other crawls render beside it. No lock is held across a call into a browser, and
// every call has a deadline.
type Renderer struct {
	cfg       RenderConfig
	userAgent string
	slots     chan struct{} // one token per page that may render at once
	// spare is one more token, for a crawl that has no page rendering while other crawls
	// hold every slot: it renders at once in a browser of its own rather than waiting
	// for a page of theirs to end, which a hostile page makes wait its whole timeout.
	spare chan struct{}

	life context.Context // ends with Close: bounds the start of replacement browsers
	end  func()

	mu     sync.Mutex // guards the fields below; held over memory only
	idle   []*browser // started browsers free to render the next page
	live   map[*browser]struct{}
	closed bool

	starting sync.WaitGroup // browsers being started: Close waits for a failed start's processes to end
	lastUse  atomic.Int64   // when a page last took or gave back a browser (Unix ns): for the idle stop
	reaping  sync.Once      // starts the idle stop with the first browser
	kills    atomic.Int64   // browsers killed (hung, over memory, failed page): for tests and logs
	sessions atomic.Int64   // crawls rendering now, which share the browsers (renderSession.enter)
	struck   atomic.Int64   // of those, crawls one of whose pages failed: they render one page at a time
	lagging  atomic.Int64   // of those not struck, crawls with a page rendering past shareAge: the same while it does

	shareMu sync.Mutex
	shares  chan struct{} // closed, and replaced, when crawls start or end, or are struck or lag: enter looks again
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
	if cfg.MemoryMB <= 0 {
		cfg.MemoryMB = DefaultRenderMemoryMB
	}
	if cfg.Idle <= 0 {
		cfg.Idle = DefaultRenderIdle
	}
	life, end := context.WithCancel(context.Background())
	return &Renderer{cfg: cfg, userAgent: userAgent, life: life, end: end, live: map[*browser]struct{}{},
		slots: make(chan struct{}, cfg.Concurrency), spare: make(chan struct{}, 1)}
}

// Start launches a browser now rather than at the first render, so a worker learns at start
// whether it can render; the browser waits in the pool for the first page.
func (r *Renderer) Start(ctx context.Context) error {
	b, slot, err := r.acquire(ctx, false)
	if err != nil {
		return err
	}
	r.release(b, slot, true)
	return nil
}

// Close kills every browser and waits (briefly) for their processes to end; later renders
// fail with ErrRenderUnavailable. It never waits on a browser's answer.
func (r *Renderer) Close() {
	if r == nil {
		return
	}
	r.end()
	r.mu.Lock()
	r.closed = true
	all := make([]*browser, 0, len(r.live))
	for b := range r.live {
		all = append(all, b)
	}
	r.live, r.idle = map[*browser]struct{}{}, nil
	r.mu.Unlock()
	for _, b := range all {
		b.kill("the renderer closed")
	}
	deadline := time.Now().Add(killWait)
	for _, b := range all {
		b.waitGone(time.Until(deadline))
	}
	// A browser starting now (the spare, or one a page asked for) sees the renderer's end and
	// removes what it started: wait for that, so no process outlives the renderer.
	started := make(chan struct{})
	go func() { r.starting.Wait(); close(started) }()
	select {
	case <-started:
	case <-time.After(2 * killWait):
	}
}

// acquire waits for a free slot and returns an idle browser, or a new one, and the slot
// to give back to release. With spare, the spare slot serves too when every slot is taken.
func (r *Renderer) acquire(ctx context.Context, spare bool) (*browser, chan struct{}, error) {
	r.lastUse.Store(time.Now().UnixNano())
	slot := r.slots
	select {
	case r.slots <- struct{}{}:
	default:
		var spareSlot chan struct{} // nil: never ready
		if spare {
			spareSlot = r.spare
		}
		select {
		case r.slots <- struct{}{}:
		case spareSlot <- struct{}{}:
			slot = r.spare
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
	var found *browser
	var dead []*browser
	r.mu.Lock()
	for found == nil && len(r.idle) > 0 {
		b := r.idle[len(r.idle)-1]
		r.idle = r.idle[:len(r.idle)-1]
		if b.alive() {
			found = b
		} else {
			delete(r.live, b)
			dead = append(dead, b)
		}
	}
	closed := r.closed
	r.mu.Unlock()
	for _, b := range dead {
		b.kill("it stopped answering") // gone already, as a rule: what is left of it goes too
	}
	if slot == r.slots && len(r.slots) == cap(r.slots) {
		r.warmSpare()
	}
	if found != nil {
		return found, slot, nil
	}
	if closed {
		<-slot
		return nil, nil, fmt.Errorf("%w: renderer closed", ErrRenderUnavailable)
	}
	b, err := r.launchLive(ctx)
	if err != nil {
		<-slot
		return nil, nil, err
	}
	return b, slot, nil
}

// warmSpare starts the spare browser in the background when every slot is taken and no
// browser is idle, so a crawl that arrives next and takes the spare slot (acquire) finds it
// started instead of waiting for Chromium to start. It holds the spare slot while it starts
// the browser, so started browsers stay within RENDER_CONCURRENCY + 1.
func (r *Renderer) warmSpare() {
	r.mu.Lock()
	idle := len(r.idle)
	r.mu.Unlock()
	if idle > 0 {
		return
	}
	select {
	case r.spare <- struct{}{}:
	default:
		return // the spare is in use, or starting
	}
	go func() {
		defer func() { <-r.spare }()
		b, err := r.launchLive(r.life)
		if err != nil {
			return
		}
		r.mu.Lock()
		r.idle = append(r.idle, b)
		r.mu.Unlock()
	}()
}

// launchLive launches a browser and records it among the live ones, unless the renderer
// closed meanwhile.
func (r *Renderer) launchLive(ctx context.Context) (*browser, error) {
	b, err := r.launch(ctx)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	closed := r.closed
	if !closed {
		r.live[b] = struct{}{}
	}
	r.mu.Unlock()
	r.reaping.Do(func() { go r.stopIdle() })
	if closed {
		b.kill("the renderer closed")
		return nil, fmt.Errorf("%w: renderer closed", ErrRenderUnavailable)
	}
	return b, nil
}

// stopIdle kills the pool's idle browsers once no page has taken or given back a browser for
// cfg.Idle and none is rendering, until the renderer closes.
func (r *Renderer) stopIdle() {
	t := time.NewTicker(min(r.cfg.Idle/4, 5*time.Second))
	defer t.Stop()
	for {
		select {
		case <-r.life.Done():
			return
		case <-t.C:
		}
		if len(r.slots) > 0 || len(r.spare) > 0 || time.Since(time.Unix(0, r.lastUse.Load())) < r.cfg.Idle {
			continue
		}
		r.mu.Lock()
		idle := r.idle
		r.idle = nil
		for _, b := range idle {
			delete(r.live, b)
		}
		r.mu.Unlock()
		for _, b := range idle {
			b.kill("idle")
		}
	}
}

// release puts a browser whose page rendered back in the pool; any other is killed, not
// asked to close (a page that failed may still hold it: an endless script, a dialog), and a
// replacement is started in the background, keeping the slot until it is ready so that the
// next page finds a started browser rather than waiting for one. slot is acquire's.
func (r *Renderer) release(b *browser, slot chan struct{}, ok bool) {
	r.lastUse.Store(time.Now().UnixNano())
	if ok && b.slow.Load() && b.alive() {
		b.restorePriority()
	}
	r.mu.Lock()
	keep := ok && !r.closed && b.alive() && !b.slow.Load()
	if keep {
		r.idle = append(r.idle, b)
	} else {
		delete(r.live, b)
	}
	closed := r.closed
	r.mu.Unlock()
	if keep {
		<-slot
		return
	}
	reason := "its page did not render"
	if ok {
		reason = "it was deprioritised for a slow page"
	}
	if b.kill(reason) {
		r.kills.Add(1)
	}
	if closed {
		<-slot
		return
	}
	go func() {
		defer func() { <-slot }()
		nb, err := r.launchLive(r.life)
		if err != nil {
			return // the next render tries again, and reports the error
		}
		r.mu.Lock()
		r.idle = append(r.idle, nb)
		r.mu.Unlock()
	}()
}

// browser is one headless Chromium process and its one tab, rendering one page at a time.
type browser struct {
	ctx    context.Context // the tab's context, which owns the process
	cancel func()          // ends the contexts (after kill: the process is gone)
	dir    string          // profile directory; its path marks every process of this browser
	pid    int
	job    atomic.Pointer[renderJob]
	slow   atomic.Bool // deprioritised for a slow page: retired when the page ends
	// killed is closed by kill; reason says why, for the page that was rendering.
	killed   chan struct{}
	killOnce sync.Once
	reason   atomic.Pointer[string]
}

func (b *browser) alive() bool {
	select {
	case <-b.killed:
		return false
	default:
		return b.ctx.Err() == nil
	}
}

// kill ends the browser's processes with SIGKILL, without asking the browser anything; it
// reports whether this call killed it (false when it was killed already).
func (b *browser) kill(reason string) bool {
	first := false
	b.killOnce.Do(func() {
		first = true
		b.reason.Store(&reason)
		close(b.killed)
		if b.slow.Load() {
			b.setNice(0) // where allowed (root, CAP_SYS_NICE): a SIGKILLed thread ends when it runs
		}
		killProcesses(b.dir)
		go func() { // the contexts wait for the connection to drop: not on the caller's time
			b.cancel()
			_ = os.RemoveAll(b.dir)
		}()
	})
	return first
}

// killReason is why the browser was killed, "" while it runs.
func (b *browser) killReason() string {
	if p := b.reason.Load(); p != nil {
		return *p
	}
	return ""
}

// waitGone waits up to limit for the browser's processes to end after kill: to be ended
// (a zombie for its parent to reap) or gone, not merely past the point where /proc shows
// their command line, which a process loses early in its exit.
func (b *browser) waitGone(limit time.Duration, pids ...int) {
	deadline := time.Now().Add(limit)
	ending := map[int]bool{}
	for _, pid := range pids {
		ending[pid] = true
	}
	for {
		for _, pid := range killProcesses(b.dir) {
			ending[pid] = true
		}
		for pid := range ending {
			if !running(pid) {
				delete(ending, pid)
			}
		}
		if len(ending) == 0 || !time.Now().Before(deadline) {
			return
		}
		time.Sleep(5 * time.Millisecond) // a SIGKILLed process ends within milliseconds
	}
}

// statFields are the fields of a /proc stat file (path under /proc, "123" or
// "123/task/456") from the third on, after the command name, which may hold spaces and
// parentheses: state is [0], ppid [1], utime [11], stime [12], nice [16]. Nil when the
// process is gone.
func statFields(path string) []string {
	stat, err := os.ReadFile("/proc/" + path + "/stat")
	end := bytes.LastIndexByte(stat, ')')
	if err != nil || end < 0 {
		return nil
	}
	return strings.Fields(string(stat[end+1:]))
}

// running reports the process pid existing and not yet ended (a zombie).
func running(pid int) bool {
	f := statFields(strconv.Itoa(pid))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// killProcesses sends SIGKILL to every process whose command line names dir (a browser's own
// profile directory, which Chromium passes to each of its processes) and returns them: the
// browser's process and whatever it started, found without asking it anything.
func killProcesses(dir string) []int {
	pids := browserProcesses(dir)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return pids
}

// browserProcesses are the live processes whose command line names dir, a browser's profile
// directory.
func browserProcesses(dir string) []int {
	// The directory as a whole argument or a path's start: /tmp/crawler-chromium-12 must not
	// match the browser of /tmp/crawler-chromium-123.
	whole, under := []byte(dir+"\x00"), []byte(dir+"/")
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !(bytes.Contains(cmd, whole) || bytes.Contains(cmd, under)) {
			continue
		}
		if f := statFields(e.Name()); len(f) > 0 && f[0] == "Z" {
			continue // ended, waiting to be reaped by its parent
		}
		pids = append(pids, pid)
	}
	return pids
}

// A page yields the CPU to other crawls' pages, while they render, once its browser has used
// slowCPU of CPU time on it, or once it has rendered for slowRender, whichever comes first;
// its crawl is struck then (renderSession.strike), leaving the other browsers to the crawls
// beside it. Real pages render on well under slowCPU as a rule (docs/decisions.md has the
// figures), so one that burns it (an endless script, a huge DOM) is one a hostile or a very
// heavy site made, found sooner than slowRender on a machine with CPU to spare; slowRender
// catches the rest (a page whose requests never end). Checked every slowCheck. Variables
// for tests only.
var (
	slowCPU    = time.Second
	slowRender = 2 * time.Second
)

const slowCheck = 50 * time.Millisecond

// userHZ is the unit of the CPU times in /proc/<pid>/stat (USER_HZ, 100 on Linux's ABI).
const userHZ = 100

// cpuTime is the CPU time (user and system) the browser's process has used; 0 when unknown.
func (b *browser) cpuTime() time.Duration {
	if b.pid == 0 {
		return 0
	}
	f := statFields(strconv.Itoa(b.pid))
	if len(f) < 13 {
		return 0 // ended: the watcher sees no use
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / userHZ
}

// watchCPU deprioritises b when its page has used slowCPU of CPU time, or has rendered for
// slowRender, while other crawls render; it returns when it has, or when stop closes, and
// closes done then.
func (s *renderSession) watchCPU(b *browser, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(slowCheck)
	defer tick.Stop()
	started, start := time.Now(), b.cpuTime()
	maxCPU, maxAge := slowCPU, slowRender
	lagging := false
	defer func() {
		if lagging {
			s.lag(-1)
		}
	}()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		age := time.Since(started)
		if !lagging && age >= shareAge {
			lagging = true
			s.lag(1)
		}
		if s.r.sessions.Load() > 1 && (b.cpuTime()-start >= maxCPU || age >= maxAge) {
			b.deprioritise()
			s.strike()
			return
		}
	}
}

// deprioritise lowers the browser's CPU priority to the lowest (nice 19), every thread of
// every process of it (Linux sets a nice value per thread), so other crawls' pages get the
// CPU first. An unprivileged process cannot raise it back: the browser is retired when its
// page ends (release), unless restorePriority could. Only while other crawls render
// (watchCPU): alone, a crawl's heavy page keeps its priority, as there is no one to yield
// to, and a browser at nice 19 on a busy machine is slow even to die.
func (b *browser) deprioritise() {
	b.slow.Store(true)
	b.setNice(19)
}

// restorePriority sets the browser back to nice 0 where the worker may (as root, or with
// CAP_SYS_NICE), so it goes back to the pool instead of being retired: it is slow no more
// once every thread of it is seen at nice 0.
func (b *browser) restorePriority() {
	b.setNice(0)
	if threadsAtNice(browserProcesses(b.dir), 0) {
		b.slow.Store(false)
	}
}

// threadsAtNice reports every thread of the processes at nice n (and at least one thread).
func threadsAtNice(pids []int, n int) bool {
	seen := 0
	for _, pid := range pids {
		tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
		for _, task := range tasks {
			fields := statFields(strconv.Itoa(pid) + "/task/" + task.Name())
			if fields == nil {
				continue // ended meanwhile
			}
			if len(fields) < 17 || fields[16] != strconv.Itoa(n) {
				return false
			}
			seen++
		}
	}
	return seen > 0
}

// setNice sets every thread of the browser's processes to nice n, as far as it may.
func (b *browser) setNice(n int) {
	for _, pid := range browserProcesses(b.dir) {
		tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
		for _, t := range tasks {
			if tid, err := strconv.Atoi(t.Name()); err == nil {
				_ = syscall.Setpriority(syscall.PRIO_PROCESS, tid, n)
			}
		}
	}
}

// launch starts a browser and opens its tab, within startTimeout (and ctx).
func (r *Renderer) launch(ctx context.Context) (*browser, error) {
	// Close waits for the starts under way once it has set closed: a start counted after
	// that would race its Wait.
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, fmt.Errorf("%w: renderer closed", ErrRenderUnavailable)
	}
	r.starting.Add(1)
	r.mu.Unlock()
	defer r.starting.Done()
	dir, err := os.MkdirTemp("", "crawler-chromium-")
	if err != nil {
		return nil, fmt.Errorf("%w: profile directory: %w", ErrRenderUnavailable, err)
	}
	spawned := make(chan *exec.Cmd, 1)
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
		// back/forward cache; each renderer process of a multi-process browser maps its own
		// copy of Blink's and V8's startup state and keeps its own heap growing between GCs
		// (docs/decisions.md has the figures). One process runs every page on one thread, so
		// each browser renders one page at a time (see Renderer), and a page that crashes its
		// process ends only its own browser: the page fails to render and the next page
		// starts a new browser.
		chromedp.Flag("single-process", true),
		// The JavaScript heap is capped: V8 otherwise lets it grow between collections with
		// the allocation rate, and a page that needs more than the cap ends its browser, is
		// reported as failed to render, and the next page restarts it (TestRenderHeapBomb).
		// What the heap does not hold (the DOM, layout) is bounded by RenderConfig.MemoryMB.
		chromedp.Flag("js-flags", fmt.Sprintf("--max-old-space-size=%d", RenderHeapMB)),
		chromedp.Flag("no-zygote", true), chromedp.Flag("in-process-gpu", true),
		chromedp.Flag("disable-features", "SpareRendererForSitePerProcess,Translate,MediaRouter,OptimizationHints,BackForwardCache"),
		chromedp.Flag("enable-features", "NetworkServiceInProcess2"),
		chromedp.ProxyServer(deadProxy), chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("block-new-web-contents", true), // headless: window.open and pop-ups fail
		// The browser dies with the worker (chromedp's default), and a start cut short
		// knows which process it spawned.
		chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			spawned <- cmd
		}),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tabCtx, cancelTab := chromedp.NewContext(allocCtx)
	b := &browser{ctx: tabCtx, cancel: func() { cancelTab(); cancelAlloc() }, dir: dir, killed: make(chan struct{})}
	// The first call starts the browser and binds it to tabCtx, not to ctx's deadline, so it
	// runs on a goroutine of its own; the wait is bounded, and a browser that does not come
	// up in time is killed.
	started := make(chan error, 1)
	go func() { started <- b.setUp() }()
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case err = <-started:
	case <-timer.C:
		err = fmt.Errorf("no answer within %s", startTimeout)
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err == nil {
		if c := chromedp.FromContext(tabCtx); c != nil && c.Browser != nil && c.Browser.Process() != nil {
			b.pid = c.Browser.Process().Pid
		}
		go b.watchMemory(int64(r.cfg.MemoryMB) << 20)
		return b, nil
	}
	b.kill("it did not start")
	// The process may have been spawned after kill looked for it, and one being killed
	// already no longer shows its command line: once the start returns (kill cancelled its
	// context), the process it spawned is known, and is waited for too.
	var pids []int
	select {
	case <-started:
		select {
		case cmd := <-spawned:
			if cmd.Process != nil { // set by the start that returned
				_ = cmd.Process.Kill()
				pids = append(pids, cmd.Process.Pid)
			}
		default:
		}
	case <-time.After(killWait):
	}
	b.waitGone(killWait, pids...)
	return nil, fmt.Errorf("%w: start %s: %w", ErrRenderUnavailable, r.cfg.BrowserPath, err)
}

// setUp starts the browser and readies its tab: every request paused for the crawl to answer,
// service workers bypassed, downloads denied, dialogs dismissed, pop-ups closed.
func (b *browser) setUp() error {
	if err := chromedp.Listen(b.ctx, b.onTabEvent); err != nil {
		return err
	}
	if err := chromedp.ListenBrowser(b.ctx, b.onBrowserEvent); err != nil {
		return err
	}
	// Without patterns every request pauses, at the request stage, before any network.
	if _, err := chromedp.Call(b.ctx, fetch.Enable, fetch.EnableParams{}); err != nil {
		return err
	}
	if _, err := chromedp.Call(b.ctx, network.SetBypassServiceWorker, network.SetBypassServiceWorkerParams{Bypass: true}); err != nil {
		return err
	}
	if _, err := chromedp.Call(b.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: guardScript + busyScript}); err != nil {
		return err
	}
	_, err := chromedp.CallBrowser(b.ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{Behavior: cdpbrowser.SetDownloadBehaviorBehaviorDeny})
	return err
}

// onTabEvent answers the tab's events; it must not block, so calls into the browser run on
// goroutines of their own, each under cdpTimeout.
func (b *browser) onTabEvent(ev any) {
	j := b.job.Load()
	switch ev := ev.(type) {
	case *fetch.EventRequestPaused:
		if j == nil {
			go b.fail(ev.RequestID, network.ErrorReasonAborted)
			return
		}
		j.started()
		go j.answer(b, ev)
	case *page.EventJavascriptDialogOpening:
		// alert, confirm, prompt and beforeunload block the page's thread until answered.
		go b.call(func(ctx context.Context) error {
			_, err := chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
			return err
		})
	case *runtime.EventExceptionThrown:
		if j != nil && ev.ExceptionDetails != nil {
			j.consoleError(exceptionText(ev.ExceptionDetails))
		}
	case *runtime.EventConsoleAPICalled:
		if j != nil && ev.Type == runtime.ConsoleAPICalledTypeError {
			j.consoleError(consoleText(ev.Args))
		}
	}
}

// onBrowserEvent closes every page a page opens (window.open, target=_blank): its requests
// would not be intercepted, and its scripts would share the one thread.
func (b *browser) onBrowserEvent(ev any) {
	if ev, ok := ev.(*target.EventTargetCreated); ok && ev.TargetInfo != nil && ev.TargetInfo.OpenerID != "" {
		id := ev.TargetInfo.TargetID
		go b.call(func(ctx context.Context) error {
			_, err := chromedp.CallBrowser(ctx, target.CloseTarget, target.CloseTargetParams{TargetID: id})
			return err
		})
	}
}

// call runs one call on the tab under cdpTimeout; a call that gets no answer in time means the
// browser hangs, and it is killed.
func (b *browser) call(f func(ctx context.Context) error) {
	ctx, cancel := context.WithTimeout(b.ctx, cdpTimeout)
	defer cancel()
	if err := f(ctx); err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		b.kill(fmt.Sprintf("the browser did not answer within %s", cdpTimeout))
	}
}

func (b *browser) fail(id fetch.RequestID, reason network.ErrorReason) {
	b.call(func(ctx context.Context) error {
		_, err := chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: id, ErrorReason: reason})
		return err
	})
}

func (b *browser) fulfill(id fetch.RequestID, status int, hdr []*fetch.HeaderEntry, body []byte) {
	b.call(func(ctx context.Context) error {
		_, err := chromedp.Call(ctx, fetch.FulfillRequest, fetch.FulfillRequestParams{RequestID: id, ResponseCode: int64(status),
			ResponseHeaders: hdr, Body: body})
		return err
	})
}

// watchMemory kills the browser when its memory (see processMemory) passes limit bytes: the
// JavaScript heap is capped by V8, but not the DOM, layout or decoded resources a page can grow.
func (b *browser) watchMemory(limit int64) {
	t := time.NewTicker(memoryPoll)
	defer t.Stop()
	var read time.Time
	for {
		var now time.Time
		select {
		case <-b.killed:
			return
		case <-b.ctx.Done():
			return
		case now = <-t.C:
		}
		if b.job.Load() == nil && now.Sub(read) < idleMemoryPoll {
			continue
		}
		read = now
		memoryReads.Add(1)
		if processMemory(b.pid) > limit {
			b.kill(fmt.Sprintf("the browser used more than %d MiB", limit>>20))
			return
		}
	}
}

// memoryReads counts the browsers' memory reads. (Read by the tests.)
var memoryReads atomic.Int64

// processMemory is pid's proportional share of memory in bytes (Pss: a page shared with the
// other browsers, Chromium's own code, counts for its share, as a memory limit charges it
// once), its resident set when that is not known, 0 when neither is.
func processMemory(pid int) int64 {
	if pid <= 0 {
		return 0
	}
	if raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup"); err == nil {
		for line := range strings.Lines(string(raw)) {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "Pss:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				return kb << 10
			}
		}
	}
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(raw))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// guardScript runs before any script of every document: dialogs answer at once (print has no
// protocol answer at all), pop-ups do not open, service workers do not register. The browser
// enforces the same on its side (dialog events answered, pop-up targets closed, service
// workers bypassed, downloads denied); this only spares the round trips.
const guardScript = `(() => {
  const w = window;
  w.alert = () => {}; w.confirm = () => false; w.prompt = () => null; w.print = () => {};
  w.open = () => null;
  if (navigator.serviceWorker) navigator.serviceWorker.register = () => Promise.reject(new Error("service workers are off"));
})();
`

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
	maxPage     int64 // all the bodies one page loads
	ua          string
	// mu guards held (pages of this crawl rendering now), struck (a page of it failed),
	// lagging (pages of it rendering for longer than shareAge), closed and freed (closed when
	// one of its pages ends); see enter.
	mu      sync.Mutex
	held    int
	struck  bool
	lagging int
	closed  bool // the crawl ended: a page failing later strikes it no more
	freed   chan struct{}
}

// shareAge is how long a page renders before its crawl, while the page goes on, leaves the
// browsers beyond its first to the crawls whose pages are quick (see enter): a page of a
// real site renders in well under it as a rule.
const shareAge = 500 * time.Millisecond

// enter waits until the crawl may render one more page and says how many it then renders
// (this one included): a crawl one of whose pages failed or hogged the CPU gets one browser
// at a time, and so does one with a page rendering for longer than shareAge while that page
// goes on; the others share the rest equally (at least one each), the spare browser counted
// when crawls render side by side. So a crawl whose pages hang browsers, or are slow now,
// or one that merely came first, leaves browsers to the crawls beside it; alone, a crawl
// uses them all. A crawl's first page may take the spare browser (acquire), so it need not
// wait for a page of another crawl to end.
func (s *renderSession) enter(ctx context.Context) (int, error) {
	for {
		changed := s.r.sharesChange() // before the counts are read: a change after wakes this
		s.mu.Lock()
		limit := 1
		if !s.struck && s.lagging == 0 {
			sessions, weak := int(s.r.sessions.Load()), int(s.r.struck.Load()+s.r.lagging.Load())
			browsers := s.r.cfg.Concurrency
			if sessions > 1 {
				browsers++ // the spare
			}
			limit = max(1, (browsers-weak)/max(1, sessions-weak))
		}
		if s.held < limit {
			s.held++
			held := s.held
			s.mu.Unlock()
			return held, nil
		}
		if s.freed == nil {
			s.freed = make(chan struct{})
		}
		freed := s.freed
		s.mu.Unlock()
		// A page of its own ending, or another crawl ending, struck or lagging, wakes it.
		select {
		case <-freed:
		case <-changed:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// leave ends a page entered with enter; failed marks the crawl as struck.
func (s *renderSession) leave(failed bool) {
	s.mu.Lock()
	s.held--
	if failed {
		s.strikeLocked()
	}
	if s.freed != nil {
		close(s.freed)
		s.freed = nil
	}
	s.mu.Unlock()
}

// sharesChanged wakes the crawls waiting for their share (enter).
func (r *Renderer) sharesChanged() {
	r.shareMu.Lock()
	if r.shares != nil {
		close(r.shares)
		r.shares = nil
	}
	r.shareMu.Unlock()
}

// sharesChange is closed at the next sharesChanged.
func (r *Renderer) sharesChange() <-chan struct{} {
	r.shareMu.Lock()
	defer r.shareMu.Unlock()
	if r.shares == nil {
		r.shares = make(chan struct{})
	}
	return r.shares
}

// strike marks the crawl as one whose pages fail or hog the CPU: it renders one page at a
// time from now on, and the crawls beside it share the other browsers.
func (s *renderSession) strike() {
	s.mu.Lock()
	s.strikeLocked()
	s.mu.Unlock()
}

func (s *renderSession) strikeLocked() {
	if !s.struck && !s.closed {
		s.struck = true
		s.r.struck.Add(1)
		if s.lagging > 0 {
			s.r.lagging.Add(-1) // counted among the struck now
		}
		s.r.sharesChanged()
	}
}

// lag counts a page of the crawl rendering for longer than shareAge (by +1) and its end
// (-1): while one does, the crawl is among the lagging ones the Renderer counts, unless it
// is struck already.
func (s *renderSession) lag(d int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	was := s.lagging > 0
	s.lagging += d
	if now := s.lagging > 0; now != was && !s.struck && !s.closed {
		if now {
			s.r.lagging.Add(1)
		} else {
			s.r.lagging.Add(-1)
		}
		s.r.sharesChanged()
	}
}

// close ends the session: the crawl renders no more.
func (s *renderSession) close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.closed = true
	if s.struck {
		s.r.struck.Add(-1)
	} else if s.lagging > 0 {
		s.r.lagging.Add(-1)
	}
	s.r.sessions.Add(-1)
	s.r.sharesChanged()
	s.mu.Unlock()
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

	docServed atomic.Bool   // the document is answered from doc once; a reload is fetched
	fetches   chan struct{} // one token per request being fetched
	bytesLeft atomic.Int64  // of the page's budget for the bodies it loads
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
// read, images, fonts and media refused, a GET or HEAD fetched through the crawl's client (so
// the crawler's address rules hold for every request the page makes), anything else refused.
func (j *renderJob) answer(b *browser, ev *fetch.EventRequestPaused) {
	defer j.done()
	if blockedTypes[ev.ResourceType] {
		b.fail(ev.RequestID, network.ErrorReasonBlockedByClient)
		return
	}
	if ev.ResourceType == network.ResourceTypeDocument && ev.Request.URL == j.docURL && ev.Request.Method == http.MethodGet && !j.docServed.Swap(true) {
		hdr := []*fetch.HeaderEntry{{Name: "Content-Type", Value: j.docType}}
		b.fulfill(ev.RequestID, http.StatusOK, hdr, j.doc)
		return
	}
	status, hdr, body, err := j.fetch(ev.Request)
	if err != nil {
		reason := network.ErrorReasonFailed
		switch {
		case errors.Is(err, ErrForbiddenAddress):
			reason = network.ErrorReasonAddressUnreachable
		case errors.Is(err, errRefusedRequest):
			reason = network.ErrorReasonBlockedByClient
		}
		b.fail(ev.RequestID, reason)
		return
	}
	b.fulfill(ev.RequestID, status, hdr, body)
}

// skippedHeaders are response headers not passed on: the body handed over is already
// decoded and whole.
var skippedHeaders = map[string]bool{"Content-Encoding": true, "Content-Length": true, "Transfer-Encoding": true, "Connection": true}

// errRefusedRequest is a page's request the crawler does not make: not GET or HEAD, not
// http(s), or past the page's budget of requests.
var errRefusedRequest = errors.New("render: request refused")

// fetch makes a page's GET or HEAD request through the crawl's client, without a body, and
// returns its answer, body bounded by maxResource and all the page's bodies together by
// maxPageResources times the page limit. A redirect is answered as the redirect itself, so
// the browser follows it (pausing again, through here) under its own origin rules: the
// worker never hands a page another origin's body under the page's own URL. Anything else
// (a form's POST, a beacon) is refused: the crawl only reads.
func (j *renderJob) fetch(in *network.Request) (int, []*fetch.HeaderEntry, []byte, error) {
	s := j.s
	u, err := url.Parse(in.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return 0, nil, nil, fmt.Errorf("%w: unsupported URL %q", errRefusedRequest, in.URL)
	}
	if in.Method != http.MethodGet && in.Method != http.MethodHead {
		return 0, nil, nil, fmt.Errorf("%w: method %s", errRefusedRequest, in.Method)
	}
	select {
	case j.fetches <- struct{}{}:
		defer func() { <-j.fetches }()
	case <-j.ctx.Done():
		return 0, nil, nil, j.ctx.Err()
	}
	if j.bytesLeft.Load() <= 0 {
		return 0, nil, nil, fmt.Errorf("%w: %s: the page's requests loaded %d bytes already", errRefusedRequest, in.URL, s.maxPage)
	}
	req, err := http.NewRequestWithContext(j.ctx, in.Method, in.URL, nil)
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
	req.Header.Del("Content-Type")
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	limit := min(s.maxResource, j.bytesLeft.Load())
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	// Every byte read counts against the page's, the answers refused or cut off included: a
	// page whose next answer is larger than what it has left would otherwise have each of
	// its requests sent and read up to that rest, for as long as its time lasts.
	left := j.bytesLeft.Add(-int64(len(b)))
	if err != nil {
		return 0, nil, nil, err
	}
	if int64(len(b)) > limit {
		return 0, nil, nil, fmt.Errorf("%w: %s: body larger than %d bytes (the page's requests may load %d in all)", errRefusedRequest, in.URL, limit, s.maxPage)
	}
	if left < 0 {
		return 0, nil, nil, fmt.Errorf("%w: %s: the page's requests loaded more than %d bytes", errRefusedRequest, in.URL, s.maxPage)
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
// Chromium's own error page (a navigation refused or failed: a form's POST, a redirect
// loop) is read as errorPage, not as the site's content.
const outerHTML = `(() => { if (location.protocol === "chrome-error:") return "` + errorPage + `";
  const h = document.documentElement ? document.documentElement.outerHTML : ""; return h.length > %d ? h.slice(0, %d) : h })()`

const errorPage = "\x00error-page"

// render loads a page in a browser of the pool, its document answered with the body the
// crawl fetched, waits for its network to settle and returns the rendered HTML and console
// errors. It returns when the page's time is up (or ctx ends) whatever the browser does:
// every wait is under the page's deadline, and a browser whose page failed is killed.
func (s *renderSession) render(ctx context.Context, pageURL, contentType string, doc []byte) ([]byte, *renderJob, error) {
	held, err := s.enter(ctx)
	if err != nil {
		return nil, nil, err
	}
	// The spare browser serves a crawl's first page, and any page of a crawl beside others:
	// their shares (enter) count it, so together they never hold more than the slots and it.
	b, slot, err := s.r.acquire(ctx, held == 1 || s.r.sessions.Load() > 1)
	if err != nil {
		s.leave(false)
		return nil, nil, err
	}
	ok := false
	defer func() {
		s.r.release(b, slot, ok)
		s.leave(!ok && ctx.Err() == nil)
	}()
	pctx, cancel := context.WithTimeout(b.ctx, s.r.cfg.Timeout)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	go func() { // a browser killed meanwhile (over memory, hung) ends the page at once
		select {
		case <-b.killed:
			cancel()
		case <-pctx.Done():
		}
	}()
	docURL := pageURL
	if u, err := url.Parse(pageURL); err == nil {
		u.Fragment, u.RawFragment = "", ""
		docURL = u.String()
	}
	j := &renderJob{ctx: pctx, s: s, docURL: docURL, docType: contentType, doc: doc, wake: make(chan struct{}, 1),
		fetches: make(chan struct{}, fetchesPerPage)}
	j.bytesLeft.Store(s.maxPage)
	b.job.Store(j)
	defer b.job.Store(nil)
	stopWatch, watchDone := make(chan struct{}), make(chan struct{})
	go s.watchCPU(b, stopWatch, watchDone)
	defer func() { close(stopWatch); <-watchDone }() // before release (deferred earlier), which reads b.slow
	fail := func(err error) ([]byte, *renderJob, error) {
		return nil, j, renderError(ctx, pctx, b, s.r.cfg.Timeout, err)
	}
	if err := chromedp.Do(pctx, chromedp.Navigate(docURL)); err != nil {
		return fail(err)
	}
	if err := j.settle(pctx); err != nil {
		return fail(err)
	}
	if err := waitScripts(pctx, j); err != nil {
		return fail(err)
	}
	limit := min(s.maxBody, 1<<30)
	html, err := chromedp.Run(pctx, chromedp.Evaluate[string](fmt.Sprintf(outerHTML, limit, limit)))
	if err != nil {
		return fail(err)
	}
	if html == errorPage {
		return nil, j, errors.New("rendering failed: the page navigated to an address that was refused or did not load")
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

// renderError says why a page did not render, in words for the report: the browser killed
// under it (and why), the page's time up, the crawl's time up, or the browser's error.
func renderError(crawl, pctx context.Context, b *browser, timeout time.Duration, err error) error {
	switch {
	case b.killReason() != "":
		return fmt.Errorf("rendering failed: %s", b.killReason())
	case crawl.Err() != nil:
		return fmt.Errorf("rendering stopped: the crawl's time ran out")
	case errors.Is(pctx.Err(), context.DeadlineExceeded):
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
	p.addRenderedAnchors(info.facts, base)
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
	c.renderer.sessions.Add(1) // until close
	client := c.newClient(t)
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &renderSession{r: c.renderer, client: client, maxBody: c.cfg.MaxBodyBytes,
		maxResource: resourceFactor * c.cfg.MaxBodyBytes, maxPage: maxPageResources * c.cfg.MaxBodyBytes, ua: c.cfg.UserAgent}
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
