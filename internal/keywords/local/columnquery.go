package local

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/jackc/pgx/v5"

	"github.com/contentapi/contentapi/internal/keywords"
)

// Gaps and a domain's rankings on the keyword columns (columns.go): the same rows, order,
// totals and page tokens as their SQL (gaps.go, rankings.go), from one pass over the
// domain's or the competitors' keyword sets. Each row passing the filters is counted, and
// offered to a heap keeping the first limit+1 rows after the page's position in the
// query's order: O(rows × log limit) whatever the filters and the order.

// gapsOnColumns returns the page of gaps after q.after (limit+1 rows when there are more,
// all with limit 0) and how many gaps pass the filters; ok is false when a keyword set
// has no positions (built before migration 00031), and SQL answers.
func (c *marketColumns) gapsOnColumns(ctx context.Context, tx pgx.Tx, m gapMarket, q gapQuery, limit int) (page []pageRow, total int, ok bool, err error) {
	if len(q.order) > maxColumnKeys {
		return nil, 0, false, nil
	}
	mk := market{m.country, m.language}
	own, ok, err := c.set(ctx, tx, mk, m.domain)
	if err != nil || !ok {
		return nil, 0, false, err
	}
	comps := make([]*domainSet, 0, len(m.competitors))
	union := make([]*roaring.Bitmap, 0, len(m.competitors))
	for _, d := range m.competitors {
		s, ok, err := c.set(ctx, tx, mk, d)
		if err != nil || !ok {
			return nil, 0, false, err
		}
		comps, union = append(comps, s), append(union, s.ids)
	}
	cand := roaring.FastOr(union...)
	cand.AndNot(own.ids)
	c.matchWords(cand, q.filters)

	e := gapEval{c: c, order: q.order}
	if _, ok := q.filters.Ranges[keywords.FieldCompetitorPosition]; ok || q.ordersBy(keywords.FieldCompetitorPosition) {
		e.cpos = densePositions(c.norms.len(), comps...)
	}
	filter := newRowFilter(q.filters)
	var after *colRow
	if q.after != nil {
		after = &colRow{at: c.keyRank(q.after.Key)}
		for i, v := range q.after.Values {
			after.values[i] = math.NaN()
			if v != nil {
				after.values[i] = *v
			}
		}
	}
	filtering := len(filter.fields) > 0 || filter.anyOf
	gaps := cand.GetCardinality()
	if limit > 0 && !filtering && c.walksByVolume(q.order, limit+1, gaps) {
		if rows, ok := c.volumeWalk(cand, after, limit+1, walkSteps(gaps)); ok {
			return c.gapPage(rows, q, m.competitors, comps), int(gaps), true, nil
		}
	}
	k := limit + 1
	if limit <= 0 {
		k = 0
	}
	var parts []idPart
	if r, ok := q.filters.Ranges[keywords.FieldSearchVolume]; ok && len(c.byVolume) == c.norms.len() {
		if lo, hi := c.volumeSpan(boundsOf(r)); spanFirst(hi-lo, gaps) {
			parts = spanParts(c.byVolume[lo:hi], cand)
		}
	}
	if parts == nil {
		parts = candParts(cand)
	}
	// Each part of the pass keeps its own count and best rows; the page is the best of
	// theirs.
	type passed struct {
		total int
		top   topK[colRow]
	}
	done := inParts(parts, func(each idPart) passed {
		p := passed{top: topK[colRow]{k: k, cmp: e.compare}}
		each(func(id uint32) {
			if filtering && !passes(&e, id, c.intent[id], &filter) {
				return
			}
			p.total++
			var last *colRow
			if p.top.full() {
				last = p.top.last()
			}
			if e.outside(id, last, after) {
				return
			}
			r := e.row(id)
			if after == nil || e.compare(&r, after) > 0 {
				p.top.offer(r)
			}
		})
		return p
	})
	top := topK[colRow]{k: k, cmp: e.compare}
	for _, p := range done {
		total += p.total
		for _, r := range p.top.rows {
			top.offer(r)
		}
	}
	return c.gapPage(top.sorted(), q, m.competitors, comps), total, true, nil
}

// gapPage is the page of the rows chosen, in order, with each named competitor's best
// position (comps: their keyword sets, in the order of names).
func (c *marketColumns) gapPage(rows []colRow, q gapQuery, names []string, comps []*domainSet) []pageRow {
	page := make([]pageRow, 0, len(rows))
	for _, r := range rows {
		// The key is copied out of the columns, which may be a file's mapping that goes
		// when the columns are let go.
		row := pageRow{key: strings.Clone(c.keyAt(r.at)), values: make([]*float64, len(q.order)),
			positions: competitorPositions(idAt(r.at), names, comps)}
		for i, o := range q.order {
			if v := r.values[i]; o.Field != keywords.FieldKeyword && !math.IsNaN(v) {
				row.values[i] = &v
			}
		}
		page = append(page, row)
	}
	return page
}

// competitorPositions is each named competitor's best position for keyword id, of those
// that rank for it (sets, in the order of names).
func competitorPositions(id uint32, names []string, sets []*domainSet) map[string]int {
	out := map[string]int{}
	for i, s := range sets {
		if s.ids.Contains(id) {
			out[names[i]] = int(s.positions[s.ids.Rank(id)-1])
		}
	}
	return out
}

// outside reports whether the gap id falls outside the page on the order's first key
// alone (so whatever the other keys): after last, the last of the best rows kept once the
// page is full, or before after, a later page's cursor. Most rows of a page's pass are
// rejected here, on one value read, without reading their keys. Either row may be nil.
func (e *gapEval) outside(id uint32, last, after *colRow) bool {
	o := e.order[0]
	if o.Field == keywords.FieldKeyword || last == nil && after == nil {
		return false
	}
	v := e.value(id, o.Field)
	return last != nil && behindOn(o, v, last.values[0]) || after != nil && behindOn(o, after.values[0], v)
}

// behindOn reports whether the value v sorts after w on the key o, unknowns (NaN) last.
func behindOn(o keywords.OrderKey, v, w float64) bool {
	switch {
	case math.IsNaN(v):
		return !math.IsNaN(w)
	case math.IsNaN(w):
		return false
	case o.Desc:
		return v < w
	}
	return v > w
}

// maxColumnKeys is the most order keys a row holds here (the API's limit); a longer order
// is answered in SQL.
const maxColumnKeys = 3

// colRow is a row's sort values (NaN: unknown) and its key's rank in key order (keyRank):
// the keys are sorted, so rows compare on their keys as integers, without reading the
// keys' texts, which a pass over millions of tied rows would read at random.
type colRow struct {
	values [maxColumnKeys]float64
	at     int64
}

type gapEval struct {
	c     *marketColumns
	order []keywords.OrderKey
	cpos  []uint16 // dense best competitor positions, when the query needs them
}

func (e *gapEval) value(id uint32, f keywords.Field) float64 {
	switch f {
	case keywords.FieldSearchVolume:
		return e.c.volume[id]
	case keywords.FieldDifficulty:
		return e.c.diff[id]
	case keywords.FieldCPC:
		return e.c.cpc[id]
	case keywords.FieldCompetitorPosition:
		if p := e.cpos[id]; p != noPosition {
			return float64(p)
		}
	}
	return math.NaN()
}

func (e *gapEval) row(id uint32) colRow {
	r := colRow{at: rankOf(id)}
	for i, o := range e.order {
		r.values[i] = e.value(id, o.Field)
	}
	return r
}

// compare orders gaps as gapQuery.orderBy does.
func (e *gapEval) compare(a, b *colRow) int { return compareRows(e.order, a, b) }

// compareRows orders rows by the keys of order, each with unknowns (NaN) last in either
// direction, then by the keyword ascending (byte order: collation "C").
func compareRows(order []keywords.OrderKey, a, b *colRow) int {
	for i, o := range order {
		var c int
		if o.Field == keywords.FieldKeyword {
			c = cmp.Compare(a.at, b.at)
		} else {
			an, bn := math.IsNaN(a.values[i]), math.IsNaN(b.values[i])
			switch {
			case an && bn:
				continue
			case an:
				return 1
			case bn:
				return -1
			}
			c = cmp.Compare(a.values[i], b.values[i])
		}
		if o.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return cmp.Compare(a.at, b.at)
}

// rankingsOnColumns returns the keys of the page of the domain's rankings after the page
// token and the last row's sort values (more: a row follows), and the counts of the rows
// passing the filters (total, then by position band) when counted; ok is false when the
// domain's keyword set has no positions.
func (c *marketColumns) rankingsOnColumns(ctx context.Context, tx pgx.Tx, mk market, domain string, f keywords.Filters,
	order []keywords.OrderKey, after []any, limit int, counted bool) (keys []string, last []any, more bool, counts []int, ok bool, err error) {
	if len(order) > maxColumnKeys {
		return nil, nil, false, nil, false, nil
	}
	s, ok, err := c.set(ctx, tx, mk, domain)
	if err != nil || !ok {
		return nil, nil, false, nil, false, err
	}
	cand := s.ids.Clone()
	c.matchWords(cand, f)
	e := rankEval{c: c, order: order, pos: densePositions(c.norms.len(), s)}
	filter := newRowFilter(f)
	if counted {
		counts = make([]int, 1+len(keywords.Bands))
	}
	var afterRow *colRow
	if after != nil {
		afterRow = &colRow{at: c.keyRank(after[len(after)-1].(string))}
		for i, o := range order {
			if o.Field != keywords.FieldKeyword {
				afterRow.values[i] = after[i].(float64)
			}
		}
	}
	filtering := len(filter.fields) > 0 || filter.anyOf
	type passed struct {
		counts []int
		top    topK[colRow]
	}
	done := inParts(candParts(cand), func(each idPart) passed {
		p := passed{top: topK[colRow]{k: limit + 1, cmp: e.compare}}
		if counted {
			p.counts = make([]int, 1+len(keywords.Bands))
		}
		each(func(id uint32) {
			if filtering && !passes(&e, id, c.intent[id], &filter) {
				return
			}
			if counted {
				p.counts[0]++
				pos := int(e.pos[id])
				for i, b := range keywords.Bands {
					if pos >= b.From && pos <= b.To {
						p.counts[i+1]++
					}
				}
			}
			if p.top.full() && e.behind(id, p.top.last()) {
				return
			}
			r := e.row(id)
			if afterRow == nil || e.compare(&r, afterRow) > 0 {
				p.top.offer(r)
			}
		})
		return p
	})
	top := topK[colRow]{k: limit + 1, cmp: e.compare}
	for _, p := range done {
		for i, n := range p.counts {
			counts[i] += n
		}
		for _, r := range p.top.rows {
			top.offer(r)
		}
	}
	rows := top.sorted()
	if len(rows) > limit {
		rows, more = rows[:limit], true
	}
	for i := range rows {
		keys = append(keys, strings.Clone(c.keyAt(rows[i].at))) // out of the columns, as in gapsOnColumns
	}
	if len(rows) > 0 {
		r, key := rows[len(rows)-1], keys[len(keys)-1]
		for i, o := range order {
			if o.Field == keywords.FieldKeyword {
				last = append(last, key)
			} else {
				last = append(last, r.values[i])
			}
		}
		last = append(last, key)
	}
	return keys, last, more, counts, true, nil
}

// behind reports whether the ranking id sorts after r on the order's first key alone.
func (e *rankEval) behind(id uint32, r *colRow) bool {
	o := e.order[0]
	return o.Field != keywords.FieldKeyword && behindOn(o, e.sortValue(id, o), r.values[0])
}

type rankEval struct {
	c     *marketColumns
	order []keywords.OrderKey
	pos   []uint16 // the domain's best position by id
}

func (e *rankEval) value(id uint32, f keywords.Field) float64 {
	switch f {
	case keywords.FieldSearchVolume:
		return e.c.volume[id]
	case keywords.FieldDifficulty:
		return e.c.diff[id]
	case keywords.FieldCPC:
		return e.c.cpc[id]
	case keywords.FieldPosition:
		return float64(e.pos[id])
	case keywords.FieldTraffic:
		// floor(volume × CTR + 0.5), as the SQL's; NaN (unknown) with the volume.
		return math.Floor(e.c.volume[id]*keywords.CTR(int(e.pos[id])) + 0.5)
	}
	return math.NaN()
}

func (e *rankEval) row(id uint32) colRow {
	r := colRow{at: rankOf(id)}
	for i, o := range e.order {
		r.values[i] = e.sortValue(id, o)
	}
	return r
}

// sortValue is the value of the key o, an unknown one as +∞ ascending, -∞ descending.
func (e *rankEval) sortValue(id uint32, o keywords.OrderKey) float64 {
	v := e.value(id, o.Field)
	if math.IsNaN(v) {
		v = math.Inf(1)
		if o.Desc {
			v = math.Inf(-1)
		}
	}
	return v
}

// compare orders rankings as the SQL's keys (columns.order): their values are never
// unknown (sortValue makes them ±∞), so compareRows orders them as the SQL does.
func (e *rankEval) compare(a, b *colRow) int { return compareRows(e.order, a, b) }

// competitorsOnColumns answers filtered competitor discovery: the domain's keywords passing
// the filters (its metrics, its position, words) as a set, then every other domain's
// keyword set against it: the size of the intersection, or, with a range on the
// competitor's position, the intersection's keywords where the competitor ranks in it.
// Averages are over the counted keywords, as competitorsSQL's. ok is false when a set has
// no positions (SQL answers).
func (c *marketColumns) competitorsOnColumns(ctx context.Context, tx pgx.Tx, mk market, domain string, f keywords.Filters,
	after *keywords.Competitor, limit int) (all, page []keywords.Competitor, ok bool, err error) {
	own, ok, err := c.set(ctx, tx, mk, domain)
	if err != nil || !ok {
		return nil, nil, false, err
	}
	var cRange *bounds
	if r, has := f.Ranges[keywords.FieldCompetitorPosition]; has {
		b := boundsOf(r)
		cRange = &b
		ranges := make(map[keywords.Field]keywords.Range, len(f.Ranges))
		for field, v := range f.Ranges {
			if field != keywords.FieldCompetitorPosition {
				ranges[field] = v
			}
		}
		f.Ranges = ranges
	}
	cand := own.ids.Clone()
	c.matchWords(cand, f)
	e := rankEval{c: c, pos: densePositions(c.norms.len(), own)}
	if filter := newRowFilter(f); len(filter.fields) > 0 || filter.anyOf {
		kept := make([]uint32, 0, cand.GetCardinality())
		eachID(cand, func(id uint32) {
			if passes(&e, id, c.intent[id], &filter) {
				kept = append(kept, id)
			}
		})
		cand = roaring.BitmapOf(kept...)
	}
	all = []keywords.Competitor{}
	if cand.IsEmpty() {
		return all, nil, true, nil
	}
	rows, err := tx.Query(ctx, `SELECT domain, ids, positions, keywords FROM domain_keyword_sets
		WHERE country = $1 AND language = $2 AND domain <> $3`, mk.country, mk.language, domain)
	if err != nil {
		return nil, nil, false, err
	}
	type other struct {
		ids       *roaring.Bitmap
		positions []byte
		total     int
	}
	others := map[string]other{}
	var d string
	var ids, positions []byte
	var total int
	complete := true
	// shared counts the keywords of cand the set holds (its positions in id order) where the
	// competitor's position passes cRange, with the sums of both positions. It walks every
	// id of the set (a competitor's set may hold millions), so cand is asked as a bit per
	// id, and the ids are read a block at a time.
	inCand := denseBits(c.norms.len(), cand)
	shared := func(s *roaring.Bitmap, ps []byte) (n, sum, ownSum int) {
		var block [512]uint32
		it := s.ManyIterator()
		for i := 0; ; {
			got := it.NextMany(block[:])
			if got == 0 {
				return n, sum, ownSum
			}
			for _, id := range block[:got] {
				if inCand[id>>6]&(1<<(id&63)) != 0 {
					p := int(binary.LittleEndian.Uint16(ps[2*i:]))
					if cRange == nil || cRange.pass(float64(p)) {
						n, sum, ownSum = n+1, sum+p, ownSum+int(e.pos[id])
					}
				}
				i++
			}
		}
	}
	type set struct {
		domain         string
		ids, positions []byte
		total          int
	}
	var mu sync.Mutex
	err = onRows(rows, []any{&d, &ids, &positions, &total}, func() set {
		return set{d, slices.Clone(ids), slices.Clone(positions), total}
	}, func(r set) error {
		if r.positions == nil || capped(r.positions) {
			mu.Lock()
			complete = false
			mu.Unlock()
			return nil
		}
		s := roaring.New()
		if _, err := s.FromBuffer(r.ids); err != nil { // r.ids is this set's own copy
			return err
		}
		if !s.IsEmpty() && int(s.Maximum()) >= c.norms.len() {
			return fmt.Errorf("local: the keyword set of %s numbers keywords its columns do not hold", r.domain)
		}
		if cRange == nil {
			if n := cand.AndCardinality(s); n > 0 {
				mu.Lock()
				defer mu.Unlock()
				all = append(all, keywords.Competitor{Domain: r.domain, Shared: int(n)})
				others[r.domain] = other{s, r.positions, r.total}
			}
			return nil
		}
		if !cand.Intersects(s) {
			return nil
		}
		if n, sum, ownSum := shared(s, r.positions); n > 0 {
			mu.Lock()
			defer mu.Unlock()
			all = append(all, keywords.Competitor{Domain: r.domain, Shared: n, AvgPosition: float64(sum) / float64(n),
				DomainAvgPosition: float64(ownSum) / float64(n), Total: r.total})
		}
		return nil
	})
	if err != nil || !complete {
		return nil, nil, false, err
	}
	slices.SortFunc(all, compareCompetitors)
	page = pageOf(all, after, limit)
	for i := range page {
		if o, ok := others[page[i].Domain]; ok {
			n, sum, ownSum := shared(o.ids, o.positions)
			page[i].AvgPosition, page[i].DomainAvgPosition = float64(sum)/float64(n), float64(ownSum)/float64(n)
			page[i].Total = o.total
		}
	}
	return all, page, true, nil
}

// denseBits is the ids of b as a bitset over n ids (bit id%64 of word id/64).
func denseBits(n int, b *roaring.Bitmap) []uint64 {
	bits := make([]uint64, (n+63)/64)
	eachID(b, func(id uint32) { bits[id>>6] |= 1 << (id & 63) })
	return bits
}

// capped reports whether a set's positions (16 bits each, little-endian) hold one the
// build capped at noPosition: not exact, so SQL answers.
func capped(positions []byte) bool {
	for i := 0; i+1 < len(positions); i += 2 {
		if binary.LittleEndian.Uint16(positions[i:]) == noPosition {
			return true
		}
	}
	return false
}
