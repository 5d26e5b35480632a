package importer_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/importer"
	"github.com/contentapi/contentapi/internal/keywords/local"
)

// A ranking's keyword equal to its norm is stored as NULL (migration 00048), by the copy
// into a new table and by the staged rows alike, and every question reads it back as
// written: the rankings (both statements), the gaps, and the keyword of a gap the keyword
// table lacks. An update of such a row keeps its norm.
func TestRankingKeywordsStoredAsNormReadAsWritten(t *testing.T) {
	ctx := context.Background()
	pool := schemaPool(t, "kw_as_norm")
	importer.AlwaysDirect(t, 2, 150)
	file := "domain,keyword,position,url\n" +
		"a.example,grind size,3,https://a.example/g\n" + // equal to its norm: NULL
		"a.example,Budget  App,2,https://a.example/b\n" + // differs: kept
		"a.example,caf\u00e9 near me,5,\n" + // staged (not ASCII), equal to its norm: NULL
		"a.example,K\u00f6ln Guide,4,\n" + // staged, differs: kept
		"b.example,grind size,1,https://b.example/g\n"
	if _, err := importer.ImportRankings(ctx, pool, strings.NewReader(file), importer.Options{Country: "xk"}); err != nil {
		t.Fatal(err)
	}
	var stored []string
	rows, err := pool.Query(ctx, `SELECT domain || ':' || coalesce(keyword, 'NULL') || ':' || keyword_norm
		FROM domain_rankings WHERE country = 'xk' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"a.example:Budget App:budget app", "a.example:K\u00f6ln Guide:k\u00f6ln guide",
		"a.example:NULL:caf\u00e9 near me", "a.example:NULL:grind size", "b.example:NULL:grind size"}
	if !slices.Equal(stored, want) {
		t.Fatalf("stored %q, want %q", stored, want)
	}

	p := local.New(pool)
	written := []string{"Budget App", "K\u00f6ln Guide", "caf\u00e9 near me", "grind size"}
	ranked, err := p.Ranked(ctx, keywords.RankedRequest{Domain: "a.example", Country: "xk", Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	some, err := p.Ranked(ctx, keywords.RankedRequest{Domain: "a.example", Country: "xk", Language: "en",
		Keywords: []string{"grind size", "budget app"}})
	if err != nil {
		t.Fatal(err)
	}
	page, err := p.Rankings(ctx, keywords.RankingsRequest{Domain: "a.example", Country: "xk", Language: "en",
		Page: keywords.Page{Limit: 10}})
	if err != nil {
		t.Fatal(err)
	}
	gaps, err := p.Gaps(ctx, keywords.GapsRequest{Domain: "b.example", Competitors: []string{"a.example"},
		Country: "xk", Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what      string
		got, want []string
	}{
		{"ranked", sortedKeywords(ranked, rankingKeyword), written},
		{"ranked, two keywords", sortedKeywords(some, rankingKeyword), []string{"Budget App", "grind size"}},
		{"rankings", sortedKeywords(page.Rankings, rankingKeyword), written},
		{"gaps", sortedKeywords(gaps.Gaps, func(g keywords.Gap) string { return g.Keyword.Keyword }), []string{"Budget App", "K\u00f6ln Guide", "caf\u00e9 near me"}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: keywords %q, want %q", c.what, c.got, c.want)
		}
	}

	// A new URL for a row stored as its norm: the keys are recomputed from the keyword as
	// it reads.
	if _, err := pool.Exec(ctx, `UPDATE domain_rankings SET url = 'https://a.example/grind'
		WHERE country = 'xk' AND domain = 'a.example' AND keyword_norm = 'grind size'`); err != nil {
		t.Fatal(err)
	}
	var norm string
	var hashed bool
	if err := pool.QueryRow(ctx, `SELECT keyword_norm, url_hash = md5(url)::uuid FROM domain_rankings
		WHERE country = 'xk' AND domain = 'a.example' AND url = 'https://a.example/grind'`).Scan(&norm, &hashed); err != nil {
		t.Fatal(err)
	}
	if norm != "grind size" || !hashed {
		t.Errorf("after a new URL: norm %q, url_hash of the URL %v; want \"grind size\", true", norm, hashed)
	}
}

// sortedKeywords are the keyword texts of an answer's rows, sorted.
func sortedKeywords[T any](rows []T, keyword func(T) string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, keyword(r))
	}
	slices.Sort(out)
	return out
}

func rankingKeyword(r keywords.Ranking) string { return r.Keyword.Keyword }
