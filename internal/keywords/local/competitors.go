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
// keyword), and, for the domains of the page, how many keywords each ranks for in all. The
// domain's keywords are read from the rankings' primary key, filtered, and the domains
// ranking for each from the index by keyword (migration 00030), grouped by keyword and
// domain as the index orders them: a probe per keyword for a small domain, one merge of the
// two indexes for a large one (hash joins are off: a hash table of the whole market's
// rankings is what the index is there to avoid). The answer has one row per domain sharing
// a keyword (a market has a few thousand domains), ordered most shared keywords first, then
// by domain name; pages are cut from it here. Without filters the keyword sets answer
// (competitorsets.go) when they are as new as the rankings.

// competitorColumns are the fields competitor discovery filters the shared keywords on:
// the keyword's metrics, the domain's position (position) and the competitor's
// (competitor_position).
var competitorColumns = columns{
	fields: map[keywords.Field]string{
		keywords.FieldSearchVolume:       "k.search_volume",
		keywords.FieldDifficulty:         "k.keyword_difficulty",
		keywords.FieldCPC:                "k.cpc",
		keywords.FieldPosition:           "d.position",
		keywords.FieldCompetitorPosition: "s.position",
	},
	intent: "k.search_intent",
	words:  "d.keyword_norm",
	key:    "d.keyword_norm",
}

// competitorsSQL: %[1]s the domain's keyword side (a join of the keyword table and
// conditions, or nothing), %[2]s the conditions on the competitor's position. $1 domain, $2
// country, $3 language.
const competitorsSQL = `
WITH d AS (
    SELECT d.keyword_norm, d.position FROM (
        SELECT keyword_norm, min(position) AS position FROM domain_rankings
        WHERE domain = $1 AND country = $2 AND language = $3
        GROUP BY keyword_norm) d
    %[1]s
), s AS (
    SELECT r.domain, min(r.position) AS position, min(d.position) AS dpos
    FROM d JOIN domain_rankings r
      ON r.keyword_norm = d.keyword_norm AND r.country = $2 AND r.language = $3 AND r.domain <> $1
    GROUP BY d.keyword_norm, r.domain
)
SELECT s.domain, count(*), avg(s.position)::float8, avg(s.dpos)::float8
FROM s
WHERE %[2]s
GROUP BY s.domain`

// competitorTotalsSQL counts the keywords each of the domains $1 ranks for in the market:
// read from the keyword sets (migration 00029, sets.go) when they are as new as the
// rankings, else counted from the rankings' primary key.
const competitorTotalsSQL = `
SELECT s.domain, s.keywords FROM domain_keyword_sets s
WHERE s.domain = ANY($1::text[]) AND s.country = $2 AND s.language = $3
  AND (SELECT generation = built FROM keyword_sets_state)
UNION ALL
SELECT c.domain, (SELECT count(*) FROM (
    SELECT DISTINCT r.keyword_norm FROM domain_rankings r
    WHERE r.domain = c.domain AND r.country = $2 AND r.language = $3) x)
FROM unnest($1::text[]) AS c(domain)
WHERE NOT (SELECT generation = built FROM keyword_sets_state)`

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
	var all, page []keywords.Competitor
	err = inSnapshot(ctx, p.pool, func(tx pgx.Tx) error {
		if unfiltered(req.Filters) {
			var ok bool
			if all, page, ok, err = competitorsBySets(ctx, tx, country, language, domain, after, req.Page.Limit); err != nil || ok {
				out.Total = len(all)
				return err
			}
		} else if cols, err := p.columns(ctx, tx, country, language); err != nil {
			return err
		} else if cols != nil {
			defer cols.release()
			var ok bool
			if all, page, ok, err = cols.competitorsOnColumns(ctx, tx, market{country, language}, domain, req.Filters, after, req.Page.Limit); err != nil || ok {
				if ok {
					columnAnswers.Add(1)
				}
				out.Total = len(all)
				return err
			}
		}
		if _, err := tx.Exec(ctx, "SET LOCAL jit = off; SET LOCAL work_mem = '64MB'; SET LOCAL enable_hashjoin = off"); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, fmt.Sprintf(competitorsSQL, join, shared), q.args...)
		if err != nil {
			return err
		}
		all, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (keywords.Competitor, error) {
			var c keywords.Competitor
			err := r.Scan(&c.Domain, &c.Shared, &c.AvgPosition, &c.DomainAvgPosition)
			return c, err
		})
		if err != nil {
			return err
		}
		slices.SortFunc(all, compareCompetitors)
		out.Total = len(all)
		page = pageOf(all, after, req.Page.Limit)
		if len(page) == 0 {
			return nil
		}
		domains := make([]string, len(page))
		for i, c := range page {
			domains[i] = c.Domain
		}
		totals := map[string]int{}
		rows, err = tx.Query(ctx, competitorTotalsSQL, domains, country, language)
		if err != nil {
			return err
		}
		var d string
		var n int
		if _, err := pgx.ForEachRow(rows, []any{&d, &n}, func() error { totals[d] = n; return nil }); err != nil {
			return err
		}
		for i := range page {
			page[i].Total = totals[page[i].Domain]
		}
		return nil
	})
	if err != nil {
		return keywords.CompetitorList{}, fmt.Errorf("local: competitors: %w", err)
	}
	if err := p.labelCompetitors(ctx, country, language, domain, &out, page); err != nil {
		return keywords.CompetitorList{}, err
	}
	for _, c := range page {
		c.AvgPosition = round2(c.AvgPosition)
		c.DomainAvgPosition = round2(c.DomainAvgPosition)
		out.Competitors = append(out.Competitors, c)
	}
	if n := len(page); n > 0 && compareCompetitors(page[n-1], all[len(all)-1]) != 0 {
		out.Next = strconv.Itoa(page[n-1].Shared) + ":" + page[n-1].Domain
	}
	return out, nil
}

// unfiltered reports whether f has no filter.
func unfiltered(f keywords.Filters) bool {
	return len(f.Ranges) == 0 && len(f.Intents) == 0 && len(f.Include) == 0 && len(f.Exclude) == 0
}

// pageOf returns the limit competitors after the token's (all sorted).
func pageOf(all []keywords.Competitor, after *keywords.Competitor, limit int) []keywords.Competitor {
	start := 0
	if after != nil {
		start, _ = slices.BinarySearchFunc(all, *after, compareCompetitors)
		if start < len(all) && compareCompetitors(all[start], *after) == 0 {
			start++
		}
	}
	if limit <= 0 {
		limit = 20
	}
	return all[start:min(start+limit, len(all))]
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
