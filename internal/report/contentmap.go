package report

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/contentapi/contentapi/internal/keywords"
)

// Lengths of the content map's lists; their counts always cover everything.
const (
	mapRankings = 100 // current_rankings.keywords: the best-positioned
	mapGaps     = 100 // competitor_gaps.gaps: the best opportunities
)

// MapPage is an audit page within a content map: its URL only.
type MapPage struct {
	URL string `json:"url"`
}

// MapAudit is the content map's audit section.
type MapAudit struct {
	PagesFound int       `json:"pages_found"`
	Pages      []MapPage `json:"pages"`
}

// MapRankings is the content map's current rankings: Count is every keyword the domain
// ranks for, Keywords the best-positioned 100 of them.
type MapRankings struct {
	Count    int             `json:"count"`
	Keywords []KeywordRecord `json:"keywords"`
}

// MapGaps is the content map's competitor gaps: Count is every gap, Gaps the first 100 by
// search volume (unknown volumes last), as keyword gaps lists them.
type MapGaps struct {
	Count int         `json:"count"`
	Gaps  []GapRecord `json:"gaps"`
}

// MapRecommendation is the API's recommendation in the content map's shape, plus action
// and url as in content recommend.
type MapRecommendation struct {
	Priority         int      `json:"priority"`
	Action           string   `json:"action"`
	URL              *string  `json:"url"`
	TargetKeyword    string   `json:"target_keyword"`
	SearchVolume     *int64   `json:"search_volume"`
	Difficulty       *float64 `json:"keyword_difficulty"`
	OpportunityScore *int     `json:"opportunity_score"`
	SearchIntent     string   `json:"search_intent"`
	CPC              *float64 `json:"cpc"`
}

// MapSummary repeats the content map's counts.
type MapSummary struct {
	PagesFound           int `json:"pages_found"`           // = audit.pages_found
	CurrentRankings      int `json:"current_rankings"`      // = current_rankings.count
	KeywordOpportunities int `json:"keyword_opportunities"` // distinct candidate keywords considered
	CompetitorGaps       int `json:"competitor_gaps"`       // = competitor_gaps.count
	Recommendations      int `json:"recommendations"`       // = len(recommendations)
}

// ContentMapResult is the data of a content-map answer; warnings is an addition to
// the documented fields (docs/api.md).
type ContentMapResult struct {
	Domain          string              `json:"domain"`
	GeneratedAt     string              `json:"generated_at"`
	Audit           MapAudit            `json:"audit"`
	CurrentRankings MapRankings         `json:"current_rankings"`
	CompetitorGaps  MapGaps             `json:"competitor_gaps"`
	Recommendations []MapRecommendation `json:"recommendations"`
	Summary         MapSummary          `json:"summary"`
	Warnings        []string            `json:"warnings"`
	described
}

// ContentMap combines an audit of the domain's pages, its current rankings, the competitor
// gaps and a content plan (as Recommend's, without competitor headings, which the map's
// recommendations do not show) in one answer.
//
// The parts (crawl, rankings, gaps, ideas) run concurrently. A part that fails leaves its
// section empty and adds a warning; the call fails only when every part it tried failed, or
// when every keyword-provider part failed with keywords.ErrPermanent (a map without any
// keyword data is not worth its credits, and retrying cannot help). With no keyword data at
// all (no ranking, gap or idea) and no part failing, it is NO_DATA, refunded.
//
//   - audit.pages_found counts the domain's own HTML pages found (at most 100), the same
//     pages as content recommend's sitemap_pages.
//   - current_rankings.count and competitor_gaps.count count everything; their lists hold
//     the first 100.
//   - summary.keyword_opportunities is the number of distinct keywords (ideas, the best
//     planGaps gaps and the domain's own keywords ranked below #3, merged by normalised
//     phrase; with focus topics only those on them) the plan considered; the other summary
//     numbers equal their sections' counts.
//   - generated_at is the builder's clock in UTC, RFC 3339.
func (b *Builder) ContentMap(ctx context.Context, r ContentMapRequest) (ContentMapResult, error) {
	sr := r.plan()
	g, err := b.gather(ctx, sr, false)
	if err != nil {
		return ContentMapResult{}, err
	}
	if err := g.mapFailure(r.Domain); err != nil {
		return ContentMapResult{}, err
	}
	p := b.plan(sr, g)
	if len(p.keywords) == 0 && len(g.ranked) == 0 && g.rankedErr == nil && g.gapsErr == nil && g.ideasErr == nil {
		return ContentMapResult{}, b.noPlanData(ctx, sr, g)
	}

	out := ContentMapResult{
		Domain:          r.Domain,
		GeneratedAt:     b.now().UTC().Format(time.RFC3339),
		Audit:           MapAudit{Pages: []MapPage{}},
		CurrentRankings: MapRankings{Keywords: []KeywordRecord{}},
		CompetitorGaps:  MapGaps{Gaps: []GapRecord{}},
		Recommendations: make([]MapRecommendation, 0, len(p.recs)),
		Warnings:        g.warnings(),
	}
	for _, u := range g.site.urls() {
		out.Audit.Pages = append(out.Audit.Pages, MapPage{URL: u})
	}
	out.Audit.PagesFound = len(out.Audit.Pages)

	ranked := bestRankings(g.ranked)
	slices.SortStableFunc(ranked, func(a, b keywords.Ranking) int { return cmp.Compare(a.Position, b.Position) })
	out.CurrentRankings.Count = len(ranked)
	for _, rk := range ranked[:min(len(ranked), mapRankings)] {
		rec := record(rk.Keyword, rk.Position)
		pos := rk.Position
		rec.Position = &pos
		out.CurrentRankings.Keywords = append(out.CurrentRankings.Keywords, rec)
	}

	out.CompetitorGaps.Count = g.gapsTotal
	for _, gap := range g.gaps[:min(len(g.gaps), mapGaps)] {
		positions := gap.CompetitorPositions
		if positions == nil {
			positions = map[string]int{}
		}
		out.CompetitorGaps.Gaps = append(out.CompetitorGaps.Gaps, GapRecord{Keyword: gap.Keyword.Keyword,
			SearchVolume: gap.SearchVolume, Difficulty: gap.Difficulty, CompetitorPositions: positions, Trends: trendsOf(gap.Keyword)})
	}

	for _, rec := range p.recs {
		k := rec.TargetKeyword
		out.Recommendations = append(out.Recommendations, MapRecommendation{Priority: rec.Priority, Action: rec.Action,
			URL: optional(rec.URL), TargetKeyword: k.Keyword,
			SearchVolume: k.SearchVolume, Difficulty: k.Difficulty, OpportunityScore: rec.OpportunityScore,
			SearchIntent: rec.Intent, CPC: k.CPC})
	}
	if len(p.keywords) == 0 && len(r.FocusTopics) == 0 && g.rankedErr == nil && len(g.ranked) == 0 && len(g.gaps) == 0 {
		out.Warnings = append(out.Warnings, "no keyword data to plan from: give focus_topics (strongly advised for small domains)")
	} else if w := focusWarning(sr, p); w != "" && len(p.keywords) > 0 {
		out.Warnings = append(out.Warnings, w)
	}

	out.Summary = MapSummary{
		PagesFound:           out.Audit.PagesFound,
		CurrentRankings:      out.CurrentRankings.Count,
		KeywordOpportunities: len(p.keywords),
		CompetitorGaps:       out.CompetitorGaps.Count,
		Recommendations:      len(out.Recommendations),
	}
	out.meta = b.planMeta(r.Country, r.Language, g, out.Warnings)
	return out, nil
}

// mapFailure is the content map's error when too much failed to answer (see ContentMap),
// else nil. An error wraps keywords.ErrPermanent only when every provider failure was
// permanent, so a passing outage is retried.
func (g *gathered) mapFailure(domain string) error {
	type part struct {
		name     string
		tried    bool
		err      error
		provider bool
	}
	parts := []part{
		{"crawl", true, g.siteErr, false},
		{"rankings", true, g.rankedErr, true},
		{"gaps", g.gapsTried, g.gapsErr, true},
		{"ideas", g.ideasTried, g.ideasErr, true},
	}
	tried, failed, providerTried, providerPermanent := 0, 0, 0, 0
	var names []string
	var permanent, temporary []error
	for _, p := range parts {
		if !p.tried {
			continue
		}
		tried++
		if p.provider {
			providerTried++
		}
		if p.err == nil {
			continue
		}
		failed++
		names = append(names, p.name)
		switch {
		case !p.provider:
		case errors.Is(p.err, keywords.ErrPermanent):
			providerPermanent++
			permanent = append(permanent, p.err)
		default:
			temporary = append(temporary, p.err)
		}
	}
	if providerTried > 0 && providerPermanent == providerTried {
		return fmt.Errorf("content map %s: the keyword provider refused every request: %w", domain, errors.Join(permanent...))
	}
	if failed == tried {
		// The crawl's error is only named: a refused or unreachable site alone must not make
		// the provider's passing outage look final.
		return fmt.Errorf("content map %s: every part failed (%s): %w", domain, strings.Join(names, ", "), errors.Join(temporary...))
	}
	return nil
}
