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
	seen   *bloom.BloomFilter
	buf    []byte
	// unnormalized counts the rows left for PostgreSQL to normalise, repeats those marked
	// seen.
	unnormalized, repeats int
}

func newKeyer(goNorm bool) *keyer {
	return &keyer{goNorm: goNorm, seen: bloom.New(seenFilterBits, seenFilterHashes)}
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
