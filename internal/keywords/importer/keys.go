package importer

import (
	"context"
	"crypto/md5" //nolint:gosec // the url_hash key is PostgreSQL's md5(url), not a security measure
	"fmt"
	"strings"

	"github.com/bits-and-blooms/bloom/v3"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// The staging table holds the values PostgreSQL would otherwise compute once per row for
// the upserts: the keyword's normalised form (keyword_normalize) and the URL's key
// (md5(coalesce(url, ''))::uuid). Go computes them here, where they cost a fraction of
// the regular expression and hex round trip in SQL; PostgreSQL computes only the norms Go
// cannot be sure of.
//
// Rows of a file that share a key must be merged before the upserts. Instead of sorting the
// whole file for that, each row carries "seen": its key may have been met earlier in the
// file. Only the keys of such rows are looked at again in SQL.

// seenFilterBits and seenFilterHashes size the Bloom filter of keys met so far: 16 MiB,
// whatever the file's size. Few unique keys are taken for repeats (0.03% of 3 million,
// 0.8% of 10 million); more in a larger file, which costs time in SQL, never correctness.
// Three hashes: each is a cache miss in a filter this size.
const (
	seenFilterBits   = 1 << 27
	seenFilterHashes = 3
)

// normProbe holds, between words and single spaces, every ASCII character a keyword
// cleaned by the importer can hold: all but NUL and the white space local.CleanKeyword
// collapses.
var normProbe = func() string {
	var b strings.Builder
	b.WriteString("Keyword Probe ")
	for c := byte(1); c < 0x80; c++ {
		if !strings.ContainsRune("\t\n\v\f\r ", rune(c)) {
			b.WriteByte(c)
		}
	}
	b.WriteString(" END")
	return b.String()
}()

// goNormalizes asks the server whether keyword_normalize agrees with asciiNorm on every
// character asciiNorm handles. Lower-casing follows the database's locale (in a Turkish
// one "I" is not "i"), and the function may change with a migration: when they differ,
// PostgreSQL normalises every keyword.
func goNormalizes(ctx context.Context, tx pgx.Tx) (bool, error) {
	var same bool
	err := tx.QueryRow(ctx, `SELECT keyword_normalize($1) = $2`, normProbe, asciiNorm(normProbe)).Scan(&same)
	if err != nil {
		return false, fmt.Errorf("check keyword normalisation: %w", err)
	}
	return same, nil
}

// trigramProbes are keywords whose trigram counts Go and the server must agree on before
// Go counts any: every ASCII character, between letters and alone, words repeated and
// sharing trigrams, digits, and nothing to count.
var trigramProbes = func() []string {
	p := []string{normProbe, "", "a", "ab", "abc", "aaa aaa", "ab ab ab", "Coffee Maker", "k-cup", "100% Arabica",
		"3rd-party_api (v2.0) / cost: $5", "x--y", "AbC abc ABC", "!!!", "a b c d e f g"}
	for c := byte(1); c < 0x80; c++ {
		p = append(p, "ab"+string(c)+"cd", string(c))
	}
	return p
}()

// trigramCount is the keyword's ntrgm column, the number of distinct trigrams show_trgm
// returns for it, for ASCII text: its words (runs of letters and digits) lower-cased,
// each with two spaces before and one after, cut into every three characters.
func trigramCount(s string) int16 {
	var seen [64]uint32
	var more map[uint32]struct{} // past 64 distinct trigrams (keywords of over 60 letters)
	n := 0
	add := func(t uint32) {
		for _, x := range seen[:min(n, len(seen))] {
			if x == t {
				return
			}
		}
		if n < len(seen) {
			seen[n] = t
			n++
			return
		}
		if more == nil {
			more = map[uint32]struct{}{}
		}
		if _, ok := more[t]; !ok {
			more[t] = struct{}{}
		}
	}
	for i := 0; i < len(s); {
		if !isAlnum(s[i]) {
			i++
			continue
		}
		a, b := uint32(' '), uint32(' ')
		for ; i < len(s) && isAlnum(s[i]); i++ {
			c := uint32(lower(s[i]))
			add(a<<16 | b<<8 | c)
			a, b = b, c
		}
		add(a<<16 | b<<8 | ' ')
	}
	return int16(min(n+len(more), 32767))
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// goCountsTrigrams asks the server whether show_trgm agrees with trigramCount on the
// probes (pg_trgm's word characters follow the database's locale, and its build options
// may differ): when they differ, PostgreSQL counts every keyword's trigrams.
func goCountsTrigrams(ctx context.Context, tx pgx.Tx) (bool, error) {
	want := make([]int16, len(trigramProbes))
	for i, p := range trigramProbes {
		want[i] = trigramCount(p)
	}
	var same bool
	err := tx.QueryRow(ctx, `SELECT array_agg(least(coalesce(array_length(show_trgm(p), 1), 0), 32767)::smallint ORDER BY i) = $2
		FROM unnest($1::text[]) WITH ORDINALITY AS x(p, i)`, trigramProbes, want).Scan(&same)
	if err != nil {
		return false, fmt.Errorf("check trigram counts: %w", err)
	}
	return same, nil
}

// asciiNorm is keyword_normalize for a cleaned keyword (words separated by single spaces,
// see local.CleanKeyword) of ASCII characters only: its lower case.
func asciiNorm(s string) string { return strings.ToLower(s) }

// isASCII reports whether s holds only ASCII characters.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// keyer computes the keys of the staged rows and notes which may repeat an earlier one.
type keyer struct {
	goNorm bool // asciiNorm matches the server's keyword_normalize
	goTrgm bool // trigramCount matches the server's show_trgm
	seen   *bloom.BloomFilter
	// unseen stops the marking of repeats: the rows go through a sort that brings them
	// together (sorted.go).
	unseen bool
	buf    []byte
	// unnormalized counts the rows left for PostgreSQL to normalise, repeats those marked
	// seen, uncounted those whose trigrams PostgreSQL is to count.
	unnormalized, repeats, uncounted int
}

func newKeyer(goNorm, goTrgm bool) *keyer {
	return &keyer{goNorm: goNorm, goTrgm: goTrgm, seen: bloom.New(seenFilterBits, seenFilterHashes)}
}

// newKeyerFor returns the keyer of an import in tx, after asking the server which keys Go
// may compute.
func newKeyerFor(ctx context.Context, tx pgx.Tx) (*keyer, error) {
	goNorm, err := goNormalizes(ctx, tx)
	if err != nil {
		return nil, err
	}
	goTrgm, err := goCountsTrigrams(ctx, tx)
	if err != nil {
		return nil, err
	}
	return newKeyer(goNorm, goTrgm), nil
}

// trigrams returns the keyword's trigram count as a COPY value, nil when PostgreSQL is to
// count them.
func (k *keyer) trigrams(keyword string) any {
	if !k.goTrgm || !isASCII(keyword) {
		k.uncounted++
		return nil
	}
	return trigramCount(keyword)
}

// key returns the normalised keyword ("" when PostgreSQL must compute it) and whether the
// row's key — country, language, norm, and the domain when it is not "" — may have been
// met before. A row Go cannot normalise is always reported as possibly met: a non-ASCII
// keyword may lower-case to an ASCII one ("K", the Kelvin sign, is "k").
func (k *keyer) key(keyword, country, language, domain string) (norm string, seen bool) {
	if !k.goNorm || !isASCII(keyword) {
		k.unnormalized++
		k.repeats++
		return "", true
	}
	norm = asciiNorm(keyword)
	if k.unseen {
		return norm, false
	}
	b := append(k.buf[:0], country...)
	b = append(b, 0)
	b = append(b, language...)
	b = append(b, 0)
	b = append(b, domain...)
	b = append(b, 0)
	b = append(b, norm...)
	k.buf = b
	if k.seen.TestOrAdd(b) {
		k.repeats++
		return norm, true
	}
	return norm, false
}

// urlHash is md5(coalesce(url, ”))::uuid, the URL's part of a ranking's key.
func urlHash(url *string) pgtype.UUID {
	var s string
	if url != nil {
		s = *url
	}
	return pgtype.UUID{Bytes: md5.Sum([]byte(s)), Valid: true} //nolint:gosec // see the import
}

// textOrNull is s as a COPY value: NULL when "".
func textOrNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}
