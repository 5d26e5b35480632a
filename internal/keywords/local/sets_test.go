package local_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/contentapi/contentapi/internal/keywords/local"
)

// The keyword sets hold what plain SQL over domain_rankings says: per market, the keywords
// numbered in order from 0, and per domain of the market the ids of its keywords with the
// best position of each (capped at 65535). Random rankings in two markets sharing domains
// and keywords, keywords that are prefixes of others, several URLs for one keyword and
// positions past the cap; the whole table is compared, with the other tests' rows.
func TestKeywordSetsAsSQL(t *testing.T) {
	pool := db(t)
	ctx := context.Background()
	t.Cleanup(func() { _, _ = pool.Exec(context.Background(), `DELETE FROM domain_rankings WHERE country = 'nz'`) })
	r := rand.New(rand.NewPCG(30, 7))
	words := []string{"a", "a b", "ab", "abc", "b", "kettle", "kettle blue", "zz"}
	var values []string
	for i := range 600 {
		kw := fmt.Sprintf("%s %d", words[r.IntN(len(words))], r.IntN(40))
		if i%50 == 0 {
			kw = words[r.IntN(len(words))]
		}
		position := 1 + r.IntN(100)
		if r.IntN(20) == 0 {
			position = 65000 + r.IntN(2000) // past the sets' cap
		}
		values = append(values, fmt.Sprintf("('d%d.example', '%s', 'nz', '%s', %d, 'https://d.example/%d', 'test')",
			r.IntN(12), kw, []string{"en", "mi"}[r.IntN(2)], position, r.IntN(3)))
	}
	if _, err := pool.Exec(ctx, `INSERT INTO domain_rankings (domain, keyword, country, language, position, url, source) VALUES `+
		strings.Join(values, ", ")+` ON CONFLICT DO NOTHING`); err != nil {
		t.Fatal(err)
	}
	local.SmallDictChunks(t, 64) // a market's texts over several chunks
	if err := local.BuildKeywordSets(ctx, pool); err != nil {
		t.Fatal(err)
	}

	// The oracle: "country language domain keyword_norm position" per domain's keyword.
	var want []string
	rows, err := pool.Query(ctx, `SELECT country, language, domain, keyword_norm, least(min(position), 65535)
		FROM domain_rankings GROUP BY 1, 2, 3, 4`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c, l, d, k string
		var p int
		if err := rows.Scan(&c, &l, &d, &k, &p); err != nil {
			t.Fatal(err)
		}
		want = append(want, fmt.Sprintf("%s %s %s %q %d", c, l, d, k, p))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var present bool
	if err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE country = 'nz') > 500 FROM domain_rankings`).Scan(&present); err != nil || !present {
		t.Fatalf("the fixture's rows are missing (%v)", err)
	}

	// The sets: each market's texts, then each domain's ids and positions.
	dicts := map[string][]string{}
	rows, err = pool.Query(ctx, `SELECT country, language, keywords, norms FROM keyword_set_keywords ORDER BY country, language, chunk`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c, l string
		var count int
		var norms []byte
		if err := rows.Scan(&c, &l, &count, &norms); err != nil {
			t.Fatal(err)
		}
		chunk := strings.Split(string(norms), "\x00")
		if len(chunk) != count {
			t.Fatalf("%s-%s: a chunk of %d keywords says %d", c, l, len(chunk), count)
		}
		dicts[c+" "+l] = append(dicts[c+" "+l], chunk...)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for m, dict := range dicts {
		if !slices.IsSorted(dict) || len(slices.Compact(slices.Clone(dict))) != len(dict) {
			t.Errorf("%s: the keywords are not numbered in strictly ascending order", m)
		}
	}
	var got []string
	rows, err = pool.Query(ctx, `SELECT country, language, domain, keywords, ids, positions FROM domain_keyword_sets`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close() // a failure inside the loop gives the connection back
	for rows.Next() {
		var c, l, d string
		var count int
		var ids, positions []byte
		if err := rows.Scan(&c, &l, &d, &count, &ids, &positions); err != nil {
			t.Fatal(err)
		}
		set := roaring.New()
		if _, err := set.FromUnsafeBytes(ids); err != nil {
			t.Fatal(err)
		}
		if int(set.GetCardinality()) != count || len(positions) != 2*count {
			t.Fatalf("%s %s %s: %d ids, %d position bytes, count %d", c, l, d, set.GetCardinality(), len(positions), count)
		}
		dict := dicts[c+" "+l]
		for i, id := range set.ToArray() {
			if int(id) >= len(dict) {
				t.Fatalf("%s %s %s: id %d of %d keywords", c, l, d, id, len(dict))
			}
			got = append(got, fmt.Sprintf("%s %s %s %q %d", c, l, d, dict[id], binary.LittleEndian.Uint16(positions[2*i:])))
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("%d sets' keywords against %d in SQL; first difference: %s, want %s", len(got), len(want), got[i], want[i])
			}
		}
		t.Fatalf("%d sets' keywords against %d in SQL", len(got), len(want))
	}
	if !bytes.Contains([]byte(strings.Join(got, "\n")), []byte(" 65535")) {
		t.Error("no position reached the cap: the fixture does not test it")
	}
}
