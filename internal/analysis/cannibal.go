package analysis

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/numfmt"
	"github.com/contentapi/contentapi/internal/stem"
)

// PageSignal is what the audit knows about one crawled page.
type PageSignal struct {
	URL       string
	Title     string
	H1        string
	Status    int  // HTTP status
	Noindex   bool // robots meta or X-Robots-Tag noindex
	WordCount int  // main-content words; 0 when unknown
}

// CannibalGroup is two or more of a site's URLs that compete for the same keyword.
type CannibalGroup struct {
	// Keyword is a readable phrase: the ranking keyword, or the pages' shortest title.
	Keyword string `json:"keyword"`
	// URLs are the competing URLs, sorted.
	URLs []string `json:"urls"`
}

// Title-and-H1 matching thresholds of FindCannibalization.
const (
	cannibalJaccard   = 0.75
	cannibalMinShared = 2
)

// titleSeparators split a title into segments; the site name is usually the last one.
var titleSeparators = []string{" | ", " - ", " – ", " — ", " · ", " • ", " :: ", " » "}

// FindCannibalization finds URLs of one site that target the same keyword. Only indexable
// pages count (status 200–299 and not noindex).
//
// Title/H1 rule: a page's target phrase is its title without the site name, plus its H1.
// The site name is a last title segment (split at " | ", " - ", " – ", " — ", " · ", " • ",
// " :: ", " » ") that recurs on two or more pages, or, on a site with none, a recurring
// first segment; a title that is only the site name counts as empty. Two pages compete when their
// stemmed titles are equal, or when the stems of title ∪ H1 have a Jaccard index ≥ 0.75 with
// at least 2 stems in common. Competing pages are grouped single-link.
//
// Ranking rule: two or more distinct URLs ranking for the same keyword (any position ≥ 1)
// compete for it; ranking URLs of pages known to be non-indexable are ignored.
//
// A ranking group and a title group with the same URLs are reported once, under the ranking
// keyword (the highest-volume one when several share the URLs). Groups are sorted by
// keyword, then URLs.
func FindCannibalization(pages []PageSignal, rankings []keywords.Ranking, lang string) []CannibalGroup {
	eligible, excluded := indexablePages(pages)
	titles := make([]string, len(eligible))
	for i, p := range eligible {
		titles[i] = p.Title
	}
	strip := newTitleStripper(titles)

	type target struct{ title, union []string }
	targets := make([]target, len(eligible))
	phrases := make([]string, len(eligible))
	for i, p := range eligible {
		phrase := strip.strip(p.Title)
		t := stem.Set(phrase, lang)
		h := stem.Set(p.H1, lang)
		u := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(t), h...))))
		targets[i] = target{t, u}
		if phrase == "" {
			phrase = p.H1
		}
		phrases[i] = phrase
	}
	uf := newUnionFind(len(eligible))
	for a := range eligible {
		for b := a + 1; b < len(eligible); b++ {
			ta, tb := targets[a], targets[b]
			if len(ta.title) > 0 && slices.Equal(ta.title, tb.title) {
				uf.union(a, b)
				continue
			}
			if j, shared := jaccard(ta.union, tb.union); j >= cannibalJaccard && shared >= cannibalMinShared {
				uf.union(a, b)
			}
		}
	}
	byKey := make(map[string]CannibalGroup)
	groups := make(map[int][]int)
	for i := range eligible {
		r := uf.find(i)
		groups[r] = append(groups[r], i)
	}
	for _, members := range groups {
		if len(members) < 2 {
			continue
		}
		slices.Sort(members)
		var urls []string
		best := ""
		for _, m := range members {
			urls = append(urls, eligible[m].URL)
			if p := readablePhrase(phrases[m]); p != "" && (best == "" || phraseBefore(p, best)) {
				best = p
			}
		}
		if best == "" {
			continue // nothing readable to name the group by
		}
		g := CannibalGroup{Keyword: best, URLs: urls}
		slices.Sort(g.URLs)
		byKey[urlKey(g.URLs)] = g
	}

	// Ranking data: several URLs ranking for one keyword.
	pageURL := make(map[string]string, len(eligible))
	for _, p := range eligible {
		pageURL[NormalizeURL(p.URL)] = p.URL
	}
	type rankGroup struct {
		keyword string
		volume  int64
		urls    map[string]string // normalised → shown
	}
	byKeyword := make(map[string]*rankGroup)
	for _, r := range rankings {
		kw := readablePhrase(r.Keyword.Keyword)
		n := NormalizeURL(r.URL)
		if r.Position < 1 || kw == "" || n == "" || excluded[n] {
			continue
		}
		g := byKeyword[kw]
		if g == nil {
			g = &rankGroup{keyword: kw, volume: -1, urls: make(map[string]string)}
			byKeyword[kw] = g
		}
		g.volume = max(g.volume, volumeOf(r.Keyword))
		shown := r.URL
		if u, ok := pageURL[n]; ok {
			shown = u
		}
		if prev, ok := g.urls[n]; !ok || shown < prev {
			g.urls[n] = shown
		}
	}
	var ranked []*rankGroup
	for _, g := range byKeyword {
		if len(g.urls) >= 2 {
			ranked = append(ranked, g)
		}
	}
	slices.SortFunc(ranked, func(a, b *rankGroup) int {
		if c := cmp.Compare(b.volume, a.volume); c != 0 {
			return c
		}
		return strings.Compare(a.keyword, b.keyword)
	})
	fromRankings := make(map[string]bool)
	for _, g := range ranked {
		var urls []string
		for _, u := range g.urls {
			urls = append(urls, u)
		}
		slices.Sort(urls)
		key := urlKey(urls)
		if fromRankings[key] {
			continue // a higher-volume keyword already names these URLs
		}
		fromRankings[key] = true
		byKey[key] = CannibalGroup{Keyword: g.keyword, URLs: urls}
	}

	out := make([]CannibalGroup, 0, len(byKey))
	for _, g := range byKey {
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b CannibalGroup) int {
		if c := strings.Compare(a.Keyword, b.Keyword); c != 0 {
			return c
		}
		return strings.Compare(strings.Join(a.URLs, "\n"), strings.Join(b.URLs, "\n"))
	})
	return out
}

// indexablePages returns the pages that can rank (status 2xx, not noindex, with a URL), one
// per normalised URL, sorted by URL; and the normalised URLs of pages that cannot.
func indexablePages(pages []PageSignal) ([]PageSignal, map[string]bool) {
	excluded := make(map[string]bool)
	seen := make(map[string]bool)
	var out []PageSignal
	sorted := slices.Clone(pages)
	slices.SortStableFunc(sorted, func(a, b PageSignal) int { return strings.Compare(a.URL, b.URL) })
	for _, p := range sorted {
		n := NormalizeURL(p.URL)
		if n == "" {
			continue
		}
		if p.Status < 200 || p.Status > 299 || p.Noindex {
			excluded[n] = true
			continue
		}
		if seen[n] {
			continue
		}
		seen[n] = true
		out = append(out, p)
	}
	for n := range seen {
		delete(excluded, n) // an indexable copy of the URL wins
	}
	return out, excluded
}

// urlKey identifies a set of URLs by their normalised forms.
func urlKey(urls []string) string {
	n := make([]string, len(urls))
	for i, u := range urls {
		n[i] = NormalizeURL(u)
	}
	slices.Sort(n)
	return strings.Join(slices.Compact(n), "\n")
}

// readablePhrase lower-cases a title or keyword, collapses spaces and trims punctuation at
// the ends ("Cold Brew Coffee: A Guide!" → "cold brew coffee: a guide").
func readablePhrase(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	return strings.TrimFunc(s, func(r rune) bool { return !stem.IsWordRune(r) })
}

// phraseBefore prefers the phrase with fewer words, then the shorter, then alphabetical.
func phraseBefore(a, b string) bool {
	if wa, wb := len(strings.Fields(a)), len(strings.Fields(b)); wa != wb {
		return wa < wb
	}
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// titleStripper removes site names from titles.
type titleStripper struct {
	names   map[string]bool
	leading bool // the site puts its name first ("Brand | Page")
}

// newTitleStripper learns the site names: last title segments that recur on two or more
// titles; when there are none, first segments that recur.
func newTitleStripper(titles []string) titleStripper {
	last := make(map[string]int)
	first := make(map[string]int)
	for _, t := range titles {
		seg := titleSegments(t)
		if len(seg) < 2 {
			continue
		}
		last[segmentKey(seg[len(seg)-1])]++
		first[segmentKey(seg[0])]++
	}
	s := titleStripper{names: make(map[string]bool)}
	for k, n := range last {
		if n >= 2 {
			s.names[k] = true
		}
	}
	if len(s.names) == 0 {
		for k, n := range first {
			if n >= 2 {
				s.names[k] = true
				s.leading = true
			}
		}
	}
	return s
}

// strip returns the title without its site name; a title that is only the site name is "".
func (s titleStripper) strip(title string) string {
	seg := titleSegments(title)
	if len(seg) == 0 {
		return ""
	}
	if len(seg) == 1 {
		if s.names[segmentKey(seg[0])] {
			return ""
		}
		return seg[0]
	}
	switch {
	case !s.leading && s.names[segmentKey(seg[len(seg)-1])]:
		seg = seg[:len(seg)-1]
	case s.leading && s.names[segmentKey(seg[0])]:
		seg = seg[1:]
	}
	return strings.Join(seg, " - ")
}

// titleSegments splits a title at the site-name separators.
func titleSegments(title string) []string {
	t := strings.Join(strings.Fields(title), " ")
	for _, sep := range titleSeparators[1:] {
		t = strings.ReplaceAll(t, sep, titleSeparators[0])
	}
	var out []string
	for _, p := range strings.Split(t, titleSeparators[0]) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func segmentKey(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// urlFacts is what CannibalAdvice knows about one URL of a group.
type urlFacts struct {
	url, path string
	pos       int    // best position, 0 when not ranking
	posKW     string // the keyword of pos
	forGroup  bool   // pos is for the group's keyword
	words     int
}

// CannibalAdvice chooses the URL to keep in a cannibalization group and says what to do with
// the others. The URL kept is the best-ranking one for the group's keyword; when none ranks
// for it, the best-ranking for any keyword; when none ranks, the one with most words; ties go
// to the shorter path. The advice names paths, positions and word counts, e.g. "Keep
// /guides/cold-brew (ranks #4 for “cold brew”, 1,850 words); merge /blog/cold-brew-tips (640
// words) into it and 301-redirect /blog/cold-brew-tips to /guides/cold-brew."
func CannibalAdvice(g CannibalGroup, pages []PageSignal, rankings []keywords.Ranking) (keep, advice string) {
	if len(g.URLs) == 0 {
		return "", ""
	}
	words := make(map[string]int)
	for _, p := range pages {
		n := NormalizeURL(p.URL)
		words[n] = max(words[n], p.WordCount)
	}
	groupKW := readablePhrase(g.Keyword)
	facts := make([]urlFacts, 0, len(g.URLs))
	seen := make(map[string]bool)
	for _, u := range g.URLs {
		n := NormalizeURL(u)
		if seen[n] {
			continue
		}
		seen[n] = true
		f := urlFacts{url: u, path: RelativePath(u), words: words[n]}
		for _, r := range rankings {
			if r.Position < 1 || NormalizeURL(r.URL) != n {
				continue
			}
			kw := readablePhrase(r.Keyword.Keyword)
			forGroup := kw == groupKW
			better := f.pos == 0 || (forGroup && !f.forGroup) ||
				(forGroup == f.forGroup && (r.Position < f.pos || r.Position == f.pos && kw < f.posKW))
			if better {
				f.pos, f.posKW, f.forGroup = r.Position, kw, forGroup
			}
		}
		facts = append(facts, f)
	}
	rank := func(f urlFacts) int {
		switch {
		case f.pos > 0 && f.forGroup:
			return 0
		case f.pos > 0:
			return 1
		default:
			return 2
		}
	}
	slices.SortFunc(facts, func(a, b urlFacts) int {
		if c := cmp.Compare(rank(a), rank(b)); c != 0 {
			return c
		}
		if a.pos > 0 && b.pos > 0 {
			if c := cmp.Compare(a.pos, b.pos); c != 0 {
				return c
			}
		}
		if c := cmp.Compare(b.words, a.words); c != 0 {
			return c
		}
		if c := cmp.Compare(len(a.path), len(b.path)); c != 0 {
			return c
		}
		return strings.Compare(a.url, b.url)
	})
	k := facts[0]
	if len(facts) == 1 {
		return k.url, ""
	}
	others := make([]string, len(facts)-1)
	for i, f := range facts[1:] {
		others[i] = f.path + f.details(groupKW, false)
	}
	target := facts[1].path
	if len(facts) > 2 {
		target = "them"
	}
	advice = fmt.Sprintf("Keep %s%s; merge %s into it and 301-redirect %s to %s.",
		k.path, k.details(groupKW, true), JoinList(others), target, k.path)
	return k.url, advice
}

// details is the parenthesised ranking and length of a URL, or "" when unknown.
func (f urlFacts) details(groupKW string, long bool) string {
	var parts []string
	if f.pos > 0 {
		if long || f.posKW != groupKW {
			parts = append(parts, fmt.Sprintf("ranks #%d for “%s”", f.pos, f.posKW))
		} else {
			parts = append(parts, fmt.Sprintf("ranks #%d", f.pos))
		}
	}
	if f.words > 0 {
		parts = append(parts, numfmt.Count(int64(f.words))+" words")
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// JoinList joins items as "a", "a and b" or "a, b and c".
func JoinList(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
