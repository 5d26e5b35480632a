package local

import (
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/jackc/pgx/v5"

	"github.com/contentapi/contentapi/internal/keywords"
)

// Competitor discovery without filters, on the keyword sets (sets.go, migrations 00029 and
// 00031): every other domain's shared keywords are the size of its set's intersection with
// the domain's (a few thousand intersections of compressed sets, instead of reading every
// ranking of every keyword the domain ranks for: 14 s for a domain of 720k keywords among
// 3M rankings), and the average positions are read for the page's competitors alone, from
// the best positions kept beside their sets, each competitor's set walked against the
// domain's positions spread by id.

// setsFrom is the size of a domain's keyword set from which its competitors are counted on
// the sets: reading every set of the market takes tens of milliseconds, more than SQL's
// probe per keyword of a small site (15 ms for 1,100 keywords among 3M rankings, 440 ms
// for 100k).
var setsFrom = 5000

// competitorsBySets answers the unfiltered question on the keyword sets; ok is false when
// they are stale or built without positions (the caller then asks SQL).
func competitorsBySets(ctx context.Context, tx pgx.Tx, country, language, domain string, after *keywords.Competitor, limit int) (all, page []keywords.Competitor, ok bool, err error) {
	var fresh bool
	if err := tx.QueryRow(ctx, `SELECT generation = built FROM keyword_sets_state`).Scan(&fresh); err != nil || !fresh {
		return nil, nil, false, err
	}
	var ownIDs, ownPositions []byte
	var ownSize int
	err = tx.QueryRow(ctx, `SELECT ids, positions, keywords FROM domain_keyword_sets WHERE country = $1 AND language = $2 AND domain = $3`,
		country, language, domain).Scan(&ownIDs, &ownPositions, &ownSize)
	if errors.Is(err, pgx.ErrNoRows) {
		return []keywords.Competitor{}, nil, true, nil // no rankings: nobody shares a keyword
	}
	if err != nil || ownPositions == nil || ownSize < setsFrom {
		return nil, nil, false, err
	}
	own := roaring.New()
	if err := own.UnmarshalBinary(ownIDs); err != nil {
		return nil, nil, false, err
	}
	rows, err := tx.Query(ctx, `SELECT domain, ids, keywords FROM domain_keyword_sets
		WHERE country = $1 AND language = $2 AND domain <> $3`, country, language, domain)
	if err != nil {
		return nil, nil, false, err
	}
	sets := map[string]*roaring.Bitmap{}
	totals := map[string]int{}
	var d string
	var b []byte
	var n int
	type set struct {
		domain string
		ids    []byte
		total  int
	}
	var mu sync.Mutex
	err = onRows(rows, []any{&d, &b, &n}, func() set { return set{d, slices.Clone(b), n} }, func(r set) error {
		s := roaring.New()
		if _, err := s.FromBuffer(r.ids); err != nil { // r.ids is this set's own copy
			return err
		}
		if shared := own.AndCardinality(s); shared > 0 {
			mu.Lock()
			defer mu.Unlock()
			all = append(all, keywords.Competitor{Domain: r.domain, Shared: int(shared)})
			sets[r.domain], totals[r.domain] = s, r.total
		}
		return nil
	})
	if err != nil {
		return nil, nil, false, err
	}
	slices.SortFunc(all, compareCompetitors)
	page = pageOf(all, after, limit)
	if len(page) == 0 {
		return all, page, true, nil
	}
	domains := make([]string, len(page))
	for i, c := range page {
		domains[i] = c.Domain
	}
	positions := map[string][]byte{}
	rows, err = tx.Query(ctx, `SELECT domain, positions FROM domain_keyword_sets
		WHERE country = $1 AND language = $2 AND domain = ANY($3::text[])`, country, language, domains)
	if err != nil {
		return nil, nil, false, err
	}
	_, err = pgx.ForEachRow(rows, []any{&d, &b}, func() error {
		positions[d] = slices.Clone(b)
		return nil
	})
	if err != nil {
		return nil, nil, false, err
	}
	ownAt := positionsByID(own, ownPositions)
	for i := range page {
		c := &page[i]
		ps := positions[c.Domain]
		if ps == nil {
			return nil, nil, false, nil
		}
		c.AvgPosition, c.DomainAvgPosition = sharedAverages(ownAt, sets[c.Domain], ps)
		c.Total = totals[c.Domain]
	}
	return all, page, true, nil
}

// positionsByID spreads a set's positions (16 bits each, in its id order) over its ids:
// element id is the position at id, noPosition where the set has none.
func positionsByID(set *roaring.Bitmap, positions []byte) []uint16 {
	out := []uint16{}
	if !set.IsEmpty() {
		out = make([]uint16, int(set.Maximum())+1)
	}
	for i := range out {
		out[i] = noPosition
	}
	i := 0
	eachID(set, func(id uint32) {
		out[id] = binary.LittleEndian.Uint16(positions[2*i:])
		i++
	})
	return out
}

// sharedAverages returns the average positions, the competitor's and the domain's, over the
// ids both sets hold: the domain's positions by id (positionsByID), the competitor's set
// and its positions in its id order. It walks the competitor's set alone, however large the
// domain's (the biggest domain holds millions of keywords; a page's competitors fewer).
func sharedAverages(ownAt []uint16, other *roaring.Bitmap, otherPositions []byte) (avg, ownAvg float64) {
	var sum, ownSum, n, j int
	eachID(other, func(id uint32) {
		if int(id) < len(ownAt) && ownAt[id] != noPosition {
			ownSum += int(ownAt[id])
			sum += int(binary.LittleEndian.Uint16(otherPositions[2*j:]))
			n++
		}
		j++
	})
	if n == 0 {
		return 0, 0
	}
	return float64(sum) / float64(n), float64(ownSum) / float64(n)
}
