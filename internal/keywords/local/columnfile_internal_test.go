package local

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/contentapi/contentapi/internal/testenv"
)

// randomColumns are n keywords' columns with random texts (empty ones among them) and
// metrics, unknown ones NaN.
func randomColumns(r *rand.Rand, n int) *marketColumns {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = strings.Repeat(string(rune('a'+r.IntN(26))), r.IntN(12))
	}
	c := &marketColumns{norms: keyTextsOf(keys)}
	value := func() float64 {
		if r.IntN(5) == 0 {
			return math.NaN()
		}
		return r.Float64() * 1000
	}
	for range n {
		c.volume, c.diff, c.cpc = append(c.volume, value()), append(c.diff, value()), append(c.cpc, value())
		c.intent = append(c.intent, uint8(r.IntN(len(intents))))
	}
	c.byVolume = make([]uint32, n)
	orderByVolume(c.byVolume, c.volume)
	return c
}

// sameColumns compares two markets' columns value by value (NaN equal to NaN).
func sameColumns(t *testing.T, got, want *marketColumns) {
	t.Helper()
	if got.norms.len() != want.norms.len() {
		t.Fatalf("%d keywords, want %d", got.norms.len(), want.norms.len())
	}
	bits := func(fs []float64) []uint64 {
		out := make([]uint64, len(fs))
		for i, f := range fs {
			out[i] = math.Float64bits(f)
		}
		return out
	}
	for i := range want.norms.len() {
		if got.norms.at(i) != want.norms.at(i) {
			t.Fatalf("keyword %d is %q, want %q", i, got.norms.at(i), want.norms.at(i))
		}
	}
	if !slices.Equal(bits(got.volume), bits(want.volume)) || !slices.Equal(bits(got.diff), bits(want.diff)) ||
		!slices.Equal(bits(got.cpc), bits(want.cpc)) || !slices.Equal(got.intent, want.intent) || !slices.Equal(got.byVolume, want.byVolume) {
		t.Fatal("the metrics read back differ")
	}
}

// A column file reads back the columns written, of any size (none included), and is read
// only for its own market and data: another token, build or market, a file of the other
// byte order, one cut short or with one byte changed is refused, not read.
func TestColumnFileRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 1))
	dir := t.TempDir()
	m := market{"us", "en"}
	v := columnsVersion{sets: 7, data: 9, token: [16]byte{1, 2, 3}}
	for _, n := range []int{0, 1, 2, 3, 7, 100, 5000} {
		want := randomColumns(r, n)
		path, ok := columnFiles{dir: dir}.path(m, v)
		if !ok {
			t.Fatal("no path")
		}
		if err := writeColumnFile(path, want, m, v); err != nil {
			t.Fatal(err)
		}
		got, err := openColumnFile(path, m, v, 1<<30, 1<<20, true)
		if err != nil {
			t.Fatalf("%d keywords: %v", n, err)
		}
		sameColumns(t, got, want)
		got.release()
	}
	path, _ := columnFiles{dir: dir}.path(m, v)
	for name, open := range map[string]func() error{
		"another token": func() error {
			_, err := openColumnFile(path, m, columnsVersion{sets: 7, data: 9, token: [16]byte{1, 2, 4}}, 1<<30, 1<<20, true)
			return err
		},
		"another build": func() error {
			_, err := openColumnFile(path, m, columnsVersion{sets: 8, data: 9, token: v.token}, 1<<30, 1<<20, true)
			return err
		},
		"another market": func() error {
			_, err := openColumnFile(path, market{"us", "es"}, v, 1<<30, 1<<20, true)
			return err
		},
	} {
		if err := open(); !errors.Is(err, errColumnFile) {
			t.Errorf("%s: %v, want a refusal", name, err)
		}
	}
	if _, err := openColumnFile(path, m, v, 100, 1<<20, true); !errors.Is(err, errColumnsTooBig) {
		t.Errorf("over the budget: %v", err)
	}
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	damaged := map[string][]byte{
		"cut short":        whole[:len(whole)-1],
		"one byte changed": append(append(append([]byte{}, whole[:len(whole)/2]...), whole[len(whole)/2]^1), whole[len(whole)/2+1:]...),
		"other byte order": append(append(append([]byte{}, whole[:8]...), whole[11], whole[10], whole[9], whole[8]), whole[12:]...),
		"header only":      whole[:columnHeaderSize],
	}
	for name, b := range damaged {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if c, err := openColumnFile(path, m, v, 1<<30, 1<<20, true); !errors.Is(err, errColumnFile) {
			t.Errorf("%s: %v, want a refusal", name, err)
			if c != nil {
				c.release()
			}
		}
	}
	// Texts whose ends fall, written with a checksum that matches them.
	bad := randomColumns(r, 10)
	bad.norms.ends[4], bad.norms.ends[5] = bad.norms.ends[5]+1, bad.norms.ends[4]
	if err := writeColumnFile(path, bad, m, v); err != nil {
		t.Fatal(err)
	}
	if _, err := openColumnFile(path, m, v, 1<<30, 1<<20, true); !errors.Is(err, errColumnFile) {
		t.Errorf("texts out of order: %v, want a refusal", err)
	}
	if _, err := openColumnFile(filepath.Join(dir, "none.cols"), m, v, 1<<30, 1<<20, true); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no file: %v", err)
	}
	for _, m := range []market{{"../", "en"}, {"US", "en"}, {"us", "e"}} {
		if p, ok := (columnFiles{dir: dir}).path(m, v); ok {
			t.Errorf("market %v has a column file %s", m, p)
		}
	}
}

// Mapped columns stay mapped while a question holds them after the store has let them go,
// and are unmapped when the last hold goes; they cannot be taken again after that.
func TestColumnFileHolds(t *testing.T) {
	dir := t.TempDir()
	m, v := market{"us", "en"}, columnsVersion{sets: 1, token: [16]byte{9}}
	path, _ := columnFiles{dir: dir}.path(m, v)
	if err := writeColumnFile(path, randomColumns(rand.New(rand.NewPCG(1, 2)), 50), m, v); err != nil {
		t.Fatal(err)
	}
	c, err := openColumnFile(path, m, v, 1<<30, 1<<20, true)
	if err != nil {
		t.Fatal(err)
	}
	e := &columnsEntry{cols: c}
	if !c.acquire() {
		t.Fatal("columns held by the store could not be taken")
	}
	e.drop()
	e.drop() // once only
	if c.refs.Load() != 1 {
		t.Fatalf("%d holds after the store let go, want the question's", c.refs.Load())
	}
	_ = c.norms.at(49) // still mapped
	c.release()
	if c.acquire() {
		t.Fatal("columns let go by all were taken again")
	}
}

// Writing a market's file removes that market's older files and their locks, and the
// temporary files of writes cut short long ago; not another market's files, nor a write
// in progress.
func TestRemoveOlderColumnFiles(t *testing.T) {
	dir := t.TempDir()
	touch := func(name string, age time.Duration) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(-age)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
		return p
	}
	keep := touch("us-en-bb-2.cols", 0)
	kept := []string{keep, touch("us-en-bb-2.cols.lock", 0), touch("gb-en-aa-1.cols", time.Hour), touch(".cols-new", time.Second),
		touch("us-en-notes.txt", time.Hour)}
	gone := []string{touch("us-en-aa-1.cols", time.Hour), touch("us-en-aa-1.cols.lock", time.Hour), touch(".cols-old", time.Hour)}
	if err := removeOlderColumnFiles(dir, market{"us", "en"}, keep); err != nil {
		t.Fatal(err)
	}
	for _, p := range kept {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", filepath.Base(p), err)
		}
	}
	for _, p := range gone {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s kept", filepath.Base(p))
		}
	}
}

// Rows compare on their keys' ranks (keyRank), not their texts: a key's rank must order
// against every row's as the texts do, whether the columns hold the key (a cursor's row)
// or not (a cursor from data since changed, or a key between two of theirs).
func TestKeyRankOrdersAsTheTexts(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 1))
	word := func() string {
		b := make([]byte, r.IntN(4))
		for i := range b {
			b[i] = "abz\x00é"[r.IntN(5)]
		}
		return string(b)
	}
	for range 50 {
		seen := map[string]bool{}
		for range r.IntN(40) {
			seen[word()] = true
		}
		keys := slices.Sorted(maps.Keys(seen))
		c := &marketColumns{norms: keyTextsOf(keys)}
		for range 200 {
			probe := word()
			if len(keys) > 0 && r.IntN(3) == 0 {
				probe = keys[r.IntN(len(keys))]
			}
			at := c.keyRank(probe)
			for id, key := range keys {
				if got, want := cmp.Compare(rankOf(uint32(id)), at), strings.Compare(key, probe); got != want {
					t.Fatalf("keys %q: row %q against %q compares %d by rank, %d by text", keys, key, probe, got, want)
				}
			}
			if i, ok := c.norms.find(probe); ok && c.keyAt(at) != probe || !ok && at != rankOf(uint32(i))-1 {
				t.Fatalf("keys %q: %q at rank %d", keys, probe, at)
			}
		}
	}
}

// The metric columns are read from the rows as the server sends them: in binary (pgx's
// extended protocol, the service's) or as text (the simple protocol), with the same values.
func TestMetricColumnsInEitherFormat(t *testing.T) {
	_, dsn := testenv.PostgresDSN(t)
	const q = `SELECT * FROM (VALUES ('alpha', 1250::float8, NULL::float8, 0.35::float8, 'commercial'),
		('beta', NULL, 42.5, NULL, NULL), ('nobody', 1, 1, 1, 'informational')) v`
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			t.Fatal(err)
		}
		cfg.DefaultQueryExecMode = mode
		conn, err := pgx.ConnectConfig(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		c := &marketColumns{norms: keyTextsOf([]string{"alpha", "beta", "gamma"})}
		nan := math.NaN()
		c.volume, c.diff, c.cpc, c.intent = []float64{nan, nan, nan}, []float64{nan, nan, nan}, []float64{nan, nan, nan}, make([]uint8, 3)
		rows, err := conn.Query(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if err := readMetricColumns(c, rows); err != nil {
			t.Fatalf("mode %v: %v", mode, err)
		}
		_ = conn.Close(context.Background())
		same := func(got, want []float64) bool {
			return slices.EqualFunc(got, want, func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) })
		}
		if !same(c.volume, []float64{1250, nan, nan}) || !same(c.diff, []float64{nan, 42.5, nan}) ||
			!same(c.cpc, []float64{0.35, nan, nan}) || !slices.Equal(c.intent, []uint8{intentCode("commercial"), 0, 0}) {
			t.Fatalf("mode %v: volume %v, difficulty %v, cpc %v, intent %v", mode, c.volume, c.diff, c.cpc, c.intent)
		}
	}
}
