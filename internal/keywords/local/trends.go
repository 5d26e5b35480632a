package local

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/contentapi/contentapi/internal/keywords"
)

var _ keywords.TrendLabeler = (*Provider)(nil)

// trendsSQL reads the monthly volumes and trends imported for the keywords of a market,
// by the keys of keyword_metrics' primary key; keywords without any are not returned.
const trendsSQL = `
SELECT k.keyword, m.monthly_from, m.monthly_volumes, m.trend
FROM unnest($3::text[]) AS k(keyword)
JOIN keyword_metrics m ON m.country = $1 AND m.language = $2 AND m.keyword_norm = keyword_normalize(k.keyword)
WHERE m.monthly_from IS NOT NULL OR m.trend IS NOT NULL`

// LabelTrends sets MonthlySearches (the imported months with a volume, oldest first) and
// Trend (the trend computed at import, Semrush's when there are no volumes) on the
// keywords of the market that have them; the others keep none.
func (p *Provider) LabelTrends(ctx context.Context, country, language string, ks []*keywords.Keyword) error {
	if len(ks) == 0 {
		return nil
	}
	country, language = Market(country, language)
	texts := make([]string, len(ks))
	byText := make(map[string][]*keywords.Keyword, len(ks))
	for i, k := range ks {
		texts[i] = k.Keyword
		byText[k.Keyword] = append(byText[k.Keyword], k)
	}
	rows, err := p.pool.Query(ctx, trendsSQL, country, language, texts)
	if err != nil {
		return fmt.Errorf("local: trends: %w", err)
	}
	type trendRow struct {
		keyword string
		from    *time.Time
		volumes []*int64
		trend   *string
	}
	found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (trendRow, error) {
		var t trendRow
		err := r.Scan(&t.keyword, &t.from, &t.volumes, &t.trend)
		return t, err
	})
	if err != nil {
		return fmt.Errorf("local: trends: %w", err)
	}
	for _, t := range found {
		var months []keywords.MonthlyVolume
		if t.from != nil {
			for i, v := range t.volumes {
				if v == nil {
					continue // a month the export left blank: unknown, not 0
				}
				d := t.from.AddDate(0, i, 0)
				months = append(months, keywords.MonthlyVolume{Year: d.Year(), Month: int(d.Month()), SearchVolume: *v})
			}
		}
		for _, k := range byText[t.keyword] {
			k.MonthlySearches = months
			if t.trend != nil {
				k.Trend = *t.trend
			}
		}
	}
	return nil
}
