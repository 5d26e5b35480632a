package importer_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/importer"
)

// A ranking file copied into a new table has its keyword sets read from that table once
// its by-keyword index is built, beside the other index builds, and written in the
// transaction that switches the table in (swap.go); a file written row by row has them
// rebuilt after the import. Both must hold what plain SQL over the stored rows says — per
// market the keywords numbered in order, per domain its keywords' ids with the best
// position of each — and be fresh when the import returns, whether every row was sorted
// and copied or some were staged and merged in SQL. The new table's sets are committed
// with the switch itself: the state row and the table's catalogue row share their
// transaction.
func TestDirectImportWritesTheSetsWithTheSwitch(t *testing.T) {
	for _, c := range []struct {
		name     string
		nonASCII bool // some keywords that only PostgreSQL normalises: those rows are staged
	}{
		{"every row copied", false},
		{"some rows staged", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := setsFixture(c.nonASCII)
			load := func(pool *pgxpool.Pool) {
				t.Helper()
				if _, err := importer.ImportRankings(context.Background(), pool, strings.NewReader(file), importer.Options{Source: "sets"}); err != nil {
					t.Fatal(err)
				}
			}
			schema := fmt.Sprint(c.nonASCII)
			rowsPool, directPool := schemaPool(t, "sets_rows_"+schema), schemaPool(t, "sets_copy_"+schema)
			load(rowsPool)
			rowsSets, rowsOracle := keywordSets(t, rowsPool), setsOracle(t, rowsPool)
			importer.AlwaysDirect(t, 3, 400) // several sorted runs
			var markets []string
			importer.SetsMarkets(t, func(ms []keywords.Market) []keywords.Market {
				for _, m := range ms {
					markets = append(markets, m.Country+" "+m.Language)
				}
				return ms
			})
			load(directPool)
			slices.Sort(markets)
			if want := []string{"xs en", "xs mi", "xt en", "xt mi"}; !slices.Equal(markets, want) {
				t.Errorf("the sets were read by the markets %q, want %q, one at a time", markets, want)
			}
			directSets, directOracle := keywordSets(t, directPool), setsOracle(t, directPool)
			if rowsOracle != directOracle {
				t.Fatalf("the two paths stored different rankings:\nrow by row:\n%s\ncopied:\n%s", rowsOracle, directOracle)
			}
			if strings.Count(directOracle, "\n") < 500 {
				t.Fatalf("%d domain keywords: the fixture is too small", strings.Count(directOracle, "\n"))
			}
			for _, p := range []struct{ path, got string }{{"row by row", rowsSets}, {"copied", directSets}} {
				if p.got != directOracle {
					t.Errorf("%s: the sets differ from SQL over the stored rows:\n%s", p.path, firstLineDiffering(p.got, directOracle))
				}
			}
			var together bool
			if err := directPool.QueryRow(context.Background(), `SELECT (SELECT xmin::text FROM keyword_sets_state) =
				(SELECT xmin::text FROM pg_class WHERE oid = 'domain_rankings'::regclass)`).Scan(&together); err != nil || !together {
				t.Errorf("the sets were not recorded in the switch's transaction (%v)", err)
			}
		})
	}
}

// The direct path reads a new table's sets one market at a time, by the markets the file's
// rows were read of, and counts the rows it reads: were a market left out, its sets would
// be missing and yet marked fresh. The import then fails and changes nothing.
func TestDirectImportFailsWhenTheSetsMissAMarket(t *testing.T) {
	ctx := context.Background()
	pool := schemaPool(t, "sets_missing_market")
	importer.AlwaysDirect(t, 3, 400)
	importer.SetsMarkets(t, func(ms []keywords.Market) []keywords.Market {
		if len(ms) < 2 {
			t.Fatalf("the markets %v: the fixture holds four", ms)
		}
		return ms[1:]
	})
	state := `SELECT (SELECT count(*) FROM domain_rankings), (SELECT count(*) FROM domain_keyword_sets),
		(SELECT generation || ' ' || built FROM keyword_sets_state)`
	var rankings, sets, setsBefore int
	var before, after string
	if err := pool.QueryRow(ctx, state).Scan(&rankings, &setsBefore, &before); err != nil || rankings != 0 {
		t.Fatalf("before: %d rankings (%v)", rankings, err)
	}
	_, err := importer.ImportRankings(ctx, pool, strings.NewReader(setsFixture(false)), importer.Options{Source: "sets"})
	if err == nil || !strings.Contains(err.Error(), "keyword sets of domain_rankings: read") {
		t.Fatalf("import with a market's sets left out: %v, want the rows counted short", err)
	}
	if err := pool.QueryRow(ctx, state).Scan(&rankings, &sets, &after); err != nil {
		t.Fatal(err)
	}
	if rankings != 0 || sets != setsBefore || after != before {
		t.Errorf("after the failed import: %d rankings, %d sets (were %d), state %q (was %q), want nothing changed",
			rankings, sets, setsBefore, after, before)
	}
}

// setsFixture is a ranking file of two countries and two languages, repeated keys, a
// domain ranking with several URLs for one keyword, positions past 65535, and, with
// nonASCII, keywords only PostgreSQL normalises.
func setsFixture(nonASCII bool) string {
	r := rand.New(rand.NewPCG(47, 3))
	var b strings.Builder
	b.WriteString("domain,keyword,position,url,country,language\n")
	words := []string{"a", "a b", "ab", "abc", "kettle", "kettle blue", "zz", "Kettle  Blue"}
	for range 900 {
		kw := fmt.Sprintf("%s %d", words[r.IntN(len(words))], r.IntN(60))
		if r.IntN(30) == 0 {
			kw = words[r.IntN(len(words))]
		}
		if nonASCII && r.IntN(40) == 0 {
			kw = fmt.Sprintf("caf\u00e9 %d", r.IntN(5))
		}
		position := 1 + r.IntN(100)
		if r.IntN(50) == 0 {
			position = 65530 + r.IntN(20)
		}
		fmt.Fprintf(&b, "d%d.example,%s,%d,https://d.example/%d,%s,%s\n", r.IntN(9), kw, position, r.IntN(3),
			[]string{"xs", "xt"}[r.IntN(2)], []string{"en", "mi"}[r.IntN(2)])
	}
	return b.String()
}

// keywordSets decodes the stored keyword sets as "country language domain keyword
// position" lines, sorted, after a line saying whether they are fresh.
func keywordSets(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	ctx := context.Background()
	var fresh bool
	if err := pool.QueryRow(ctx, `SELECT generation = built FROM keyword_sets_state`).Scan(&fresh); err != nil {
		t.Fatal(err)
	}
	dicts := map[string][]string{}
	rows, err := pool.Query(ctx, `SELECT country || ' ' || language, norms FROM keyword_set_keywords ORDER BY country, language, chunk`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var m string
		var norms []byte
		if err := rows.Scan(&m, &norms); err != nil {
			t.Fatal(err)
		}
		dicts[m] = append(dicts[m], strings.Split(string(norms), "\x00")...)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	lines := []string{}
	rows, err = pool.Query(ctx, `SELECT country || ' ' || language, domain, ids, positions FROM domain_keyword_sets`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var m, d string
		var ids, positions []byte
		if err := rows.Scan(&m, &d, &ids, &positions); err != nil {
			t.Fatal(err)
		}
		set := roaring.New()
		if err := set.UnmarshalBinary(ids); err != nil {
			t.Fatal(err)
		}
		for i, id := range set.ToArray() {
			if int(id) >= len(dicts[m]) || 2*i+2 > len(positions) {
				t.Fatalf("%s %s: id %d of %d keywords, %d position bytes", m, d, id, len(dicts[m]), len(positions))
			}
			lines = append(lines, fmt.Sprintf("%s %s %q %d", m, d, dicts[m][id], binary.LittleEndian.Uint16(positions[2*i:])))
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	return fmt.Sprintf("fresh %t\n%s\n", fresh, strings.Join(lines, "\n"))
}

// setsOracle is what keywordSets should read, from SQL over the stored rankings.
func setsOracle(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT country || ' ' || language, domain, keyword_norm, least(min(position), 65535)
		FROM domain_rankings GROUP BY 1, 2, 3`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	lines := []string{}
	for rows.Next() {
		var m, d, k string
		var p int
		if err := rows.Scan(&m, &d, &k, &p); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, fmt.Sprintf("%s %s %q %d", m, d, k, p))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	return fmt.Sprintf("fresh true\n%s\n", strings.Join(lines, "\n"))
}

// firstLineDiffering names the first line where got and want differ.
func firstLineDiffering(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d: %s, want %s (%d lines against %d)", i+1, g[i], w[i], len(g), len(w))
		}
	}
	return fmt.Sprintf("%d lines against %d", len(g), len(w))
}
