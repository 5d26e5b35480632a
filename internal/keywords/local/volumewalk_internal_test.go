package local

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// randomVolumes are n volumes drawn from distinct values (unknown, 0 and -0 among them).
func randomVolumes(r *rand.Rand, n, distinct int) []float64 {
	values := []float64{math.NaN(), 0, math.Copysign(0, -1)}
	for len(values) < distinct {
		values = append(values, float64(r.IntN(1_000_000))/float64(1+r.IntN(3)))
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = values[r.IntN(len(values))]
	}
	return out
}

// The ids in volume order, counted or sorted, are every id once in the order the gaps'
// default order compares them.
func TestOrderByVolume(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	for _, shape := range []struct{ n, distinct int }{{0, 3}, {1, 3}, {50, 3}, {2000, 10}, {2000, 1500}, {20000, 300}} {
		volume := randomVolumes(r, shape.n, shape.distinct)
		counted, sorted := make([]uint32, shape.n), make([]uint32, shape.n)
		orderByVolume(counted, volume)
		sortByVolume(sorted, volume)
		if !slices.Equal(counted, sorted) {
			t.Fatalf("%+v: counted and sorted orders differ", shape)
		}
		seen := make([]bool, shape.n)
		for i, id := range counted {
			if seen[id] {
				t.Fatalf("%+v: id %d twice", shape, id)
			}
			seen[id] = true
			if i == 0 {
				continue
			}
			a, b := volumeRow(volume, counted[i-1]), volumeRow(volume, id)
			if compareRows(volumeDesc, &a, &b) >= 0 {
				t.Fatalf("%+v: id %d (volume %v) before id %d (volume %v)", shape, counted[i-1], volume[counted[i-1]], id, volume[id])
			}
		}
	}
	// Past the distinct values it counts, it sorts: the same order.
	old := maxDistinctVolumes
	t.Cleanup(func() { maxDistinctVolumes = old })
	maxDistinctVolumes = 4
	volume := randomVolumes(r, 3000, 40)
	counted, sorted := make([]uint32, len(volume)), make([]uint32, len(volume))
	orderByVolume(counted, volume)
	sortByVolume(sorted, volume)
	if !slices.Equal(counted, sorted) {
		t.Fatal("the sort past the bound differs")
	}
}

// A walk from any cursor finds the ids of the set after it, in order, as a pass does; a
// volume range's span holds exactly the ids it passes; a walk over a sparse set gives up
// past its steps.
func TestVolumeWalk(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 2))
	const n = 5000
	c := &marketColumns{volume: randomVolumes(r, n, 40), byVolume: make([]uint32, n)}
	orderByVolume(c.byVolume, c.volume)
	cand := roaring.New()
	for id := range uint32(n) {
		if r.IntN(3) == 0 {
			cand.Add(id)
		}
	}
	var want []colRow // the set in order
	for _, id := range c.byVolume {
		if cand.Contains(id) {
			want = append(want, volumeRow(c.volume, id))
		}
	}
	for range 200 {
		k := 1 + r.IntN(50)
		var after *colRow
		skip := 0
		if r.IntN(4) > 0 {
			// A cursor at a row of the set, or between two keys (an odd rank).
			i := r.IntN(len(want))
			a := want[i]
			skip = i + 1
			if r.IntN(2) == 0 && a.at > 0 {
				a.at--
				skip = i
			}
			after = &a
		}
		got, ok := c.volumeWalk(cand, after, k, math.MaxInt)
		if !ok {
			t.Fatal("an unbounded walk gave up")
		}
		end := min(skip+k, len(want))
		same := func(a, b colRow) bool { // NaN volumes equal
			return a.at == b.at && math.Float64bits(a.values[0]) == math.Float64bits(b.values[0])
		}
		if !slices.EqualFunc(got, want[skip:end], same) {
			t.Fatalf("walk of %d after %+v: %d rows, want %d", k, after, len(got), end-skip)
		}
	}
	// A volume range's ids are one span of the list: exactly the ids it passes.
	for range 100 {
		b := bounds{math.Inf(-1), math.Inf(1)}
		known := func() float64 { // a filter's bound is a number
			for {
				if v := c.volume[r.IntN(n)]; !math.IsNaN(v) {
					return v + float64(r.IntN(3)-1)/2
				}
			}
		}
		if r.IntN(3) > 0 {
			b.lo = known()
		}
		if r.IntN(3) > 0 {
			b.hi = known()
		}
		lo, hi := c.volumeSpan(b)
		for i, id := range c.byVolume {
			if in := i >= lo && i < hi; in != b.pass(c.volume[id]) {
				t.Fatalf("bounds %+v: id %d (volume %v) at %d, span [%d, %d)", b, id, c.volume[id], i, lo, hi)
			}
		}
	}
	sparse := roaring.BitmapOf(c.byVolume[n-1])
	if _, ok := c.volumeWalk(sparse, nil, 1, 100); ok {
		t.Error("a walk over a set of one id at the end did not give up after 100 steps")
	}
}
