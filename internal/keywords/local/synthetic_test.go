package local_test

import (
	"context"
	"slices"
	"testing"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/local"
)

// The sample set (us/en) is synthetic, the hand-made "ca" fixture is not: every answer
// carries each row's flag, ideas through keywords.Ideas.
func TestSyntheticFlags(t *testing.T) {
	pool := db(t)
	p := local.New(pool)
	ctx := context.Background()
	flags := func(ks []keywords.Keyword) (synthetic, real int) {
		for _, k := range ks {
			if k.Synthetic {
				synthetic++
			} else {
				real++
			}
		}
		return synthetic, real
	}
	check := func(what string, ks []keywords.Keyword, err error, wantSynthetic bool) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		s, r := flags(ks)
		if len(ks) == 0 || (wantSynthetic && r > 0) || (!wantSynthetic && s > 0) {
			t.Errorf("%s: %d synthetic, %d real rows; want all %s", what, s, r, map[bool]string{true: "synthetic", false: "real"}[wantSynthetic])
		}
	}
	rankedKeywords := func(rs []keywords.Ranking) []keywords.Keyword {
		out := make([]keywords.Keyword, len(rs))
		for i, r := range rs {
			out[i] = r.Keyword
		}
		return out
	}
	gapKeywords := func(gs []keywords.Gap) []keywords.Keyword {
		out := make([]keywords.Keyword, len(gs))
		for i, g := range gs {
			out[i] = g.Keyword
		}
		return out
	}

	ideas, err := ideasOf(keywords.Ideas(ctx, p, keywords.IdeasRequest{Topic: "coffee", Country: "us", Language: "en", Limit: 20}))
	check("sample ideas", ideas, err, true)
	ideas, err = ideasOf(keywords.Ideas(ctx, p, keywords.IdeasRequest{Topic: "widget", Country: "ca", Language: "en", Limit: 20}))
	check("imported ideas", ideas, err, false)

	ranked, err := p.Ranked(ctx, keywords.RankedRequest{Domain: "coffee-sample.example", Country: "us", Language: "en"})
	check("sample rankings", rankedKeywords(ranked), err, true)
	ranked, err = p.Ranked(ctx, keywords.RankedRequest{Domain: "comp1.example", Country: "ca", Language: "en"})
	check("imported rankings", rankedKeywords(ranked), err, false)

	list, err := p.Gaps(ctx, keywords.GapsRequest{Domain: "coffee-sample.example", Competitors: []string{"brewguide-sample.example"}, Country: "us", Language: "en"})
	check("sample gaps", gapKeywords(list.Gaps), err, true)
	list, err = p.Gaps(ctx, keywords.GapsRequest{Domain: "ours.example", Competitors: []string{"comp1.example", "www.nobody.example"}, Country: "ca", Language: "en"})
	check("imported gaps", gapKeywords(list.Gaps), err, false)
	if !slices.Equal(list.Unranked, []string{"nobody.example"}) {
		t.Errorf("unranked %q, want the competitor without rankings (keyed)", list.Unranked)
	}

	// A real keyword row ranked by a synthetic ranking row makes a synthetic ranking.
	if _, err := pool.Exec(ctx, `
		INSERT INTO keyword_metrics (keyword, country, language, search_volume, source) VALUES ('mixed widget', 'in', 'en', 10, 'test');
		INSERT INTO domain_rankings (domain, keyword, country, language, position, source, synthetic)
		VALUES ('fake.example', 'mixed widget', 'in', 'en', 4, 'sample', true)`); err != nil {
		t.Fatal(err)
	}
	ranked, err = p.Ranked(ctx, keywords.RankedRequest{Domain: "fake.example", Country: "in", Language: "en"})
	check("synthetic ranking of a real keyword", rankedKeywords(ranked), err, true)
}

func TestPopular(t *testing.T) {
	p := local.New(db(t))
	got, err := p.Popular(context.Background(), "ca", "en", 3)
	if err != nil || !slices.Equal(got, []string{"beta widget", "delta widget", "alpha widget"}) {
		t.Errorf("popular = %q, %v; want the highest volumes first, ties by keyword", got, err)
	}
	if got, err := p.Popular(context.Background(), "pt", "tr", 3); err != nil || len(got) != 0 {
		t.Errorf("popular of an empty market = %q, %v", got, err)
	}
}
