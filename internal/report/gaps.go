package report

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"github.com/contentapi/contentapi/internal/keywords"
)

// GapRecord is one gap: a keyword competitors rank for and the domain does not.
type GapRecord struct {
	Keyword             string         `json:"keyword"`
	SearchVolume        *int64         `json:"search_volume"`
	Difficulty          *float64       `json:"keyword_difficulty"`
	CompetitorPositions map[string]int `json:"competitor_positions"`
	Trends
}

// GapsResult is the data of a keyword-gaps answer.
type GapsResult struct {
	Domain      string      `json:"domain"`
	Competitors []string    `json:"competitors"`
	Gaps        []GapRecord `json:"gaps"`
	TotalGaps   int         `json:"total_gaps"`
	// Total is total_gaps under the name every paged keyword answer uses; NextCursor
	// continues the list (null on its last page).
	Total      int     `json:"total"`
	NextCursor *string `json:"next_cursor"`
	Source     string  `json:"source"`
	described
}

// Gaps lists keywords the competitors rank for and the domain does not, highest search
// volume first (unknown volumes last); total_gaps counts all of them before limit cuts the
// list. When the provider holds no ranking data for any named competitor, there is nothing
// to compare: NO_DATA, refunded. A domain that ranks for every competitor keyword has no gap,
// which is a finding (total_gaps 0), not NO_DATA.
func (b *Builder) Gaps(ctx context.Context, r GapsRequest) (GapsResult, error) {
	after, err := b.pageToken(ctx, KindGaps, &r)
	if err != nil {
		return GapsResult{}, err
	}
	list, err := b.gaps(ctx, r.Domain, r.Competitors, keywords.GapsRequest{Country: r.Country, Language: r.Language,
		Limit: *r.Limit, Filters: r.KeywordFilters(), Order: r.KeywordOrder(), After: after})
	if err != nil {
		return GapsResult{}, err
	}
	next, err := b.nextCursor(ctx, KindGaps, &r, list.Next)
	if err != nil {
		return GapsResult{}, err
	}
	if len(list.Unranked) == len(r.Competitors) {
		return GapsResult{}, noCompetitorData(list.Unranked, r.Country, r.Language)
	}
	res := GapsResult{Domain: r.Domain, Competitors: competitorKeys(r.Competitors), Gaps: []GapRecord{}, TotalGaps: list.Total,
		Total: list.Total, NextCursor: next, Source: b.Keywords.Name()}
	for _, g := range list.Gaps {
		res.Gaps = append(res.Gaps, GapRecord{Keyword: g.Keyword.Keyword, SearchVolume: g.SearchVolume,
			Difficulty: g.Difficulty, CompetitorPositions: g.CompetitorPositions, Trends: trendsOf(g.Keyword)})
	}
	var warnings []string
	if w := unrankedWarning(list.Unranked, r.Country, r.Language); w != "" {
		warnings = append(warnings, w)
	}
	if list.Estimated {
		warnings = append(warnings, fmt.Sprintf("total_gaps is an upper bound: %s counts each competitor's gaps exactly but "+
			"not the keywords several of them rank for beyond the gaps fetched.", providerLabel(b.Keywords.Name())))
	}
	var used rows
	used.addGaps(list.Gaps)
	res.meta = b.meta(used, warnings)
	res.settle(KindGaps, &r, len(res.Gaps))
	return res, nil
}

// gaps asks the provider, with data keys (no www.), for the page of gaps q describes (its
// Domain and Competitors are set here) and their count. Competitors are named by those keys
// in the answer (competitor_positions and unranked), as they were looked up:
// "https://www.GrindHouse.example/" is queried, and labelled, "grindhouse.example".
func (b *Builder) gaps(ctx context.Context, domain string, competitors []string, q keywords.GapsRequest) (keywords.GapList, error) {
	q.Domain, q.Competitors = stripWWW(domain), competitorKeys(competitors)
	list, err := keywords.Gaps(ctx, b.Keywords, q)
	if err != nil {
		return keywords.GapList{}, fmt.Errorf("keyword gaps: %w", err)
	}
	for i := range list.Gaps {
		renamed := make(map[string]int, len(list.Gaps[i].CompetitorPositions))
		for d, p := range list.Gaps[i].CompetitorPositions {
			renamed[stripWWW(d)] = p
		}
		list.Gaps[i].CompetitorPositions = renamed
	}
	for i, d := range list.Unranked {
		list.Unranked[i] = stripWWW(d)
	}
	return list, nil
}

// competitorKeys are the keys keyword data stores competitors under (no www.), in order.
func competitorKeys(competitors []string) []string {
	keyed := make([]string, len(competitors))
	for i, c := range competitors {
		keyed[i] = stripWWW(c)
	}
	return keyed
}

// CSVRows are the answer's rows for CSV, the header first.
func (res GapsResult) CSVRows() [][]string {
	var rows [][]string
	head := []string{"keyword", "search_volume", "keyword_difficulty"}
	comps := append([]string(nil), res.Competitors...)
	sort.Strings(comps)
	for _, c := range comps {
		head = append(head, "position_"+c)
	}
	head = append(head, "trend")
	rows = append(rows, head)
	for _, g := range res.Gaps {
		row := []string{g.Keyword, intCell(g.SearchVolume), floatCell(g.Difficulty)}
		for _, c := range comps {
			if p, ok := g.CompetitorPositions[c]; ok {
				row = append(row, strconv.Itoa(p))
			} else {
				row = append(row, "")
			}
		}
		row = append(row, stringCell(g.Trend))
		rows = append(rows, row)
	}
	return rows
}
