package local

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"
)

// A pass over a large candidate set (the gaps of a big competitor, filtered or sorted on a
// metric) is split by id range into parts, one per processor, each run on its own
// goroutine with its own count and best rows, and the answer is the best of theirs: the
// same rows and total as one pass (the order ends on the key, so the best rows of the whole
// are the best of the parts' best), in about 1/parts of the time on an idle machine.

// passParts is how many parts a large pass is split into (a variable for the tests).
var passParts = runtime.GOMAXPROCS(0)

// minPartIDs is the fewest ids a part takes: below it a goroutine saves less than it
// costs (a variable for the tests).
var minPartIDs = 1 << 18

// idPart is one part of a pass: it calls f with each id of the part.
type idPart func(f func(id uint32))

// partCount is how many parts a pass over n ids takes.
func partCount(n uint64) int {
	return max(1, min(passParts, int(n/uint64(max(minPartIDs, 1)))))
}

// candParts splits the ids of b into parts of about equal counts, by id range.
func candParts(b *roaring.Bitmap) []idPart {
	card := b.GetCardinality()
	n := partCount(card)
	if n == 1 {
		return []idPart{func(f func(id uint32)) { eachID(b, f) }}
	}
	parts := make([]idPart, n)
	lo := uint64(0)
	for i := range n {
		hi := uint64(1) << 32
		if i+1 < n {
			v, err := b.Select(uint32(card * uint64(i+1) / uint64(n)))
			if err != nil {
				return []idPart{func(f func(id uint32)) { eachID(b, f) }}
			}
			hi = uint64(v)
		}
		from := lo
		parts[i] = func(f func(id uint32)) {
			sub := roaring.New()
			sub.AddRange(from, hi)
			sub.And(b)
			eachID(sub, f)
		}
		lo = hi
	}
	return parts
}

// spanParts splits ids (a span of an order) into parts of about equal lengths, each
// calling f with those of its ids in cand.
func spanParts(ids []uint32, cand *roaring.Bitmap) []idPart {
	n := partCount(uint64(len(ids)))
	parts := make([]idPart, n)
	for i := range n {
		span := ids[len(ids)*i/n : len(ids)*(i+1)/n]
		parts[i] = func(f func(id uint32)) {
			for _, id := range span {
				if cand.Contains(id) {
					f(id)
				}
			}
		}
	}
	return parts
}

// inParts runs pass over each part, the first on the calling goroutine and the others on
// their own, and returns the results in the parts' order. A panic in a part is raised
// again on the calling goroutine, where the request's recovery sees it.
func inParts[S any](parts []idPart, pass func(each idPart) S) []S {
	out := make([]S, len(parts))
	var wg sync.WaitGroup
	panics := make([]any, len(parts))
	for i := 1; i < len(parts); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { panics[i] = recover() }()
			out[i] = pass(parts[i])
		}()
	}
	func() {
		defer wg.Wait()
		out[0] = pass(parts[0])
	}()
	for _, p := range panics {
		if p != nil {
			panic(p)
		}
	}
	return out
}

// onRows reads rows on the calling goroutine and runs work on what each row gives on
// passParts goroutines, in no particular order: scans are the row's destinations and item
// takes what work needs out of them (copying bytes: pgx reuses its buffers). Competitor
// discovery intersects every other domain's keyword set with the domain's this way, the
// intersections beside the reading. A panic in work is returned as an error.
func onRows[T any](rows pgx.Rows, scans []any, item func() T, work func(T) error) error {
	if passParts <= 1 {
		_, err := pgx.ForEachRow(rows, scans, func() error { return work(item()) })
		return err
	}
	items := make(chan T, 64)
	var eg errgroup.Group
	for range passParts {
		eg.Go(func() (err error) {
			defer func() {
				if p := recover(); p != nil {
					err = fmt.Errorf("local: %v", p)
				}
				for range items { // the reader never waits on a worker gone
				}
			}()
			for it := range items {
				if err = work(it); err != nil {
					return err
				}
			}
			return nil
		})
	}
	_, err := pgx.ForEachRow(rows, scans, func() error { items <- item(); return nil })
	close(items)
	return errors.Join(err, eg.Wait())
}
