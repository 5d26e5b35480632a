package analysis

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/contentapi/contentapi/internal/keywords"
)

// FocusBoost is added to a candidate's opportunity score, for ranking only, when its stems
// include every stem of one of the request's focus topics.
const FocusBoost = 15

// MaxRelated is how many related keywords a recommendation lists.
const MaxRelated = 10

// Candidate is a keyword that could become a piece of content.
type Candidate struct {
	// Keyword is the target keyword.
	Keyword keywords.Keyword
	// Cluster is the target's cluster (it may include the target itself).
	Cluster []keywords.Keyword
	// CompetitorH2s are the H2 headings of competitors' pages for the keyword.
	CompetitorH2s []string
	// CompetitorPositions maps a competitor domain to its position for the keyword.
	CompetitorPositions map[string]int
}

// Site is what is known about the domain the recommendations are for.
type Site struct {
	// Rankings are the keywords the domain ranks for.
	Rankings []keywords.Ranking
	// PageTitles are the titles and H1s of the domain's existing pages.
	PageTitles []string
	// Language is the content's language code; "" means English.
	Language string
	// Year dates commercial titles ("Best X in 2026"); 0 leaves them undated.
	Year int
}

// Recommendation is one piece of content to create.
type Recommendation struct {
	// Priority is 1 for the most worthwhile, then 2, 3, … without gaps.
	Priority int
	// Title is the proposed article title.
	Title string
	// TargetKeyword is the keyword the content targets, with its metrics.
	TargetKeyword keywords.Keyword
	// OpportunityScore is OpportunityScore(TargetKeyword, the domain's position), 1–100,
	// without the focus boost.
	OpportunityScore int
	// Intent is the target keyword's search intent.
	Intent string
	// Outline is the article's H2 sections.
	Outline []Section
	// Related are the cluster's other keywords, highest volume first, at most 10.
	Related []string
	// Position is the domain's current position for the target keyword (0 = not ranking).
	Position int
	// CompetitorPositions are the competitors ranking for the target, when known.
	CompetitorPositions map[string]int
}

// Recommend turns candidates into a prioritised content plan for a site. brand is the
// brand_context (see ParseBrand); limit ≤ 0 means no limit.
//
//   - Excluded: candidates the domain ranks #1–3 for (keyword normalised with
//     NormalizePhrase) and topics an existing page covers, i.e. whose stem set is equal to
//     or contained in the stems of one of Site.PageTitles.
//   - Candidates normalising to the same phrase are merged: the higher-volume one is kept
//     (then higher relevance, then alphabetical).
//   - Rank = OpportunityScore(keyword, the domain's best position for it) + FocusBoost (15)
//     when the keyword's stems include all stems of a focus topic; ties go to the higher
//     volume, then the number of competitors ranking, then alphabetical.
//   - Priorities run 1..n without gaps; at most limit recommendations.
//
// Titles use Title (English templates; other languages get the keyword capitalised);
// outlines use BuildOutline; Related lists the cluster's other keywords by volume.
func Recommend(cands []Candidate, site Site, brand string, focusTopics []string, limit int) []Recommendation {
	lang := site.Language
	positions := make(map[string]int)
	for _, r := range site.Rankings {
		key := NormalizePhrase(r.Keyword.Keyword, lang)
		if key == "" || r.Position < 1 {
			continue
		}
		if p, ok := positions[key]; !ok || r.Position < p {
			positions[key] = r.Position
		}
	}
	var covered [][]string
	for _, t := range site.PageTitles {
		if s := stemSet(t, lang); len(s) > 0 {
			covered = append(covered, s)
		}
	}
	var focus [][]string
	for _, t := range focusTopics {
		if s := stemSet(t, lang); len(s) > 0 {
			focus = append(focus, s)
		}
	}

	type scored struct {
		c     Candidate
		key   string
		pos   int
		score int
		rank  int
	}
	best := make(map[string]*scored)
	for _, c := range cands {
		set := stemSet(c.Keyword.Keyword, lang)
		if len(set) == 0 {
			continue
		}
		key := strings.Join(set, " ")
		pos := positions[key]
		if pos >= 1 && pos <= 3 {
			continue
		}
		if slices.ContainsFunc(covered, func(page []string) bool { return subset(set, page) }) {
			continue
		}
		if prev, ok := best[key]; ok && compareKeywords(prev.c.Keyword, c.Keyword) <= 0 {
			continue
		}
		s := &scored{c: c, key: key, pos: pos, score: OpportunityScore(c.Keyword, pos)}
		s.rank = s.score
		if slices.ContainsFunc(focus, func(topic []string) bool { return subset(topic, set) }) {
			s.rank += FocusBoost
		}
		best[key] = s
	}
	list := slices.Collect(maps.Values(best))
	slices.SortFunc(list, func(a, b *scored) int {
		if c := cmp.Compare(b.rank, a.rank); c != 0 {
			return c
		}
		if c := cmp.Compare(volumeOf(b.c.Keyword), volumeOf(a.c.Keyword)); c != 0 {
			return c
		}
		if c := cmp.Compare(len(b.c.CompetitorPositions), len(a.c.CompetitorPositions)); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
	if limit > 0 && len(list) > limit {
		list = list[:limit]
	}
	english := LanguageCode(lang) == "en"
	out := make([]Recommendation, len(list))
	for i, s := range list {
		k := s.c.Keyword
		intent := Intent(k)
		title := Title(k.Keyword, intent, brand, site.Year)
		if !english {
			title = upperFirst(readablePhrase(k.Keyword))
		}
		outline := BuildOutline(k, s.c.Cluster, s.c.CompetitorH2s, brand, intent)
		if note := competitorNote(k.Keyword, s.c.CompetitorPositions); note != "" && len(outline) > 0 {
			outline[0].TalkingPoints = append(outline[0].TalkingPoints, note)
		}
		out[i] = Recommendation{
			Priority:            i + 1,
			Title:               title,
			TargetKeyword:       k,
			OpportunityScore:    s.score,
			Intent:              intent,
			Outline:             outline,
			Related:             RelatedKeywords(k, s.c.Cluster, lang, MaxRelated),
			Position:            s.pos,
			CompetitorPositions: s.c.CompetitorPositions,
		}
	}
	return out
}

// competitorNote names the competitors ranking for a keyword, best first.
func competitorNote(keyword string, positions map[string]int) string {
	if len(positions) == 0 {
		return ""
	}
	domains := slices.Sorted(maps.Keys(positions))
	slices.SortStableFunc(domains, func(a, b string) int { return cmp.Compare(positions[a], positions[b]) })
	parts := make([]string, len(domains))
	for i, d := range domains {
		parts[i] = fmt.Sprintf("%s (#%d)", d, positions[d])
	}
	return fmt.Sprintf("Competitors already rank for %s: %s; study what their pages cover and go further.", quote(readablePhrase(keyword)), joinList(parts))
}

// RelatedKeywords lists up to max keywords of the cluster other than the target (compared
// with NormalizePhrase), de-duplicated, highest volume first.
func RelatedKeywords(target keywords.Keyword, cluster []keywords.Keyword, lang string, max int) []string {
	sorted := slices.Clone(cluster)
	SortKeywords(sorted)
	seen := map[string]bool{NormalizePhrase(target.Keyword, lang): true}
	out := []string{}
	for _, k := range sorted {
		key := NormalizePhrase(k.Keyword, lang)
		if key == "" || seen[key] || len(out) >= max {
			continue
		}
		seen[key] = true
		out = append(out, k.Keyword)
	}
	return out
}

// RankGaps orders competitor gaps most worthwhile first: by OpportunityScore (not ranking),
// then search volume (unknown last), then the number of competitors ranking, then the best
// competitor position, then alphabetically. The input is not modified.
func RankGaps(gaps []keywords.Gap) []keywords.Gap {
	type scored struct {
		g     keywords.Gap
		score int
		best  int
	}
	list := make([]scored, len(gaps))
	for i, g := range gaps {
		best := 0
		for _, p := range g.CompetitorPositions {
			if p > 0 && (best == 0 || p < best) {
				best = p
			}
		}
		if best == 0 {
			best = 1 << 30
		}
		list[i] = scored{g, OpportunityScore(g.Keyword, 0), best}
	}
	slices.SortStableFunc(list, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		if c := cmp.Compare(volumeOf(b.g.Keyword), volumeOf(a.g.Keyword)); c != 0 {
			return c
		}
		if c := cmp.Compare(len(b.g.CompetitorPositions), len(a.g.CompetitorPositions)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.best, b.best); c != 0 {
			return c
		}
		return compareKeywords(a.g.Keyword, b.g.Keyword)
	})
	out := make([]keywords.Gap, len(list))
	for i, s := range list {
		out[i] = s.g
	}
	return out
}

// MergeKeywords combines keyword lists (ideas, gaps, rankings) into one, one keyword per
// normalised phrase: the version with the most known metrics wins, then the higher volume,
// then the first seen; a missing metric, intent or SERP list is filled from the others.
func MergeKeywords(lang string, lists ...[]keywords.Keyword) []keywords.Keyword {
	var order []string
	byKey := make(map[string]keywords.Keyword)
	for _, list := range lists {
		for _, k := range list {
			key := NormalizePhrase(k.Keyword, lang)
			if key == "" {
				continue
			}
			prev, ok := byKey[key]
			if !ok {
				order = append(order, key)
				byKey[key] = k
				continue
			}
			win, lose := prev, k
			if known(k) > known(prev) || known(k) == known(prev) && volumeOf(k) > volumeOf(prev) {
				win, lose = k, prev
			}
			if win.SearchVolume == nil {
				win.SearchVolume = lose.SearchVolume
			}
			if win.Difficulty == nil {
				win.Difficulty = lose.Difficulty
			}
			if win.CPC == nil {
				win.CPC = lose.CPC
			}
			if win.Competition == nil {
				win.Competition = lose.Competition
			}
			if win.Intent == "" {
				win.Intent = lose.Intent
			}
			if len(win.SERPURLs) == 0 {
				win.SERPURLs = lose.SERPURLs
			}
			win.Relevance = max(win.Relevance, lose.Relevance)
			byKey[key] = win
		}
	}
	out := make([]keywords.Keyword, len(order))
	for i, key := range order {
		out[i] = byKey[key]
	}
	return out
}

// known counts a keyword's known metrics.
func known(k keywords.Keyword) int {
	n := 0
	for _, ok := range []bool{k.SearchVolume != nil, k.Difficulty != nil, k.CPC != nil, k.Competition != nil} {
		if ok {
			n++
		}
	}
	return n
}

// GapKeywords returns the keywords of gaps, in order.
func GapKeywords(gaps []keywords.Gap) []keywords.Keyword {
	out := make([]keywords.Keyword, len(gaps))
	for i, g := range gaps {
		out[i] = g.Keyword
	}
	return out
}

// CandidatesFromClusters makes one candidate per cluster: its strongest keyword as target,
// the cluster as context and the competitor positions of the target from gaps (matched with
// NormalizePhrase). Competitor headings are left to the caller, who crawls the pages.
func CandidatesFromClusters(clusters []Cluster, gaps []keywords.Gap, lang string) []Candidate {
	positions := make(map[string]map[string]int)
	for _, g := range gaps {
		if len(g.CompetitorPositions) > 0 {
			positions[NormalizePhrase(g.Keyword.Keyword, lang)] = g.CompetitorPositions
		}
	}
	out := make([]Candidate, 0, len(clusters))
	for _, c := range clusters {
		if len(c.Keywords) == 0 {
			continue
		}
		t := c.Keywords[0]
		out = append(out, Candidate{
			Keyword:             t,
			Cluster:             c.Keywords,
			CompetitorPositions: positions[NormalizePhrase(t.Keyword, lang)],
		})
	}
	return out
}
