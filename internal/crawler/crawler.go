// Package crawler fetches a site's pages for the content audit. It finds them through the
// site's sitemaps (or, without one, by following internal links), honours robots.txt, and
// extracts each page's title, headings, meta data and main-content word count. It records
// the links between the site's pages, counting each page's inlinks and checking linked URLs
// no page was fetched for, so broken internal links and orphan pages can be reported.
//
// Every connection is checked against private, loopback, link-local and metadata addresses
// at dial time, so a customer-supplied domain cannot make the service reach its own network.
package crawler

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"
)

// DefaultUserAgent identifies the crawler to the sites it visits.
const DefaultUserAgent = "ContentStrategyBot/1.0 (+https://contentapi.dev/bot)"

// DefaultMaxPages is used when a Request gives no page limit.
const DefaultMaxPages = 100

// DefaultMaxResultBytes bounds a crawl's result. Every page's fields are bounded (URLs
// 2,048 bytes, title, description and h1 1,000, h2s 8 KiB together), so only many pages of
// hostile or extreme content reach it: 500 ordinary pages take about 1 MiB.
const DefaultMaxResultBytes = 8 << 20

var (
	// ErrForbiddenAddress means a host resolved to, or a connection was about to reach, an
	// address the crawler must not contact (private, loopback, metadata and the like).
	ErrForbiddenAddress = errors.New("crawler: forbidden address")
	// ErrUnresolvable means the host name did not resolve.
	ErrUnresolvable = errors.New("crawler: host does not resolve")
	// ErrSiteUnreachable means neither https:// nor http:// answered.
	ErrSiteUnreachable = errors.New("crawler: site unreachable")
	// ErrInvalidDomain means Request.Domain is not a bare host (or host:port in local tests).
	ErrInvalidDomain = errors.New("crawler: invalid domain")
	// ErrSiteTooLarge means the crawl's result would be larger than Config.MaxResultBytes:
	// the site's pages carry more text than an audit can store.
	ErrSiteTooLarge = errors.New("crawler: site too large")
)

// Config bounds and identifies a crawl. Zero fields take the documented defaults.
type Config struct {
	UserAgent       string        // default DefaultUserAgent
	AllowPrivate    bool          // true only in local tests: permits loopback/private targets and host:port
	MaxBodyBytes    int64         // per page, after any decompression, default 2 MiB
	MaxRedirects    int           // default 5
	Timeout         time.Duration // whole crawl, default 60s
	RequestTimeout  time.Duration // per request, default 15s
	Parallelism     int           // per site, default 4
	Delay           time.Duration // politeness delay between requests to the site (then one at a time), default 0; a larger robots.txt Crawl-delay wins
	MaxSitemaps     int           // sitemap files fetched at most, default 50
	MaxSitemapDepth int           // sitemap index nesting, default 3
	MaxResultBytes  int64         // a Result's JSON size, default 8 MiB; beyond it Crawl fails with ErrSiteTooLarge
	// OnPage, when set, is told of every page fetched (for metrics).
	OnPage func(p Page)
	// Render configures JavaScript rendering (Request.Render); without a browser path a
	// rendered crawl fails with ErrRenderUnavailable.
	Render RenderConfig
}

func (cfg Config) withDefaults() Config {
	if cfg.UserAgent == "" {
		cfg.UserAgent = DefaultUserAgent
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 2 << 20
	}
	if cfg.MaxRedirects <= 0 {
		cfg.MaxRedirects = 5
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 15 * time.Second
	}
	if cfg.Parallelism <= 0 {
		cfg.Parallelism = 4
	}
	if cfg.Delay < 0 {
		cfg.Delay = 0
	}
	if cfg.MaxSitemaps <= 0 {
		cfg.MaxSitemaps = 50
	}
	if cfg.MaxSitemapDepth <= 0 {
		cfg.MaxSitemapDepth = 3
	}
	if cfg.MaxResultBytes <= 0 {
		cfg.MaxResultBytes = DefaultMaxResultBytes
	}
	return cfg
}

// Crawler crawls sites. It holds no per-crawl state, so one Crawler serves many goroutines.
type Crawler struct {
	cfg Config
	// checkAddr refuses addresses the crawler must not connect to; nil allows all. It is a
	// field so a test can allow loopback (its httptest server) yet refuse other targets.
	checkAddr func(netip.Addr) error
	// lookup resolves host names for CheckHost; a field so tests need no DNS.
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// tlsConfig is nil in production; tests set it to trust httptest's certificate.
	tlsConfig *tls.Config
	// renderer runs pages in headless Chromium; nil when no browser is configured.
	renderer *Renderer
}

// New returns a Crawler with cfg's zero fields set to their defaults.
func New(cfg Config) *Crawler {
	c := &Crawler{cfg: cfg.withDefaults(), lookup: lookupNetIP}
	if !c.cfg.AllowPrivate {
		c.checkAddr = forbiddenAddr
	}
	c.renderer = NewRenderer(c.cfg.Render, c.cfg.UserAgent)
	return c
}

// Request names the site to crawl.
type Request struct {
	Domain     string // host or host:port, already normalised lower-case
	SitemapURL string // optional; when set, the only sitemap read
	MaxPages   int    // pages fetched at most; <= 0 means DefaultMaxPages
	// CheckLinks asks for linked URLs no page was fetched for to be checked (status only),
	// within MaxPages; without it broken links are judged among the fetched pages alone.
	// Links to files (images, PDFs, scripts, ...) are checked too and listed as Resources.
	CheckLinks bool
	// CheckExternal asks for links to other sites to be checked (status only): at most
	// maxExternal URLs, under the same address rules as the crawl.
	CheckExternal bool
	// TTFBResampleOver, when set, asks for every page whose time to first byte was over it
	// to be fetched TTFBSamples-1 times more (GET, body unread), its TTFB then the median
	// of its samples (ttfb.go).
	TTFBResampleOver time.Duration
	// Render asks for every page to be rendered in headless Chromium as well (Page.Rendered),
	// links only the rendered page shows followed too.
	Render bool
}

// Page sources: how the crawl came to a page.
const (
	SourceSitemap = "sitemap" // listed in a sitemap, linked from no crawled page
	SourceLinks   = "links"   // found by following links (or the home page), not in a sitemap
	SourceBoth    = "both"    // listed in a sitemap and linked
)

// Hop is one redirect answer on the way to a page.
type Hop struct {
	URL    string `json:"url"`
	Status int    `json:"status"`
}

// Error kinds, telling apart failures the audit reports differently.
const (
	ErrorTimeout         = "timeout"
	ErrorRedirectLoop    = "redirect_loop"
	ErrorTooManyRedirect = "too_many_redirects"
)

// Outlinks sums up one page's links as read from its HTML; the examples are bounded.
type Outlinks struct {
	Total    int `json:"total"`    // links on the page, read or not
	Read     int `json:"read"`     // at most maxLinks
	Internal int `json:"internal"` // read links to pages of the site (a, area, iframe, rel=next/prev, meta refresh)
	External int `json:"external"`
	// Nofollow counts rel=nofollow links into the site; NofollowURLs names a few.
	Nofollow     int      `json:"nofollow"`
	NofollowURLs []string `json:"nofollow_urls,omitempty"`
	// Insecure counts http:// links from an https page; InsecureURLs names a few.
	Insecure     int      `json:"insecure"`
	InsecureURLs []string `json:"insecure_urls,omitempty"`
}

// Trap kinds: families of URLs the crawl bounded.
const (
	TrapQueryVariants  = "query_variants"  // more than maxQueryVariants query strings on one path
	TrapPathRepetition = "path_repetition" // a path segment repeated more than maxSegmentRepeats times
)

// Trap is a family of URLs found by links that the crawl stopped following.
type Trap struct {
	Kind    string `json:"kind"`
	Path    string `json:"path"`    // the path (or its first segments) the family shares
	Example string `json:"example"` // the first URL dropped
	Dropped int    `json:"dropped"` // URLs of the family not crawled
}

// Blocked is a URL of the site robots.txt disallows, which was therefore not fetched.
type Blocked struct {
	URL             string   `json:"url"`
	InSitemap       bool     `json:"in_sitemap"`
	LinkedFrom      []string `json:"linked_from"`
	LinkedFromTotal int      `json:"linked_from_total"`
}

// Resource is a linked file (image, PDF, script, stylesheet, ...) or, with
// Request.CheckExternal, a link to another site, checked by its status alone.
type Resource struct {
	URL           string `json:"url"`
	Status        int    `json:"status,omitempty"` // final status; absent when no answer came
	Error         string `json:"error,omitempty"`
	ContentType   string `json:"content_type,omitempty"`
	ContentLength int64  `json:"content_length"`     // -1 when the answer did not say
	Image         bool   `json:"image,omitempty"`    // linked by <img> or served as image/*
	External      bool   `json:"external,omitempty"` // on another site
	// LinkedFrom names the first pages linking to it; LinkedFromTotal counts them all.
	LinkedFrom      []string `json:"linked_from"`
	LinkedFromTotal int      `json:"linked_from_total"`
}

// RedirectLink is a URL of the site, linked from crawled pages, that answers with a redirect.
type RedirectLink struct {
	URL             string   `json:"url"`
	Target          string   `json:"target"` // where the redirects ended
	LinkedFrom      []string `json:"linked_from"`
	LinkedFromTotal int      `json:"linked_from_total"`
}

// Limits a crawl can hit, listed in Result.Limits.
const (
	LimitPages        = "pages"          // max pages reached with URLs left
	LimitLinksPerPage = "links_per_page" // a page had more than maxLinks links
	LimitBytes        = "bytes"          // a page was larger than Config.MaxBodyBytes (read up to it)
	LimitTraps        = "traps"          // crawl traps bounded
	LimitLinkGraph    = "link_graph"     // more distinct linked URLs than the graph holds
	LimitExternal     = "external"       // more external links than are checked
)

// Page is what the audit needs to know about one URL.
type Page struct {
	URL             string   `json:"url"`       // the URL as listed or discovered
	FinalURL        string   `json:"final_url"` // after redirects
	Status          int      `json:"status"`
	ContentType     string   `json:"content_type,omitempty"` // media type, e.g. text/html
	Title           string   `json:"title"`
	MetaDescription string   `json:"meta_description"`
	H1              string   `json:"h1"`       // the first h1 with text
	H1Count         int      `json:"h1_count"` // h1 elements with text
	H2s             []string `json:"h2s"`
	Canonical       string   `json:"canonical,omitempty"`
	Noindex         bool     `json:"noindex"`
	WordCount       int      `json:"word_count"` // words of the main content only
	// OffSite is set when the URL redirected to another site: Status and FinalURL are
	// those of the other site's answer and its content is not read.
	OffSite bool `json:"off_site,omitempty"`
	// Redirected is set when the URL answered with a redirect that was followed: URL is
	// the one asked for, FinalURL where the redirects ended.
	Redirected bool `json:"redirected,omitempty"`
	// Inlinks counts the crawled HTML pages of the site, other than this one, that link to
	// its URL or final URL (see Result.BrokenLinks for how links are read).
	Inlinks int    `json:"inlinks"`
	Error   string `json:"error,omitempty"` // fetch error: refused address, redirect loop, ...
	// BodyCut is set when the HTML body was larger than Config.MaxBodyBytes: the page was
	// read up to the limit (its facts and links are those of the part read). BodyBytes is
	// its size as the answer's Content-Length gave it, 0 when it gave none.
	BodyCut   bool  `json:"body_cut,omitempty"`
	BodyBytes int64 `json:"body_bytes,omitempty"`
	// ErrorKind classifies some errors: ErrorTimeout, ErrorRedirectLoop, ErrorTooManyRedirect.
	ErrorKind string `json:"error_kind,omitempty"`
	// Depth is the click depth from the home page (0) over the crawled pages' links; -1
	// when no chain of links from the home page reaches it.
	Depth int `json:"depth"`
	// Source says how the crawl came to the page: SourceSitemap, SourceLinks or SourceBoth.
	// A URL that redirected takes its source from where it ended as well: a linked URL
	// redirecting to a listed one came to a listed page.
	Source string `json:"source"`
	// InSitemap says a sitemap lists URL itself, the URL as asked for (not only where its
	// redirects ended): the URLs the sitemap checks judge.
	InSitemap bool `json:"in_sitemap,omitempty"`
	// RedirectChain lists the redirect answers on the way to FinalURL, in order.
	RedirectChain []Hop `json:"redirect_chain,omitempty"`
	// MetaRefresh is the content of a <meta http-equiv="refresh"> tag, if any.
	MetaRefresh string `json:"meta_refresh,omitempty"`
	// Outlinks sums up the page's links (HTML pages of the site only).
	Outlinks *Outlinks `json:"outlinks,omitempty"`
	// Facts are what the audit's checks read of an HTML page (facts.go): working data,
	// bounded per page, left out of the result's JSON.
	Facts PageFacts `json:"-"`
	// Rendered is the page as headless Chromium showed it, with Request.Render.
	Rendered *Rendered `json:"rendered,omitempty"`
}

// BrokenLink is a URL of the site, linked from crawled pages, that answered 4xx or 5xx
// (after redirects) or gave no answer at all.
type BrokenLink struct {
	URL    string `json:"url"`
	Status int    `json:"status,omitempty"` // final HTTP status; absent when no answer came
	Error  string `json:"error,omitempty"`  // why no answer came
	// LinkedFrom names the first pages (by URL) that link to it, at most maxLinkSources;
	// LinkedFromTotal counts them all.
	LinkedFrom      []string `json:"linked_from"`
	LinkedFromTotal int      `json:"linked_from_total"`
	// InSitemap says a sitemap lists the URL too.
	InSitemap bool `json:"in_sitemap,omitempty"`
}

// SitemapError names a sitemap file that could not be used and why.
type SitemapError struct {
	URL   string `json:"url"`
	Error string `json:"error"`
}

// Result is the outcome of one crawl.
type Result struct {
	Pages         []Page         `json:"pages"`
	Sitemaps      []string       `json:"sitemaps"` // sitemap URLs read successfully
	SitemapErrors []SitemapError `json:"sitemap_errors"`
	FromSitemap   bool           `json:"from_sitemap"` // pages came from sitemaps, else from links
	Scheme        string         `json:"scheme"`       // https or http
	// BrokenLinks are the site's linked URLs that are broken, sorted by URL. With
	// Request.CheckLinks, a linked URL no page was fetched for is checked with one request
	// whose body is not read, within the page limit; LinksChecked counts those requests.
	BrokenLinks  []BrokenLink `json:"broken_links"`
	LinksChecked int          `json:"links_checked"`
	// BrokenFragments are links to #fragment of crawled pages of the site that have no
	// such id or <a name> (the first 1,000 by URL; BrokenFragmentsTotal counts all).
	BrokenFragments      []BrokenFragment `json:"broken_fragments"`
	BrokenFragmentsTotal int              `json:"broken_fragments_total"`
	Warnings             []string         `json:"warnings"`
	// Resources are the linked files checked (and external links, when asked), by URL.
	Resources []Resource `json:"resources"`
	// RedirectLinks are the site's linked URLs that redirect, by URL.
	RedirectLinks []RedirectLink `json:"redirect_links"`
	// Blocked lists URLs robots.txt disallows (at most maxBlocked); BlockedTotal counts all.
	Blocked      []Blocked `json:"blocked"`
	BlockedTotal int       `json:"blocked_total"`
	Traps        []Trap    `json:"traps"`
	// Limits names the bounds the crawl hit (LimitPages, ...), each once.
	Limits []string `json:"limits"`
}

// limit records that the crawl hit bound name.
func (r *Result) limit(name string) {
	if !slices.Contains(r.Limits, name) {
		r.Limits = append(r.Limits, name)
	}
}

func (r *Result) warn(format string, args ...any) {
	r.Warnings = append(r.Warnings, fmt.Sprintf(format, args...))
}

// Crawl fetches up to req.MaxPages pages of req.Domain. When the crawl's time budget
// (Config.Timeout or ctx's deadline) runs out, it returns the pages fetched so far with a
// warning; when ctx is cancelled it returns ctx's error.
func (c *Crawler) Crawl(ctx context.Context, req Request) (*Result, error) {
	if err := c.checkDomain(req.Domain); err != nil {
		return nil, err
	}
	maxPages := req.MaxPages
	if maxPages <= 0 {
		maxPages = DefaultMaxPages
	}
	if req.Render && c.renderer == nil {
		return nil, fmt.Errorf("crawl %s: %w: no browser configured", req.Domain, ErrRenderUnavailable)
	}
	crawlCtx, cancel := context.WithTimeout(ctx, c.crawlTimeout(req))
	defer cancel()
	transport := c.newTransport()
	defer transport.CloseIdleConnections()
	client := c.newClient(transport)

	res := &Result{Pages: []Page{}, Sitemaps: []string{}, SitemapErrors: []SitemapError{}, BrokenLinks: []BrokenLink{}, BrokenFragments: []BrokenFragment{}, Warnings: []string{},
		Resources: []Resource{}, RedirectLinks: []RedirectLink{}, Blocked: []Blocked{}, Traps: []Trap{}, Limits: []string{}}
	base, robots, err := c.openSite(crawlCtx, client, req.Domain, res)
	if err != nil {
		return nil, fmt.Errorf("crawl %s: %w", req.Domain, err)
	}
	front := c.planPages(crawlCtx, client, req.SitemapURL, base, robots, maxPages, res)
	delay, parallel := c.pacing(robots, res)
	plan := fetchPlan{discover: true, graph: newLinkGraph(maxLinkTargets), delay: delay, parallel: parallel, external: req.CheckExternal}
	plan.render = c.renderSession(req, transport)
	defer plan.render.close()
	visits, err := c.fetchPages(crawlCtx, transport, front, plan, res)
	if err != nil {
		return nil, fmt.Errorf("crawl %s: %w", req.Domain, err)
	}
	c.resampleTTFB(crawlCtx, transport, req.TTFBResampleOver, delay, parallel, res)
	if err := ctx.Err(); errors.Is(err, context.Canceled) {
		return nil, fmt.Errorf("crawl %s: %w", req.Domain, err)
	}
	front.report(res)
	// Link checks share the page budget: max pages bounds every request made for pages.
	budget := -1 // no checks
	if req.CheckLinks {
		budget = maxPages - front.size()
	}
	if err := c.checkLinks(crawlCtx, transport, front, plan, budget, visits, res); err != nil {
		return nil, fmt.Errorf("crawl %s: %w", req.Domain, err)
	}
	if req.CheckExternal {
		c.checkExternal(crawlCtx, transport, plan.graph, res)
	}
	if err := ctx.Err(); errors.Is(err, context.Canceled) {
		return nil, fmt.Errorf("crawl %s: %w", req.Domain, err)
	}
	res.cleanMessages()
	if n := jsonSize(res); n > c.cfg.MaxResultBytes {
		return nil, fmt.Errorf("crawl %s: %w: result of %d bytes, over the limit of %d", req.Domain, ErrSiteTooLarge, n, c.cfg.MaxResultBytes)
	}
	return res, nil
}

// planPages queues the sitemaps' URLs, then the home page (links are followed from every
// page fetched, so depth is measured from it); the crawl then goes on, breadth first, with
// the pages those link to, within the page budget.
func (c *Crawler) planPages(ctx context.Context, client *http.Client, sitemapURL string, base *url.URL, robots *robotsPolicy, maxPages int, res *Result) *frontier {
	front := newFrontier(siteKey(base), robots, maxPages)
	front.warnOffSite = true
	front.sitemap = true
	c.readSitemaps(ctx, client, sitemapURL, base, robots, front, res)
	front.sitemap = false
	front.add(base)
	res.FromSitemap = len(front.inSitemap) > 0
	if len(res.Sitemaps) > 0 && !res.FromSitemap {
		res.warn("the sitemaps list no page of this site to crawl; following links from the home page")
	}
	return front
}

// checkDomain refuses anything but a host name (plus a port when private targets are
// allowed): the domain is placed into URLs, so a path or userinfo must not sneak in.
func (c *Crawler) checkDomain(domain string) error {
	u, err := url.Parse("http://" + domain + "/")
	if err != nil || domain == "" || u.Host != domain || u.Hostname() == "" || strings.ContainsAny(domain, "/?#@ ") {
		return fmt.Errorf("%w: %q", ErrInvalidDomain, domain)
	}
	if u.Port() != "" && !c.cfg.AllowPrivate {
		return fmt.Errorf("%w: %q: a port is only allowed for local tests", ErrInvalidDomain, domain)
	}
	return nil
}

// pacing derives the politeness delay and per-site parallelism from the configuration and
// robots.txt. With a delay the crawl goes one request at a time, since Crawl-delay means
// seconds between successive requests, not per connection.
func (c *Crawler) pacing(robots *robotsPolicy, res *Result) (time.Duration, int) {
	delay, note := politeDelay(c.cfg.Delay, robots.crawlDelay())
	if note != "" {
		res.warn("%s", note)
	}
	if delay > 0 {
		return delay, 1
	}
	return 0, c.cfg.Parallelism
}

// hostOnly strips an optional :port and IPv6 brackets.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}
