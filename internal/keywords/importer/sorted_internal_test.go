package importer

import (
	"bytes"
	"cmp"
	"crypto/md5" //nolint:gosec // url_hash is MD5
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// The external sort hands COPY each key once, in key order, with the row a merge in SQL
// would keep (the best position, then the file's last row), whatever the run size: runs of
// a few records (many files merged), of one file, and held in memory. The oracle sorts the
// rows with slices.SortStableFunc on the key's columns one by one.
func TestSortedRowsMatchOracle(t *testing.T) {
	for _, run := range []int{60, 300, 5000, defaultRunBytes} {
		t.Run(fmt.Sprint(run), func(t *testing.T) {
			runBytes = run
			t.Cleanup(func() { runBytes = defaultRunBytes })
			rng := rand.New(rand.NewPCG(uint64(run), 7))
			for round := range 20 {
				rows := randomRows(rng, 1+rng.IntN(400))
				got := sortThrough(t, rows)
				want := oracle(rows)
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("round %d, %d rows: got\n%s\nwant\n%s", round, len(rows), strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			}
		})
	}
}

// A keyword a domain ranks for with more URLs than a group holds comes out in several
// groups, each in url_hash order: the same rows, one per key, in another order.
func TestSortedRowsInSmallGroups(t *testing.T) {
	groupBytes = 150 // two or three records
	t.Cleanup(func() { groupBytes = defaultGroupBytes })
	rng := rand.New(rand.NewPCG(11, 7))
	for round := range 20 {
		rows := randomRows(rng, 1+rng.IntN(400))
		got, want := sortThrough(t, rows), oracle(rows)
		slices.Sort(got)
		slices.Sort(want)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("round %d, %d rows: got\n%s\nwant\n%s", round, len(rows), strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// Two URLs of one url_hash are one key, as they are in the table: the best position, then
// the file's last row, is kept. MD5 collisions are made here by hashing only the first
// bytes of each URL.
func TestSortedRowsMergeURLsOfOneHash(t *testing.T) {
	hashURL = func(url []byte) [16]byte { return md5.Sum(url[:min(len(url), 18)]) } // "https://x.example/"
	t.Cleanup(func() { hashURL = func(url []byte) [16]byte { return md5.Sum(url) } })
	rng := rand.New(rand.NewPCG(5, 9))
	for round := range 20 {
		rows := randomRows(rng, 1+rng.IntN(400))
		got, want := sortThrough(t, rows), oracle(rows)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("round %d, %d rows: got\n%s\nwant\n%s", round, len(rows), strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// appendTuple writes each row as encodeCopy writes the values Values returns, through
// pgtype's encoders.
func TestSortedTuplesAsEncoded(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	rows := randomRows(rng, 500)
	encode := func(src pgx.CopyFromSource) []byte {
		t.Helper()
		var b bytes.Buffer
		if err := encodeCopy(&b, pgtype.NewMap(), rankingOIDs, src); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	sorted := func(opts Options) *sortedSource {
		m, done := mergeRows(t, rows)
		t.Cleanup(done)
		return &sortedSource{m: m, opts: opts}
	}
	for _, opts := range []Options{{}, {Source: "semrush", Synthetic: true}} {
		direct := encode(sorted(opts))
		boxed := encode(struct{ pgx.CopyFromSource }{sorted(opts)}) // Values, value by value
		if !bytes.Equal(direct, boxed) {
			t.Errorf("%+v: appendTuple wrote %d bytes, the encoders %d, not the same", opts, len(direct), len(boxed))
		}
	}
}

func randomRows(rng *rand.Rand, n int) []stagedRow {
	pick := func(s ...string) string { return s[rng.IntN(len(s))] }
	rows := make([]stagedRow, n)
	for i := range rows {
		kw := pick("b", "ab", "a b", "Ab", "abc", "b a", "a", "AB", "abcdefgh", "abcdefghij", "abcdefghik", "abcdefgh i", "ABCDEFGHIK")
		var url *string
		if u := pick("", "https://x.example/1", "https://x.example/2", "-"); u != "-" {
			url = &u
		}
		rows[i] = stagedRow{line: i + 2, metricsRow: metricsRow{keyword: kw, country: pick("us", "gb", "u"), language: pick("en", "e", "en-gb")},
			domain: pick("a.example", "a.example.org", "b.example", "a", "a-", "b"), position: 1 + rng.IntN(4), url: url, norm: strings.ToLower(kw)}
	}
	return rows
}

// mergeRows sorts rows through a runSorter and returns its merge, and the sorter's close.
func mergeRows(t *testing.T, rows []stagedRow) (*mergedRecords, func()) {
	t.Helper()
	s := newRunSorter()
	for i := range rows {
		if err := s.add(&rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	m, err := s.merged()
	if err != nil {
		s.close()
		t.Fatal(err)
	}
	return m, s.close
}

// sortThrough sorts rows through a runSorter and returns the rows COPY would get.
func sortThrough(t *testing.T, rows []stagedRow) []string {
	t.Helper()
	m, done := mergeRows(t, rows)
	defer done()
	src := &sortedSource{m: m}
	var out []string
	for src.Next() {
		v, err := src.Values()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(v[:8]...)) // domain, keyword, norm, country, language, position, url, url_hash
	}
	if err := src.Err(); err != nil {
		t.Fatal(err)
	}
	if want := len(rows); src.rows+m.repeats != want {
		t.Errorf("%d rows out and %d merged, want %d in all", src.rows, m.repeats, want)
	}
	return out
}

func oracle(rows []stagedRow) []string {
	rows = slices.Clone(rows)
	hash := func(r stagedRow) string {
		var u []byte
		if r.url != nil {
			u = []byte(*r.url)
		}
		h := hashURL(u)
		return string(h[:])
	}
	slices.SortStableFunc(rows, func(a, b stagedRow) int {
		return cmp.Or(strings.Compare(a.domain, b.domain), strings.Compare(a.country, b.country),
			strings.Compare(a.language, b.language), strings.Compare(a.norm, b.norm), strings.Compare(hash(a), hash(b)),
			cmp.Compare(a.position, b.position), -cmp.Compare(a.line, b.line))
	})
	var out []string
	for i, r := range rows {
		if i > 0 {
			p := rows[i-1]
			if p.domain == r.domain && p.country == r.country && p.language == r.language && p.norm == r.norm && hash(p) == hash(r) {
				continue
			}
		}
		var url any
		if r.url != nil {
			url = *r.url
		}
		var keyword any = r.keyword
		if r.keyword == r.norm { // stored as NULL: read as its norm
			keyword = nil
		}
		h := pgtype.UUID{Bytes: [16]byte([]byte(hash(r))), Valid: true}
		out = append(out, fmt.Sprint(r.domain, keyword, r.norm, r.country, r.language, r.position, url, h))
	}
	return out
}
