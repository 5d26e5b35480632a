package crawler

import (
	"net/url"
	"strings"
	"sync"
)

// Bounds on the discovery of URLs, so a site's traps cannot fill the page budget.
const (
	// maxQueryVariants bounds the distinct query strings crawled per path: calendars and
	// faceted navigation make endless variants of one page.
	maxQueryVariants = 20
	// maxSegmentRepeats is how often one path segment may appear: /a/b/a/b/a/ is a
	// relative-link loop, not a page.
	maxSegmentRepeats = 2
	// maxTraps and maxBlocked bound the traps and robots-blocked URLs reported.
	maxTraps   = 100
	maxBlocked = 100
)

// frontier is the crawl's URL queue: it keeps only the site's URLs that robots.txt allows,
// each once, and at most limit of them, so its memory is bounded by the page budget. URLs
// added while sitemap is set are the sitemap's; the others were found by following links.
type frontier struct {
	mu     sync.Mutex
	site   string
	robots *robotsPolicy
	limit  int
	seen   map[string]struct{}
	queue  []queued
	added  int // URLs accepted so far; also the next one's index
	// overflow is set when a URL arrived with the budget spent: the site has more pages.
	overflow bool
	offSite  int
	// warnOffSite reports off-site URLs: worth a warning in a sitemap, normal among links.
	warnOffSite bool
	// sitemap marks the URLs added now as the sitemap's; inSitemap holds their keys.
	sitemap   bool
	inSitemap map[string]bool
	blocked   int // distinct URLs robots.txt disallows
	blockedAt []Blocked
	// traps per path (no query): distinct queries seen, and what was dropped.
	variants map[string]int
	traps    map[string]*Trap
	trapList []*Trap
}

type queued struct {
	url         string
	idx         int  // order of acceptance, which orders the crawl's pages
	fromSitemap bool // listed in a sitemap
}

// seenSlack bounds how many disallowed URLs are remembered beyond the page budget, so a
// page with endless disallowed links cannot grow the set.
const seenSlack = 10000

func newFrontier(site string, robots *robotsPolicy, limit int) *frontier {
	return &frontier{site: site, robots: robots, limit: limit, seen: make(map[string]struct{}),
		inSitemap: make(map[string]bool), variants: make(map[string]int), traps: make(map[string]*Trap)}
}

// add queues u if it is new, on the site, allowed and no trap. It returns false once a URL
// arrives that the page budget has no room for, so producers can stop reading.
func (f *frontier) add(u *url.URL) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if siteKey(u) != f.site {
		if f.sitemap {
			f.offSite++
		}
		return true
	}
	key := dedupeKey(u)
	if f.sitemap && len(f.inSitemap) < f.limit+seenSlack {
		f.inSitemap[key] = true
	}
	if _, dup := f.seen[key]; dup {
		return true
	}
	if !f.robots.allows(u) {
		if len(f.seen) < f.limit+seenSlack {
			f.seen[key] = struct{}{}
		}
		f.blocked++
		if len(f.blockedAt) < maxBlocked {
			f.blockedAt = append(f.blockedAt, Blocked{URL: u.String(), InSitemap: f.sitemap})
		}
		return true
	}
	if f.added >= f.limit {
		f.overflow = true
		return false
	}
	if !f.sitemap && f.trapped(u) {
		return true
	}
	f.seen[key] = struct{}{}
	f.queue = append(f.queue, queued{url: u.String(), idx: f.added, fromSitemap: f.sitemap})
	f.added++
	return true
}

// trapped reports, and records, a URL found by links that repeats a path segment too often
// or is one query variant too many of its path. The caller holds mu.
func (f *frontier) trapped(u *url.URL) bool {
	kind := ""
	if segmentRepeats(u.EscapedPath()) > maxSegmentRepeats {
		kind = TrapPathRepetition
	} else if u.RawQuery != "" {
		n := f.variants[u.EscapedPath()]
		if n >= maxQueryVariants {
			kind = TrapQueryVariants
		} else if len(f.variants) < f.limit+seenSlack {
			f.variants[u.EscapedPath()] = n + 1
		}
	}
	if kind == "" {
		return false
	}
	pattern := u.EscapedPath()
	if kind == TrapPathRepetition {
		pattern = firstSegments(pattern, 3)
	}
	t := f.traps[kind+pattern]
	if t == nil {
		if len(f.trapList) >= maxTraps {
			return true
		}
		t = &Trap{Kind: kind, Path: pattern, Example: u.String()}
		f.traps[kind+pattern] = t
		f.trapList = append(f.trapList, t)
	}
	t.Dropped++
	return true
}

// segmentRepeats is how often the most repeated segment of an escaped path appears.
func segmentRepeats(p string) int {
	counts := map[string]int{}
	most := 0
	for _, seg := range strings.Split(p, "/") {
		if seg == "" {
			continue
		}
		counts[seg]++
		most = max(most, counts[seg])
	}
	return most
}

// firstSegments keeps the first n segments of a path, naming a trap's family of URLs.
func firstSegments(p string, n int) string {
	parts := strings.SplitN(strings.TrimPrefix(p, "/"), "/", n+1)
	if len(parts) > n {
		parts = parts[:n]
	}
	return "/" + strings.Join(parts, "/") + "/"
}

// full reports whether a URL beyond the page budget was offered.
func (f *frontier) full() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.overflow
}

// next hands out the oldest queued URL.
func (f *frontier) next() (queued, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.queue) == 0 {
		return queued{}, false
	}
	q := f.queue[0]
	f.queue = f.queue[1:]
	return q, true
}

func (f *frontier) size() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.added
}

// listed reports whether a sitemap lists the URL with dedupe key key.
func (f *frontier) listed(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inSitemap[key]
}

// report adds the frontier's findings to the result: warnings, traps and blocked URLs.
func (f *frontier) report(res *Result) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.blocked > 0 {
		res.warn("robots.txt disallows %d URL(s), not fetched (e.g. %s)", f.blocked, f.blockedAt[0].URL)
		res.Blocked = append(res.Blocked, f.blockedAt...)
		res.BlockedTotal += f.blocked
	}
	if f.offSite > 0 && f.warnOffSite {
		res.warn("%d sitemap URL(s) on other hosts skipped", f.offSite)
	}
	if f.overflow {
		res.warn("page limit of %d reached; the site has more URLs", f.limit)
		res.limit(LimitPages)
	}
	for _, t := range f.trapList {
		res.Traps = append(res.Traps, *t)
	}
	if len(f.trapList) > 0 {
		res.warn("%d crawl trap(s) bounded (endless query variants or repeated path segments), e.g. %s: %d URL(s) not crawled", len(f.trapList), f.trapList[0].Example, f.trapList[0].Dropped)
		res.limit(LimitTraps)
	}
	if left := len(f.queue); left > 0 {
		res.warn("%d queued URL(s) not fetched before the crawl stopped", left)
	}
}

// left counts the URLs still queued.
func (f *frontier) left() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.queue)
}

// pending reports whether URLs wait to be fetched.
func (f *frontier) pending() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.queue) > 0
}
