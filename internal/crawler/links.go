package crawler

import (
	"cmp"
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
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
	// maxExternal bounds the links to other sites checked with Request.CheckExternal.
	maxExternal = 100
	// maxLinkExamples bounds the URLs named per page in Outlinks.
	maxLinkExamples = 3
)

// fileUse records how pages load a URL: as a file (image, script, stylesheet), an image.
type fileUse uint8

const (
	fileLinked fileUse = 1 << iota
	fileImage
)

// linkKind is the element a link was read from.
type linkKind uint8

const (
	linkNone      linkKind = iota
	linkAnchor             // <a href>, <area href>
	linkFrame              // <iframe src>
	linkPager              // <link rel=next|prev>
	linkCanonical          // <link rel=canonical>
	linkAlternate          // <link rel=alternate hreflang>
	linkRefresh            // <meta http-equiv=refresh>
	linkImage              // <img src>, <link rel=icon>
	linkScript             // <script src>
	linkStyle              // <link rel=stylesheet>
)

// followed reports the kinds that lead to pages, followed by discovery.
func (k linkKind) followed() bool { return k >= linkAnchor && k <= linkRefresh }

// navigational reports the kinds counted as links between pages (inlinks, broken links,
// depth): canonicals and hreflang alternates are followed to find pages, but judged by
// their own checks.
func (k linkKind) navigational() bool {
	return k != linkCanonical && k != linkAlternate && k != linkNone
}

// file reports the kinds that load a file into the page.
func (k linkKind) file() bool { return k >= linkImage }

// linkRelKind is the kind of a <link> element by its rel, linkNone for the others.
func linkRelKind(rel, hreflang string) linkKind {
	switch {
	case hasToken(rel, "canonical"):
		return linkCanonical
	case hasToken(rel, "next"), hasToken(rel, "prev"):
		return linkPager
	case hasToken(rel, "alternate") && strings.TrimSpace(hreflang) != "":
		return linkAlternate
	case hasToken(rel, "stylesheet"):
		return linkStyle
	case hasToken(rel, "icon"), hasToken(rel, "apple-touch-icon"):
		return linkImage // a favicon: checked as an image the page loads
	}
	return linkNone
}

// refreshTarget is the URL of a meta refresh content ("5; url=/next"), "" when none.
func refreshTarget(content string) string {
	_, after, ok := strings.Cut(content, ";")
	if !ok {
		return ""
	}
	after = strings.TrimSpace(after)
	if len(after) < 4 || !strings.EqualFold(after[:3], "url") {
		return ""
	}
	after = strings.TrimSpace(after[3:])
	after, ok = strings.CutPrefix(after, "=")
	if !ok {
		return ""
	}
	return strings.Trim(strings.TrimSpace(after), `'"`)
}

// link is one link read from a page: its raw URL, element and rel=nofollow.
type link struct {
	href     string
	kind     linkKind
	nofollow bool
}

// resolvedLink is a link resolved against its page's base URL; u has no fragment, which
// is kept as written in fragment (fragments.go).
type resolvedLink struct {
	u        *url.URL
	kind     linkKind
	nofollow bool
	fragment string
}

// resolveLinks resolves a page's links, dropping those that are not http(s) URLs.
func resolveLinks(base *url.URL, links []link) []resolvedLink {
	out := make([]resolvedLink, 0, len(links))
	for _, l := range links {
		if u := resolveHTTP(base, l.href); u != nil {
			out = append(out, resolvedLink{u: u, kind: l.kind, nofollow: l.nofollow, fragment: linkFragment(l.href)})
		}
	}
	return out
}

// outlinkStats sums up a page's links to pages (anchors, frames, rel=next/prev, meta
// refresh): internal and external, internal nofollow links and http:// links from an https
// page. Files a page loads (images, scripts) are no way out of it.
func outlinkStats(links []resolvedLink, site string, https bool, read, total int) *Outlinks {
	o := &Outlinks{Total: total, Read: read}
	for _, l := range links {
		if !l.kind.followed() || !l.kind.navigational() {
			continue
		}
		internal := siteKey(l.u) == site
		if internal {
			o.Internal++
		} else {
			o.External++
		}
		if internal && l.nofollow {
			o.Nofollow++
			if len(o.NofollowURLs) < maxLinkExamples {
				o.NofollowURLs = append(o.NofollowURLs, l.u.String())
			}
		}
		if https && l.u.Scheme == "http" {
			o.Insecure++
			if len(o.InsecureURLs) < maxLinkExamples {
				o.InsecureURLs = append(o.InsecureURLs, l.u.String())
			}
		}
	}
	return o
}

// linkGraph records which URLs of the site each crawled page links to. Every distinct URL
// is stored once and pages hold ids, so memory grows with the distinct URLs (bounded by
// limit) and the links of each page (bounded by maxLinks), not with their product.
type linkGraph struct {
	mu      sync.Mutex
	ids     map[string]int32 // dedupeKey → id
	urls    []string         // id → the smallest form of the URL linked
	keys    []string         // id → dedupeKey
	files   []fileUse        // id → how pages load it, if as a file
	limit   int              // distinct URLs at most
	bytes   int              // text held: URLs and keys
	dropped int              // links not recorded, once the graph was full
	// External links, when asked: each distinct URL (at most maxExternal) and the pages
	// linking to it; extDropped counts the distinct URLs beyond.
	extIDs     map[string]int
	extURLs    []string
	extSources [][]string
	extTotal   []int
	extDropped int
}

func newLinkGraph(limit int) *linkGraph {
	return &linkGraph{ids: make(map[string]int32), limit: limit, extIDs: make(map[string]int)}
}

// full reports whether the graph has room for no URL, or not for one of size n.
func (g *linkGraph) full(n int) bool {
	return len(g.urls) >= g.limit || g.bytes+n > maxLinkBytes
}

// addPage records the page's links that lead into site and returns their ids, each once;
// with external, links to other sites are recorded apart, with source as their linking
// page. Canonicals and hreflang alternates are left out: they are no links between pages.
func (g *linkGraph) addPage(source, site string, links []resolvedLink, external bool) []int32 {
	g.mu.Lock()
	defer g.mu.Unlock()
	seen := make(map[int32]bool, len(links))
	var ids []int32
	for _, l := range links {
		if !l.kind.navigational() {
			continue
		}
		if siteKey(l.u) != site {
			if external {
				g.addExternal(source, l.u.String())
			}
			continue
		}
		id, ok := g.intern(l.u)
		if ok && l.kind.file() {
			g.files[id] |= fileLinked
			if l.kind == linkImage {
				g.files[id] |= fileImage
			}
		}
		if ok && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

// addExternal records that source links to the external URL u; the caller holds mu.
func (g *linkGraph) addExternal(source, u string) {
	i, ok := g.extIDs[u]
	if !ok {
		if len(g.extURLs) >= maxExternal {
			g.extDropped++
			return
		}
		i = len(g.extURLs)
		g.extIDs[u] = i
		g.extURLs = append(g.extURLs, u)
		g.extSources = append(g.extSources, nil)
		g.extTotal = append(g.extTotal, 0)
	}
	if src := g.extSources[i]; len(src) == 0 || src[len(src)-1] != source {
		g.extTotal[i]++
		if len(src) < maxLinkSources {
			g.extSources[i] = append(src, source)
		}
	}
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
	g.files = append(g.files, 0)
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
	// final is where redirects ended, when the URL redirected.
	final       string
	contentType string
	length      int64
}

// broken reports an answer of 4xx or 5xx, or no answer at all. A redirect robots.txt
// disallows was not followed, so nothing is known of it.
func (o linkOutcome) broken() bool {
	return o.status >= 400 || (o.status == 0 && o.err != "" && !o.blocked)
}

func outcomeOf(v *visit) linkOutcome {
	o := linkOutcome{status: v.page.Status, err: v.page.Error, blocked: v.blocked, contentType: v.page.ContentType, length: v.length}
	if v.page.Redirected || len(v.page.RedirectChain) > 0 {
		o.final = v.page.FinalURL
	}
	return o
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
	// resources are the outcomes of the linked files (by extension or element).
	resources map[int32]linkOutcome
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
		pageOf: make(map[string]int), sources: make(map[int32][]string), outcomes: make(map[int32]linkOutcome),
		resources: make(map[int32]linkOutcome)}
	lc.indexPages()
	lc.collectSources(g)
	for i := range visits {
		res.Pages[i].Inlinks = lc.inlinks(g, i)
	}
	lc.placePages(g, res)
	if err := lc.checkUnfetched(ctx, g, res); err != nil {
		return err
	}
	res.BrokenLinks = lc.broken(g)
	lc.brokenFragments(g, res)
	res.Resources = lc.fileResources(g)
	res.RedirectLinks = lc.redirects(g)
	for i, b := range res.Blocked {
		if id, ok := g.id(urlKey(b.URL)); ok {
			res.Blocked[i].LinkedFrom, res.Blocked[i].LinkedFromTotal = namedSources(lc.sources[id])
		}
		if res.Blocked[i].LinkedFrom == nil {
			res.Blocked[i].LinkedFrom = []string{}
		}
	}
	if g.dropped > 0 {
		res.warn("the site links to more than %d distinct URLs; %d link(s) to further URLs were neither checked nor counted", g.limit, g.dropped)
		res.limit(LimitLinkGraph)
	}
	return nil
}

// isFile reports a linked URL checked as a file: by its extension or the element linking it.
func (lc *linkCheck) isFile(g *linkGraph, id int32) bool {
	if g.files[id] != 0 {
		return true
	}
	u, err := url.Parse(g.urls[id])
	return err == nil && isAsset(u)
}

// placePages sets each page's click depth (breadth first over the links between crawled
// pages, from the home page), its source (the sitemap, links, or both) and whether a
// sitemap lists its URL as asked for.
func (lc *linkCheck) placePages(g *linkGraph, res *Result) {
	depth := make([]int, len(lc.visits))
	for i := range depth {
		depth[i] = -1
	}
	home, ok := lc.pageOf[lc.front.site+"/"]
	var queue []int
	if ok {
		depth[home] = 0
		queue = append(queue, home)
	}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		for _, id := range lc.visits[i].links {
			if j, ok := lc.pageOf[g.keys[id]]; ok && depth[j] < 0 {
				depth[j] = depth[i] + 1
				queue = append(queue, j)
			}
		}
	}
	for i := range lc.visits {
		p := &res.Pages[i]
		p.Depth = depth[i]
		p.InSitemap = lc.front.listed(lc.keys[i][0])
		listed := p.InSitemap || (lc.keys[i][1] != "" && lc.front.listed(lc.keys[i][1]))
		linked := depth[i] >= 0 || p.Inlinks > 0
		switch {
		case listed && linked:
			p.Source = SourceBoth
		case listed:
			p.Source = SourceSitemap
		default:
			p.Source = SourceLinks
		}
	}
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

// namedSources is what a finding says of the pages linking to it (from, sorted and
// distinct): the first maxLinkSources of them, and how many there are.
func namedSources(from []string) ([]string, int) {
	return slices.Clone(from[:min(len(from), maxLinkSources)]), len(from)
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
		} else {
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
			if lc.isFile(g, id) {
				lc.resources[id] = outcomeOf(v)
			} else {
				lc.outcomes[id] = outcomeOf(v)
			}
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

// fileResources lists the checked files, by URL.
func (lc *linkCheck) fileResources(g *linkGraph) []Resource {
	out := []Resource{}
	for id, o := range lc.resources {
		r := Resource{URL: g.urls[id], Status: o.status, Error: o.err, ContentType: o.contentType,
			ContentLength: o.length, Image: g.files[id]&fileImage != 0 || strings.HasPrefix(o.contentType, "image/")}
		r.LinkedFrom, r.LinkedFromTotal = namedSources(lc.sources[id])
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Resource) int { return cmp.Compare(a.URL, b.URL) })
	return out
}

// redirects lists the linked URLs of the site that answered with a redirect, by URL.
func (lc *linkCheck) redirects(g *linkGraph) []RedirectLink {
	out := []RedirectLink{}
	for id, o := range lc.outcomes {
		if o.final == "" || o.broken() || o.final == g.urls[id] {
			continue
		}
		r := RedirectLink{URL: g.urls[id], Target: o.final}
		r.LinkedFrom, r.LinkedFromTotal = namedSources(lc.sources[id])
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b RedirectLink) int { return cmp.Compare(a.URL, b.URL) })
	return out
}

// broken lists the linked URLs whose outcome is broken, by URL.
func (lc *linkCheck) broken(g *linkGraph) []BrokenLink {
	out := []BrokenLink{}
	for id, o := range lc.outcomes {
		if !o.broken() {
			continue
		}
		b := BrokenLink{URL: g.urls[id], Status: o.status, Error: o.err, InSitemap: lc.front.listed(g.keys[id])}
		b.LinkedFrom, b.LinkedFromTotal = namedSources(lc.sources[id])
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b BrokenLink) int { return cmp.Compare(a.URL, b.URL) })
	return out
}
