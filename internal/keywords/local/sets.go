package local

import (
	"context"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
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
		if _, err := tx.Exec(ctx, `SET LOCAL work_mem = '256MB'`); err != nil {
			return err
		}
		type setKey struct {
			market
			domain string
		}
		sets := map[setKey]*roaring.Bitmap{}
		// positions holds each set's best position per keyword, in id order.
		positions := map[setKey]*positionList{}
		// In the order of domain_rankings_by_keyword_idx (00030), an index-only scan: by
		// keyword, then market, then domain. Each market's keywords come in ascending order
		// (its ids), and a domain's rows of one keyword together. (Sorted by market first,
		// the language's default collation made it an external sort: 72 s of 3M rows.)
		rows, err := tx.Query(ctx, `SELECT country, language, keyword_norm, domain, least(position, 65535) FROM domain_rankings
			ORDER BY keyword_norm, country, language, domain`)
		if err != nil {
			return fmt.Errorf("keyword sets: %w", err)
		}
		// numbering is a market's state: its next id, its last keyword, and its keywords in
		// id order, NUL-separated, spilled to a file of its own (keyword_set_keywords).
		type numbering struct {
			id    uint32
			last  string
			count int
			dict  *spill
		}
		markets := map[market]*numbering{}
		defer func() {
			for _, n := range markets {
				n.dict.remove()
			}
		}()
		var cur *numbering
		var curMarket market
		var country, language, norm, domain string
		var position int
		_, err = pgx.ForEachRow(rows, []any{&country, &language, &norm, &domain, &position}, func() error {
			m := market{country, language}
			if cur == nil || m != curMarket {
				cur, curMarket = markets[m], m
				if cur == nil {
					d, err := newSpill()
					if err != nil {
						return err
					}
					cur = &numbering{dict: d}
					markets[m] = cur
				}
			}
			if cur.count == 0 || norm != cur.last {
				if cur.count > 0 {
					cur.id++
				}
				cur.last = norm
				cur.count++
				if err := cur.dict.add(norm); err != nil {
					return err
				}
			}
			id := cur.id
			k := setKey{m, domain}
			s := sets[k]
			if s == nil {
				s = roaring.New()
				sets[k] = s
			}
			// A domain ranking with several URLs for the keyword: its rows come together
			// (one id), the best position kept.
			if ps := positions[k]; s.CheckedAdd(id) {
				positions[k] = ps.add(uint16(position))
			} else {
				ps.lower(uint16(position))
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("keyword sets: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM domain_keyword_sets`); err != nil {
			return fmt.Errorf("keyword sets: %w", err)
		}
		// One set at a time is encoded, written and let go: the copy holds no list of them.
		keys := make([]setKey, 0, len(sets))
		for k := range sets {
			keys = append(keys, k)
		}
		next := 0
		var row []any
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"domain_keyword_sets"},
			[]string{"country", "language", "domain", "keywords", "ids", "positions"}, pgx.CopyFromFunc(func() ([]any, error) {
				if next == len(keys) {
					return nil, nil
				}
				k := keys[next]
				next++
				s, ps := sets[k], positions[k]
				delete(sets, k)
				delete(positions, k)
				s.RunOptimize()
				b, err := s.ToBytes()
				if err != nil {
					return nil, err
				}
				row = append(row[:0], k.country, k.language, k.domain, int(s.GetCardinality()), b, ps.bytes())
				return row, nil
			})); err != nil {
			return fmt.Errorf("keyword sets: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM keyword_set_keywords`); err != nil {
			return fmt.Errorf("keyword sets: %w", err)
		}
		for m, n := range markets {
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
					return []any{m.country, m.language, chunk - 1, count, b}, nil
				})); err != nil {
				return fmt.Errorf("keyword sets: %w", err)
			}
		}
		_, err = tx.Exec(ctx, `UPDATE keyword_sets_state SET built = $1`, generation)
		return err
	})
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
