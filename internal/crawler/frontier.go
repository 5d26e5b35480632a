package crawler

import (
	"net/url"
	"sync"
)

// frontier is the crawl's URL queue: it keeps only the site's URLs that robots.txt allows,
// each once, and at most limit of them, so its memory is bounded by the page budget.
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
	blocked     int    // distinct URLs robots.txt disallows
	example     string // one of them, for the warning
}

type queued struct {
	url string
	idx int // order of acceptance, which orders the crawl's pages
}

// seenSlack bounds how many disallowed URLs are remembered beyond the page budget, so a
// page with endless disallowed links cannot grow the set.
const seenSlack = 10000

func newFrontier(site string, robots *robotsPolicy, limit int) *frontier {
	return &frontier{site: site, robots: robots, limit: limit, seen: make(map[string]struct{})}
}

// add queues u if it is new, on the site and allowed. It returns false once a URL arrives
// that the page budget has no room for, so producers can stop reading.
func (f *frontier) add(u *url.URL) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if siteKey(u) != f.site {
		f.offSite++
		return true
	}
	key := dedupeKey(u)
	if _, dup := f.seen[key]; dup {
		return true
	}
	if !f.robots.allows(u) {
		if len(f.seen) < f.limit+seenSlack {
			f.seen[key] = struct{}{}
		}
		f.blocked++
		if f.example == "" {
			f.example = u.String()
		}
		return true
	}
	if f.added >= f.limit {
		f.overflow = true
		return false
	}
	f.seen[key] = struct{}{}
	f.queue = append(f.queue, queued{url: u.String(), idx: f.added})
	f.added++
	return true
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

// report adds the frontier's findings to the result's warnings.
func (f *frontier) report(res *Result) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.blocked > 0 {
		res.warn("robots.txt disallows %d URL(s), not fetched (e.g. %s)", f.blocked, f.example)
	}
	if f.offSite > 0 && f.warnOffSite {
		res.warn("%d sitemap URL(s) on other hosts skipped", f.offSite)
	}
	if f.overflow {
		res.warn("page limit of %d reached; the site has more URLs", f.limit)
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
