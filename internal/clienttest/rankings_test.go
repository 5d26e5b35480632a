package clienttest

import (
	"context"
	"testing"

	"github.com/contentapi/contentapi/client"
	"github.com/contentapi/contentapi/internal/keywords/sample"
)

// A domain's rankings and competitor discovery through the client, against the service
// with the sample data set.
func TestClientRankingsAndCompetitors(t *testing.T) {
	s := startService(t, serviceConfig{})
	ctx := context.Background()
	c := client.New(s.registerKey(t, false), client.WithBaseURL(s.URL))

	r, err := c.KeywordRankings(ctx, client.RankingsRequest{Domain: sample.Domains()[0], Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	bands := 0
	for _, n := range r.PositionBands {
		bands += n
	}
	if r.Total == 0 || len(r.Rankings) == 0 || len(r.Rankings) > 5 || len(r.PositionBands) != 5 || bands > r.Total ||
		r.Meta.CreditsUsed != 5 || r.Source != "local" {
		t.Fatalf("rankings %+v meta %+v", r, r.Meta)
	}
	for i, k := range r.Rankings {
		if i > 0 && k.Position < r.Rankings[i-1].Position {
			t.Fatalf("rankings not best position first: %+v", r.Rankings)
		}
		if k.SearchVolume != nil && k.EstimatedTraffic == nil {
			t.Fatalf("ranking %+v without traffic", k)
		}
	}

	// Every ranking once, page by page.
	seen := map[string]bool{}
	req := client.RankingsRequest{Domain: sample.Domains()[0], Limit: 2, Query: client.Query{OrderBy: []string{"keyword.asc"}}}
	pages := 0
	for page, err := range c.KeywordRankingsPages(ctx, req) {
		if err != nil || pages > r.Total {
			t.Fatalf("page %d: %v", pages, err)
		}
		pages++
		for _, k := range page.Rankings {
			if seen[k.Keyword] {
				t.Fatalf("%q twice", k.Keyword)
			}
			seen[k.Keyword] = true
		}
	}
	if len(seen) != r.Total {
		t.Fatalf("paged %d rankings, total %d", len(seen), r.Total)
	}

	comp, err := c.KeywordCompetitors(ctx, client.CompetitorsRequest{Domain: sample.Domains()[0], Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if comp.Total == 0 || len(comp.Competitors) == 0 || comp.Meta.CreditsUsed != 10 {
		t.Fatalf("competitors %+v meta %+v", comp, comp.Meta)
	}
	for i, x := range comp.Competitors {
		// The service's own rankings know every number.
		if x.SharedKeywords == nil || x.TotalKeywords == nil || x.AvgPosition == nil || x.DomainAvgPosition == nil {
			t.Fatalf("competitor %s: a number unknown on the service's own data: %+v", x.Domain, x)
		}
		if *x.SharedKeywords < 1 || *x.SharedKeywords > *x.TotalKeywords || *x.AvgPosition < 1 ||
			(i > 0 && *x.SharedKeywords > *comp.Competitors[i-1].SharedKeywords) {
			t.Fatalf("competitors %+v", comp.Competitors)
		}
	}
}
