package local

import (
	"context"
	"slices"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/contentapi/contentapi/internal/postgres"
)

// Trigrams as pg_trgm cuts them: a text's words (runs of letters and digits) lower-cased,
// each with two spaces before it and one after, cut into every three characters; a text's
// trigram set is the union of its words'. A trigram of ASCII characters is its three bytes;
// one holding any other character is a hash of its three runes with the top bit set
// (pg_trgm keeps a CRC of such trigrams: equal trigrams are equal either way, and a
// collision of the hash only adds a candidate the ranking then scores exactly).

// eachWord calls f with each word of s, lower-cased (a slice of buf, valid until the next
// call).
func eachWord(s string, buf []byte, f func(word []byte)) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if !isWordByte(c) {
				i++
				continue
			}
		} else if r, size := utf8.DecodeRuneInString(s[i:]); !isWordRune(r) {
			i += size
			continue
		}
		buf = buf[:0]
		for i < len(s) {
			c := s[i]
			if c < utf8.RuneSelf {
				if !isWordByte(c) {
					break
				}
				if c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
				buf = append(buf, c)
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			if !isWordRune(r) {
				break
			}
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
			i += size
		}
		f(buf)
	}
	return buf
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isWordRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// wordTrigrams appends the trigrams of one lower-cased word to out (repeats included).
func wordTrigrams(word []byte, out []uint32) []uint32 {
	a, b := rune(' '), rune(' ')
	for i := 0; i < len(word); {
		c, size := rune(word[i]), 1
		if c >= utf8.RuneSelf {
			c, size = utf8.DecodeRune(word[i:])
		}
		out = append(out, trigramOf(a, b, c))
		a, b = b, c
		i += size
	}
	return append(out, trigramOf(a, b, ' '))
}

func trigramOf(a, b, c rune) uint32 {
	if a|b|c < utf8.RuneSelf {
		return uint32(a)<<16 | uint32(b)<<8 | uint32(c)
	}
	h := uint32(2166136261) // FNV-1a over the three runes
	for _, r := range [3]rune{a, b, c} {
		for k := 0; k < 4; k++ {
			h ^= uint32(r>>(8*k)) & 0xff
			h *= 16777619
		}
	}
	return h | 1<<31
}

// textTrigrams returns the distinct trigrams of s.
func textTrigrams(s string) []uint32 {
	var all []uint32
	eachWord(s, nil, func(w []byte) { all = wordTrigrams(w, all) })
	return distinct(all)
}

// distinct sorts ts and drops repeats, in place.
func distinct(ts []uint32) []uint32 {
	if len(ts) < 2 {
		return ts
	}
	slices.Sort(ts)
	out := ts[:1]
	for _, t := range ts[1:] {
		if t != out[len(out)-1] {
			out = append(out, t)
		}
	}
	return out
}

// similarity is pg_trgm's similarity() of two texts by their distinct trigrams (sorted, as
// textTrigrams returns them): shared / (n + m - shared) in float4, as pg_trgm computes it,
// and 0 when either has none.
func similarity(a, b []uint32) float32 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	s := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			s++
			i++
			j++
		}
	}
	return float32(s) / (float32(len(a)) + float32(len(b)) - float32(s))
}

// The worker's trigrams are pg_trgm's only where the database classes characters as
// Unicode does (its LC_CTYPE: C.UTF-8, en_US.UTF-8 and the like). A database created with
// LC_CTYPE C takes every letter outside ASCII for a separator ("café" holds the trigrams of
// "caf"), and similarities computed here would then differ from the ones PostgreSQL
// computes. trigramProbe's pairs tell the two apart: letters outside ASCII in both cases,
// several scripts, digits and punctuation.
var trigramProbe = [][2]string{
	{"Café ÉCLAIR straße", "cafe eclair strasse"},
	{"Кофе ЭСПРЕССО ручной", "кофе эспрессо машина"},
	{"Ñandú καφές x9", "nandu ΚΑΦΈΣ x9"},
	{"über-größe 3.5kg çà", "ueber größe 35 kg"},
}

// trigramsAsPostgres reports whether the database computes trigramProbe's similarities as
// similarity here does, to the last bit.
func trigramsAsPostgres(ctx context.Context, q postgres.Querier) (bool, error) {
	a := make([]string, len(trigramProbe))
	b := make([]string, len(trigramProbe))
	for i, p := range trigramProbe {
		a[i], b[i] = p[0], p[1]
	}
	rows, err := q.Query(ctx, `SELECT similarity(p.a, p.b) FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS p(a, b, i) ORDER BY p.i`, a, b)
	if err != nil {
		return false, err
	}
	sims, err := pgx.CollectRows(rows, pgx.RowTo[float32])
	if err != nil {
		return false, err
	}
	for i, s := range sims {
		if s != similarity(textTrigrams(a[i]), textTrigrams(b[i])) {
			return false, nil
		}
	}
	return len(sims) == len(trigramProbe), nil
}
