package analysis

import (
	"cmp"
	"math"
	"net/url"
	"slices"
	"strings"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/stem"
)

// lexicalJaccard is the Jaccard index of reduced stem sets at which two keywords without
// SERP URLs join: 3 shared stems of 4 or 5 do, 2 of 4 ("cold brew maker", "cold brew
// ratio") do not.
const lexicalJaccard = 0.6

// DefaultMinSharedURLs is how many top-10 result URLs two keywords must share to be
// clustered together when ClusterOptions.MinSharedURLs is not set.
const DefaultMinSharedURLs = 3

// ClusterOptions tunes ClusterKeywords.
type ClusterOptions struct {
	// MinSharedURLs is the SERP overlap that joins two keywords; 0 means 3.
	MinSharedURLs int
	// Language is the keywords' language code, for stemming; "" means English.
	Language string
}

// Cluster is a group of keywords one piece of content can target.
type Cluster struct {
	// Name is the cluster's strongest keyword (the first of Keywords).
	Name string
	// Keywords are the cluster's keywords, highest search volume first.
	Keywords []keywords.Keyword
	// TotalVolume is the sum of the known search volumes.
	TotalVolume int64
	// AvgDifficulty is the mean of the known difficulties, rounded to one decimal; nil when
	// no keyword has one.
	AvgDifficulty *float64
}

// ClusterKeywords groups keywords into topics. Every input keyword lands in exactly one
// cluster, so cluster totals add up to the input's.
//
//   - SERP overlap: two keywords that both carry SERP URLs join when their top results
//     share at least MinSharedURLs URLs (default 3), compared with NormalizeURL. Joining is
//     single-link (union-find): A~B and B~C put A, B and C together.
//   - Lexical similarity, for keywords without SERP URLs: each keyword is reduced to its
//     stem set without stopwords, numbers and intent modifiers (best, how, buy, guide, …);
//     if that leaves nothing, the full stem set is used. Two keywords join when their sets
//     are equal, when their Jaccard index is ≥ 0.6 with at least 2 stems in common ("how to
//     make cold brew coffee" and "make cold brew coffee at home"; not "cold brew maker" and
//     "cold brew ratio"), or when the smaller set has at least 2 stems and is contained in
//     the larger ("cold brew" and "easy cold brew concentrate recipe"; "coffee" alone joins
//     nothing). A head term thus gathers its modifiers, single-link.
//   - A lexical group (keywords without SERP URLs, joined among themselves) is then attached
//     to the SERP cluster of its best lexical match among keywords with SERP URLs (highest
//     Jaccard, then volume, then alphabetical), or stays a cluster of its own. Lexical
//     evidence never merges two SERP clusters.
//
// Keywords are sorted by search volume (unknown last), then relevance, then alphabetically;
// the first is the cluster's Name. Clusters are sorted by total volume, then size, then
// name. The output does not depend on the input's order.
func ClusterKeywords(kws []keywords.Keyword, opt ClusterOptions) []Cluster {
	if len(kws) == 0 {
		return nil
	}
	minShared := opt.MinSharedURLs
	if minShared <= 0 {
		minShared = DefaultMinSharedURLs
	}
	n := len(kws)
	urls := make([][]string, n)
	for i, k := range kws {
		urls[i] = urlSet(k.SERPURLs)
	}
	sets := lexicalSets(kws, opt.Language)
	uf := newUnionFind(n)

	// SERP overlap, counted through an index from URL to keywords.
	byURL := make(map[string][]int)
	for i, us := range urls {
		for _, u := range us {
			byURL[u] = append(byURL[u], i)
		}
	}
	shared := make(map[[2]int]int)
	for _, idx := range byURL {
		for a := 0; a < len(idx); a++ {
			for b := a + 1; b < len(idx); b++ {
				shared[[2]int{idx[a], idx[b]}]++
			}
		}
	}
	for pair, c := range shared {
		if c >= minShared {
			uf.union(pair[0], pair[1])
		}
	}

	// Lexical groups among keywords without SERP URLs.
	var lex, serp []int
	for i := range kws {
		if len(urls[i]) == 0 {
			lex = append(lex, i)
		} else {
			serp = append(serp, i)
		}
	}
	for a := 0; a < len(lex); a++ {
		for b := a + 1; b < len(lex); b++ {
			if ok, _ := sets.match(lex[a], lex[b]); ok {
				uf.union(lex[a], lex[b])
			}
		}
	}

	// Attach each lexical group to its best SERP match.
	if len(serp) > 0 {
		groups := make(map[int][]int)
		for _, i := range lex {
			r := uf.find(i)
			groups[r] = append(groups[r], i)
		}
		attach := make(map[int]int)
		for r, members := range groups {
			best, bestJ := -1, 0.0
			for _, m := range members {
				for _, s := range serp {
					ok, j := sets.match(m, s)
					if !ok {
						continue
					}
					if best < 0 || j > bestJ || (j == bestJ && keywordBefore(kws[s], kws[best], urls[s], urls[best])) {
						best, bestJ = s, j
					}
				}
			}
			if best >= 0 {
				attach[r] = best
			}
		}
		for r, s := range attach {
			uf.union(r, s)
		}
	}

	members := make(map[int][]keywords.Keyword)
	for i, k := range kws {
		r := uf.find(i)
		members[r] = append(members[r], k)
	}
	out := make([]Cluster, 0, len(members))
	for _, ks := range members {
		out = append(out, newCluster(ks))
	}
	slices.SortFunc(out, func(a, b Cluster) int {
		if c := cmp.Compare(b.TotalVolume, a.TotalVolume); c != 0 {
			return c
		}
		if c := cmp.Compare(len(b.Keywords), len(a.Keywords)); c != 0 {
			return c
		}
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return compareKeywords(a.Keywords[0], b.Keywords[0])
	})
	return out
}

// newCluster sorts ks and computes the cluster's name, total volume and mean difficulty.
func newCluster(ks []keywords.Keyword) Cluster {
	SortKeywords(ks)
	c := Cluster{Name: ks[0].Keyword, Keywords: ks}
	var diffSum float64
	var diffN int
	for _, k := range ks {
		if k.SearchVolume != nil {
			c.TotalVolume += *k.SearchVolume
		}
		if k.Difficulty != nil {
			diffSum += *k.Difficulty
			diffN++
		}
	}
	if diffN > 0 {
		avg := math.Round(diffSum/float64(diffN)*10) / 10
		c.AvgDifficulty = &avg
	}
	return c
}

// SortKeywords sorts keywords strongest first: by search volume (unknown last), then
// relevance, then alphabetically, then by the remaining metrics so the order is total.
func SortKeywords(ks []keywords.Keyword) {
	slices.SortStableFunc(ks, compareKeywords)
}

// compareKeywords orders keywords strongest first (see SortKeywords).
func compareKeywords(a, b keywords.Keyword) int {
	if c := cmp.Compare(volumeOf(b), volumeOf(a)); c != 0 {
		return c
	}
	if c := cmp.Compare(b.Relevance, a.Relevance); c != 0 {
		return c
	}
	if c := strings.Compare(a.Keyword, b.Keyword); c != 0 {
		return c
	}
	if c := cmp.Compare(floatOr(a.Difficulty, math.Inf(1)), floatOr(b.Difficulty, math.Inf(1))); c != 0 {
		return c
	}
	if c := cmp.Compare(floatOr(b.CPC, -1), floatOr(a.CPC, -1)); c != 0 {
		return c
	}
	if c := strings.Compare(a.Intent, b.Intent); c != 0 {
		return c
	}
	return strings.Compare(strings.Join(a.SERPURLs, "\n"), strings.Join(b.SERPURLs, "\n"))
}

// keywordBefore breaks ties between SERP matches: stronger keyword first, then URL set.
func keywordBefore(a, b keywords.Keyword, ua, ub []string) bool {
	if c := compareKeywords(a, b); c != 0 {
		return c < 0
	}
	return strings.Join(ua, "\n") < strings.Join(ub, "\n")
}

// volumeOf is the keyword's search volume, or -1 when unknown.
func volumeOf(k keywords.Keyword) int64 {
	if k.SearchVolume == nil {
		return -1
	}
	return *k.SearchVolume
}

func floatOr(p *float64, def float64) float64 {
	if p == nil {
		return def
	}
	return *p
}

// lexical holds each keyword's reduced and full stem sets for lexical matching.
type lexical struct {
	reduced, full [][]string
}

// lexicalSets computes the stem sets ClusterKeywords compares (see its comment).
func lexicalSets(kws []keywords.Keyword, language string) lexical {
	mods := modifierStems(language)
	l := lexical{reduced: make([][]string, len(kws)), full: make([][]string, len(kws))}
	for i, k := range kws {
		l.full[i] = stem.Set(k.Keyword, language)
		var red []string
		for _, s := range l.full[i] {
			if !mods[s] && !isNumber(s) {
				red = append(red, s)
			}
		}
		l.reduced[i] = red
	}
	return l
}

// match reports whether keywords i and j are lexically similar, and their Jaccard index.
func (l lexical) match(i, j int) (bool, float64) {
	a, b := l.reduced[i], l.reduced[j]
	if len(a) == 0 || len(b) == 0 {
		a, b = l.full[i], l.full[j]
	}
	if len(a) == 0 || len(b) == 0 {
		return false, 0
	}
	jac, shared := jaccard(a, b)
	if jac >= lexicalJaccard && shared >= 2 || slices.Equal(a, b) {
		return true, jac
	}
	small, large := a, b
	if len(small) > len(large) {
		small, large = large, small
	}
	return len(small) >= 2 && subset(small, large), jac
}

// modifierStems are the stems of the intent table's one-word modifiers in a language.
func modifierStems(language string) map[string]bool {
	m := make(map[string]bool)
	for _, rule := range intentTable {
		for _, mod := range rule.modifiers {
			if strings.Contains(mod, " ") {
				continue
			}
			for _, s := range stem.Stems(mod, language) {
				m[s] = true
			}
		}
	}
	m["near"] = true // "near me"
	m["sale"] = true // "for sale"
	return m
}

// urlSet is the sorted, de-duplicated normalised form of urls.
func urlSet(urls []string) []string {
	out := make([]string, 0, len(urls))
	for _, u := range urls {
		if n := NormalizeURL(u); n != "" {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// NormalizeURL reduces a URL to a comparable form: no scheme, lower-case host without
// "www." or a default port, path without a trailing slash, query kept, fragment dropped
// ("https://www.Example.com/a/" → "example.com/a").
func NormalizeURL(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return ""
	}
	s := raw
	if !strings.Contains(s, "://") && !strings.HasPrefix(s, "//") && !strings.HasPrefix(s, "/") {
		s = "//" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return strings.TrimSuffix(strings.ToLower(raw), "/")
	}
	host := strings.ToLower(u.Hostname())
	host = strings.TrimPrefix(host, "www.")
	if p := u.Port(); p != "" && p != "80" && p != "443" {
		host += ":" + p
	}
	path := strings.TrimRight(u.EscapedPath(), "/")
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	return host + path
}

// RelativePath is the site-relative path of a URL, with its query ("https://x.com/a?b=1"
// → "/a?b=1"; the home page is "/").
func RelativePath(raw string) string {
	n := NormalizeURL(raw)
	if strings.HasPrefix(strings.TrimSpace(raw), "/") {
		if n == "" {
			return "/"
		}
		return n
	}
	i := strings.IndexAny(n, "/?")
	if i < 0 {
		return "/"
	}
	if n[i] == '?' {
		return "/" + n[i:]
	}
	return n[i:]
}

// unionFind is a disjoint-set forest over 0..n-1.
type unionFind struct{ parent []int }

func newUnionFind(n int) *unionFind {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return &unionFind{parent: p}
}

func (u *unionFind) find(i int) int {
	for u.parent[i] != i {
		u.parent[i] = u.parent[u.parent[i]]
		i = u.parent[i]
	}
	return i
}

func (u *unionFind) union(a, b int) {
	ra, rb := u.find(a), u.find(b)
	if ra == rb {
		return
	}
	if ra < rb {
		u.parent[rb] = ra
	} else {
		u.parent[ra] = rb
	}
}
