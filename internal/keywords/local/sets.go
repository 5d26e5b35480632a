package local

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/keywords"
)

// Keyword sets (migration 00029): every domain's ranked keywords of a market as a Roaring
// bitmap of keyword ids, the keyword's rank among the market's ranked keywords. A gaps
// answer without filters counts its exact total as |(C1 ∪ C2 ∪ C3) \ D| on them, in
// microseconds, instead of walking every ranking of its competitors (1.3M index entries
// for a competitor holding 43% of the rankings: seconds). Roaring (github.com/
// RoaringBitmap/roaring) keeps a dense set of a million ids in about 128 KB and a sparse one
// in a few bytes per id, and unions and differences without expanding them.
//
// BuildKeywordSets rebuilds them from domain_rankings (the importer calls it after each
// ranking import); the sets record the generation of domain_rankings they were built at,
// and any later write to the table moves the generation on (a statement trigger), so stale
// sets are never read: answers count in SQL until the next build.

// setsLock is the advisory lock builds of the keyword sets take in turn: two imports ending
// together would otherwise both refill the same rows.
const setsLock int64 = 0x6b7773657473 // "kwsets"

// oneAtATime runs build on a connection holding the advisory lock key, waiting for it.
func oneAtATime(ctx context.Context, pool *pgxpool.Pool, key int64, build func(*pgx.Conn) error) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
		return err
	}
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, key) }()
	return build(conn.Conn())
}

// BuildKeywordSets rebuilds every domain's keyword set from domain_rankings, read in one
// statement. It reads every ranking once, sorted by market and keyword. Builds run one at
// a time.
func BuildKeywordSets(ctx context.Context, pool *pgxpool.Pool) error {
	return oneAtATime(ctx, pool, setsLock, func(conn *pgx.Conn) error { return buildKeywordSets(ctx, conn) })
}

func buildKeywordSets(ctx context.Context, conn *pgx.Conn) error {
	// Read committed, the generation read first: a write committed after that read moves
	// the generation past the one recorded (the sets then read as stale, never as fresh
	// with older rows), and recording it waits for a concurrent writer instead of failing
	// as a repeatable-read update of the state row would.
	return pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{}, func(tx pgx.Tx) error {
		var generation int64
		if err := tx.QueryRow(ctx, `SELECT generation FROM keyword_sets_state`).Scan(&generation); err != nil {
			return fmt.Errorf("keyword sets: %w", err)
		}
		b, err := readSets(ctx, tx, "domain_rankings", nil)
		if err != nil {
			return err
		}
		defer b.remove()
		if err := b.write(ctx, tx); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE keyword_sets_state SET built = $1`, generation)
		return err
	})
}

// KeywordSets are the keyword sets of a rankings table that is to replace domain_rankings
// (an import's new table): read once the table's by-keyword index is built, beside its
// other index builds, and written in the transaction that switches the table in, so they
// are fresh from the moment its rows are visible instead of being rebuilt after.
type KeywordSets struct{ b *setsBuild }

// ReadKeywordSets reads the keyword sets of the rankings in table, a table like
// domain_rankings whose by-keyword index (keyword_norm, country, language, domain) is
// built, in tx. markets, when not nil, lists every market the table holds rankings of
// (one that holds none does no harm): each is then read on its own, without the country
// and language of every row (see readSets). The caller closes the sets.
func ReadKeywordSets(ctx context.Context, tx pgx.Tx, table string, markets []keywords.Market) (*KeywordSets, error) {
	// A new table has no statistics yet: the planner is kept from sorting every row
	// instead of reading the index in its order.
	if _, err := tx.Exec(ctx, `SET LOCAL enable_sort = off`); err != nil {
		return nil, fmt.Errorf("keyword sets: %w", err)
	}
	b, err := readSets(ctx, tx, table, markets)
	if err != nil {
		return nil, err
	}
	return &KeywordSets{b: b}, nil
}

// Write replaces the stored keyword sets by s in tx, the transaction that switches their
// table in; builds of the sets wait for tx. MarkKeywordSetsBuilt records them as fresh.
func (s *KeywordSets) Write(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, setsLock); err != nil {
		return fmt.Errorf("keyword sets: %w", err)
	}
	return s.b.write(ctx, tx)
}

// MarkKeywordSetsBuilt records the sets written in tx (KeywordSets.Write) as built at tx's
// generation of domain_rankings: called once their table is switched in
// (keyword_table_replaced moved the generation on).
func MarkKeywordSetsBuilt(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, `UPDATE keyword_sets_state SET built = generation`); err != nil {
		return fmt.Errorf("keyword sets: %w", err)
	}
	return nil
}

// Rows returns how many rankings the sets were read from.
func (s *KeywordSets) Rows() int { return s.b.rows }

// Close removes the sets' temporary files.
func (s *KeywordSets) Close() {
	if s != nil {
		s.b.remove()
	}
}

// readSets reads the rankings of table in keyword order into a build, all markets in one
// statement, or, when the caller knows them, one market at a time. The caller removes it.
//
// The rows come in the order of domain_rankings_by_keyword_idx (00030), an index-only
// scan: by keyword, then market, then domain. Each market's keywords come in ascending
// order (its ids), and a domain's rows of one keyword together. (Sorted by market first,
// the language's default collation made it an external sort: 72 s of 3M rows.) Read one
// market at a time, the same scan filters on the market and leaves its two columns out of
// every row: 12.5 s against 15.5 s for the server to send 30M rankings of one market
// (docs/keyword-data-at-scale.md), in the phase where the import's index builds use both
// cores. JIT compiling is off: it only delays a scan that evaluates next to nothing.
func readSets(ctx context.Context, tx pgx.Tx, table string, markets []keywords.Market) (*setsBuild, error) {
	if _, err := tx.Exec(ctx, `SET LOCAL work_mem = '256MB'; SET LOCAL jit = off`); err != nil {
		return nil, fmt.Errorf("keyword sets: %w", err)
	}
	t := pgx.Identifier{table}.Sanitize()
	b := newSetsBuild()
	var err error
	if markets == nil {
		err = b.read(ctx, tx, `SELECT country, language, keyword_norm, domain, least(position, 65535) FROM `+t+
			` ORDER BY keyword_norm, country, language, domain`, nil)
	}
	read := map[keywords.Market]bool{} // a market listed twice is read once
	for i := 0; err == nil && i < len(markets); i++ {
		if m := markets[i]; !read[m] {
			read[m] = true
			err = b.read(ctx, tx, `SELECT keyword_norm, domain, least(position, 65535) FROM `+t+
				` WHERE country = $1 AND language = $2 ORDER BY keyword_norm, domain`, &m)
		}
	}
	if err != nil {
		b.remove()
		return nil, fmt.Errorf("keyword sets: %w", err)
	}
	return b, nil
}

// read adds the rows of query: country, language, keyword_norm, domain and position, or,
// of the market m, the last three.
func (b *setsBuild) read(ctx context.Context, tx pgx.Tx, query string, m *keywords.Market) error {
	var args []any
	want := 5
	if m != nil {
		args, want = []any{m.Country, m.Language}, 3
	}
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	fields := rows.FieldDescriptions()
	if len(fields) != want {
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		return fmt.Errorf("%d columns, want %d", len(fields), want)
	}
	positionFormat := fields[want-1].Format
	var n *numbering // m's, from its first row
	for rows.Next() {
		vals := rows.RawValues()
		switch {
		case m == nil:
			if n, err = b.market(vals[0], vals[1]); err != nil {
				return err
			}
			vals = vals[2:]
		case n == nil:
			if n, err = b.market([]byte(m.Country), []byte(m.Language)); err != nil {
				return err
			}
		}
		if err := b.add(n, vals, positionFormat); err != nil {
			return err
		}
	}
	return rows.Err()
}

// write replaces the stored sets and keyword texts by the build's, encoding and writing
// one set at a time.
func (b *setsBuild) write(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, `DELETE FROM domain_keyword_sets`); err != nil {
		return fmt.Errorf("keyword sets: %w", err)
	}
	// One set at a time is encoded, written and let go: the copy holds no list of them.
	type setAt struct{ m, d int }
	var todo []setAt
	for mi, n := range b.markets {
		for di, s := range n.sets {
			if s != nil {
				todo = append(todo, setAt{mi, di})
			}
		}
	}
	next := 0
	var row []any
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"domain_keyword_sets"},
		[]string{"country", "language", "domain", "keywords", "ids", "positions"}, pgx.CopyFromFunc(func() ([]any, error) {
			if next == len(todo) {
				return nil, nil
			}
			at := todo[next]
			next++
			n := b.markets[at.m]
			s := n.sets[at.d]
			n.sets[at.d] = nil
			s.flush()
			s.ids.RunOptimize()
			bs, err := s.ids.ToBytes()
			if err != nil {
				return nil, err
			}
			row = append(row[:0], n.country, n.language, b.domains[at.d], int(s.ids.GetCardinality()), bs, s.positions.bytes())
			return row, nil
		})); err != nil {
		return fmt.Errorf("keyword sets: %w", err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM keyword_set_keywords`); err != nil {
		return fmt.Errorf("keyword sets: %w", err)
	}
	for _, n := range b.markets {
		chunks, err := n.dict.chunks(dictChunk)
		if err != nil {
			return fmt.Errorf("keyword sets: %w", err)
		}
		chunk := 0
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"keyword_set_keywords"},
			[]string{"country", "language", "chunk", "keywords", "norms"}, pgx.CopyFromFunc(func() ([]any, error) {
				b, count, err := chunks()
				if b == nil || err != nil {
					return nil, err
				}
				chunk++
				return []any{n.country, n.language, chunk - 1, count, b}, nil
			})); err != nil {
			return fmt.Errorf("keyword sets: %w", err)
		}
	}
	return nil
}

// setsBuild gathers the keyword sets from the rankings in keyword order (see
// buildKeywordSets). It reads each row's columns as the server sent them, without copying
// them: a row costs a comparison of its market and keyword with the previous row's and one
// look-up of its domain, among 30 million at ten times the bench's size.
type setsBuild struct {
	markets []*numbering   // few: found by a scan
	domains []string       // by number
	domain  map[string]int // numbers
	rows    int            // rows read
}

// numbering is a market's state: its next id, its last keyword, its keywords in id order,
// NUL-separated, spilled to a file of its own (keyword_set_keywords), and its domains'
// sets by domain number.
type numbering struct {
	market
	id    uint32
	last  []byte
	count int
	dict  *spill
	sets  []*keywordSet
}

// keywordSet is a domain's keyword set in a market and the best position of each of its
// keywords, in id order.
type keywordSet struct {
	ids       *roaring.Bitmap
	positions *positionList
	// pending are the ids not yet added to ids, ascending (a market's ids come in order),
	// added in runs (AddMany), which spares Roaring a search of its containers for each;
	// last is the id of the set's last row (when positions is not nil).
	pending []uint32
	last    uint32
}

// pendingIDs is how many ids a set holds before adding them to its bitmap.
const pendingIDs = 1024

// add adds the keyword id at a position. A domain ranking with several URLs for the
// keyword: its rows come together (one id), the best position kept.
func (s *keywordSet) add(id uint32, position uint16) {
	if s.positions != nil && s.last == id {
		s.positions.lower(position)
		return
	}
	s.last = id
	s.positions = s.positions.add(position)
	if s.pending = append(s.pending, id); len(s.pending) == pendingIDs {
		s.flush()
	}
}

// flush adds the pending ids to the bitmap.
func (s *keywordSet) flush() {
	s.ids.AddMany(s.pending)
	s.pending = s.pending[:0]
}

func newSetsBuild() *setsBuild { return &setsBuild{domain: map[string]int{}} }

// add adds a row of the market n: keyword_norm, domain and position, the last in the
// given format code.
func (b *setsBuild) add(n *numbering, vals [][]byte, positionFormat int16) error {
	if len(vals) != 3 {
		return fmt.Errorf("%d columns, want 3", len(vals))
	}
	position, err := rowPosition(vals[2], positionFormat)
	if err != nil {
		return err
	}
	b.rows++
	norm := vals[0]
	if n.count == 0 || !bytes.Equal(norm, n.last) {
		if n.count > 0 {
			n.id++
		}
		n.last = append(n.last[:0], norm...)
		n.count++
		if err := n.dict.add(norm); err != nil {
			return err
		}
	}
	d, ok := b.domain[string(vals[1])]
	if !ok {
		d = len(b.domains)
		b.domains = append(b.domains, string(vals[1]))
		b.domain[b.domains[d]] = d
	}
	if d >= len(n.sets) {
		n.sets = append(n.sets, make([]*keywordSet, d+1-len(n.sets))...)
	}
	s := n.sets[d]
	if s == nil {
		s = &keywordSet{ids: roaring.New()}
		n.sets[d] = s
	}
	s.add(n.id, position)
	return nil
}

// market returns the numbering of the market country, language, starting it on its first
// row.
func (b *setsBuild) market(country, language []byte) (*numbering, error) {
	for _, n := range b.markets {
		if n.country == string(country) && n.language == string(language) {
			return n, nil
		}
	}
	d, err := newSpill()
	if err != nil {
		return nil, err
	}
	n := &numbering{market: market{string(country), string(language)}, dict: d}
	b.markets = append(b.markets, n)
	return n, nil
}

// remove removes the markets' spill files.
func (b *setsBuild) remove() {
	for _, n := range b.markets {
		n.dict.remove()
	}
}

// rowPosition reads least(position, 65535), an integer, in the format the server sent it.
func rowPosition(v []byte, format int16) (uint16, error) {
	var p int64
	switch {
	case v == nil:
		return 0, errors.New("position is NULL")
	case format == pgx.BinaryFormatCode && len(v) == 4:
		p = int64(int32(binary.BigEndian.Uint32(v)))
	case format == pgx.TextFormatCode:
		var err error
		if p, err = strconv.ParseInt(string(v), 10, 32); err != nil {
			return 0, err
		}
	default:
		return 0, fmt.Errorf("position of %d bytes in format %d", len(v), format)
	}
	if p < 0 || p > 65535 {
		return 0, fmt.Errorf("position %d out of range", p)
	}
	return uint16(p), nil
}

// countBySets counts the gaps of the domain against the competitors on the keyword sets;
// ok is false when the sets are stale (not built since domain_rankings last changed).
func countBySets(ctx context.Context, tx pgx.Tx, country, language, domain string, competitors []string) (n int, ok bool, err error) {
	var fresh bool
	if err := tx.QueryRow(ctx, `SELECT generation = built FROM keyword_sets_state`).Scan(&fresh); err != nil || !fresh {
		return 0, false, err
	}
	rows, err := tx.Query(ctx, `SELECT domain, ids FROM domain_keyword_sets
		WHERE country = $1 AND language = $2 AND domain = ANY($3::text[])`, country, language, append([]string{domain}, competitors...))
	if err != nil {
		return 0, false, err
	}
	union, own := roaring.New(), roaring.New()
	var d string
	var b []byte
	_, err = pgx.ForEachRow(rows, []any{&d, &b}, func() error {
		s := roaring.New()
		if err := s.UnmarshalBinary(b); err != nil { // copies: pgx reuses b
			return err
		}
		if d == domain {
			own = s
		} else {
			union.Or(s)
		}
		return nil
	})
	if err != nil {
		return 0, false, err
	}
	union.AndNot(own)
	return int(union.GetCardinality()), true, nil
}
