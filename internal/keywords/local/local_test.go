package local_test

import (
	"context"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/local"
	"github.com/contentapi/contentapi/internal/keywords/sample"
	"github.com/contentapi/contentapi/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

var (
	setupOnce sync.Once
	setupErr  error
)

// db returns the package's database with the sample set (us/en) and a small hand-made
// fixture in the "ca" market whose answers the tests know exactly.
func db(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool := testenv.Postgres(t)
	setupOnce.Do(func() {
		ctx := context.Background()
		if _, _, err := sample.Seed(ctx, pool); err != nil {
			setupErr = err
			return
		}
		_, setupErr = pool.Exec(ctx, `
			INSERT INTO keyword_metrics (keyword, country, language, search_volume, keyword_difficulty, cpc, search_intent, serp_urls, source)
			VALUES ('alpha widget', 'ca', 'en', 500, 30, 1.5, 'commercial', '{https://a.example/1,https://b.example/2}', 'test'),
			       ('beta widget',  'ca', 'en', 1500, NULL, NULL, NULL, NULL, 'test'),
			       ('gamma widget', 'ca', 'en', NULL, 12, NULL, NULL, NULL, 'test'),
			       ('delta widget', 'ca', 'en', 1500, 40, 0.2, NULL, NULL, 'test'),
			       ('Kaffeebohnen kaufen', 'de', 'de', 2400, 35, 0.9, 'transactional', NULL, 'test'),
			       ('Bohnen für Espresso', 'de', 'de', 880, 20, 0.5, NULL, NULL, 'test');
			INSERT INTO domain_rankings (domain, keyword, country, language, position, url, source)
			VALUES ('ours.example',  'alpha widget',   'ca', 'en', 3, 'https://ours.example/alpha', 'test'),
			       ('comp1.example', 'alpha widget',   'ca', 'en', 1, 'https://comp1.example/alpha', 'test'),
			       ('comp1.example', 'beta widget',    'ca', 'en', 2, NULL, 'test'),
			       ('comp1.example', 'gamma widget',   'ca', 'en', 5, NULL, 'test'),
			       ('comp1.example', 'epsilon widget', 'ca', 'en', 7, NULL, 'test'),
			       ('comp2.example', 'beta widget',    'ca', 'en', 4, NULL, 'test'),
			       ('comp2.example', 'delta widget',   'ca', 'en', 9, NULL, 'test'),
			       ('other.example', 'zeta widget',    'ca', 'en', 1, NULL, 'test');`)
	})
	if setupErr != nil {
		t.Fatalf("setup: %v", setupErr)
	}
	return pool
}

func keywordsOf(ks []keywords.Keyword) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.Keyword
	}
	return out
}

func TestIdeasTopic(t *testing.T) {
	p := local.New(db(t))
	got, err := ideasOf(p.Ideas(context.Background(), keywords.IdeasRequest{Topic: "cold brew", Country: "US", Language: "EN", Limit: 10}))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 10 {
		t.Fatalf("got %d ideas, want 10: %v", len(got), keywordsOf(got))
	}
	for i, k := range got {
		if !strings.Contains(k.Keyword, "cold brew") {
			t.Errorf("idea %d %q does not contain the topic", i, k.Keyword)
		}
		if k.Relevance <= 0 {
			t.Errorf("idea %q has relevance %v", k.Keyword, k.Relevance)
		}
		if i > 0 && k.Relevance > got[i-1].Relevance {
			t.Errorf("ideas not ordered by relevance: %q (%v) after %q (%v)", k.Keyword, k.Relevance, got[i-1].Keyword, got[i-1].Relevance)
		}
		if k.SearchVolume == nil || k.Difficulty == nil || len(k.SERPURLs) == 0 || k.Intent == "" {
			t.Errorf("idea %q lacks sample metrics: %+v", k.Keyword, k)
		}
	}
}

func TestIdeasStemmingAndTypos(t *testing.T) {
	p := local.New(db(t))
	ctx := context.Background()
	// "grinding" stems to "grind": "how to grind coffee beans", "espresso grind size", …
	got, err := ideasOf(p.Ideas(ctx, keywords.IdeasRequest{Topic: "grinding", Limit: 50}))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(keywordsOf(got), "how to grind coffee beans") || !slices.Contains(keywordsOf(got), "espresso grind size") {
		t.Errorf("stemmed search missed grind keywords: %v", keywordsOf(got))
	}
	// A misspelling finds its keyword through trigram similarity.
	got, err = ideasOf(p.Ideas(ctx, keywords.IdeasRequest{Topic: "expresso machine", Limit: 5}))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || !strings.Contains(got[0].Keyword, "espresso machine") {
		t.Errorf("typo search: got %v, want an espresso machine first", keywordsOf(got))
	}
}

func TestIdeasSeeds(t *testing.T) {
	p := local.New(db(t))
	seeds := []string{"pour over coffee ratio", "  Cold  Brew Coffee "}
	got, err := ideasOf(p.Ideas(context.Background(), keywords.IdeasRequest{Seeds: seeds, Limit: 30}))
	if err != nil {
		t.Fatal(err)
	}
	names := keywordsOf(got)
	first := names[:2]
	sort.Strings(first)
	if !slices.Equal(first, []string{"cold brew coffee", "pour over coffee ratio"}) {
		t.Fatalf("exact seeds not first: %v", names)
	}
	var cold, pour bool
	for _, n := range names[2:] {
		cold = cold || strings.Contains(n, "cold brew")
		pour = pour || strings.Contains(n, "pour over")
	}
	if !cold || !pour {
		t.Errorf("ideas are not the union of both seeds' matches: %v", names)
	}
	if len(got) > 30 {
		t.Errorf("limit 30 exceeded: %d", len(got))
	}
}

func TestIdeasMarketAndLanguage(t *testing.T) {
	p := local.New(db(t))
	ctx := context.Background()
	got, err := ideasOf(p.Ideas(ctx, keywords.IdeasRequest{Topic: "bohne", Country: "de", Language: "de"}))
	if err != nil {
		t.Fatal(err)
	}
	// German stemming matches "Bohnen"; the compound "Kaffeebohnen" only by trigrams, if at all.
	if !slices.Contains(keywordsOf(got), "Bohnen für Espresso") {
		t.Errorf("german ideas: %v", keywordsOf(got))
	}
	got, err = ideasOf(p.Ideas(ctx, keywords.IdeasRequest{Topic: "bohnen", Country: "us", Language: "en"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("us/en ideas include other markets: %v", keywordsOf(got))
	}
	got, err = ideasOf(p.Ideas(ctx, keywords.IdeasRequest{}))
	if err != nil || len(got) != 0 || got == nil {
		t.Errorf("empty request: %v, %v (want an empty, non-nil list)", got, err)
	}
}

func TestRanked(t *testing.T) {
	p := local.New(db(t))
	ctx := context.Background()
	got, err := p.Ranked(ctx, keywords.RankedRequest{Domain: "https://WWW.Comp1.example/some/page", Country: "ca"})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		kw  string
		pos int
	}{{"alpha widget", 1}, {"beta widget", 2}, {"gamma widget", 5}, {"epsilon widget", 7}}
	if len(got) != len(want) {
		t.Fatalf("got %d rankings, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Keyword.Keyword != w.kw || got[i].Position != w.pos {
			t.Errorf("ranking %d = %q at %d, want %q at %d", i, got[i].Keyword.Keyword, got[i].Position, w.kw, w.pos)
		}
	}
	alpha := got[0]
	if alpha.URL != "https://comp1.example/alpha" || alpha.SearchVolume == nil || *alpha.SearchVolume != 500 ||
		alpha.CPC == nil || *alpha.CPC != 1.5 || alpha.Intent != "commercial" || len(alpha.SERPURLs) != 2 {
		t.Errorf("alpha metrics: %+v", alpha)
	}
	gamma, eps := got[2], got[3]
	if gamma.SearchVolume != nil || gamma.Difficulty == nil || *gamma.Difficulty != 12 || gamma.CPC != nil {
		t.Errorf("gamma: unknown metrics must stay nil, known ones kept: %+v", gamma)
	}
	if eps.SearchVolume != nil || eps.Difficulty != nil || eps.CPC != nil || eps.Competition != nil || eps.Intent != "" || eps.SERPURLs != nil {
		t.Errorf("epsilon has no keyword_metrics row, yet metrics: %+v", eps)
	}

	limited, err := p.Ranked(ctx, keywords.RankedRequest{Domain: "comp1.example", Country: "ca", Limit: 2})
	if err != nil || len(limited) != 2 || limited[1].Keyword.Keyword != "beta widget" {
		t.Errorf("limit 2: %+v, %v", limited, err)
	}

	// The sample: every ranking of coffee-sample.example, best first.
	all, err := p.Ranked(ctx, keywords.RankedRequest{Domain: "coffee-sample.example"})
	if err != nil {
		t.Fatal(err)
	}
	// Asked for some keywords (as written by a user: case and spaces, one it does not rank
	// for), the rankings of those keywords: the full list's, in its order.
	r := rand.New(rand.NewPCG(44, 2))
	for range 20 {
		var asked []string
		want := map[string]bool{}
		for _, k := range all {
			if r.IntN(4) == 0 {
				asked = append(asked, "  "+strings.ToUpper(k.Keyword.Keyword)+" ")
				want[k.Keyword.Keyword] = true
			}
		}
		asked = append(asked, "a keyword nobody ranks for")
		some, err := p.Ranked(ctx, keywords.RankedRequest{Domain: "coffee-sample.example", Keywords: asked})
		if err != nil {
			t.Fatal(err)
		}
		var expect []keywords.Ranking
		for _, k := range all {
			if want[k.Keyword.Keyword] {
				expect = append(expect, k)
			}
		}
		if len(expect) == 0 {
			continue
		}
		if !reflect.DeepEqual(some, expect) {
			t.Fatalf("rankings of %d keywords: %d rankings, want %d: %+v", len(asked), len(some), len(expect), some)
		}
	}
	var n int
	if err := db(t).QueryRow(ctx, `SELECT count(*) FROM domain_rankings WHERE domain = 'coffee-sample.example'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if len(all) != n || n == 0 {
		t.Fatalf("limit 0 returned %d of %d rankings", len(all), n)
	}
	for i := 1; i < len(all); i++ {
		if all[i].Position < all[i-1].Position {
			t.Fatalf("not best position first at %d: %d after %d", i, all[i].Position, all[i-1].Position)
		}
	}
}

func TestGaps(t *testing.T) {
	p := local.New(db(t))
	list, err := p.Gaps(context.Background(), keywords.GapsRequest{
		Domain:      "www.ours.example",
		Competitors: []string{"comp1.example", "https://www.COMP2.example/", "ours.example", "comp1.example"},
		Country:     "ca", Language: "en",
	})
	if err != nil {
		t.Fatal(err)
	}
	got := list.Gaps
	if list.Total != 4 {
		t.Errorf("total %d, want 4", list.Total)
	}
	want := []struct {
		kw  string
		pos map[string]int
	}{
		{"beta widget", map[string]int{"comp1.example": 2, "comp2.example": 4}},
		{"delta widget", map[string]int{"comp2.example": 9}},
		{"epsilon widget", map[string]int{"comp1.example": 7}}, // unknown volume: last, by keyword
		{"gamma widget", map[string]int{"comp1.example": 5}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d gaps, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Keyword.Keyword != w.kw {
			t.Errorf("gap %d = %q, want %q", i, got[i].Keyword.Keyword, w.kw)
		}
		if len(got[i].CompetitorPositions) != len(w.pos) {
			t.Errorf("gap %q positions %v, want %v", w.kw, got[i].CompetitorPositions, w.pos)
		}
		for d, pos := range w.pos {
			if got[i].CompetitorPositions[d] != pos {
				t.Errorf("gap %q positions %v, want %v", w.kw, got[i].CompetitorPositions, w.pos)
			}
		}
	}
	if got[0].SearchVolume == nil || *got[0].SearchVolume != 1500 || got[0].Difficulty != nil {
		t.Errorf("beta metrics: %+v", got[0].Keyword)
	}
	if got[2].SearchVolume != nil || got[2].Difficulty != nil {
		t.Errorf("epsilon has no metrics row: %+v", got[2].Keyword)
	}

	none, err := p.Gaps(context.Background(), keywords.GapsRequest{Domain: "ours.example", Country: "ca"})
	if err != nil || none.Gaps == nil || len(none.Gaps) != 0 || none.Total != 0 {
		t.Errorf("no competitors: %v, %v", none, err)
	}
}

// TestGapsSample checks the sample's gaps against a plain reading of the rankings.
func TestGapsSample(t *testing.T) {
	pool := db(t)
	p := local.New(pool)
	ctx := context.Background()
	comps := []string{"brewguide-sample.example", "beanbox-sample.example"}
	list, err := p.Gaps(ctx, keywords.GapsRequest{Domain: "coffee-sample.example", Competitors: comps})
	if err != nil {
		t.Fatal(err)
	}
	got := list.Gaps
	if list.Total != len(got) {
		t.Errorf("total %d, %d gaps listed without a limit", list.Total, len(got))
	}
	rank := map[string]map[string]int{} // keyword → domain → position
	rows, err := pool.Query(ctx, `SELECT domain, keyword, position FROM domain_rankings WHERE country = 'us' AND language = 'en'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var d, k string
		var pos int
		if err := rows.Scan(&d, &k, &pos); err != nil {
			t.Fatal(err)
		}
		if rank[k] == nil {
			rank[k] = map[string]int{}
		}
		rank[k][d] = pos
	}
	want := 0
	for _, doms := range rank {
		_, ours := doms["coffee-sample.example"]
		_, c1 := doms[comps[0]]
		_, c2 := doms[comps[1]]
		if !ours && (c1 || c2) {
			want++
		}
	}
	if len(got) != want || want == 0 {
		t.Fatalf("got %d gaps, want %d", len(got), want)
	}
	for i, g := range got {
		for d, pos := range g.CompetitorPositions {
			if rank[g.Keyword.Keyword][d] != pos {
				t.Errorf("gap %q: %s at %d, rankings say %d", g.Keyword.Keyword, d, pos, rank[g.Keyword.Keyword][d])
			}
		}
		for _, d := range comps {
			if _, ok := rank[g.Keyword.Keyword][d]; ok != (g.CompetitorPositions[d] != 0) {
				t.Errorf("gap %q: competitor %s missing from %v", g.Keyword.Keyword, d, g.CompetitorPositions)
			}
		}
		if i > 0 && *g.SearchVolume > *got[i-1].SearchVolume {
			t.Errorf("gaps not by volume: %q after %q", g.Keyword.Keyword, got[i-1].Keyword.Keyword)
		}
	}
}

func TestNormalizeDomain(t *testing.T) {
	for in, want := range map[string]string{
		"example.com":                     "example.com",
		"WWW.Example.COM":                 "example.com",
		"https://www.example.com/a/b?q=1": "example.com",
		"http://shop.example.com:8080/":   "shop.example.com",
		"www.www.example.com.":            "example.com",
		"Bücher.example":                  "xn--bcher-kva.example",
		"  ":                              "",
	} {
		if got := local.NormalizeDomain(in); got != want {
			t.Errorf("NormalizeDomain(%q) = %q, want %q", in, got, want)
		}
	}
	if got := local.CleanKeyword("  Cold \t brew\u00a0 coffee "); got != "Cold brew coffee" {
		t.Errorf("CleanKeyword = %q", got)
	}
}

// TestGapsPages checks that every limit gives the first gaps of the full list and the full
// count, whichever way the page is chosen (the walk by volume, or the full sort when the
// walk's page would end among unknown volumes).
func TestGapsPages(t *testing.T) {
	p := local.New(db(t))
	req := keywords.GapsRequest{Domain: "ours.example", Competitors: []string{"comp1.example", "comp2.example"}, Country: "ca", Language: "en"}
	all, err := p.Gaps(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	for limit := 1; limit <= len(all.Gaps)+1; limit++ {
		req.Limit = limit
		page, err := p.Gaps(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if page.Total != all.Total {
			t.Errorf("limit %d: total %d, want %d", limit, page.Total, all.Total)
		}
		want := all.Gaps[:min(limit, len(all.Gaps))]
		if len(page.Gaps) != len(want) {
			t.Fatalf("limit %d: %d gaps, want %d", limit, len(page.Gaps), len(want))
		}
		for i := range want {
			if page.Gaps[i].Keyword.Keyword != want[i].Keyword.Keyword || !maps.Equal(page.Gaps[i].CompetitorPositions, want[i].CompetitorPositions) {
				t.Errorf("limit %d: gap %d = %+v, want %+v", limit, i, page.Gaps[i], want[i])
			}
		}
	}
}

// ideasOf reads an IdeaList's ideas, for the tests written before Ideas answered one.
func ideasOf(l keywords.IdeaList, err error) ([]keywords.Keyword, error) { return l.Ideas, err }
