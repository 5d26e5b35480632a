package dataforseo

import (
	"context"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/contentapi/contentapi/internal/keywords"
)

// Gaps asks domain_intersection, once per competitor and concurrently, for the keywords
// the competitor (target1) ranks for and the domain (target2) does not
// (intersections: false), with the query's filters and order, and merges the answers so
// each keyword lists every competitor that ranks with its position.
//
// One competitor is one call: total is DataForSEO's total_count and the page continues with
// its offset_token. Several are merged in the query's order, so each call returns at most
// the page's limit and the next page continues each competitor where this one stopped; the
// total is then the sum of their total_counts less the overlaps seen, exact only when every
// competitor's gaps were all fetched (else GapList.Estimated). An order on the competitor's
// position differs per competitor, so it takes one competitor (ascending with several).
func (c *Client) Gaps(ctx context.Context, req keywords.GapsRequest) (keywords.GapList, error) {
	loc, lang, err := market(req.Country, req.Language)
	if err != nil {
		return keywords.GapList{}, err
	}
	domain, competitors := keywords.Domain(req.Domain), keywords.Competitors(req.Domain, req.Competitors)
	if _, ok := req.Filters.Ranges[keywords.FieldPosition]; ok {
		return keywords.GapList{}, unsupported("filters.position: DataForSEO's gaps are keywords the domain does not rank for")
	}
	filters, err := gapsEndpoint.filters(req.Filters)
	if err != nil {
		return keywords.GapList{}, err
	}
	order, err := gapsEndpoint.orderBy(req.Order, []string{"keyword_data.keyword_info.search_volume,desc", "keyword_data.keyword,asc"})
	if err != nil {
		return keywords.GapList{}, err
	}
	less, err := gapOrder(req.Order, len(competitors))
	if err != nil {
		return keywords.GapList{}, err
	}
	out := []keywords.Gap{}
	if domain == "" || len(competitors) == 0 {
		return keywords.GapList{Gaps: out}, nil
	}
	var starts []int
	carried := -1 // several competitors: the total of the walk's first page
	pages := make([]at, len(competitors))
	if len(competitors) == 1 {
		starts = []int{0}
	} else if starts, carried, err = offsets(req.After, len(competitors)); err != nil {
		return keywords.GapList{}, err
	}
	type compItem struct {
		KeywordData keywordData `json:"keyword_data"`
		First       serpItem    `json:"first_domain_serp_element"`
	}
	type answer struct {
		pageResult
		Items []compItem `json:"items"`
	}
	answers := make([]answer, len(competitors))
	g, gctx := errgroup.WithContext(ctx)
	for i, comp := range competitors {
		task := map[string]any{
			"target1":       comp,
			"target2":       domain,
			"intersections": false,
			"location_code": loc,
			"language_code": lang,
			"item_types":    []string{"organic"},
			"order_by":      order,
		}
		if filters != nil {
			task["filters"] = filters
		}
		after := ""
		switch {
		case len(competitors) == 1:
			after = req.After
		case starts[i] > 0:
			after = tokenOffset + strconv.Itoa(starts[i])
		}
		p, err := page(task, req.Limit, after)
		if err != nil {
			return keywords.GapList{}, err
		}
		pages[i], starts[i] = p, p.offset
		g.Go(func() error {
			var results []answer
			if err := c.post(gctx, PathDomainIntersection, task, &results); err != nil {
				return err
			}
			for _, r := range results {
				answers[i].pageResult = r.pageResult
				answers[i].Items = append(answers[i].Items, r.Items...)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return keywords.GapList{}, err
	}
	index := map[string]int{}
	seen := 0 // items fetched, counting a keyword once per competitor
	for i, a := range answers {
		for _, it := range a.Items {
			k := it.KeywordData.keyword()
			pos := it.First.position()
			if k.Keyword == "" || pos < 1 {
				continue
			}
			key := strings.ToLower(k.Keyword)
			j, ok := index[key]
			if !ok {
				j = len(out)
				index[key] = j
				out = append(out, keywords.Gap{Keyword: k, CompetitorPositions: map[string]int{}})
			}
			if p, ok := out[j].CompetitorPositions[competitors[i]]; !ok || pos < p {
				if !ok {
					seen++
				}
				out[j].CompetitorPositions[competitors[i]] = pos
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return less(out[i], out[j]) })
	list := keywords.GapList{}
	if len(competitors) == 1 {
		if req.Limit > 0 && len(out) > req.Limit {
			out = out[:req.Limit]
		}
		list.Total, list.Next = pages[0].walk(answers[0].pageResult, min(len(answers[0].Items), limitOf(req.Limit)), len(answers[0].Items))
	} else {
		complete := true
		reach := make([]int, len(answers)) // each competitor's gaps: total_count, or where its items ended
		for i, a := range answers {
			reach[i] = a.TotalCount
			if len(a.Items) < pages[i].limit {
				reach[i] = starts[i] + len(a.Items)
			}
			list.Total += reach[i]
			complete = complete && starts[i] == 0 && len(a.Items) >= reach[i]
		}
		list.Total -= seen - len(out) // keywords several competitors rank for, counted once
		if carried >= 0 {
			list.Total = carried // every page of a walk says the first page's total
		}
		list.Estimated = !complete
		if req.Limit > 0 && len(out) > req.Limit {
			out = out[:req.Limit]
		}
		// Each competitor continues after the items this page used: its answer is in the
		// same order, so they are the first ones.
		used := make(map[string]bool, len(out))
		for _, gp := range out {
			used[strings.ToLower(gp.Keyword.Keyword)] = true
		}
		more := false
		for i, a := range answers {
			n := 0
			for n < len(a.Items) {
				it := a.Items[n]
				if it.KeywordData.Keyword != "" && it.First.position() >= 1 && !used[strings.ToLower(it.KeywordData.Keyword)] {
					break
				}
				n++
			}
			starts[i] += n
			more = more || starts[i] < reach[i]
		}
		if more && len(out) > 0 {
			list.Next = offsetsToken(starts, list.Total)
		}
	}
	if list.Total < len(out) {
		list.Total = len(out)
	}
	ks := make([]*keywords.Keyword, len(out))
	for i := range out {
		ks[i] = &out[i].Keyword
	}
	c.fillMissing(ctx, loc, lang, ks, fillsFor(false, req.Filters, req.Order)) // gaps show no intent
	list.Gaps = out
	return list, nil
}

// gapOrder is the order merged gaps are listed in: the query's, or the highest volume
// first; unknown values last, then by keyword. An order on competitor_position compares
// each gap's best position: one competitor, or ascending with several (each competitor's
// answer then lists its gaps in the merged order too).
func gapOrder(order []keywords.OrderKey, competitors int) (func(a, b keywords.Gap) bool, error) {
	if len(order) == 0 {
		order = []keywords.OrderKey{{Field: keywords.FieldSearchVolume, Desc: true}}
	}
	for i, k := range order {
		if k.Field == keywords.FieldCompetitorPosition && k.Desc && competitors > 1 {
			return nil, unsupported("order_by[%d]: competitor_position.desc over several competitors: DataForSEO answers per competitor", i)
		}
	}
	if competitors > 1 && len(order) >= MaxOrderRules && order[len(order)-1].Field != keywords.FieldKeyword {
		return nil, unsupported("order_by: over several competitors DataForSEO takes at most %d keys besides the keyword", MaxOrderRules-1)
	}
	return func(a, b keywords.Gap) bool {
		for _, k := range order {
			if c := compareGap(a, b, k); c != 0 {
				return c < 0
			}
		}
		return a.Keyword.Keyword < b.Keyword.Keyword
	}, nil
}

// compareGap compares two gaps on one key, unknown values last in either direction.
func compareGap(a, b keywords.Gap, k keywords.OrderKey) int {
	var va, vb *float64
	switch k.Field {
	case keywords.FieldKeyword:
		c := strings.Compare(a.Keyword.Keyword, b.Keyword.Keyword)
		if k.Desc {
			c = -c
		}
		return c
	case keywords.FieldSearchVolume:
		va, vb = intPtr(a.SearchVolume), intPtr(b.SearchVolume)
	case keywords.FieldDifficulty:
		va, vb = a.Difficulty, b.Difficulty
	case keywords.FieldCPC:
		va, vb = a.CPC, b.CPC
	case keywords.FieldCompetitorPosition:
		va, vb = bestPosition(a), bestPosition(b)
	}
	switch {
	case va == nil && vb == nil:
		return 0
	case va == nil:
		return 1
	case vb == nil:
		return -1
	case *va == *vb:
		return 0
	case (*va < *vb) != k.Desc:
		return -1
	}
	return 1
}

func intPtr(p *int64) *float64 {
	if p == nil {
		return nil
	}
	f := float64(*p)
	return &f
}

func bestPosition(g keywords.Gap) *float64 {
	var best *float64
	for _, p := range g.CompetitorPositions {
		if f := float64(p); best == nil || f < *best {
			best = &f
		}
	}
	return best
}
