package report

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/contentapi/contentapi/internal/analysis"
	"github.com/contentapi/contentapi/internal/crawler"
	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/stem"
)

// Bounds of the data a content plan is built from.
const (
	// sitePages is how many of the domain's own pages a plan crawls (sitemap_pages and the
	// content map's pages_found count at most this many).
	sitePages = crawler.DefaultMaxPages
	// competitorPages is how many pages of each competitor are crawled for headings.
	competitorPages = 30
	// ideasPerTopic is how many keyword ideas are asked for per focus topic.
	ideasPerTopic = 50
	// seedKeywords is how many of the domain's best-ranked keywords seed the ideas when no
	// focus topic is given, and seedIdeas how many ideas they yield at most.
	seedKeywords = 10
	seedIdeas    = 100
	// parallelParts bounds the crawls and provider calls a plan runs at once.
	parallelParts = 6
	// planGaps is how many competitor gaps (highest search volume first) a plan clusters
	// into candidates: against a competitor with hundreds of thousands of gaps, clustering
	// them all would take minutes for a plan of at most a few dozen topics.
	planGaps = 500
	// planRankings is how many of the domain's own keywords ranked below #3 a plan
	// considers for improvement, striking distance (#4–20) first.
	planRankings = 200
)

// RecommendationRecord is the API's recommendation (docs/api.md) in content recommend's shape, plus
// action ("improve" a page of the site, or "create" a new one), url (the page to improve,
// null for "create"), cpc, current_position (the domain's position, null when not ranking)
// and competitor_positions.
type RecommendationRecord struct {
	Priority            int                `json:"priority"`
	Action              string             `json:"action"`
	URL                 *string            `json:"url"`
	Title               string             `json:"title"`
	TargetKeyword       string             `json:"target_keyword"`
	SearchVolume        *int64             `json:"search_volume"`
	Difficulty          *float64           `json:"keyword_difficulty"`
	OpportunityScore    *int               `json:"opportunity_score"`
	SearchIntent        string             `json:"search_intent"`
	Outline             []analysis.Section `json:"outline"`
	RelatedKeywords     []string           `json:"related_keywords"`
	CPC                 *float64           `json:"cpc"`
	CurrentPosition     *int               `json:"current_position"`
	CompetitorPositions map[string]int     `json:"competitor_positions"`
}

// CannibalEntry is content recommend's cannibalization entry: URLs are site-relative paths
// and Recommendation says which to keep and which to merge and redirect.
type CannibalEntry struct {
	Keyword        string   `json:"keyword"`
	URLs           []string `json:"urls"`
	Recommendation string   `json:"recommendation"`
}

// RecommendResult is the data of a content-recommend answer; warnings and source are
// additions to the documented fields.
type RecommendResult struct {
	PlanID               string                 `json:"plan_id"`
	Domain               string                 `json:"domain"`
	ExistingKeywords     int                    `json:"existing_keywords"`
	SitemapPages         int                    `json:"sitemap_pages"`
	Recommendations      []RecommendationRecord `json:"recommendations"`
	Cannibalization      []CannibalEntry        `json:"cannibalization"`
	TotalRecommendations int                    `json:"total_recommendations"`
	Warnings             []string               `json:"warnings"`
	Source               string                 `json:"source"`
	described
}

// Recommend builds a content plan for the domain. planID names it (the job's id).
//
// Candidates are the provider's keyword ideas for each focus topic (or, without focus
// topics, ideas seeded from 10 of the domain's keywords, striking distance #4–20 first),
// the competitor gaps and the domain's own keywords ranked below #3 (see plan), merged and
// clustered (analysis.CandidatesFromClusters). Each candidate gets the H2s of the
// competitors' crawled pages (30 per competitor) whose title, H1 or URL path carries the
// keyword's stems. analysis.Recommend then drops keywords the domain ranks #1–3 for, makes
// the others it ranks for, and topics one of its pages covers, improvements of that page
// (action "improve", url), the rest new articles ("create"), and ranks them, focus topics
// boosted. With focus topics every recommendation is on one of them; fewer than limit add
// a warning (focusWarning).
//
//   - existing_keywords counts every keyword the domain ranks for.
//   - sitemap_pages counts the domain's own HTML pages the crawl found (sitemap URLs, or
//     linked pages without a sitemap), at most 100.
//   - total_recommendations is the number of recommendations returned (at most limit).
//   - cannibalization comes from the crawl's titles and H1s and the ranking data, with
//     site-relative paths and analysis.CannibalAdvice's advice.
//
// A site that cannot be crawled, a competitor that cannot be crawled and failing gap data
// only add warnings. Failing ranking data fails the call (without it, keywords the domain
// already owns could be recommended), and so do keyword ideas failing for every topic.
// With no keyword to plan from (no idea for the focus topics or from the rankings, no gap),
// or with keywords the domain all ranks #1–3 for and no cannibalization either, there is
// nothing to recommend: NO_DATA, refunded, advises which focus_topics to try.
func (b *Builder) Recommend(ctx context.Context, r RecommendRequest, planID string) (RecommendResult, error) {
	sr := r.plan()
	g, err := b.gather(ctx, sr, true)
	if err != nil {
		return RecommendResult{}, err
	}
	if g.rankedErr != nil {
		return RecommendResult{}, fmt.Errorf("recommend %s: ranked keywords: %w", r.Domain, g.rankedErr)
	}
	if g.ideasErr != nil {
		return RecommendResult{}, fmt.Errorf("recommend %s: keyword ideas: %w", r.Domain, g.ideasErr)
	}
	p := b.plan(sr, g)
	if len(p.keywords) == 0 {
		if g.gapsErr != nil {
			return RecommendResult{}, fmt.Errorf("recommend %s: keyword gaps: %w", r.Domain, g.gapsErr)
		}
		return RecommendResult{}, b.noPlanData(ctx, sr, g)
	}
	warnings := g.warnings()
	if w := cmp.Or(focusWarning(sr, p), shortWarning(sr, p)); w != "" {
		// Fewer than asked: why, and that the charge follows what was delivered.
		warnings = append(warnings, fmt.Sprintf("%s; the plan is charged for the %d delivered (%d credits per started %d)",
			w, len(p.recs), priced[KindRecommend].ItemCost, priced[KindRecommend].ItemBlock))
	}

	out := RecommendResult{
		PlanID:           planID,
		Domain:           r.Domain,
		ExistingKeywords: len(bestRankings(g.ranked)),
		SitemapPages:     len(g.site.pages),
		Recommendations:  make([]RecommendationRecord, 0, len(p.recs)),
		Cannibalization:  []CannibalEntry{},
		Warnings:         warnings,
		Source:           b.Keywords.Name(),
	}
	for _, rec := range p.recs {
		out.Recommendations = append(out.Recommendations, recommendationRecord(rec))
	}
	out.TotalRecommendations = len(out.Recommendations)

	signals := g.site.signals()
	for _, grp := range analysis.FindCannibalization(signals, g.ranked, r.Language) {
		_, advice := analysis.CannibalAdvice(grp, signals, g.ranked)
		paths := make([]string, len(grp.URLs))
		for i, u := range grp.URLs {
			paths[i] = analysis.RelativePath(u)
		}
		out.Cannibalization = append(out.Cannibalization, CannibalEntry{Keyword: grp.Keyword, URLs: paths, Recommendation: advice})
	}
	if len(out.Recommendations) == 0 && len(out.Cannibalization) == 0 {
		// Keywords were found but every one is owned already (ranked #1–3): an empty plan
		// is nothing to sell. Refunded, with why and what to try instead.
		why := focusWarning(sr, p)
		if why == "" {
			why = fmt.Sprintf("no recommendation: %s already ranks #1–3 for every keyword of the plan (%d)", r.Domain, len(p.keywords))
		}
		return RecommendResult{}, b.noData(ctx, r.Country, r.Language, "focus_topics", analysis.UpperFirst(why)+".")
	}
	out.meta = b.planMeta(r.Country, r.Language, g, out.Warnings)
	out.settle(KindRecommend, &r, len(out.Recommendations))
	return out, nil
}

func recommendationRecord(rec analysis.Recommendation) RecommendationRecord {
	k := rec.TargetKeyword
	out := RecommendationRecord{
		Priority:            rec.Priority,
		Action:              rec.Action,
		URL:                 optional(rec.URL),
		Title:               rec.Title,
		TargetKeyword:       k.Keyword,
		SearchVolume:        k.SearchVolume,
		Difficulty:          k.Difficulty,
		OpportunityScore:    rec.OpportunityScore,
		SearchIntent:        rec.Intent,
		Outline:             make([]analysis.Section, len(rec.Outline)),
		RelatedKeywords:     nonNil(rec.Related),
		CPC:                 k.CPC,
		CompetitorPositions: map[string]int{},
	}
	for i, s := range rec.Outline {
		out.Outline[i] = analysis.Section{H2: s.H2, TalkingPoints: nonNil(s.TalkingPoints)}
	}
	if rec.Position > 0 {
		pos := rec.Position
		out.CurrentPosition = &pos
	}
	for d, p := range rec.CompetitorPositions {
		out.CompetitorPositions[d] = p
	}
	return out
}

// optional is s, or nil when s is empty.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// focusWarning says that the plan holds fewer recommendations than limit because the data
// has no more candidates on the focus topics, and how many of those the domain already
// ranks #1–3 for; "" when it does not apply.
func focusWarning(r planRequest, p strategy) string {
	n := len(p.recs)
	if len(r.FocusTopics) == 0 || r.Limit <= 0 || n >= r.Limit {
		return ""
	}
	topics := strings.Join(r.FocusTopics, ", ")
	w := fmt.Sprintf("only %d of the %d recommendations asked for are on the focus topics (%s)", n, r.Limit, topics)
	if n == 0 {
		w = fmt.Sprintf("no recommendation is on the focus topics (%s)", topics)
	}
	w += fmt.Sprintf(": the keyword data for market %s/%s has %d keywords on them", r.Country, r.Language, len(p.keywords))
	if p.topRanked > 0 {
		w += fmt.Sprintf(", %d of which the domain already ranks #1–3 for", p.topRanked)
	}
	return w + "; add focus topics or import more keyword data"
}

// shortWarning says, for a plan without focus topics, that it holds fewer recommendations
// than limit because the data has no more keywords to plan from, and how many of those the
// domain already ranks #1–3 for; "" when it does not apply.
func shortWarning(r planRequest, p strategy) string {
	n := len(p.recs)
	if len(r.FocusTopics) > 0 || r.Limit <= 0 || n >= r.Limit {
		return ""
	}
	w := fmt.Sprintf("only %d of the %d recommendations asked for could be made: the keyword data for market %s/%s "+
		"holds %d keywords to plan from for %s and its competitors", n, r.Limit, r.Country, r.Language, len(p.keywords), r.Domain)
	if p.topRanked > 0 {
		w += fmt.Sprintf(", %d of which the domain already ranks #1–3 for", p.topRanked)
	}
	return w + "; add focus topics or competitors, or import more keyword data"
}

// strategy is a plan: the distinct keywords considered and the recommendations made.
type strategy struct {
	keywords  []keywords.Keyword
	recs      []analysis.Recommendation
	topRanked int // keywords considered that the domain ranks #1–3 for
}

// plan turns gathered data into recommendations (see Recommend). The keywords considered
// are the ideas, the gaps and the domain's own keywords below #3 (planRankings of them,
// striking distance first); with focus topics, only those on a topic (analysis.MatchTopics).
func (b *Builder) plan(r planRequest, g *gathered) strategy {
	lang := r.Language
	gaps := g.gaps
	offTopic := func(k keywords.Keyword) bool {
		return len(r.FocusTopics) > 0 && analysis.MatchTopics(k.Keyword, r.FocusTopics, lang) == analysis.OffTopic
	}
	own := slices.DeleteFunc(slices.Clone(g.ranked), func(rk keywords.Ranking) bool { return offTopic(rk.Keyword) })
	merged := analysis.MergeKeywords(lang, g.ideas, analysis.GapKeywords(gaps), rankedKeywords(own, planRankings))
	merged = slices.DeleteFunc(merged, offTopic)
	clusters := analysis.ClusterKeywords(merged, analysis.ClusterOptions{Language: lang})
	cands := analysis.CandidatesFromClusters(clusters, gaps, g.ranked, lang)
	if len(g.competitorPages) > 0 {
		pages := newHeadingIndex(g.competitorPages, lang)
		for i := range cands {
			cands[i].CompetitorH2s = pages.h2sFor(cands[i].Keyword.Keyword)
		}
	}
	site := analysis.Site{Rankings: g.ranked, Language: lang, Year: b.now().Year()}
	for _, p := range g.site.pages {
		if indexable(p) {
			site.Pages = append(site.Pages, analysis.SitePage{URL: p.FinalURL, Title: p.Title, H1: p.H1, H2s: p.H2s})
		}
	}
	top := make(map[string]bool)
	for _, rk := range g.ranked {
		if rk.Position >= 1 && rk.Position <= 3 {
			top[stem.Normalize(rk.Keyword.Keyword, lang)] = true
		}
	}
	topRanked := 0
	for _, k := range merged {
		if top[stem.Normalize(k.Keyword, lang)] {
			topRanked++
		}
	}
	return strategy{keywords: merged, recs: analysis.Recommend(cands, site, r.BrandContext, r.FocusTopics, r.Limit), topRanked: topRanked}
}

// rankedKeywords are up to n of the keywords the domain ranks for below #3, best position
// per keyword: striking distance (#4–20) first, then the rest, each by search volume.
func rankedKeywords(ranked []keywords.Ranking, n int) []keywords.Keyword {
	list := slices.DeleteFunc(bestRankings(ranked), func(r keywords.Ranking) bool { return r.Position <= 3 })
	slices.SortStableFunc(list, func(a, b keywords.Ranking) int {
		if c := cmp.Compare(beyondStriking(a.Position), beyondStriking(b.Position)); c != 0 {
			return c
		}
		return cmp.Compare(volume(b.Keyword), volume(a.Keyword))
	})
	out := make([]keywords.Keyword, 0, min(len(list), n))
	for _, r := range list[:min(len(list), n)] {
		out = append(out, r.Keyword)
	}
	return out
}

// beyondStriking is 0 for a striking-distance position (#4–20), 1 otherwise.
func beyondStriking(pos int) int {
	if pos >= 4 && pos <= 20 {
		return 0
	}
	return 1
}

// volume is a keyword's search volume, -1 when unknown.
func volume(k keywords.Keyword) int64 {
	if k.SearchVolume == nil {
		return -1
	}
	return *k.SearchVolume
}

// headingIndex finds competitor pages about a keyword.
type headingIndex struct {
	lang  string
	pages []crawler.Page
	stems []map[string]bool // per page: stems of its title, H1 and URL path
}

func newHeadingIndex(pages []crawler.Page, lang string) headingIndex {
	x := headingIndex{lang: lang, pages: pages, stems: make([]map[string]bool, len(pages))}
	for i, p := range pages {
		set := make(map[string]bool)
		for _, s := range stem.Stems(p.Title+" "+p.H1+" "+pathWords(p.FinalURL), lang) {
			set[s] = true
		}
		x.stems[i] = set
	}
	return x
}

// h2sFor returns the H2s of the pages that target keyword: their title, H1 and URL path
// together carry at least three quarters of the keyword's distinct stems (all of them for
// keywords of up to three stems).
func (x headingIndex) h2sFor(keyword string) []string {
	kw := stem.Stems(keyword, x.lang)
	slices.Sort(kw)
	kw = slices.Compact(kw)
	if len(kw) == 0 {
		return nil
	}
	need := (3*len(kw) + 3) / 4
	var out []string
	for i, p := range x.pages {
		shared := 0
		for _, s := range kw {
			if x.stems[i][s] {
				shared++
			}
		}
		if shared >= need {
			out = append(out, p.H2s...)
		}
	}
	return out
}

// pathWords is a URL's path with separators turned into spaces ("/blog/cold-brew_ratio" →
// "blog cold brew ratio").
func pathWords(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case '/', '-', '_', '.', '+', '%':
			return ' '
		}
		return r
	}, u.Path)
}
