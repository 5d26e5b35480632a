package crawler

import (
	"cmp"
	"context"
	"net/http"
	"net/url"
	"slices"
	"sync"
)

// Bounds on the link graph, so a site linking to endless URLs cannot grow a crawl's memory
// or result.
const (
	// maxLinkTargets bounds the distinct URLs of the site the graph remembers, and
	// maxLinkBytes their text (URL and key); links to further URLs are left out (and a
	// warning says how many).
	maxLinkTargets = 20000
	maxLinkBytes   = 8 << 20
	// maxLinkSources bounds the linking pages named per broken link.
	maxLinkSources = 5
)

// linkGraph records which URLs of the site each crawled page links to. Every distinct URL
// is stored once and pages hold ids, so memory grows with the distinct URLs (bounded by
// limit) and the links of each page (bounded by maxLinks), not with their product.
type linkGraph struct {
	mu      sync.Mutex
	ids     map[string]int32 // dedupeKey → id
	urls    []string         // id → the smallest form of the URL linked
	keys    []string         // id → dedupeKey
	limit   int              // distinct URLs at most
	bytes   int              // text held: URLs and keys
	dropped int              // links not recorded, once the graph was full
}

func newLinkGraph(limit int) *linkGraph {
	return &linkGraph{ids: make(map[string]int32), limit: limit}
}

// full reports whether the graph has room for no URL, or not for one of size n.
func (g *linkGraph) full(n int) bool {
	return len(g.urls) >= g.limit || g.bytes+n > maxLinkBytes
}

// addPage records the links (raw hrefs, resolved against base) that lead into site and
// returns their ids, each once. Links to other sites, non-http URLs and URLs longer than
// maxURLBytes are left out.
func (g *linkGraph) addPage(base *url.URL, site string, hrefs []string) []int32 {
	var targets []*url.URL
	for _, href := range hrefs {
		if u := resolveHTTP(base, href); u != nil && siteKey(u) == site {
			targets = append(targets, u)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	seen := make(map[int32]bool, len(targets))
	var ids []int32
	for _, u := range targets {
		id, ok := g.intern(u)
		if ok && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

// intern returns u's id, adding u while there is room; the caller holds mu.
func (g *linkGraph) intern(u *url.URL) (int32, bool) {
	key := dedupeKey(u)
	if id, ok := g.ids[key]; ok {
		// Of the forms of one URL (http or https, www or not), the smallest is kept, so
		// the one reported does not depend on the order pages were fetched in.
		if s := u.String(); s < g.urls[id] {
			g.bytes += len(s) - len(g.urls[id])
			g.urls[id] = s
		}
		return id, true
	}
	s := u.String()
	if g.full(len(s) + len(key)) {
		g.dropped++
		return 0, false
	}
	id := int32(len(g.urls))
	g.ids[key] = id
	g.urls = append(g.urls, s)
	g.keys = append(g.keys, key)
	g.bytes += len(s) + len(key)
	return id, true
}

// id is the id of the URL with dedupe key key, if the graph holds it.
func (g *linkGraph) id(key string) (int32, bool) {
	id, ok := g.ids[key]
	return id, ok
}

// urlKey is the dedupe key of a URL the crawl recorded; "" for one that does not parse.
func urlKey(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	if n := normalizeURL(u); n != nil {
		return dedupeKey(n)
	}
	return ""
}

// linkOutcome is what a linked URL answered: a fetched page's answer or a link check's.
type linkOutcome struct {
	status  int
	err     string
	blocked bool
}

// broken reports an answer of 4xx or 5xx, or no answer at all. A redirect robots.txt
// disallows was not followed, so nothing is known of it.
func (o linkOutcome) broken() bool {
	return o.status >= 400 || (o.status == 0 && o.err != "" && !o.blocked)
}

func outcomeOf(v *visit) linkOutcome {
	return linkOutcome{status: v.page.Status, err: v.page.Error, blocked: v.blocked}
}

// linkCheck is the link analysis after the pages were fetched.
type linkCheck struct {
	c        *Crawler
	t        http.RoundTripper
	front    *frontier // the page crawl's: its site and robots rules
	plan     fetchPlan
	budget   int // link checks allowed
	visits   []*visit
	keys     [][2]string        // per visit, the dedupe keys of its URL and final URL
	pageOf   map[string]int     // dedupe key of a page's URL, else of its final URL → visit
	sources  map[int32][]string // linked URL → final URLs of the pages linking to it
	outcomes map[int32]linkOutcome
}

// checkLinks sets every page's Inlinks and lists the broken links in res. Linked URLs no
// page was fetched for are checked with at most budget requests (status only, no body) in
// URL order; what the budget or the time left does not cover is reported as unchecked. A
// negative budget means no checks were asked for: nothing is checked or reported unchecked.
// Links to files (by extension: images, PDFs, ...) are only judged when they were fetched
// as pages, like discovery, which skips them too.
func (c *Crawler) checkLinks(ctx context.Context, t http.RoundTripper, front *frontier, plan fetchPlan, budget int, visits []*visit, res *Result) error {
	g := plan.graph
	lc := &linkCheck{c: c, t: t, front: front, plan: plan, budget: budget, visits: visits,
		pageOf: make(map[string]int), sources: make(map[int32][]string), outcomes: make(map[int32]linkOutcome)}
	lc.indexPages()
	lc.collectSources(g)
	for i := range visits {
		res.Pages[i].Inlinks = lc.inlinks(g, i)
	}
	if err := lc.checkUnfetched(ctx, g, res); err != nil {
		return err
	}
	res.BrokenLinks = lc.broken(g)
	if g.dropped > 0 {
		res.warn("the site links to more than %d distinct URLs; %d link(s) to further URLs were neither checked nor counted", g.limit, g.dropped)
	}
	return nil
}

// indexPages maps each fetched URL, and then each final URL not fetched itself, to its visit.
func (lc *linkCheck) indexPages() {
	lc.keys = make([][2]string, len(lc.visits))
	for i, v := range lc.visits {
		lc.keys[i] = [2]string{urlKey(v.page.URL), urlKey(v.page.FinalURL)}
	}
	for _, which := range []int{0, 1} {
		for i, v := range lc.visits {
			k := lc.keys[i][which]
			if k == "" || (which == 1 && v.page.OffSite) {
				continue
			}
			if _, dup := lc.pageOf[k]; !dup {
				lc.pageOf[k] = i
			}
		}
	}
}

// pageName is the URL a page is known by as a link source: where its content was read.
func pageName(p Page) string {
	return cmp.Or(p.FinalURL, p.URL)
}

// collectSources records, per linked URL, the pages linking to it other than itself.
func (lc *linkCheck) collectSources(g *linkGraph) {
	for i, v := range lc.visits {
		own := lc.keys[i]
		for _, id := range v.links {
			if k := g.keys[id]; k != own[0] && k != own[1] {
				lc.sources[id] = append(lc.sources[id], pageName(lc.visits[i].page))
			}
		}
	}
	for id, s := range lc.sources {
		slices.Sort(s)
		lc.sources[id] = slices.Compact(s)
	}
}

// inlinks counts the distinct pages, other than visit i's, linking to its URL or final URL.
func (lc *linkCheck) inlinks(g *linkGraph, i int) int {
	p := lc.visits[i].page
	from := make(map[string]bool)
	for _, k := range lc.keys[i] {
		if id, ok := g.id(k); ok && k != "" {
			for _, s := range lc.sources[id] {
				from[s] = true
			}
		}
	}
	delete(from, pageName(p))
	return len(from)
}

// checkUnfetched gives every linked URL its outcome: a fetched page's answer, or a link
// check's within the budget and the time left.
func (lc *linkCheck) checkUnfetched(ctx context.Context, g *linkGraph, res *Result) error {
	var pending []int32
	for id := range lc.sources {
		if i, ok := lc.pageOf[g.keys[id]]; ok {
			lc.outcomes[id] = outcomeOf(lc.visits[i])
		} else if u, err := url.Parse(g.urls[id]); err == nil && !isAsset(u) {
			pending = append(pending, id)
		}
	}
	if len(pending) == 0 || lc.budget < 0 {
		return nil
	}
	slices.SortFunc(pending, func(a, b int32) int { return cmp.Compare(g.urls[a], g.urls[b]) })
	if ctx.Err() != nil {
		// The crawl's time is up: the pages are kept, the unchecked links are a warning.
		res.warn("%d linked URL(s) not checked for broken links: the crawl's time ran out", len(pending))
		return nil //nolint:nilerr // a cut-off link check is not a failed crawl
	}
	checks := newFrontier(lc.front.site, lc.front.robots, max(lc.budget, 0))
	unchecked := 0
	for _, id := range pending {
		u, err := url.Parse(g.urls[id])
		if err != nil {
			continue // g.urls hold URLs net/url wrote
		}
		// Past the budget add still drops disallowed URLs silently, and refuses the rest.
		if !checks.add(u) {
			unchecked++
		}
	}
	plan := lc.plan
	plan.discover, plan.graph, plan.checkOnly = false, nil, true
	visits, dropped, err := lc.c.fetchAll(ctx, lc.t, checks, plan)
	if err != nil {
		return err
	}
	res.LinksChecked = len(visits)
	for _, v := range visits {
		if id, ok := g.id(urlKey(v.page.URL)); ok {
			lc.outcomes[id] = outcomeOf(v)
		}
	}
	if unchecked > 0 {
		res.warn("%d linked URL(s) not checked for broken links: the page limit also bounds link checks (%d left after the pages)", unchecked, max(lc.budget, 0))
	}
	if left := dropped + checks.left(); left > 0 {
		res.warn("%d linked URL(s) not checked for broken links: the crawl's time ran out", left)
	}
	return nil
}

// broken lists the linked URLs whose outcome is broken, by URL.
func (lc *linkCheck) broken(g *linkGraph) []BrokenLink {
	out := []BrokenLink{}
	for id, o := range lc.outcomes {
		if !o.broken() {
			continue
		}
		from := lc.sources[id]
		out = append(out, BrokenLink{URL: g.urls[id], Status: o.status, Error: o.err,
			LinkedFrom: slices.Clone(from[:min(len(from), maxLinkSources)]), LinkedFromTotal: len(from)})
	}
	slices.SortFunc(out, func(a, b BrokenLink) int { return cmp.Compare(a.URL, b.URL) })
	return out
}
