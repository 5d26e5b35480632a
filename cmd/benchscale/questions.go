package main

import (
	"context"
	"fmt"

	"github.com/contentapi/contentapi/internal/report"
)

// question is one timed request: its call in process and its HTTP form (http.go), made of
// one request by newQuestion.
type question struct {
	kind, name string
	ask        func(ctx context.Context, b *report.Builder) (string, error)
	http       httpForm
}

// questions is the fixed list asked at every size. The domains are chosen by rank, so the
// same question is asked of the same kind of site at every size: site0300 is a typical
// small site, site0004 a large competitor, bigpublisher the domain with the most rankings
// (43% of them in the skewed shape), site0001 and site0002 the next biggest.
func questions(d *dataset) []question {
	const site, rival, rival2 = "site0300.example", "site0004.example", "site0020.example"
	big := d.domains[0]
	var qs []question
	research := func(kind, name string, r report.ResearchRequest) {
		r.Domain = site
		qs = append(qs, newQuestion(kind, name, "/v1/keywords/research", r, (*report.Builder).Research, func(res report.ResearchResult) string {
			return fmt.Sprintf("%d keywords in %d clusters, total %d", res.TotalKeywords, len(res.Clusters), res.Total)
		}))
	}
	for _, t := range []string{"coffee", "espresso", "grinder", "latte", "arabica"} {
		research("research one-word", t, report.ResearchRequest{Topic: t})
	}
	for _, t := range []string{"espresso machine", "best coffee grinder", "cold brew coffee maker",
		"how to make latte at home", "french press ratio"} {
		research("research multi-word", t, report.ResearchRequest{Topic: t})
	}
	for i := 0; i < 3; i++ {
		var seeds []string
		for j := 0; j < 5; j++ {
			seeds = append(seeds, d.keywords[(i*7919+j*104729)%len(d.keywords)])
		}
		research("research 5 seeds", fmt.Sprint(seeds), report.ResearchRequest{Keywords: seeds})
	}
	// Research pages of 1,000, filtered and sorted: the first, and a later one by cursor.
	f := func(v float64) *float64 { return &v }
	pagedResearch := func() report.ResearchRequest {
		limit := 1000
		return report.ResearchRequest{Domain: site, Topic: "coffee", Limit: &limit, Query: report.Query{
			Filters: &report.QueryFilters{SearchVolume: &report.RangeFilter{Min: f(50)}, Exclude: []string{"cheap"}},
			OrderBy: []string{"keyword_difficulty.asc", "search_volume.desc"}}}
	}
	research("research 1000 filtered+sorted", "coffee", pagedResearch())
	// A later page, of 100 (the filtered walk may hold fewer than 2,000): keyset, so the
	// second stands for any.
	hundred := pagedResearch()
	*hundred.Limit = 100
	qs = append(qs, laterPage("research 100 filtered+sorted, later page", "coffee", "/v1/keywords/research", hundred, (*report.Builder).Research,
		func(res report.ResearchResult) *string { return res.NextCursor },
		func(res report.ResearchResult) string {
			return fmt.Sprintf("total %d, %d keywords", res.Total, res.TotalKeywords)
		}))
	gaps := func(kind string, competitors ...string) {
		r := report.GapsRequest{Domain: site, Competitors: competitors}
		qs = append(qs, newQuestion(kind, fmt.Sprint(competitors), "/v1/keywords/gaps", r, (*report.Builder).Gaps, func(res report.GapsResult) string {
			return fmt.Sprintf("total_gaps %d", res.TotalGaps)
		}))
	}
	gaps("gaps typical pair", rival)
	gaps("gaps vs big domain", big)
	gaps("gaps three competitors", big, rival, rival2)
	gaps("gaps three biggest", big, d.domains[1], d.domains[2])
	// Filters and orders on the biggest competitor's gaps, first pages of 1,000.
	queried := func(kind string, q report.Query, competitors ...string) {
		limit := 1000
		r := report.GapsRequest{Domain: site, Competitors: competitors, Limit: &limit, Query: q}
		qs = append(qs, newQuestion(kind, fmt.Sprint(competitors, q.OrderBy), "/v1/keywords/gaps", r, (*report.Builder).Gaps, func(res report.GapsResult) string {
			return fmt.Sprintf("total %d, %d listed", res.Total, len(res.Gaps))
		}))
	}
	filtered := &report.QueryFilters{SearchVolume: &report.RangeFilter{Min: f(500)}, KeywordDifficulty: &report.RangeFilter{Max: f(30)},
		CompetitorPosition: &report.RangeFilter{Max: f(10)}}
	queried("gaps filtered 1000", report.Query{Filters: filtered}, big)
	queried("gaps sorted 1000", report.Query{OrderBy: []string{"keyword_difficulty.asc", "cpc.desc"}}, big)
	queried("gaps filtered+sorted 1000", report.Query{Filters: filtered, OrderBy: []string{"competitor_position.asc", "search_volume.desc"}}, big)
	queried("gaps words 1000", report.Query{Filters: &report.QueryFilters{Include: []string{"coffee"}, Exclude: []string{"cheap"}}}, big, d.domains[1], d.domains[2])
	recommend := func(b *report.Builder, ctx context.Context, r report.RecommendRequest) (report.RecommendResult, error) {
		return b.Recommend(ctx, r, "bench")
	}
	recommended := func(res report.RecommendResult) string {
		return fmt.Sprintf("%d recommendations, existing_keywords %d", res.TotalRecommendations, res.ExistingKeywords)
	}
	qs = append(qs, newQuestion("recommend", "seeded, one competitor", "/v1/content/recommend",
		report.RecommendRequest{Domain: site, Competitors: []string{rival}}, recommend, recommended),
		newQuestion("recommend", "focus topics, big competitor", "/v1/content/recommend",
			report.RecommendRequest{Domain: site, FocusTopics: []string{"espresso machine", "cold brew"}, Competitors: []string{big}}, recommend, recommended),
		newQuestion("content map", "one competitor", "/v1/content-map",
			report.ContentMapRequest{Domain: site, Competitors: []string{rival}}, (*report.Builder).ContentMap, func(res report.ContentMapResult) string {
				return fmt.Sprintf("current_rankings %d, gaps %d", res.CurrentRankings.Count, res.CompetitorGaps.Count)
			}))
	qs = append(qs, rankingQuestions(d)...) // rankings.go
	return qs
}
