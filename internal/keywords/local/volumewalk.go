package local

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"sort"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/contentapi/contentapi/internal/keywords"
)

// A page of gaps in their default order (volume descending, then keyword) needs the first
// rows of the gap set after the page's cursor. A pass over the whole set finds them (every
// gap is compared with the cursor: 55–65 ms for the biggest competitor's 7.2M keywords at
// ten million), but the columns also hold every id in that order (byVolume, written with
// the column file), so such a page walks that list from the cursor instead and keeps the
// ids in the gap set: about limit × keywords / gaps steps. Where the gaps are few against
// the market (a small competitor) the walk would pass over many ids for each gap, so it is
// only taken when the set is dense enough, and given up for the pass when it runs long.
//
// A page of gaps filtered on volume, in any order, whose pass must count every gap passing
// its filters, reads the same list: the ids whose volume the filter allows are one span of
// it, and where that span is shorter than the gap set the pass goes over the span, keeping
// the ids in the gap set (at ten million skewed keywords, a volume of at least 100 is 8% of
// them, against the biggest competitor's 7.2M gaps).

// volumeDesc is the order byVolume follows.
var volumeDesc = []keywords.OrderKey{{Field: keywords.FieldSearchVolume, Desc: true}}

// maxDistinctVolumes is the most distinct volumes orderByVolume counts before it sorts
// instead (search volumes are bucketed: a market holds a few hundred distinct values).
var maxDistinctVolumes = 1 << 16

// orderByVolume fills by with the ids of volume in the order volumeDesc: volume
// descending, unknown (NaN) last, then id (the keys are in id order).
func orderByVolume(by []uint32, volume []float64) {
	at := map[float64]int{} // each known volume's count, then where its first id goes
	for _, v := range volume {
		if math.IsNaN(v) {
			continue
		}
		at[v]++
		if len(at) > maxDistinctVolumes {
			sortByVolume(by, volume)
			return
		}
	}
	values := slices.SortedFunc(maps.Keys(at), func(a, b float64) int { return cmp.Compare(b, a) })
	next := 0
	for _, v := range values {
		n := at[v]
		at[v] = next
		next += n
	}
	for id, v := range volume {
		if math.IsNaN(v) {
			by[next] = uint32(id)
			next++
			continue
		}
		by[at[v]] = uint32(id)
		at[v]++
	}
}

// sortByVolume is orderByVolume by a sort, for markets of many distinct volumes.
func sortByVolume(by []uint32, volume []float64) {
	for i := range by {
		by[i] = uint32(i)
	}
	slices.SortFunc(by, func(a, b uint32) int {
		ra, rb := volumeRow(volume, a), volumeRow(volume, b)
		return compareRows(volumeDesc, &ra, &rb)
	})
}

// volumeRow is keyword id's row in the order volumeDesc.
func volumeRow(volume []float64, id uint32) colRow {
	return colRow{values: [maxColumnKeys]float64{volume[id]}, at: rankOf(id)}
}

// walkMode chooses between the walk and the pass (tests force either).
type walkMode int

const (
	walkWhenDense walkMode = iota
	walkAlways
	walkNever
)

var (
	volumeWalks  = walkWhenDense
	volumeWalked atomic.Int64 // pages answered by a walk (tests)
)

// walksByVolume reports whether a page of limit rows of gaps (cand, of size gaps among n
// keywords) in order, unfiltered, should walk byVolume: the order is volumeDesc, and the
// walk's expected steps (limit × n / gaps) are under a quarter of the pass's (gaps).
func (c *marketColumns) walksByVolume(order []keywords.OrderKey, limit int, gaps uint64) bool {
	if len(c.byVolume) != c.norms.len() || len(order) != 1 || order[0] != volumeDesc[0] || limit <= 0 || gaps == 0 {
		return false
	}
	switch volumeWalks {
	case walkAlways:
		return true
	case walkNever:
		return false
	}
	return 4*uint64(limit)*uint64(len(c.byVolume)) < gaps*gaps
}

// walkSteps is how many ids not in a gap set of size gaps a walk passes over before it
// gives up for the pass (which takes gaps steps).
func walkSteps(gaps uint64) int {
	if volumeWalks == walkAlways {
		return math.MaxInt
	}
	return int(min(gaps, math.MaxInt32))
}

// volumeWalk returns the first k ids of cand after the cursor (nil: from the start) in the
// order volumeDesc, as rows of that order; ok is false when it passed over more than
// maxSteps ids not in cand first (the caller then makes its pass).
func (c *marketColumns) volumeWalk(cand *roaring.Bitmap, after *colRow, k, maxSteps int) (rows []colRow, ok bool) {
	by := c.byVolume
	start := 0
	if after != nil {
		start = sort.Search(len(by), func(i int) bool {
			r := volumeRow(c.volume, by[i])
			return compareRows(volumeDesc, &r, after) > 0
		})
	}
	passed := 0
	for i := start; i < len(by) && len(rows) < k; i++ {
		if !cand.Contains(by[i]) {
			if passed++; passed > maxSteps {
				return nil, false
			}
			continue
		}
		rows = append(rows, volumeRow(c.volume, by[i]))
	}
	volumeWalked.Add(1)
	return rows, true
}

// volumeSpan is where in byVolume the ids whose volume lies within b are: one span, the list
// being in volume order (unknown volumes, which no range passes, last).
func (c *marketColumns) volumeSpan(b bounds) (lo, hi int) {
	by, volume := c.byVolume, c.volume
	lo = sort.Search(len(by), func(i int) bool {
		v := volume[by[i]]
		return math.IsNaN(v) || v <= b.hi
	})
	hi = sort.Search(len(by), func(i int) bool {
		v := volume[by[i]]
		return math.IsNaN(v) || v < b.lo
	})
	return lo, max(lo, hi)
}

// spanFirst reports whether a pass over gaps should read the span of ids (span long) whose
// volume its filter allows, each looked up in the gap set, rather than the gap set (of size
// gaps) whole: a look-up costs about three steps of the pass.
func spanFirst(span int, gaps uint64) bool {
	switch volumeWalks {
	case walkAlways:
		return true
	case walkNever:
		return false
	}
	return 3*uint64(span) < gaps
}
