package analysis

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/stem"
)

// FocusBoost is added to a candidate's opportunity score, for ranking only, when its stems
// include every stem of one of the request's focus topics (OnTopicAll).
const FocusBoost = 15

// MaxRelated is how many related keywords a recommendation lists.
const MaxRelated = 10

// What a recommendation asks for: a new article, or work on a page the site has.
const (
	ActionCreate  = "create"
	ActionImprove = "improve"
)

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
	// Rankings are the keywords the domain ranks for, with their URLs.
	Rankings []keywords.Ranking
	// Pages are the domain's indexable pages.
	Pages []SitePage
	// Language is the content's language code; "" means English.
	Language string
	// Year dates commercial titles ("Best X in 2026"); 0 leaves them undated.
	Year int
}

// SitePage is one of the domain's pages: its URL, title, H1 and H2s.
type SitePage struct {
	URL, Title, H1 string
	H2s            []string
}

// Recommendation is one piece of content to create, or a page to improve.
type Recommendation struct {
	// Priority is 1 for the most worthwhile, then 2, 3, … without gaps.
	Priority int
	// Action is ActionImprove when the site has a page for the target (it ranks for the
	// keyword, or a page's title or H1 covers it), else ActionCreate.
	Action string
	// URL is the page to improve: the URL ranking best for the target, else the page
	// covering it; "" for ActionCreate, or when the ranking data names no URL.
	URL string
	// Title is the proposed article title (for an improvement, the title to aim the page at).
	Title string
	// TargetKeyword is the keyword the content targets, with its metrics.
	TargetKeyword keywords.Keyword
	// OpportunityScore is OpportunityScore(TargetKeyword, the domain's position), 1–100,
	// without the focus boost; nil when the keyword has no metric to score.
	OpportunityScore *int
	// Intent is the target keyword's search intent.
	Intent string
	// Outline is the article's H2 sections.
	Outline []Section
	// Related are the cluster's other keywords, highest volume first, at most 10; never a
	// keyword the site ranks for with another URL.
	Related []string
	// Position is the domain's current position for the target keyword (0 = not ranking).
	Position int
	// CompetitorPositions are the competitors ranking for the target, when known.
	CompetitorPositions map[string]int
}

// siteRank is the domain's best position for a keyword and the URL holding it.
type siteRank struct {
	pos int
	url string
}

// siteRanks maps each normalised keyword the domain ranks for to its best position; at
// equal positions a named URL wins, then the first in alphabetical order.
func siteRanks(rankings []keywords.Ranking, lang string) map[string]siteRank {
	out := make(map[string]siteRank)
	for _, r := range rankings {
		key := stem.Normalize(r.Keyword.Keyword, lang)
		if key == "" || r.Position < 1 {
			continue
		}
		prev, ok := out[key]
		if !ok || r.Position < prev.pos || r.Position == prev.pos && (prev.url == "" || r.URL != "" && r.URL < prev.url) {
			out[key] = siteRank{r.Position, r.URL}
		}
	}
	return out
}

// Recommend turns candidates into a prioritised content plan for a site. brand is the
// brand_context (see ParseBrand); limit ≤ 0 means no limit.
//
//   - Each candidate's target (keyword normalised with stem.Normalize) is:
//     ranked #1–3 by the domain: dropped, there is little left to gain;
//     ranked #4 or lower: ActionImprove of the URL ranking best for it (striking distance,
//     #4–20, scores highest);
//     not ranked, but the domain ranks for another keyword of its cluster: ActionImprove of
//     the URL ranking best among them (that page covers the topic);
//     not ranked, but one of Site.Pages has a title or H1 whose stems include all of the
//     keyword's: ActionImprove of that page (the first by URL);
//     otherwise: ActionCreate. A new article is thus never proposed for a keyword the
//     domain ranks for, which would compete with its own ranking page.
//   - With focus topics, only candidates on one of them (MatchTopics: all the topic's
//     stems, or its head word's) are kept: the plan is then shorter than limit when the data
//     holds fewer on-topic candidates.
//   - Candidates normalising to the same phrase are merged: the higher-volume one is kept
//     (then higher relevance, then alphabetical).
//   - Rank = OpportunityScore(keyword, the domain's best position for it) + FocusBoost (15)
//     when the keyword holds all stems of a focus topic; ties go to the higher volume, then
//     the number of competitors ranking, then alphabetical. Keywords without a score (no
//     metric known) come after every scored one.
//   - Priorities run 1..n without gaps; at most limit recommendations.
//
// Related keywords and the outline's keyword sections leave out the cluster's keywords the
// domain ranks for with a URL other than the recommendation's: those belong to other pages.
// Titles use Title (English templates; other languages get the keyword capitalised);
// outlines use BuildOutline; Related lists the cluster's other keywords by volume.
func Recommend(cands []Candidate, site Site, brand string, focusTopics []string, limit int) []Recommendation {
	lang := site.Language
	ranks := siteRanks(site.Rankings, lang)
	type page struct {
		url    string
		titles [][]string
	}
	var pages []page
	for _, p := range site.Pages {
		pg := page{url: p.URL}
		for _, t := range []string{p.Title, p.H1} {
			if s := stem.Set(t, lang); len(s) > 0 {
				pg.titles = append(pg.titles, s)
			}
		}
		if len(pg.titles) > 0 {
			pages = append(pages, pg)
		}
	}
	slices.SortStableFunc(pages, func(a, b page) int { return strings.Compare(a.url, b.url) })

	type scored struct {
		c      Candidate
		key    string
		pos    int
		action string
		url    string
		note   string // an improvement's page and standing
		score  *int
		rank   int
	}
	best := make(map[string]*scored)
	for _, c := range cands {
		set := stem.Set(c.Keyword.Keyword, lang)
		if len(set) == 0 {
			continue
		}
		key := strings.Join(set, " ")
		s := &scored{c: c, key: key, action: ActionCreate}
		if r, ok := ranks[key]; ok {
			if r.pos <= 3 {
				continue
			}
			s.pos, s.action, s.url = r.pos, ActionImprove, r.url
			s.note = improveNote(s.url, fmt.Sprintf("ranks #%d for %s", r.pos, quote(readablePhrase(c.Keyword.Keyword))))
		} else if kw, r, ok := clusterPage(c.Cluster, ranks, lang); ok {
			s.action, s.url = ActionImprove, r.url
			s.note = improveNote(s.url, fmt.Sprintf("ranks #%d for %s, a keyword of the same topic", r.pos, quote(readablePhrase(kw))))
		} else if i := slices.IndexFunc(pages, func(p page) bool {
			return slices.ContainsFunc(p.titles, func(t []string) bool { return subset(set, t) })
		}); i >= 0 {
			s.action, s.url = ActionImprove, pages[i].url
			s.note = improveNote(s.url, "has a title that already covers "+quote(readablePhrase(c.Keyword.Keyword)))
		}
		match := MatchTopics(c.Keyword.Keyword, focusTopics, lang)
		if len(focusTopics) > 0 && match == OffTopic {
			continue
		}
		if prev, ok := best[key]; ok && compareKeywords(prev.c.Keyword, c.Keyword) <= 0 {
			continue
		}
		s.score = OpportunityScore(c.Keyword, s.pos)
		if s.score != nil {
			s.rank = *s.score
		}
		if match == OnTopicAll {
			s.rank += FocusBoost
		}
		best[key] = s
	}
	list := slices.Collect(maps.Values(best))
	slices.SortFunc(list, func(a, b *scored) int {
		if c := UnscoredLast(a.score, b.score); c != 0 {
			return c
		}
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
	// One page, one improvement: the improvements of one URL are merged into the best
	// ranked, which carries the others' keywords (merged) and clusters.
	merged := map[*scored][]keywords.Keyword{}
	byURL := map[string]*scored{}
	list = slices.DeleteFunc(list, func(s *scored) bool {
		if s.action != ActionImprove || s.url == "" {
			return false
		}
		first, ok := byURL[s.url]
		if !ok {
			byURL[s.url] = s
			return false
		}
		merged[first] = append(merged[first], s.c.Keyword)
		first.c.Cluster = append(slices.Clone(first.c.Cluster), append([]keywords.Keyword{s.c.Keyword}, s.c.Cluster...)...)
		return true
	})
	if limit > 0 && len(list) > limit {
		list = list[:limit]
	}
	english := stem.LanguageCode(lang) == "en"
	out := make([]Recommendation, len(list))
	usedSections := map[string]bool{}
	for i, s := range list {
		k := s.c.Keyword
		// Keywords another URL of the site ranks for are that page's business.
		cluster := slices.DeleteFunc(dedupeKeywords(s.c.Cluster, lang), func(ck keywords.Keyword) bool {
			key := stem.Normalize(ck.Keyword, lang)
			r, ok := ranks[key]
			return ok && key != s.key && (s.url == "" || r.url != s.url)
		})
		intent := Intent(k)
		title := Title(k.Keyword, intent, brand, site.Year)
		if !english {
			title = UpperFirst(readablePhrase(k.Keyword))
		}
		outline := dropRepeated(BuildOutline(k, cluster, s.c.CompetitorH2s, brand, intent), usedSections, lang,
			standardSections(NormalizeIntent(intent), readablePhrase(k.Keyword), k.Keyword), readablePhrase(k.Keyword))
		if h2s, ok := pageH2s(site.Pages, s.url); ok && s.action == ActionImprove {
			markExisting(outline, h2s, lang)
		}
		if len(outline) > 0 {
			if s.note != "" {
				outline[0].TalkingPoints = append([]string{s.note}, outline[0].TalkingPoints...)
			}
			if note := competitorNote(k.Keyword, s.c.CompetitorPositions); note != "" {
				outline[0].TalkingPoints = append(outline[0].TalkingPoints, note)
			}
		}
		out[i] = Recommendation{
			Priority:            i + 1,
			Action:              s.action,
			URL:                 s.url,
			Title:               title,
			TargetKeyword:       k,
			OpportunityScore:    s.score,
			Intent:              intent,
			Outline:             outline,
			Related:             withMerged(merged[s], RelatedKeywords(k, cluster, lang, MaxRelated), lang),
			Position:            s.pos,
			CompetitorPositions: s.c.CompetitorPositions,
		}
	}
	return out
}

// dedupeKeywords drops the keywords normalising to an earlier one's phrase.
func dedupeKeywords(ks []keywords.Keyword, lang string) []keywords.Keyword {
	seen := map[string]bool{}
	out := make([]keywords.Keyword, 0, len(ks))
	for _, k := range ks {
		key := stem.Normalize(k.Keyword, lang)
		if !seen[key] {
			seen[key] = true
			out = append(out, k)
		}
	}
	return out
}

// withMerged puts the target keywords of the improvements merged into one first in its
// related keywords, each once, so the item carries every keyword of its page.
func withMerged(merged []keywords.Keyword, related []string, lang string) []string {
	if len(merged) == 0 {
		return related
	}
	seen := map[string]bool{}
	out := make([]string, 0, len(merged)+len(related))
	for _, k := range merged {
		if key := stem.Normalize(k.Keyword, lang); !seen[key] {
			seen[key] = true
			out = append(out, k.Keyword)
		}
	}
	for _, r := range related {
		if key := stem.Normalize(r, lang); !seen[key] {
			seen[key] = true
			out = append(out, r)
		}
	}
	return out
}

// dropRepeated leaves out of an outline the sections a higher-priority recommendation's
// outline already has (same normalised H2), and records the others in used. The stock
// sections every article of its kind has (isStockHeading) may repeat; the first section
// left takes the talking points of a dropped first one. An outline below MinSections is
// topped up, before its FAQ, with the target's stock sections (stock) it lacks and no
// earlier item has, then with the general ones (generalSections of target), so every
// outline has at least MinSections; a section without a talking point gets one.
func dropRepeated(outline []Section, used map[string]bool, lang string, stock []stockSection, target string) []Section {
	out := make([]Section, 0, len(outline))
	var carried []string
	for i, sec := range outline {
		key := stem.Normalize(sec.H2, lang)
		if used[key] && !IsStockHeading(sec.H2) {
			if i == 0 {
				carried = sec.TalkingPoints
			}
			continue
		}
		out = append(out, sec)
	}
	for _, sec := range generalSections(target) {
		stock = append(stock, stockSection{Section: sec})
	}
	if len(out) < MinSections {
		var faq []Section
		if n := len(out); n > 0 && out[n-1].H2 == faqHeading {
			out, faq = out[:n-1], out[n-1:]
		}
		for _, st := range stock {
			if len(out)+len(faq) >= MinSections {
				break
			}
			key := stem.Normalize(st.H2, lang)
			if (used[key] && !IsStockHeading(st.H2)) || slices.ContainsFunc(out, func(s Section) bool { return stem.Normalize(s.H2, lang) == key }) {
				continue
			}
			out = append(out, Section{H2: st.H2, TalkingPoints: slices.Clone(st.TalkingPoints)})
		}
		out = append(out, faq...)
	}
	for _, sec := range out {
		used[stem.Normalize(sec.H2, lang)] = true
	}
	if len(carried) > 0 && len(out) > 0 {
		out[0].TalkingPoints = append(slices.Clone(carried), out[0].TalkingPoints...)
	}
	for i, sec := range out {
		if len(sec.TalkingPoints) == 0 {
			out[i].TalkingPoints = []string{fmt.Sprintf("Cover %s as it bears on %s.", strings.ToLower(sec.H2), quote(target))}
		}
	}
	return out
}

// stockHeadings are the H2s of the intents' stock sections that do not name the target:
// "How We Chose", "Key Takeaways", "Frequently Asked Questions" …
var stockHeadings = func() map[string]bool {
	const probe = "zzprobe"
	m := map[string]bool{faqHeading: true}
	for _, in := range []string{Informational, Commercial, Transactional, Navigational} {
		for _, t := range []string{probe, "best " + probe, "how to " + probe, "how long does " + probe + " take", probe + " " + probe} {
			for _, s := range standardSections(in, t, t) {
				if !strings.Contains(strings.ToLower(s.H2), probe) {
					m[s.H2] = true
				}
			}
		}
	}
	return m
}()

// IsStockHeading reports whether an H2 is a stock section every article of its kind has
// ("How We Chose", "Key Takeaways", "Frequently Asked Questions" …): recommendations may
// repeat those.
func IsStockHeading(h2 string) bool { return stockHeadings[h2] }

// improveNote says which page an improvement works on and why that page.
func improveNote(url, standing string) string {
	page := "the page"
	if url != "" {
		page = RelativePath(url)
	}
	return fmt.Sprintf("Improve %s, which %s: work these sections into it rather than starting a new page that would compete with it.", page, standing)
}

// pageH2s are the H2s of the site's page at url; false when no page of Site.Pages has it.
func pageH2s(pages []SitePage, url string) ([]string, bool) {
	for _, p := range pages {
		if url != "" && p.URL == url {
			return p.H2s, true
		}
	}
	return nil, false
}

// markExisting tells, in an improvement's outline, which sections the page already has
// (an H2 whose stems are those of the section's, or include them) and which to add.
func markExisting(outline []Section, h2s []string, lang string) {
	var have [][]string
	for _, h := range h2s {
		if set := stem.Set(h, lang); len(set) > 0 {
			have = append(have, set)
		}
	}
	for i, sec := range outline {
		set := stem.Set(sec.H2, lang)
		if len(set) > 0 && slices.ContainsFunc(have, func(h []string) bool { return subset(set, h) }) {
			outline[i].TalkingPoints = append(outline[i].TalkingPoints, "The page has a section on this already: deepen it rather than adding another.")
		} else {
			outline[i].TalkingPoints = append(outline[i].TalkingPoints, "The page has no section on this yet: add it.")
		}
	}
}

// clusterPage is the domain's best-ranked keyword of a cluster and its ranking, when the
// domain ranks for one: the page holding that ranking covers the cluster's topic.
func clusterPage(cluster []keywords.Keyword, ranks map[string]siteRank, lang string) (string, siteRank, bool) {
	var best siteRank
	kw, found := "", false
	for _, k := range cluster {
		r, ok := ranks[stem.Normalize(k.Keyword, lang)]
		if ok && (!found || r.pos < best.pos || r.pos == best.pos && k.Keyword < kw) {
			best, kw, found = r, k.Keyword, true
		}
	}
	return kw, best, found
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
	return fmt.Sprintf("Competitors already rank for %s: %s; study what their pages cover and go further.", quote(readablePhrase(keyword)), JoinList(parts))
}

// RelatedKeywords lists up to max keywords of the cluster other than the target (compared
// with stem.Normalize), de-duplicated, highest volume first.
func RelatedKeywords(target keywords.Keyword, cluster []keywords.Keyword, lang string, max int) []string {
	sorted := slices.Clone(cluster)
	SortKeywords(sorted)
	seen := map[string]bool{stem.Normalize(target.Keyword, lang): true}
	out := []string{}
	for _, k := range sorted {
		key := stem.Normalize(k.Keyword, lang)
		if key == "" || seen[key] || len(out) >= max {
			continue
		}
		seen[key] = true
		out = append(out, k.Keyword)
	}
	return out
}

// RankGaps orders competitor gaps most worthwhile first: by OpportunityScore (not ranking;
// unknown scores last), then search volume (unknown last), then the number of competitors ranking, then the best
// competitor position, then alphabetically. The input is not modified.
func RankGaps(gaps []keywords.Gap) []keywords.Gap {
	type scored struct {
		g     keywords.Gap
		score *int
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
		if c := CompareScores(a.score, b.score); c != 0 {
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
			key := stem.Normalize(k.Keyword, lang)
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

// CandidatesFromClusters makes a plan's candidates from clusters. Per cluster: one for
// each of its keywords the domain ranks for below #3 (Recommend proposes improving the
// ranking page), and one for its strongest keyword the domain does not rank for (a new
// article, unless a page covers it). Each has the cluster as context and its keyword's
// competitor positions from gaps (matched with stem.Normalize). Competitor headings are
// left to the caller, who crawls the pages.
func CandidatesFromClusters(clusters []Cluster, gaps []keywords.Gap, rankings []keywords.Ranking, lang string) []Candidate {
	positions := make(map[string]map[string]int)
	for _, g := range gaps {
		if len(g.CompetitorPositions) > 0 {
			positions[stem.Normalize(g.Keyword.Keyword, lang)] = g.CompetitorPositions
		}
	}
	ranks := siteRanks(rankings, lang)
	var out []Candidate
	for _, c := range clusters {
		unranked := false
		for _, k := range c.Keywords {
			key := stem.Normalize(k.Keyword, lang)
			r, ranked := ranks[key]
			if ranked && r.pos <= 3 || !ranked && unranked {
				continue
			}
			unranked = unranked || !ranked
			out = append(out, Candidate{Keyword: k, Cluster: c.Keywords, CompetitorPositions: positions[key]})
		}
	}
	return out
}
