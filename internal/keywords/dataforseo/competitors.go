package dataforseo

import (
	"context"

	"github.com/contentapi/contentapi/internal/keywords"
)

// Competitors asks competitors_domain for one page of the domains sharing the most
// organic keywords with the domain: shared keywords are its intersections, the
// competitor's average position its avg_position, its total full_domain_metrics.organic.count;
// what DataForSEO leaves null is named in Competitor.Unknown. DataForSEO does not give the
// domain's own average position over the shared keywords: it is always unknown. DataForSEO
// lists the domain itself among its competitors; it is left out, and out of every page's
// total. Its filters apply to the competitors, not to the shared
// keywords, and it sorts by its own fields: a query with filters or an order is
// unsupported.
func (c *Client) Competitors(ctx context.Context, req keywords.CompetitorsRequest) (keywords.CompetitorList, error) {
	loc, lang, err := market(req.Country, req.Language)
	if err != nil {
		return keywords.CompetitorList{}, err
	}
	if !req.Filters.Empty() {
		return keywords.CompetitorList{}, unsupported("filters: DataForSEO's competitors_domain cannot filter the shared keywords")
	}
	if len(req.Order) > 0 {
		return keywords.CompetitorList{}, unsupported("order_by: DataForSEO's competitors_domain lists the most shared keywords first only")
	}
	list := keywords.CompetitorList{Competitors: []keywords.Competitor{}}
	target := keywords.Domain(req.Domain)
	if target == "" {
		return list, nil
	}
	task := map[string]any{
		"target":        target,
		"location_code": loc,
		"language_code": lang,
		"item_types":    []string{"organic"},
		"order_by":      []string{"intersections,desc"},
	}
	pg, err := page(task, req.Page.Limit, req.Page.After)
	if err != nil {
		return keywords.CompetitorList{}, err
	}
	var results []struct {
		pageResult
		Items []struct {
			Domain            string   `json:"domain"`
			AvgPosition       optFloat `json:"avg_position"`
			Intersections     optInt   `json:"intersections"`
			FullDomainMetrics *struct {
				Organic *struct {
					Count optInt `json:"count"`
				} `json:"organic"`
			} `json:"full_domain_metrics"`
		} `json:"items"`
	}
	if err := c.post(ctx, PathCompetitorsDomain, task, &results); err != nil {
		return keywords.CompetitorList{}, err
	}
	// The domain shares the most keywords with itself, so DataForSEO lists it first, on the
	// first page: every page's total leaves it out, so that all pages say the same.
	self := pg.offset > 0
	for _, r := range results {
		list.Total, list.Next = pg.walk(r.pageResult, len(r.Items), len(r.Items))
		for _, it := range r.Items {
			d := keywords.Domain(it.Domain)
			if d == "" || d == target {
				self = self || d == target
				continue
			}
			// What DataForSEO leaves null is unknown, never 0.
			comp := keywords.Competitor{Domain: d, Unknown: []string{keywords.CompetitorDomainAvgPosition}}
			if v := it.Intersections.v; v != nil {
				comp.Shared = int(*v)
			} else {
				comp.Unknown = append(comp.Unknown, keywords.CompetitorShared)
			}
			if v := it.AvgPosition.v; v != nil {
				comp.AvgPosition = *v
			} else {
				comp.Unknown = append(comp.Unknown, keywords.CompetitorAvgPosition)
			}
			if m := it.FullDomainMetrics; m != nil && m.Organic != nil && m.Organic.Count.v != nil {
				comp.Total = int(*m.Organic.Count.v)
			} else {
				comp.Unknown = append(comp.Unknown, keywords.CompetitorTotal)
			}
			list.Competitors = append(list.Competitors, comp)
		}
	}
	if self && list.Total > 0 {
		list.Total--
	}
	if list.Total < len(list.Competitors) {
		list.Total = len(list.Competitors)
	}
	return list, nil
}
