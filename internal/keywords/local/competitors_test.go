package local_test

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/local"
)

// Competitor discovery counts against counts made here from the generated market's rows.
func TestCompetitorsCounts(t *testing.T) {
	all := pagedMarket(t)
	pool := db(t)
	p := local.New(pool)
	local.CompetitorSetsFrom(t, 1)
	// Both ways: counted in SQL (the keyword sets stale), then, without filters, on the
	// keyword sets and their positions (competitorsets.go).
	for _, source := range []string{"sql", "sets"} {
		ctx := context.Background()
		if source == "sets" {
			if err := local.BuildKeywordSets(ctx, pool); err != nil {
				t.Fatal(err)
			}
		} else if _, err := pool.Exec(ctx, `UPDATE keyword_sets_state SET generation = generation + 1`); err != nil {
			t.Fatal(err)
		}
		testCompetitorsCounts(t, source, p, all)
	}
}

func testCompetitorsCounts(t *testing.T, source string, p *local.Provider, all []pagedRow) {
	cases := []struct {
		name    string
		filters keywords.Filters
	}{
		{name: "all"},
		{name: "volume and competitor top 10", filters: keywords.Filters{Ranges: map[keywords.Field]keywords.Range{
			keywords.FieldSearchVolume: {Min: ptr(10)}, keywords.FieldCompetitorPosition: {Max: ptr(10)}}}},
		{name: "own position and words", filters: keywords.Filters{Ranges: map[keywords.Field]keywords.Range{
			keywords.FieldPosition: {Min: ptr(3), Max: ptr(60)}}, Exclude: []string{"cheap"}}},
	}
	for _, c := range cases {
		for _, domain := range []string{"big.example", "small.example"} {
			t.Run(source+" "+c.name+" "+domain, func(t *testing.T) {
				own := map[string]pagedRow{}
				totals := map[string]int{}
				for _, r := range all {
					totals[r.domain]++
					if r.domain == domain {
						own[r.keyword] = r
					}
				}
				type acc struct {
					shared     int
					sumC, sumD int
				}
				accs := map[string]*acc{}
				for _, r := range all {
					d, ok := own[r.keyword]
					if r.domain == domain || !ok || !passes(d, withoutCompetitor(c.filters)) {
						continue
					}
					if rg, ok := c.filters.Ranges[keywords.FieldCompetitorPosition]; ok &&
						((rg.Min != nil && float64(r.position) < *rg.Min) || (rg.Max != nil && float64(r.position) > *rg.Max)) {
						continue
					}
					a := accs[r.domain]
					if a == nil {
						a = &acc{}
						accs[r.domain] = a
					}
					a.shared++
					a.sumC += r.position
					a.sumD += d.position
				}
				var want []keywords.Competitor
				for dom, a := range accs {
					want = append(want, keywords.Competitor{Domain: dom, Shared: a.shared, Total: totals[dom],
						AvgPosition: float64(a.sumC) / float64(a.shared), DomainAvgPosition: float64(a.sumD) / float64(a.shared)})
				}
				slices.SortFunc(want, func(a, b keywords.Competitor) int {
					return cmp.Or(cmp.Compare(b.Shared, a.Shared), strings.Compare(a.Domain, b.Domain))
				})
				var got []keywords.Competitor
				after := ""
				for {
					list, err := p.Competitors(context.Background(), keywords.CompetitorsRequest{Domain: domain, Country: "au",
						Language: "en", Filters: c.filters, Page: keywords.Page{Limit: 1, After: after}})
					if err != nil {
						t.Fatal(err)
					}
					if list.Total != len(want) {
						t.Fatalf("total %d, want %d", list.Total, len(want))
					}
					got = append(got, list.Competitors...)
					if after = list.Next; after == "" {
						break
					}
				}
				if len(got) != len(want) {
					t.Fatalf("got %d competitors, want %d: %+v", len(got), len(want), got)
				}
				for i := range want {
					g, w := got[i], want[i]
					if g.Domain != w.Domain || g.Shared != w.Shared || g.Total != w.Total ||
						math.Abs(g.AvgPosition-w.AvgPosition) > 0.005 || math.Abs(g.DomainAvgPosition-w.DomainAvgPosition) > 0.005 {
						t.Fatalf("competitor %d: got %+v, want %+v", i, g, w)
					}
				}
			})
		}
	}
}

func withoutCompetitor(f keywords.Filters) keywords.Filters {
	out := f
	out.Ranges = map[keywords.Field]keywords.Range{}
	for k, v := range f.Ranges {
		if k != keywords.FieldCompetitorPosition {
			out.Ranges[k] = v
		}
	}
	return out
}

// The competitors' totals read from the keyword sets, once built, equal the counts.
func TestCompetitorTotalsFromKeywordSets(t *testing.T) {
	all := pagedMarket(t)
	pool := db(t)
	p := local.New(pool)
	totals := map[string]int{}
	for _, r := range all {
		totals[r.domain]++
	}
	if err := local.BuildKeywordSets(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
	list, err := p.Competitors(context.Background(), keywords.CompetitorsRequest{Domain: "big.example", Country: "au", Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Competitors) != 3 {
		t.Fatalf("competitors %+v", list.Competitors)
	}
	for _, c := range list.Competitors {
		if c.Total != totals[c.Domain] {
			t.Errorf("%s: total %d, want %d", c.Domain, c.Total, totals[c.Domain])
		}
	}
}
