package report

import (
	"context"

	"github.com/contentapi/contentapi/internal/keywords"
)

// CompetitorsRequest is the body of POST /v1/keywords/competitors.
type CompetitorsRequest struct{ DomainQuery }

// PageLimit is the request's limit.
func (r *CompetitorsRequest) PageLimit() int { return *orDefault(r.Limit, defaultCompetitorsLimit) }

func (r *CompetitorsRequest) defaults() { r.fill(defaultCompetitorsLimit) }

// Normalize checks the request and fills defaults.
func (r *CompetitorsRequest) Normalize(o Options) error {
	return r.normalize(o, defaultCompetitorsLimit, maxCompetitorsLimit, r.Shape())
}

// Shape is what a competitor discovery query may name.
func (r *CompetitorsRequest) Shape() QueryShape { return CompetitorsShape }

// CompetitorsShape is what competitor discovery takes: it filters the shared keywords (by their metrics, the
// domain's position and the competitor's) and lists competitors by shared keywords only.
var CompetitorsShape = func() QueryShape {
	why := "competitors are listed by shared keywords, most first, then by domain"
	return QueryShape{
		Ranges: []keywords.Field{keywords.FieldSearchVolume, keywords.FieldDifficulty, keywords.FieldCPC,
			keywords.FieldPosition, keywords.FieldCompetitorPosition},
		Why: map[keywords.Field]string{
			keywords.FieldKeyword: why, keywords.FieldSearchVolume: why, keywords.FieldDifficulty: why, keywords.FieldCPC: why,
			keywords.FieldPosition: why, keywords.FieldCompetitorPosition: why,
			keywords.FieldOpportunity: "competitor discovery counts shared keywords, which carry no opportunity score",
			keywords.FieldTraffic:     "competitor discovery counts shared keywords, not their traffic",
		},
	}
}()

// CompetitorRecord is a domain sharing ranked keywords with the asked domain.
type CompetitorRecord struct {
	Domain string `json:"domain"`
	// SharedKeywords counts the keywords both rank for; AvgPosition is the competitor's
	// average position over them, DomainAvgPosition the asked domain's. Each number is null
	// when the data source does not know it (DataForSEO never gives domain_avg_position).
	SharedKeywords    *int     `json:"shared_keywords"`
	AvgPosition       *float64 `json:"avg_position"`
	DomainAvgPosition *float64 `json:"domain_avg_position"`
	// TotalKeywords counts every keyword the competitor ranks for in the market.
	TotalKeywords *int `json:"total_keywords"`
}

// competitorRecord is c's record: what the data source does not know is null.
func competitorRecord(c keywords.Competitor) CompetitorRecord {
	r := CompetitorRecord{Domain: c.Domain}
	if c.Knows(keywords.CompetitorShared) {
		r.SharedKeywords = &c.Shared
	}
	if c.Knows(keywords.CompetitorAvgPosition) {
		r.AvgPosition = &c.AvgPosition
	}
	if c.Knows(keywords.CompetitorDomainAvgPosition) {
		r.DomainAvgPosition = &c.DomainAvgPosition
	}
	if c.Knows(keywords.CompetitorTotal) {
		r.TotalKeywords = &c.Total
	}
	return r
}

// CompetitorsResult is the data of a competitor-discovery answer.
type CompetitorsResult struct {
	Domain      string             `json:"domain"`
	Country     string             `json:"country"`
	Language    string             `json:"language"`
	Competitors []CompetitorRecord `json:"competitors"`
	// Total counts every domain sharing at least one keyword (passing the filters).
	Total      int     `json:"total"`
	NextCursor *string `json:"next_cursor"`
	Source     string  `json:"source"`
	described
}

// Competitors lists the domains sharing the most ranked keywords with the domain, most
// shared first. A domain without rankings in the market is NO_DATA, refunded.
func (b *Builder) Competitors(ctx context.Context, r CompetitorsRequest) (CompetitorsResult, error) {
	after, err := b.pageToken(ctx, KindCompetitors, &r)
	if err != nil {
		return CompetitorsResult{}, err
	}
	req := keywords.CompetitorsRequest{Domain: stripWWW(r.Domain), Country: r.Country, Language: r.Language,
		Filters: r.KeywordFilters(), Page: keywords.Page{Limit: *r.Limit, After: after}}
	list, err := b.Keywords.Competitors(ctx, req)
	if err != nil {
		return CompetitorsResult{}, queryError("competitors", err)
	}
	next, err := b.nextCursor(ctx, KindCompetitors, &r, list.Next)
	if err != nil {
		return CompetitorsResult{}, err
	}
	if list.Total == 0 && req.Filters.Empty() && req.Page.After == "" {
		return CompetitorsResult{}, noCompetitorsFound(r.Domain, r.Country, r.Language)
	}
	res := CompetitorsResult{Domain: r.Domain, Country: r.Country, Language: r.Language, Competitors: []CompetitorRecord{},
		Total: list.Total, NextCursor: next, Source: b.Keywords.Name()}
	for _, c := range list.Competitors {
		res.Competitors = append(res.Competitors, competitorRecord(c))
	}
	// The answer rests on rankings: a competitor counted on made-up ones is a made-up row,
	// and an empty page rests on the domain's own.
	used := rows{made: "competitors are counted on made-up rankings"}
	for _, c := range list.Competitors {
		used.flag(c.Synthetic)
	}
	if len(list.Competitors) == 0 {
		used.flag(list.Synthetic)
	}
	res.meta = b.meta(used, nil)
	res.settle(KindCompetitors, &r, len(res.Competitors))
	return res, nil
}

// CSVRows are the answer's rows for CSV, the header first.
func (res CompetitorsResult) CSVRows() [][]string {
	var rows [][]string
	rows = append(rows, []string{"domain", "shared_keywords", "avg_position", "domain_avg_position", "total_keywords"})
	for _, c := range res.Competitors {
		rows = append(rows, []string{c.Domain, intCell(c.SharedKeywords), floatCell(c.AvgPosition),
			floatCell(c.DomainAvgPosition), intCell(c.TotalKeywords)})
	}
	return rows
}
