package crawler

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gocolly/colly/v2"
)

// visitKey stores a request's *visit in its colly context.
const visitKey = "crawler.visit"

const acceptHTML = "text/html, application/xhtml+xml;q=0.9, */*;q=0.5"

var (
	errDisallowed   = errors.New("disallowed by robots.txt")
	errRedirectLoop = errors.New("redirect loop")
)

// visit is one page fetch in progress. Only the colly goroutine running the request
// touches it until finish hands the page over.
type visit struct {
	idx      int
	page     Page
	stopped  bool // we cut the transfer on purpose, so colly's abort error is no fetch error
	nofollow bool // X-Robots-Tag nofollow
	done     bool
	// reqURL is the URL colly asked for; colly replaces the request's URL after a redirect,
	// so a different pointer at the headers means the answer came from elsewhere.
	reqURL  *url.URL
	links   []int32    // the page's links into the site, as linkGraph ids, each once
	frags   []fragLink // its anchors to fragments of the site's URLs (fragments.go)
	blocked bool       // failed on a redirect robots.txt disallows: no answer to judge
	length  int64      // Content-Length, -1 when not given
	// headFailed asks for a GET after a HEAD the server refused; retried marks the GET.
	headFailed, retried bool
}

// fetchPlan is how pages are fetched: following links or not, recording them in a link
// graph or not, only checking the answer's status or not, and the pacing.
type fetchPlan struct {
	discover  bool
	graph     *linkGraph // nil: links are not recorded
	checkOnly bool       // read the status and headers, never a body
	delay     time.Duration
	parallel  int
	external  bool           // record links to other sites in the graph, to be checked
	render    *renderSession // nil: pages are not rendered
}

// pageFetcher feeds frontier URLs to an async colly collector, keeping at most
// plan.parallel requests outstanding. Colly queues every Visit at once otherwise, and each
// queued request would sleep the politeness delay even after the crawl was cancelled.
type pageFetcher struct {
	ctx     context.Context
	stop    context.CancelCauseFunc // ends the crawl early, with ErrSiteTooLarge
	coll    *colly.Collector
	front   *frontier
	plan    fetchPlan
	maxBody int64
	// maxResult bounds the JSON size of the pages kept; size is the size so far.
	maxResult, size int64

	c        *Crawler
	mu       sync.Mutex
	hops     map[string][]Hop // first URL asked for → redirect answers, in order
	inflight int
	pages    []*visit
	dropped  int           // fetches cut short by the end of the time budget
	wake     chan struct{} // signalled when a fetch finishes
}

// fetchPages fetches the frontier's URLs (and, when discovering, the links they lead to)
// and stores the pages in res in frontier order. It returns their visits in that order.
func (c *Crawler) fetchPages(ctx context.Context, t http.RoundTripper, front *frontier, plan fetchPlan, res *Result) ([]*visit, error) {
	visits, dropped, err := c.fetchAll(ctx, t, front, plan)
	if err != nil {
		return nil, err
	}
	for _, v := range visits {
		res.Pages = append(res.Pages, v.page)
		if c.cfg.OnPage != nil {
			c.cfg.OnPage(v.page)
		}
		reportPageLimits(v, res)
	}
	if err := ctx.Err(); err != nil {
		res.warn("crawl stopped early (%v): %d page(s) fetched, %d fetch(es) cut short", err, len(res.Pages), dropped)
	}
	return visits, nil
}

// fetchAll fetches the frontier's URLs as plan says and returns their visits in frontier
// order, with the number of fetches the end of the time budget cut short.
func (c *Crawler) fetchAll(ctx context.Context, t http.RoundTripper, front *frontier, plan fetchPlan) ([]*visit, int, error) {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	coll, err := c.newCollector(ctx, t, front, plan)
	if err != nil {
		return nil, 0, err
	}
	f := &pageFetcher{ctx: ctx, stop: stop, coll: coll, front: front, plan: plan, maxBody: c.cfg.MaxBodyBytes,
		maxResult: c.cfg.MaxResultBytes, wake: make(chan struct{}, 1), hops: make(map[string][]Hop), c: c}
	coll.SetRedirectHandler(f.redirect)
	f.register()
	f.run()
	if cause := context.Cause(ctx); errors.Is(cause, ErrSiteTooLarge) {
		return nil, 0, cause
	}
	slices.SortFunc(f.pages, func(a, b *visit) int { return a.idx - b.idx })
	return f.pages, f.dropped, nil
}

// newCollector builds the per-crawl colly collector over the crawl's guarded transport.
func (c *Crawler) newCollector(ctx context.Context, t http.RoundTripper, front *frontier, plan fetchPlan) (*colly.Collector, error) {
	coll := colly.NewCollector()
	// Fields are set after construction because NewCollector applies COLLY_* environment
	// variables, which must not loosen a crawl's limits.
	coll.UserAgent = c.cfg.UserAgent
	coll.Async = true
	coll.Context = ctx
	// One byte over the limit tells a too-large body from one exactly at the limit.
	coll.MaxBodySize = int(min(c.cfg.MaxBodyBytes+1, math.MaxInt32))
	coll.IgnoreRobotsTxt = true        // robots.txt was read once, with Crawl-delay and Sitemap lines
	coll.AllowURLRevisit = true        // the frontier dedupes; colly would also fail redirects to listed URLs
	coll.ParseHTTPErrorResponse = true // statuses are data here, recorded by onHeaders
	coll.MaxDepth, coll.MaxRequests, coll.CacheDir, coll.CheckHead = 0, 0, "", false
	coll.DetectCharset, coll.TraceHTTP = false, true // the trace times the first byte (PageFacts.TTFB)
	coll.AllowedDomains, coll.DisallowedDomains = nil, nil
	coll.URLFilters, coll.DisallowedURLFilters = nil, nil
	coll.WithTransport(&pageTransport{next: t, limit: int64(coll.MaxBodySize)})
	coll.SetRequestTimeout(c.cfg.RequestTimeout)
	rule := &colly.LimitRule{DomainGlob: "*", Parallelism: plan.parallel, Delay: plan.delay}
	if err := coll.Limit(rule); err != nil {
		return nil, fmt.Errorf("colly limit rule: %w", err)
	}
	return coll, nil
}

// redirect records the redirect answer as a hop of the chain started by via[0], refuses a
// loop, and adds to checkRedirect that a redirect within the site must not lead where
// robots.txt disallows.
func (f *pageFetcher) redirect(req *http.Request, via []*http.Request) error {
	if req.Response != nil && len(via) > 0 {
		key := via[0].URL.String()
		f.mu.Lock()
		if chain := f.hops[key]; len(chain) <= f.c.cfg.MaxRedirects {
			f.hops[key] = append(chain, Hop{URL: via[len(via)-1].URL.String(), Status: req.Response.StatusCode})
		}
		f.mu.Unlock()
	}
	for _, r := range via {
		if r.URL.String() == req.URL.String() {
			return fmt.Errorf("%w: back to %s", errRedirectLoop, req.URL)
		}
	}
	if err := f.c.checkRedirect(req, via); err != nil {
		return err
	}
	if siteKey(req.URL) == f.front.site && !f.front.robots.allows(req.URL) {
		return fmt.Errorf("redirect to %s: %w", req.URL, errDisallowed)
	}
	return nil
}

func (f *pageFetcher) register() {
	f.coll.OnRequest(f.onRequest)
	f.coll.OnResponseHeaders(f.onHeaders)
	f.coll.OnResponse(f.onResponse)
	f.coll.OnError(f.onError)
	f.coll.OnScraped(f.onScraped)
}

// run starts fetches while there is room and work, until all are done or time is up.
// Should colly ever end a request without calling back, its slot would stay taken; the
// time budget still ends the crawl.
func (f *pageFetcher) run() {
	defer f.coll.Wait()
	for {
		f.startAvailable()
		if f.idle() {
			return
		}
		select {
		case <-f.wake:
		case <-f.ctx.Done():
			return
		}
	}
}

func (f *pageFetcher) startAvailable() {
	for {
		f.mu.Lock()
		if f.inflight >= f.plan.parallel {
			f.mu.Unlock()
			return
		}
		q, ok := f.front.next()
		if !ok {
			f.mu.Unlock()
			return
		}
		f.inflight++
		f.mu.Unlock()
		f.start(q)
	}
}

// idle reports that nothing is in flight and nothing queued. With nothing in flight no
// one can queue more, so the answer is final.
func (f *pageFetcher) idle() bool {
	f.mu.Lock()
	inflight := f.inflight
	f.mu.Unlock()
	return inflight == 0 && !f.front.pending()
}

func (f *pageFetcher) start(q queued) {
	v := &visit{idx: q.idx, page: Page{URL: q.url, H2s: []string{}}, length: -1}
	if err := f.request(v); err != nil {
		v.page.Error = err.Error()
		f.finish(v)
	}
}

// request asks for v's URL: HEAD when only the status is wanted, unless a HEAD was refused.
func (f *pageFetcher) request(v *visit) error {
	method := http.MethodGet
	if f.plan.checkOnly && !v.headFailed {
		method = http.MethodHead
	}
	cctx := colly.NewContext()
	cctx.Put(visitKey, v)
	hdr := http.Header{"Accept": {acceptHTML}}
	return f.coll.Request(method, v.page.URL, nil, cctx, hdr)
}

// retryGet asks again with GET (its body left unread) when a HEAD was refused: many
// servers answer 405 or 501 to HEAD yet serve the URL. It reports whether it did.
func (f *pageFetcher) retryGet(v *visit) bool {
	if !v.headFailed || v.retried || f.ctx.Err() != nil {
		return false
	}
	v.retried = true
	v.page = Page{URL: v.page.URL, H2s: []string{}}
	v.stopped, v.reqURL, v.length = false, nil, -1
	f.mu.Lock()
	delete(f.hops, v.page.URL)
	f.mu.Unlock()
	return f.request(v) == nil
}

// finish hands a page over, once, and frees its slot. Pages that failed after the time
// budget ran out were cut short, not broken, so they are dropped rather than reported.
// When the pages kept grow past the result limit, the crawl stops: the site is too large.
func (f *pageFetcher) finish(v *visit) {
	if v.done || f.retryGet(v) {
		return
	}
	v.done = true
	key := v.page.URL
	if v.reqURL != nil {
		key = v.reqURL.String()
	}
	f.mu.Lock()
	v.page.RedirectChain = f.hops[key]
	f.mu.Unlock()
	v.page.clean()
	size := jsonSize(v.page)
	f.mu.Lock()
	if f.ctx.Err() != nil && v.page.Error != "" {
		f.dropped++
	} else {
		f.pages = append(f.pages, v)
		f.size += size
		if f.size > f.maxResult {
			f.stop(fmt.Errorf("%w: pages of more than %d bytes", ErrSiteTooLarge, f.maxResult))
		}
	}
	f.inflight--
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

func visitOf(ctx *colly.Context) *visit {
	if ctx == nil {
		return nil
	}
	v, _ := ctx.GetAny(visitKey).(*visit)
	return v
}

// onRequest notes the URL asked for and cancels requests colly starts after the time
// budget ran out.
func (f *pageFetcher) onRequest(r *colly.Request) {
	if v := visitOf(r.Ctx); v != nil && v.reqURL == nil {
		v.reqURL = r.URL
	}
	if f.ctx.Err() == nil {
		return
	}
	r.Abort() // colly then calls no other callback for r
	if v := visitOf(r.Ctx); v != nil {
		v.page.Error = f.ctx.Err().Error()
		f.finish(v)
	}
}

// onHeaders records the final answer and decides, before any body byte is read, whether
// the body is worth reading.
func (f *pageFetcher) onHeaders(r *colly.Response) {
	v := visitOf(r.Ctx)
	if v == nil {
		return
	}
	h := *r.Headers
	v.page.Status = r.StatusCode
	v.page.FinalURL = r.Request.URL.String()
	v.page.Redirected = v.reqURL != nil && r.Request.URL != v.reqURL
	v.page.ContentType = mediaType(h.Get("Content-Type"))
	if n, err := strconv.ParseInt(h.Get("Content-Length"), 10, 64); err == nil && n >= 0 {
		v.length = n
	}
	if r.Request.Method == http.MethodHead && (r.StatusCode == http.StatusMethodNotAllowed || r.StatusCode == http.StatusNotImplemented) {
		v.headFailed = true
	}
	for _, val := range h.Values("X-Robots-Tag") {
		noindex, nofollow := robotsDirectives(val)
		v.page.Noindex = v.page.Noindex || noindex
		v.nofollow = v.nofollow || nofollow
	}
	if reason, skip := f.skipBody(r.Request.URL, r.StatusCode, h); skip {
		v.page.OffSite = siteKey(r.Request.URL) != f.front.site
		v.page.Error = reason
		v.stopped = true
		r.Request.Abort()
	}
}

// skipBody says whether to leave a body unread, with an error text when that is a failure.
// Off-site pages, error statuses and non-HTML types are recorded from their headers alone.
func (f *pageFetcher) skipBody(u *url.URL, status int, h http.Header) (string, bool) {
	ct := mediaType(h.Get("Content-Type"))
	switch {
	case f.plan.checkOnly, siteKey(u) != f.front.site, status/100 != 2, ct != "" && !isHTMLType(ct):
		return "", true
	}
	// Go's transport undoes gzip and drops the header; any other encoding would reach
	// colly, which inflates some of them without a size limit.
	if enc := h.Get("Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
		return "unsupported content encoding " + enc, true
	}
	// A body over the limit is read up to it (colly stops at MaxBodySize): the page is
	// audited as far as read, its links followed, and it is marked cut (onResponse).
	return "", false
}

func (f *pageFetcher) onResponse(r *colly.Response) {
	v := visitOf(r.Ctx)
	if v == nil || v.stopped {
		return
	}
	body := r.Body
	if int64(len(body)) > f.maxBody {
		// Kept as far as read: its title, facts and links are judged, and the audit
		// reports the page as over the limit with its size when the answer gave one.
		body = body[:f.maxBody]
		v.page.BodyCut = true
		v.page.BodyBytes = max(v.length, 0)
	}
	if v.page.ContentType == "" {
		v.page.ContentType = mediaType(http.DetectContentType(body))
	}
	if !isHTMLType(v.page.ContentType) {
		return
	}
	follow := f.plan.discover && !v.nofollow
	info := extractPage(body, follow || f.plan.graph != nil)
	base := r.Request.URL
	if b := resolveHTTP(base, info.base); b != nil {
		base = b
	}
	v.page.fill(info, base)
	served := len(info.links)
	if f.plan.render != nil { // the rendered DOM's own links are followed and recorded too
		info.links = f.plan.render.renderPage(f.ctx, &v.page, r, base, info.links)
	}
	links := resolveLinks(base, info.links)
	if follow || f.plan.graph != nil {
		v.page.Outlinks = outlinkStats(links, f.front.site, r.Request.URL.Scheme == "https", served, info.linksSeen)
	}
	v.page.Facts.readResponse(*r.Headers, r.Trace, r.Request.URL)
	if f.plan.graph != nil && !v.nofollow && !info.nofollow {
		v.links = f.plan.graph.addPage(pageName(v.page), f.front.site, links, f.plan.external)
		v.frags = f.plan.graph.fragments(f.front.site, links)
	}
	if follow && !info.nofollow {
		f.follow(links)
	}
}

// follow queues a page's links to pages; the frontier drops other sites, repeats,
// disallowed URLs and traps. Files and nofollow links are not followed.
func (f *pageFetcher) follow(links []resolvedLink) {
	for _, l := range links {
		if !l.kind.followed() || l.nofollow || isAsset(l.u) {
			continue
		}
		if !f.front.add(l.u) {
			return
		}
	}
}

func (f *pageFetcher) onError(r *colly.Response, err error) {
	v := visitOf(r.Ctx)
	if v == nil {
		return
	}
	if !v.stopped && v.page.Error == "" {
		v.page.Error = errorText(err)
		v.page.ErrorKind = errorKind(err)
		v.blocked = errors.Is(err, errDisallowed)
	}
	f.finish(v)
}

func (f *pageFetcher) onScraped(r *colly.Response) {
	if v := visitOf(r.Ctx); v != nil {
		f.finish(v)
	}
}

// fill copies an HTML document's findings into the page.
func (p *Page) fill(info pageInfo, base *url.URL) {
	p.Title, p.MetaDescription, p.H1, p.H1Count = info.title, info.description, info.h1, info.h1s
	if info.h2s != nil {
		p.H2s = info.h2s
	}
	if u := resolveHTTP(base, info.canonical); u != nil {
		p.Canonical = u.String()
	}
	p.Noindex = p.Noindex || info.noindex
	p.WordCount = info.words
	p.Facts = info.facts
	p.Facts.resolve(base)
	p.Facts.GenericTextLinks.dropSamePage(base, cmp.Or(p.FinalURL, p.URL))
	p.MetaRefresh = info.refresh
}

// addRenderedAnchors judges the anchors of the rendered DOM (facts) as those of the HTML as
// served: anchors a script inserted are added, those both show count once.
func (p *Page) addRenderedAnchors(facts PageFacts, base *url.URL) {
	facts.GenericTextLinks.dropSamePage(base, cmp.Or(p.FinalURL, p.URL))
	p.Facts.NotCrawlableLinks.union(facts.NotCrawlableLinks)
	p.Facts.GenericTextLinks.union(facts.GenericTextLinks)
	p.Facts.EmptyTextLinks.union(facts.EmptyTextLinks)
}

// errorKind classifies a fetch error for the audit: timeouts and redirect failures are
// reported apart from other errors.
func errorKind(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, errRedirectLoop):
		return ErrorRedirectLoop
	case errors.Is(err, errTooManyRedirects):
		return ErrorTooManyRedirect
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return ErrorTimeout
	}
	return ""
}

// reportPageLimits records the bounds one page hit: its size and its number of links.
func reportPageLimits(v *visit, res *Result) {
	if o := v.page.Outlinks; o != nil && o.Total > o.Read {
		res.warn("%s has %d links; only the first %d were read", v.page.URL, o.Total, o.Read)
		res.limit(LimitLinksPerPage)
	}
	if v.page.BodyCut && !slices.Contains(res.Limits, LimitBytes) {
		res.warn("pages over the body limit were read up to it, their links checked as far as read (%s)", v.page.URL)
		res.limit(LimitBytes)
	}
}

func mediaType(contentType string) string {
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

func isHTMLType(mt string) bool {
	return mt == "text/html" || mt == "application/xhtml+xml"
}
