package main

import (
	"context"
	"fmt"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/report"
)

// rankingQuestions times a domain's rankings (POST /v1/keywords/rankings) of the biggest
// domain, default and filtered and sorted, first page and a later one, and competitor
// discovery (POST /v1/keywords/competitors) of a small, a large and the biggest domain.
// A later page is read at the provider (the bench's builder has no cursor key): it repeats
// the first page's counts from its token and runs the page statement alone, whose work does
// not depend on how far the page is (keyset, no OFFSET), so the second page stands for the
// 500th.
func rankingQuestions(d *dataset) []question {
	big := d.domains[0]
	f := func(v float64) *float64 { return &v }
	queries := []struct {
		name    string
		filters keywords.Filters
		order   []keywords.OrderKey
	}{
		{name: "default order"},
		{name: "volume >= 500, kd <= 30, by traffic", filters: keywords.Filters{Ranges: map[keywords.Field]keywords.Range{
			keywords.FieldSearchVolume: {Min: f(500)}, keywords.FieldDifficulty: {Max: f(30)}}},
			order: []keywords.OrderKey{{Field: keywords.FieldTraffic, Desc: true}}},
		{name: "top 10, commercial, by kd then cpc", filters: keywords.Filters{Ranges: map[keywords.Field]keywords.Range{
			keywords.FieldPosition: {Max: f(10)}}, Intents: []string{"commercial"}},
			order: []keywords.OrderKey{{Field: keywords.FieldDifficulty}, {Field: keywords.FieldCPC, Desc: true}}},
		{name: "word 'coffee', by keyword", filters: keywords.Filters{Include: []string{"coffee"}},
			order: []keywords.OrderKey{{Field: keywords.FieldKeyword}}},
	}
	var qs []question
	for _, q := range queries {
		qs = append(qs, question{"rankings biggest domain, first page", q.name, func(ctx context.Context, b *report.Builder) (string, error) {
			list, err := b.Keywords.Rankings(ctx, keywords.RankingsRequest{Domain: big, Filters: q.filters, Order: q.order,
				Page: keywords.Page{Limit: 100}})
			return fmt.Sprintf("total %d, bands %v", list.Total, list.Bands), err
		}})
		var next string
		qs = append(qs, question{"rankings biggest domain, later page", q.name, func(ctx context.Context, b *report.Builder) (string, error) {
			if next == "" {
				first, err := b.Keywords.Rankings(ctx, keywords.RankingsRequest{Domain: big, Filters: q.filters, Order: q.order,
					Page: keywords.Page{Limit: 100}})
				if err != nil || first.Next == "" {
					return "no second page", err
				}
				next = first.Next
			}
			list, err := b.Keywords.Rankings(ctx, keywords.RankingsRequest{Domain: big, Filters: q.filters, Order: q.order,
				Page: keywords.Page{Limit: 100, After: next}})
			return fmt.Sprintf("%d rows", len(list.Rankings)), err
		}})
	}
	qs = append(qs, question{"rankings report, small site", "site0300", func(ctx context.Context, b *report.Builder) (string, error) {
		r := report.RankingsRequest{DomainQuery: report.DomainQuery{Domain: "site0300.example"}}
		if err := r.Normalize(report.Options{}); err != nil {
			return "", err
		}
		res, err := b.Rankings(ctx, r)
		return fmt.Sprintf("total %d", res.Total), err
	}})
	for _, dom := range []string{"site0300.example", "site0004.example", big} {
		qs = append(qs, question{"competitors " + map[bool]string{true: "biggest domain", false: "small/large site"}[dom == big], dom,
			func(ctx context.Context, b *report.Builder) (string, error) {
				r := report.CompetitorsRequest{DomainQuery: report.DomainQuery{Domain: dom}}
				if err := r.Normalize(report.Options{}); err != nil {
					return "", err
				}
				res, err := b.Competitors(ctx, r)
				top := ""
				if len(res.Competitors) > 0 {
					top = fmt.Sprintf(", top %s %d shared of %d", res.Competitors[0].Domain, res.Competitors[0].SharedKeywords, res.Competitors[0].TotalKeywords)
				}
				return fmt.Sprintf("total %d%s", res.Total, top), err
			}})
	}
	return qs
}
