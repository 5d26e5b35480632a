package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/contentapi/contentapi/internal/report"
)

// rankingQuestions times a domain's rankings (POST /v1/keywords/rankings) of the biggest
// domain, default and filtered and sorted, first page and a later one, and competitor
// discovery (POST /v1/keywords/competitors) of a small, a large and the biggest domain.
// A later page is asked with the first page's next_cursor: it repeats the first page's
// counts from the cursor and runs the page statement alone, whose work does not depend on
// how far the page is (keyset, no OFFSET), so the second page stands for the 500th.
func rankingQuestions(d *dataset) []question {
	big := d.domains[0]
	// The small site is site0300 (the questions' target), or the last domain when there are
	// fewer (-domains 50): site0300 would then have no rankings, which is NO_DATA.
	small := d.domains[min(300, len(d.domains)-1)]
	f := func(v float64) *float64 { return &v }
	queries := []struct {
		name  string
		query report.Query
	}{
		{name: "default order"},
		{name: "volume >= 500, kd <= 30, by traffic", query: report.Query{Filters: &report.QueryFilters{
			SearchVolume: &report.RangeFilter{Min: f(500)}, KeywordDifficulty: &report.RangeFilter{Max: f(30)}},
			OrderBy: []string{"estimated_traffic.desc"}}},
		{name: "top 10, commercial, by kd then cpc", query: report.Query{Filters: &report.QueryFilters{
			Position: &report.RangeFilter{Max: f(10)}, Intent: []string{"commercial"}},
			OrderBy: []string{"keyword_difficulty.asc", "cpc.desc"}}},
		{name: "word 'coffee', by keyword", query: report.Query{Filters: &report.QueryFilters{Include: []string{"coffee"}},
			OrderBy: []string{"keyword.asc"}}},
	}
	var qs []question
	for _, q := range queries {
		limit := 100
		r := report.RankingsRequest{DomainQuery: report.DomainQuery{Domain: big, Limit: &limit, Query: q.query}}
		qs = append(qs, newQuestion("rankings biggest domain, first page", q.name, "/v1/keywords/rankings", r, (*report.Builder).Rankings,
			func(list report.RankingsResult) string {
				return fmt.Sprintf("total %d, bands %v", list.Total, list.PositionBands)
			}))
		qs = append(qs, laterPage("rankings biggest domain, later page", q.name, "/v1/keywords/rankings", r, (*report.Builder).Rankings,
			func(list report.RankingsResult) *string { return list.NextCursor },
			func(list report.RankingsResult) string { return fmt.Sprintf("%d rows", len(list.Rankings)) }))
	}
	qs = append(qs, newQuestion("rankings report, small site", strings.TrimSuffix(small, ".example"), "/v1/keywords/rankings",
		report.RankingsRequest{DomainQuery: report.DomainQuery{Domain: small}}, (*report.Builder).Rankings,
		func(res report.RankingsResult) string { return fmt.Sprintf("total %d", res.Total) }))
	for _, dom := range []string{small, "site0004.example", big} {
		qs = append(qs, newQuestion("competitors "+map[bool]string{true: "biggest domain", false: "small/large site"}[dom == big], dom,
			"/v1/keywords/competitors", report.CompetitorsRequest{DomainQuery: report.DomainQuery{Domain: dom}}, (*report.Builder).Competitors,
			func(res report.CompetitorsResult) string {
				top := ""
				if len(res.Competitors) > 0 {
					c := res.Competitors[0]
					top = fmt.Sprintf(", top %s %s shared of %s", c.Domain, count(c.SharedKeywords), count(c.TotalKeywords))
				}
				return fmt.Sprintf("total %d%s", res.Total, top)
			}))
	}
	// Filtered discovery of the biggest domain: its keywords of volume ≥ 500 where the
	// competitor ranks top 10, and its keywords holding "coffee".
	fl := func(v float64) *float64 { return &v }
	for _, cq := range []struct {
		name    string
		filters report.QueryFilters
	}{
		{"volume >= 500, competitor top 10", report.QueryFilters{SearchVolume: &report.RangeFilter{Min: fl(500)},
			CompetitorPosition: &report.RangeFilter{Max: fl(10)}}},
		{"word 'coffee'", report.QueryFilters{Include: []string{"coffee"}}},
	} {
		r := report.CompetitorsRequest{DomainQuery: report.DomainQuery{Domain: big}}
		r.Filters = &cq.filters
		qs = append(qs, newQuestion("competitors biggest domain, filtered", cq.name, "/v1/keywords/competitors", r, (*report.Builder).Competitors,
			func(res report.CompetitorsResult) string { return fmt.Sprintf("total %d", res.Total) }))
	}
	return qs
}

// count prints a count an answer may leave null.
func count(p *int) string {
	if p == nil {
		return "null"
	}
	return strconv.Itoa(*p)
}
