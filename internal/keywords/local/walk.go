package local

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/contentapi/contentapi/internal/keywords"
)

// Research pages (an IdeasRequest with a Page) walk the ideasWalk most relevant matches of
// the terms, found by the same bounded look-ups as an answer of that many ideas (ranked by
// relevance, then volume, then keyword, as every answer is): the request's Keep rule and
// filters keep what passes, its order (relevance, then volume, when it has none) sorts it,
// the keyword breaking the remaining ties, and a page is the rows after the position of the
// previous page's last row. Total counts every row the walk keeps. A position is the last
// row's order values and keyword, not an offset: the next page starts after that row
// wherever it now sorts. Every page ranks the walk again, so a later page costs what the
// first does.

// ideasWalk is how many of the most relevant matches research pages through: one page of
// the largest limit, twenty of the default. Ranking the walk is most of a page's time (every
// page ranks it), and grows with it: at 1M keywords on an idle machine, "espresso machine"
// took 227 / 264 ms (median / slowest of 5) with this walk and these candidates, 625 / 733 ms
// with a walk of 3,000 (docs/keyword-data-at-scale.md), against 184 / 238 ms for an unpaged
// answer of 50. (A variable for the tests.)
var ideasWalk = 1000

// walkCandidates is how many candidates of each kind a term gathers for the walk: one for
// every two ideas walked (two kinds, full-text and words, and a topic's head word as one
// more term fill it), at least what an unpaged answer gathers. The walk is what these
// look-ups find; the ranking of every candidate is most of its time. (A variable for the
// tests.)
var walkCandidates = func(walk int) int { return max(walk/2, 400) }

// walkRow is an idea with its key (keyword_norm), which breaks the order's ties.
type walkRow struct {
	keywords.Keyword
	norm string
}

// walkValue is one value of a row's order: a number, a keyword (the keyword key), or
// unknown (both nil), which sorts last in either direction.
type walkValue struct {
	F *float64 `json:"f,omitempty"`
	S *string  `json:"s,omitempty"`
}

// walkPosition is a page token: the order values and key of the last row of a page.
type walkPosition struct {
	Values []walkValue `json:"v"`
	Key    string      `json:"k"`
}

// walkOrder is the request's order, relevance then search volume (both descending) when it
// has none. FieldRelevance is local to this file: callers cannot name it.
func walkOrder(req keywords.IdeasRequest) []keywords.OrderKey {
	if len(req.Order) > 0 {
		return req.Order
	}
	return []keywords.OrderKey{{Field: fieldRelevance, Desc: true}, {Field: keywords.FieldSearchVolume, Desc: true}}
}

// fieldRelevance orders by relevance (the default order); it is no API field.
const fieldRelevance keywords.Field = "relevance"

// values are the row's values of the order's keys.
func (r walkRow) values(order []keywords.OrderKey) []walkValue {
	vs := make([]walkValue, len(order))
	for i, o := range order {
		switch o.Field {
		case fieldRelevance:
			v := r.Relevance
			vs[i].F = &v
		case keywords.FieldKeyword:
			n := r.norm
			vs[i].S = &n
		default:
			vs[i].F = ideaValue(r.Keyword, o.Field)
		}
	}
	return vs
}

// compareWalk compares two rows by their order values and then their keys.
func compareWalk(order []keywords.OrderKey, a []walkValue, aKey string, b []walkValue, bKey string) int {
	for i, o := range order {
		va, vb := a[i], b[i]
		na, nb := va.F == nil && va.S == nil, vb.F == nil && vb.S == nil
		switch {
		case na && nb:
			continue
		case na:
			return 1
		case nb:
			return -1
		}
		var c int
		if va.S != nil || vb.S != nil {
			c = strings.Compare(deref(va.S), deref(vb.S))
		} else {
			c = cmp.Compare(*va.F, *vb.F)
		}
		if o.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return strings.Compare(aKey, bKey)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// walkPage keeps, sorts and pages the walk's rows (see above).
func walkPage(rows []walkRow, req keywords.IdeasRequest, after *walkPosition) (keywords.IdeaList, error) {
	order := walkOrder(req)
	type keyed struct {
		walkRow
		vs []walkValue
	}
	var list keywords.IdeaList
	kept := make([]keyed, 0, len(rows))
	for _, r := range rows {
		if list.Keeps(req, r.Keyword) && passesFilters(r.Keyword, req.Filters) {
			kept = append(kept, keyed{r, r.values(order)})
		}
	}
	slices.SortFunc(kept, func(a, b keyed) int { return compareWalk(order, a.vs, a.norm, b.vs, b.norm) })
	start := 0
	if after != nil {
		if len(after.Values) != len(order) {
			return keywords.IdeaList{}, fmt.Errorf("local: ideas: the page token is not of this order")
		}
		start = sort.Search(len(kept), func(i int) bool {
			return compareWalk(order, kept[i].vs, kept[i].norm, after.Values, after.Key) > 0
		})
	}
	end := min(len(kept), start+req.Page.Limit)
	list.Ideas, list.Total = make([]keywords.Keyword, 0, end-start), len(kept)
	for _, k := range kept[start:end] {
		list.Ideas = append(list.Ideas, k.Keyword)
	}
	if end < len(kept) {
		last := kept[end-1]
		raw, err := json.Marshal(walkPosition{Values: last.vs, Key: last.norm})
		if err != nil {
			return keywords.IdeaList{}, err
		}
		list.Next = base64.RawURLEncoding.EncodeToString(raw)
	}
	return list, nil
}

// parseWalkPosition reads a page token walkPage wrote.
func parseWalkPosition(token string) (*walkPosition, error) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	var pos walkPosition
	if err != nil || json.Unmarshal(raw, &pos) != nil || pos.Key == "" {
		return nil, fmt.Errorf("local: ideas: %q is not a page token of research", token)
	}
	return &pos, nil
}
