package importer_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/cache"
	"github.com/contentapi/contentapi/internal/keywords/importer"
	"github.com/contentapi/contentapi/internal/keywords/local"
	"github.com/contentapi/contentapi/internal/testenv"
)

// rankingsFile writes a rankings CSV: for each of n keywords, "me.test" ranks for every
// third and each competitor for every keyword its step divides, at a position moved by
// shift.
func rankingsFile(n, shift int) string {
	var b strings.Builder
	b.WriteString("domain,keyword,position,volume\n")
	for i := range n {
		kw := fmt.Sprintf("kw %04d", i)
		if i%3 == 0 {
			fmt.Fprintf(&b, "me.test,%s,%d,%d\n", kw, 1+(i+shift)%40, 10*i)
		}
		for c, step := range []int{2, 5} {
			if i%step == 0 {
				fmt.Fprintf(&b, "rival%d.test,%s,%d,%d\n", c, kw, 1+(i*7+shift)%60, 10*i)
			}
		}
	}
	return b.String()
}

// TestEveryImportPathMovesTheAnswers imports rankings by each of the importer's paths —
// straight into a new table (the first, large file), as a new table switched in for the
// old one (a larger file), and merged row by row (a smaller one changing positions) — and
// after each asks one long-lived provider stack, the worker's (the Redis answer cache over
// the local provider and its keyword columns), for gaps and rankings, against counts in SQL.
// The switch wrote its rows before its table had triggers: it must move the data version
// itself, or the columns and the cache keep answering from the data before it.
func TestEveryImportPathMovesTheAnswers(t *testing.T) {
	ctx := context.Background()
	pool := testenv.Postgres(t)
	if _, err := pool.Exec(ctx, `TRUNCATE domain_rankings, keyword_metrics`); err != nil {
		t.Fatal(err)
	}
	p := cache.New(local.New(pool), testenv.Redis(t), 24*time.Hour)

	five := 5.0
	check := func(t *testing.T, step string) {
		t.Helper()
		var gaps, ranks, top5 int
		if err := pool.QueryRow(ctx, `SELECT
			(SELECT count(DISTINCT keyword_norm) FROM domain_rankings r WHERE domain IN ('rival0.test', 'rival1.test')
			  AND NOT EXISTS (SELECT 1 FROM domain_rankings m WHERE m.domain = 'me.test' AND m.keyword_norm = r.keyword_norm
			                  AND m.country = r.country AND m.language = r.language)),
			(SELECT count(DISTINCT keyword_norm) FROM domain_rankings WHERE domain = 'rival0.test'),
			(SELECT count(*) FROM (SELECT keyword_norm FROM domain_rankings WHERE domain = 'rival0.test'
			                       GROUP BY keyword_norm HAVING min(position) <= 5) x)`).Scan(&gaps, &ranks, &top5); err != nil {
			t.Fatal(err)
		}
		for range 2 { // the second time from the cache
			g, err := p.Gaps(ctx, keywords.GapsRequest{Domain: "me.test", Competitors: []string{"rival0.test", "rival1.test"},
				Country: "us", Language: "en", Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			r, err := p.Rankings(ctx, keywords.RankingsRequest{Domain: "rival0.test", Country: "us", Language: "en",
				Page: keywords.Page{Limit: 10}})
			if err != nil {
				t.Fatal(err)
			}
			f, err := p.Rankings(ctx, keywords.RankingsRequest{Domain: "rival0.test", Country: "us", Language: "en",
				Filters: keywords.Filters{Ranges: map[keywords.Field]keywords.Range{keywords.FieldPosition: {Max: &five}}}, Page: keywords.Page{Limit: 10}})
			if err != nil {
				t.Fatal(err)
			}
			if g.Total != gaps || r.Total != ranks || f.Total != top5 {
				t.Fatalf("after %s: gaps / rankings / top-5 totals %d / %d / %d, SQL counts %d / %d / %d",
					step, g.Total, r.Total, f.Total, gaps, ranks, top5)
			}
		}
	}
	load := func(t *testing.T, step, file string) {
		t.Helper()
		if _, err := importer.ImportRankings(ctx, pool, strings.NewReader(file), importer.Options{Source: "test"}); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		check(t, step)
	}

	t.Run("direct", func(t *testing.T) {
		importer.AlwaysDirect(t, 50, 0)
		load(t, "the first file, copied into a new table", rankingsFile(300, 0))
	})
	t.Run("switch", func(t *testing.T) {
		importer.AlwaysNewTable(t, nil)
		load(t, "a superset, switched in as a new table", rankingsFile(900, 0))
		load(t, "the same file again, switched in", rankingsFile(900, 0))
	})
	load(t, "a smaller file changing positions, merged", rankingsFile(200, 3))
	if _, err := pool.Exec(ctx, `DELETE FROM domain_rankings WHERE domain = 'rival0.test' AND position > 30`); err != nil {
		t.Fatal(err)
	}
	check(t, "a delete in SQL")
}

// Every import path moves the keyword data's version, and the keywords' own version
// (research's word index is named by it) exactly when it writes keyword_metrics: a file of
// rankings alone by any path leaves the keywords' version; a keyword file, or a rankings
// file with metrics (its volumes are loaded into keyword_metrics), by any path moves it.
func TestKeywordsVersionMovesWithKeywordsOnly(t *testing.T) {
	ctx := context.Background()
	pool := testenv.Postgres(t)
	if _, err := pool.Exec(ctx, `TRUNCATE domain_rankings, keyword_metrics`); err != nil {
		t.Fatal(err)
	}
	type version struct {
		data, keywords int64
		token, kwToken [16]byte
	}
	read := func() (v version) {
		if err := pool.QueryRow(ctx, `SELECT generation, keywords_generation, token, keywords_token FROM keyword_data_state`).
			Scan(&v.data, &v.keywords, &v.token, &v.kwToken); err != nil {
			t.Fatal(err)
		}
		return v
	}
	keywordsFile := func(n, volume int) string {
		var b strings.Builder
		b.WriteString("keyword,volume\n")
		for i := range n {
			fmt.Fprintf(&b, "kw %04d,%d\n", i, volume+i)
		}
		return b.String()
	}
	step := func(t *testing.T, name string, keywordsToo bool, load func() error) {
		t.Helper()
		before := read()
		if err := load(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		after := read()
		if after.data <= before.data || after.token == before.token {
			t.Errorf("%s: the data's version did not move: %+v → %+v", name, before, after)
		}
		movedKeywords := after.keywords != before.keywords || after.kwToken != before.kwToken
		if movedKeywords != keywordsToo || (keywordsToo && after.keywords <= before.keywords) {
			t.Errorf("%s: the keywords' version moved %v, want %v (%+v → %+v)", name, movedKeywords, keywordsToo, before, after)
		}
	}
	// rankingsOnly is rankingsFile without its volume column.
	rankingsOnly := func(n, shift int) string {
		lines := strings.Split(rankingsFile(n, shift), "\n")
		for i, line := range lines {
			if j := strings.LastIndexByte(line, ','); j >= 0 {
				lines[i] = line[:j]
			}
		}
		return strings.Join(lines, "\n")
	}
	rankings := func(file string) func() error {
		return func() error {
			_, err := importer.ImportRankings(ctx, pool, strings.NewReader(file), importer.Options{Source: "test"})
			return err
		}
	}
	kws := func(file string) func() error {
		return func() error {
			_, err := importer.ImportKeywords(ctx, pool, strings.NewReader(file), importer.Options{Source: "test"})
			return err
		}
	}
	t.Run("direct", func(t *testing.T) {
		importer.AlwaysDirect(t, 50, 0)
		step(t, "rankings copied into a new table", false, rankings(rankingsOnly(300, 0)))
		step(t, "keywords copied into a new table", true, kws(keywordsFile(300, 10)))
	})
	t.Run("switch", func(t *testing.T) {
		importer.AlwaysNewTable(t, nil)
		step(t, "rankings switched in", false, rankings(rankingsOnly(900, 0)))
		step(t, "rankings with volumes switched in", true, rankings(rankingsFile(900, 0)))
		step(t, "keywords switched in", true, kws(keywordsFile(900, 20)))
	})
	step(t, "rankings merged", false, rankings(rankingsOnly(200, 3)))
	step(t, "rankings with volumes merged", true, rankings(rankingsFile(200, 5)))
	step(t, "keywords merged", true, kws(keywordsFile(200, 30)))
	step(t, "a ranking deleted in SQL", false, func() error {
		_, err := pool.Exec(ctx, `DELETE FROM domain_rankings WHERE domain = 'rival0.test' AND position > 30`)
		return err
	})
	step(t, "a keyword updated in SQL", true, func() error {
		_, err := pool.Exec(ctx, `UPDATE keyword_metrics SET search_volume = search_volume + 1 WHERE keyword_norm = 'kw 0001'`)
		return err
	})
}
