package report

import "testing"

// Every paged keyword analysis has its query shape, and no other analysis has one.
func TestShapeOfEveryPagedAnalysis(t *testing.T) {
	for _, a := range Catalog {
		_, paged := a.NewRequest().(PagedRequest)
		if _, ok := ShapeOf(a.Kind); ok != paged {
			t.Errorf("%s: paged %v, shape %v", a.Kind, paged, ok)
		}
	}
}
