package local

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/contentapi/contentapi/internal/keywords"
)

// Competitor discovery counts, for every other domain of the market, the keywords it shares
// with the asked domain (both rank for them, the shared keywords passing the filters), its
// average position and the domain's over those keywords (each domain's best position per
// keyword), and how many keywords it ranks for in all. It is one statement: the domain's
// keywords, filtered, in a hash table; every ranking of the market read once in primary-key
// order (domain, keyword), each domain's best position per keyword taken on the way, and
// looked up in it. The answer has one row per domain sharing a keyword (a market has a few
// thousand domains), ordered most shared keywords first, then by domain name; pages are
// cut from it here.

// competitorColumns are the fields competitor discovery filters the shared keywords on:
// the keyword's metrics, the domain's position (position) and the competitor's
// (competitor_position).
var competitorColumns = columns{
	fields: map[keywords.Field]string{
		keywords.FieldSearchVolume:       "k.search_volume",
		keywords.FieldDifficulty:         "k.keyword_difficulty",
		keywords.FieldCPC:                "k.cpc",
		keywords.FieldPosition:           "d.position",
		keywords.FieldCompetitorPosition: "c.position",
	},
	intent: "k.search_intent",
	words:  "d.keyword_norm",
	key:    "d.keyword_norm",
}

// competitorsSQL: %[1]s the keyword join (or nothing), %[2]s the conditions on the shared
// keywords. $1 domain, $2 country, $3 language.
const competitorsSQL = `
WITH d AS MATERIALIZED (
    SELECT d.keyword_norm, d.position FROM (
        SELECT keyword_norm, min(position) AS position FROM domain_rankings
        WHERE domain = $1 AND country = $2 AND language = $3
        GROUP BY keyword_norm) d
    %[1]s
), c AS (
    SELECT domain, keyword_norm, min(position) AS position FROM domain_rankings
    WHERE country = $2 AND language = $3 AND domain <> $1
    GROUP BY domain, keyword_norm
)
SELECT c.domain,
       count(d.keyword_norm) FILTER (WHERE %[2]s) AS shared,
       coalesce(avg(c.position) FILTER (WHERE d.keyword_norm IS NOT NULL AND %[2]s), 0)::float8,
       coalesce(avg(d.position) FILTER (WHERE d.keyword_norm IS NOT NULL AND %[2]s), 0)::float8,
       count(*) AS total
FROM c LEFT JOIN d ON d.keyword_norm = c.keyword_norm
GROUP BY c.domain
HAVING count(d.keyword_norm) FILTER (WHERE %[2]s) > 0`

// Competitors returns one page of the domains sharing the most keywords with the domain.
func (p *Provider) Competitors(ctx context.Context, req keywords.CompetitorsRequest) (keywords.CompetitorList, error) {
	country, language := Market(req.Country, req.Language)
	out := keywords.CompetitorList{Competitors: []keywords.Competitor{}}
	domain := NormalizeDomain(req.Domain)
	if domain == "" {
		return out, nil
	}
	if len(req.Order) > 0 {
		return keywords.CompetitorList{}, fmt.Errorf("order_by: competitors are ordered by shared keywords: %w", keywords.ErrUnsupported)
	}
	after, err := competitorAfter(req.Page.After)
	if err != nil {
		return keywords.CompetitorList{}, err
	}
	q := sqlQuery{args: []any{domain, country, language}}
	// The domain's filters apply inside d (its keyword side); the competitor's position
	// to the shared rows.
	dFilters := req.Filters
	var cRange *keywords.Range
	if r, ok := req.Filters.Ranges[keywords.FieldCompetitorPosition]; ok {
		dFilters.Ranges = make(map[keywords.Field]keywords.Range, len(req.Filters.Ranges))
		for f, v := range req.Filters.Ranges {
			if f != keywords.FieldCompetitorPosition {
				dFilters.Ranges[f] = v
			}
		}
		cRange = &r
	}
	if err := q.filters(dFilters, competitorColumns); err != nil {
		return keywords.CompetitorList{}, err
	}
	join := ""
	if len(q.where) > 0 {
		if needsMetrics(dFilters, nil) {
			join = "LEFT JOIN keyword_metrics k ON k.keyword_norm = d.keyword_norm AND k.country = $2 AND k.language = $3\n    "
		}
		join += "WHERE " + q.whereSQL()
	}
	shared := "true"
	if cRange != nil {
		cq := sqlQuery{args: q.args}
		if err := cq.filters(keywords.Filters{Ranges: map[keywords.Field]keywords.Range{keywords.FieldCompetitorPosition: *cRange}}, competitorColumns); err != nil {
			return keywords.CompetitorList{}, err
		}
		q.args, shared = cq.args, cq.whereSQL()
	}
	var all []keywords.Competitor
	err = pgx.BeginTxFunc(ctx, p.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL jit = off; SET LOCAL work_mem = '64MB'"); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, fmt.Sprintf(competitorsSQL, join, shared), q.args...)
		if err != nil {
			return err
		}
		all, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (keywords.Competitor, error) {
			var c keywords.Competitor
			err := r.Scan(&c.Domain, &c.Shared, &c.AvgPosition, &c.DomainAvgPosition, &c.Total)
			return c, err
		})
		return err
	})
	if err != nil {
		return keywords.CompetitorList{}, fmt.Errorf("local: competitors: %w", err)
	}
	slices.SortFunc(all, compareCompetitors)
	out.Total = len(all)
	start := 0
	if after != nil {
		start, _ = slices.BinarySearchFunc(all, *after, compareCompetitors)
		if start < len(all) && compareCompetitors(all[start], *after) == 0 {
			start++
		}
	}
	limit := req.Page.Limit
	if limit <= 0 {
		limit = 20
	}
	end := min(start+limit, len(all))
	for i := start; i < end; i++ {
		c := all[i]
		c.AvgPosition = round2(c.AvgPosition)
		c.DomainAvgPosition = round2(c.DomainAvgPosition)
		out.Competitors = append(out.Competitors, c)
	}
	if end < len(all) {
		last := all[end-1]
		out.Next = strconv.Itoa(last.Shared) + ":" + last.Domain
	}
	return out, nil
}

// compareCompetitors orders competitors by shared keywords, most first, then by domain.
func compareCompetitors(a, b keywords.Competitor) int {
	return cmp.Or(cmp.Compare(b.Shared, a.Shared), strings.Compare(a.Domain, b.Domain))
}

// competitorAfter reads a page token: the last row's shared count and domain.
func competitorAfter(token string) (*keywords.Competitor, error) {
	if token == "" {
		return nil, nil
	}
	n, d, ok := strings.Cut(token, ":")
	shared, err := strconv.Atoi(n)
	if !ok || err != nil || d == "" {
		return nil, ErrBadToken
	}
	return &keywords.Competitor{Domain: d, Shared: shared}, nil
}

func round2(v float64) float64 { return float64(int64(v*100+0.5)) / 100 }
