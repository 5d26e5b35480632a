package dataforseo

import (
	"context"
	"sort"
	"strings"

	"github.com/contentapi/contentapi/internal/keywords"
)

// Ranked asks ranked_keywords for the domain's organic positions, best first. Limit 0 asks
// for the most one call returns (1,000).
func (c *Client) Ranked(ctx context.Context, req keywords.RankedRequest) ([]keywords.Ranking, error) {
	loc, lang, err := market(req.Country, req.Language)
	if err != nil {
		return nil, err
	}
	out := []keywords.Ranking{}
	target := keywords.Domain(req.Domain)
	if target == "" {
		return out, nil
	}
	limit := req.Limit
	if limit <= 0 || limit > maxLimit {
		limit = maxLimit
	}
	task := map[string]any{
		"target":        target,
		"location_code": loc,
		"language_code": lang,
		"item_types":    []string{"organic"},
		"limit":         limit,
		"order_by":      []string{"ranked_serp_element.serp_item.rank_group,asc"},
	}
	var results []struct {
		Items []rankedItem `json:"items"`
	}
	if err := c.post(ctx, PathRankedKeywords, task, &results); err != nil {
		return nil, err
	}
	best := map[string]int{}
	for _, r := range results {
		for _, it := range r.Items {
			out = keepBest(out, best, it)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Position != out[j].Position {
			return out[i].Position < out[j].Position
		}
		return volume(out[i].Keyword) > volume(out[j].Keyword)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	ks := make([]*keywords.Keyword, len(out))
	for i := range out {
		ks[i] = &out[i].Keyword
	}
	if !req.PositionsOnly {
		c.fillMissing(ctx, loc, lang, ks, fills{intent: true, difficulty: true})
	}
	return out, nil
}

func volume(k keywords.Keyword) int64 {
	if k.SearchVolume == nil {
		return -1
	}
	return *k.SearchVolume
}

// Rankings asks ranked_keywords for one page of the domain's organic rankings, with the
// query's filters and order (default: best position first, then the highest volume), and
// counts them by position band from DataForSEO's metrics.organic. total is its
// total_count; the next page continues with its offset_token.
func (c *Client) Rankings(ctx context.Context, req keywords.RankingsRequest) (keywords.RankingList, error) {
	loc, lang, err := market(req.Country, req.Language)
	if err != nil {
		return keywords.RankingList{}, err
	}
	if _, ok := req.Filters.Ranges[keywords.FieldCompetitorPosition]; ok {
		return keywords.RankingList{}, unsupported("filters.competitor_position: a domain's rankings have no competitor")
	}
	filters, err := rankingsEndpoint.filters(req.Filters)
	if err != nil {
		return keywords.RankingList{}, err
	}
	order, err := rankingsEndpoint.orderBy(req.Order, []string{"ranked_serp_element.serp_item.rank_group,asc",
		"keyword_data.keyword_info.search_volume,desc", "keyword_data.keyword,asc"})
	if err != nil {
		return keywords.RankingList{}, err
	}
	list := keywords.RankingList{Rankings: []keywords.Ranking{}, Bands: map[string]int{}}
	target := keywords.Domain(req.Domain)
	if target == "" {
		return list, nil
	}
	task := map[string]any{
		"target":        target,
		"location_code": loc,
		"language_code": lang,
		"item_types":    []string{"organic"},
		"order_by":      order,
	}
	if filters != nil {
		task["filters"] = filters
	}
	pg, err := page(task, req.Page.Limit, req.Page.After)
	if err != nil {
		return keywords.RankingList{}, err
	}
	var results []struct {
		pageResult
		Metrics *struct {
			Organic map[string]optFloat `json:"organic"`
		} `json:"metrics"`
		Items []rankedItem `json:"items"`
	}
	if err := c.post(ctx, PathRankedKeywords, task, &results); err != nil {
		return keywords.RankingList{}, err
	}
	best := map[string]int{}
	returned := 0
	for _, r := range results {
		returned += len(r.Items)
		list.Total, list.Next = pg.walk(r.pageResult, len(r.Items), len(r.Items))
		if r.Metrics != nil {
			for key, v := range r.Metrics.Organic {
				if band := bandOf(key); band != "" && v.v != nil {
					list.Bands[band] += int(*v.v)
				}
			}
		}
		for _, it := range r.Items {
			list.Rankings = keepBest(list.Rankings, best, it)
		}
	}
	if returned < pg.limit {
		// The last page: total counts its keywords, not DataForSEO's rows of them.
		list.Total = pg.offset + len(list.Rankings)
	}
	for _, b := range Bands {
		if _, ok := list.Bands[b]; !ok {
			list.Bands[b] = 0
		}
	}
	ks := make([]*keywords.Keyword, len(list.Rankings))
	for i := range list.Rankings {
		ks[i] = &list.Rankings[i].Keyword
	}
	c.fillMissing(ctx, loc, lang, ks, fillsFor(true, req.Filters, req.Order))
	return list, nil
}

// Bands are the position bands of RankingList.Bands.
var Bands = []string{"1-3", "4-10", "11-20", "21-50", "51-100"}

// bandOf maps a key of ranked_keywords' metrics.organic (pos_1, pos_2_3, pos_4_10,
// pos_11_20, pos_21_30 … pos_91_100) to its band; "" for the other keys (etv, count …).
func bandOf(key string) string {
	switch key {
	case "pos_1", "pos_2_3":
		return "1-3"
	case "pos_4_10":
		return "4-10"
	case "pos_11_20":
		return "11-20"
	case "pos_21_30", "pos_31_40", "pos_41_50":
		return "21-50"
	case "pos_51_60", "pos_61_70", "pos_71_80", "pos_81_90", "pos_91_100":
		return "51-100"
	}
	return ""
}

// keepBest adds the ranked item it to rows, one row per keyword: a keyword the domain ranks
// for with several pages keeps its best position, with the URL holding it (the first listed
// on a tie). index maps each lower-case keyword to its row.
func keepBest(rows []keywords.Ranking, index map[string]int, it rankedItem) []keywords.Ranking {
	k := it.KeywordData.keyword()
	pos := it.RankedSERPElement.SERPItem.position()
	if k.Keyword == "" || pos < 1 {
		return rows
	}
	key := strings.ToLower(k.Keyword)
	if i, ok := index[key]; ok {
		if pos < rows[i].Position {
			rows[i].Position, rows[i].URL = pos, it.RankedSERPElement.SERPItem.URL
		}
		return rows
	}
	index[key] = len(rows)
	return append(rows, keywords.Ranking{Keyword: k, Position: pos, URL: it.RankedSERPElement.SERPItem.URL})
}

// rankedItem is an item of ranked_keywords.
type rankedItem struct {
	KeywordData       keywordData `json:"keyword_data"`
	RankedSERPElement struct {
		SERPItem serpItem `json:"serp_item"`
	} `json:"ranked_serp_element"`
}
