package local

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/contentapi/contentapi/internal/keywords"
)

// Competitor gaps are answered in bounded work whatever the competitors' size: a large
// publisher ranks for most of a market's keywords, and listing, joining and sorting all of
// its gaps to show the first 50 took seconds. A gaps question is answered in three steps,
// in one read-only snapshot:
//
//  1. Count: the gaps of each competitor not already counted for an earlier one, each
//     term a walk of the rankings primary key (sorted by keyword) anti-joined to the
//     domain's rankings, so the total is exact without grouping hundreds of thousands of
//     rows in memory.
//  2. Choose the page, the first Limit gaps by search volume. With few gaps (fewer than
//     √(Limit × keywords in the table)) all of them are joined to their metrics and
//     sorted. With many, the keyword table is read in volume order (an index) and each
//     keyword is checked against the rankings until Limit gaps are found: the expected
//     number read is Limit × keywords / gaps, small exactly when the gaps are many. The
//     volume walk is used only when its page ends on a known volume; otherwise (gaps
//     without metrics sort among the unknown volumes) the full sort answers.
//  3. Read the chosen gaps: their metrics and each competitor's best position.

// gapsWalkSQL is one term of the count: competitor $3's keywords that the domain ($4) and
// the competitors before it ($5) do not rank for.
const gapsCountTermSQL = `
SELECT count(*) FROM (
    SELECT DISTINCT r.keyword_norm FROM domain_rankings r
    WHERE r.domain = $3 AND r.country = $1 AND r.language = $2
      AND NOT EXISTS (
          SELECT 1 FROM domain_rankings d
          WHERE d.domain = ANY($4::text[]) AND d.country = $1 AND d.language = $2
            AND d.keyword_norm = r.keyword_norm)
) g`

// gapsReadSQL reads the chosen gaps ($4, in order) with their metrics and every named
// competitor's ($3) best position: a domain may rank with several URLs, and jsonb keeps the
// last value of a repeated key, so positions are aggregated worst first. A gap is synthetic
// when its keyword row or one of the competitors' ranking rows is.
const gapsReadSQL = `
SELECT coalesce(k.keyword, p.keyword), k.search_volume, k.keyword_difficulty, k.cpc,
       k.competition, k.search_intent, k.serp_urls, p.positions,
       p.synthetic OR coalesce(k.synthetic, false)
FROM unnest($4::text[]) WITH ORDINALITY AS g(keyword_norm, ord)
CROSS JOIN LATERAL (
    SELECT min(r.keyword) AS keyword,
           jsonb_object_agg(r.domain, r.position ORDER BY r.position DESC) AS positions,
           bool_or(r.synthetic) AS synthetic
    FROM domain_rankings r
    WHERE r.domain = ANY($3::text[]) AND r.country = $1 AND r.language = $2
      AND r.keyword_norm = g.keyword_norm
) p
LEFT JOIN keyword_metrics k ON k.country = $1 AND k.language = $2 AND k.keyword_norm = g.keyword_norm
ORDER BY g.ord`

// Gaps returns the keywords a named competitor ranks for and the domain does not, filtered
// and in the request's order (default: highest search volume first, unknown volumes last),
// then by keyword: the page of req.Limit gaps after req.After (all with Limit 0), how many
// pass the filters, and the token of the next page.
func (p *Provider) Gaps(ctx context.Context, req keywords.GapsRequest) (keywords.GapList, error) {
	country, language := Market(req.Country, req.Language)
	out := keywords.GapList{Gaps: []keywords.Gap{}}
	q, err := newGapQuery(req)
	if err != nil {
		return out, err
	}
	domain, competitors := NormalizeDomain(req.Domain), keywords.Competitors(req.Domain, req.Competitors)
	if len(competitors) == 0 {
		return out, nil
	}
	m := gapMarket{country: country, language: language, domain: domain, competitors: competitors}
	err = inSnapshot(ctx, p.pool, func(tx pgx.Tx) (err error) {
		// Sorted walks of the primary key, not hash tables of every ranking row; and no
		// JIT compilation, which costs more than these short queries.
		if _, err := tx.Exec(ctx, "SET LOCAL enable_hashagg = off; SET LOCAL jit = off; SET LOCAL work_mem = '64MB'"); err != nil {
			return err
		}
		if out.Unranked, err = unranked(ctx, tx, country, language, competitors); err != nil {
			return err
		}
		total := 0
		var page []pageRow
		cols, err := p.columns(ctx, tx, country, language)
		if err != nil {
			return err
		}
		onColumns := false
		if cols != nil {
			defer cols.release()
			if page, total, onColumns, err = cols.gapsOnColumns(ctx, tx, m, q, req.Limit); err != nil {
				return err
			}
			if onColumns {
				columnAnswers.Add(1)
				if q.after != nil {
					total = q.after.Total // counted on the first page
				}
			}
		}
		switch {
		case onColumns:
		case q.after != nil:
			total = q.after.Total // counted on the first page
		case q.filters.Empty():
			var fresh bool
			total, fresh, err = countBySets(ctx, tx, country, language, domain, competitors)
			if err == nil && !fresh {
				total, err = p.countGaps(ctx, tx, country, language, domain, competitors)
			}
		default:
			// The first page of a filtered question: one pass over the gaps passing the
			// filters counts them and sorts out the page.
			if page, err = generalPage(ctx, tx, m, q, req.Limit, true); err == nil && len(page) > 0 {
				total = page[0].total
			}
		}
		if err != nil || total == 0 {
			return err
		}
		out.Total = total
		if page == nil && !onColumns {
			if page, err = p.gapPage(ctx, tx, m, q, req.Limit, total); err != nil {
				return err
			}
		}
		if req.Limit > 0 && len(page) > req.Limit {
			page = page[:req.Limit]
			last := page[len(page)-1]
			out.Next = gapPosition{Values: last.values, Key: last.key, Total: total}.token()
		}
		keys := make([]string, len(page))
		for i, r := range page {
			keys[i] = r.key
		}
		out.Gaps, err = readGaps(ctx, tx, country, language, competitors, keys)
		return err
	})
	if err != nil {
		return keywords.GapList{}, fmt.Errorf("local: gaps: %w", err)
	}
	return out, nil
}

// gapMarket is who a gaps question compares, in which market.
type gapMarket struct {
	country, language, domain string
	competitors               []string
}

// gapSetSQL is the set of gaps, g(keyword_norm, cpos): the keywords a competitor ($comps)
// ranks for and the domain ($domain) does not, with the competitors' best position. The
// words of q's filters, which need only the key, apply to the rankings before grouping.
func gapSetSQL(a *sqlArgs, m gapMarket, q gapQuery) string {
	c, l := a.add(m.country), a.add(m.language)
	words := ""
	if w := q.wordFilters(a, "r.keyword_norm"); w != "" {
		words = " AND " + w
	}
	return `SELECT r.keyword_norm, min(r.position) AS cpos FROM domain_rankings r
    WHERE r.domain = ANY(` + a.add(m.competitors) + `::text[]) AND r.country = ` + c + ` AND r.language = ` + l + words + `
      AND NOT EXISTS (
          SELECT 1 FROM domain_rankings d
          WHERE d.domain = ` + a.add(m.domain) + ` AND d.country = ` + c + ` AND d.language = ` + l + `
            AND d.keyword_norm = r.keyword_norm)
    GROUP BY r.keyword_norm`
}

// metricsJoin joins a gap to its metrics.
func metricsJoin(a *sqlArgs, m gapMarket) string {
	return `LEFT JOIN keyword_metrics k ON k.keyword_norm = g.keyword_norm AND k.country = ` + a.add(m.country) +
		` AND k.language = ` + a.add(m.language)
}

// pageRow is a gap of a page: its key and sort values, and (counted pages) the number of
// gaps passing the filters.
type pageRow struct {
	key    string
	values []*float64
	total  int
}

// collectPage reads rows of (key, sort values..., [count]).
func collectPage(rows pgx.Rows, err error, counted bool) ([]pageRow, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (pageRow, error) {
		n := len(r.RawValues()) - 1
		if counted {
			n--
		}
		row := pageRow{values: make([]*float64, n)}
		dest := []any{&row.key}
		for i := range row.values {
			dest = append(dest, &row.values[i])
		}
		if counted {
			dest = append(dest, &row.total)
		}
		return row, r.Scan(dest...)
	})
}

// unrankedSQL lists the competitors ($3) without a single ranking row in the market: one
// probe of the rankings primary key each.
const unrankedSQL = `
SELECT c.domain FROM unnest($3::text[]) WITH ORDINALITY AS c(domain, ord)
WHERE NOT EXISTS (
    SELECT 1 FROM domain_rankings r WHERE r.domain = c.domain AND r.country = $1 AND r.language = $2)
ORDER BY c.ord`

// unranked returns the competitors the market holds no ranking data for, in the given order.
func unranked(ctx context.Context, tx pgx.Tx, country, language string, competitors []string) ([]string, error) {
	out, err := collectKeys(tx.Query(ctx, unrankedSQL, country, language, competitors))
	if len(out) == 0 {
		out = nil
	}
	return out, err
}

// domainShareSQL reads the planner's statistics: the share of ranking rows of the most
// common domains.
const domainShareSQL = `
SELECT v.domain, v.share
FROM pg_stats s,
     unnest(s.most_common_vals::text::text[], s.most_common_freqs) AS v(domain, share)
WHERE s.schemaname = current_schema() AND s.tablename = 'domain_rankings' AND s.attname = 'domain'`

// countGaps counts the gaps term by term, the smallest competitor first (by the planner's
// statistics): each term excludes the competitors before it, so the largest one, counted
// last, is walked once against small exclusion sets instead of being the exclusion set of
// every other term.
func (p *Provider) countGaps(ctx context.Context, tx pgx.Tx, country, language, domain string, competitors []string) (int, error) {
	share := map[string]float64{}
	rows, err := tx.Query(ctx, domainShareSQL)
	if err != nil {
		return 0, err
	}
	for rows.Next() {
		var d string
		var f float64
		if err := rows.Scan(&d, &f); err != nil {
			rows.Close()
			return 0, err
		}
		share[d] = f
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	competitors = slices.Clone(competitors)
	slices.SortStableFunc(competitors, func(a, b string) int { return cmp.Compare(share[a], share[b]) })
	total := 0
	for i, c := range competitors {
		excluded := append([]string{domain}, competitors[:i]...)
		var n int
		if err := tx.QueryRow(ctx, gapsCountTermSQL, country, language, c, excluded).Scan(&n); err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// gapPage returns the gaps of the page after q.after, limit+1 of them when there are more
// (all with limit 0), with their sort values.
func (p *Provider) gapPage(ctx context.Context, tx pgx.Tx, m gapMarket, q gapQuery, limit, total int) ([]pageRow, error) {
	if limit > 0 && limit < total && q.walkable() && (q.after == nil || q.after.Values[0] != nil) {
		var keywordRows float64
		if err := tx.QueryRow(ctx, `SELECT greatest(reltuples, 0) FROM pg_class WHERE oid = 'keyword_metrics'::regclass`).Scan(&keywordRows); err != nil {
			return nil, err
		}
		if float64(total)*float64(total) > float64(limit)*keywordRows {
			rows, err := walkMetric(ctx, tx, m, q, limit+1)
			page, err := collectPage(rows, err, false)
			if err != nil {
				return nil, err
			}
			// Past the known values of the first key the walk is exact only when the
			// filters need a metrics row (gaps without one sort among the unknowns).
			if len(page) == limit+1 && (page[len(page)-1].values[0] != nil || q.metricFiltered()) {
				return page, nil
			}
		}
	}
	return generalPage(ctx, tx, m, q, limit, false)
}

// generalPage sorts out the page from every gap passing the filters; counted adds their
// number to each row (a window count over the same pass).
func generalPage(ctx context.Context, tx pgx.Tx, m gapMarket, q gapQuery, limit int, counted bool) ([]pageRow, error) {
	values := q.sortValues()
	if counted {
		values += ", count(*) OVER ()"
	}
	var a sqlArgs
	sql := `WITH g AS MATERIALIZED (` + gapSetSQL(&a, m, q) + `)
SELECT g.keyword_norm, ` + values + ` FROM g ` + metricsJoin(&a, m) + `
WHERE ` + q.allFilters(&a) + ` AND ` + q.keyset(&a) + `
ORDER BY ` + q.orderBy()
	if q.metricFiltered() {
		// A filter on the metrics passes only gaps with a metrics row: start from the
		// metrics, so the planner can begin with the rows the filter selects (an index
		// range on the volume) and probe the rankings, rather than walk every ranking of
		// the competitors. The gaps passing the filters are gathered first (MATERIALIZED: the page's LIMIT
		// must not lead the planner into probing the rankings row by row in sort order,
		// when every passing gap is read anyway), then sorted; the competitors' best
		// position is read only when the order needs it.
		a = sqlArgs{}
		cond := gapCondition(&a, m, q)
		cpos := "NULL::int"
		if q.ordersBy(keywords.FieldCompetitorPosition) {
			cpos = `(SELECT min(r.position) FROM domain_rankings r
        WHERE r.domain = ANY(` + a.add(m.competitors) + `::text[]) AND r.country = k.country AND r.language = k.language
          AND r.keyword_norm = k.keyword_norm)`
		}
		sql = `WITH f AS MATERIALIZED (
    SELECT k.keyword_norm, k.search_volume, k.keyword_difficulty, k.cpc, ` + cpos + ` AS cpos
    FROM keyword_metrics k WHERE ` + cond + `)
SELECT g.keyword_norm, ` + values + ` FROM f k
CROSS JOIN LATERAL (SELECT k.keyword_norm, k.cpos) g
WHERE ` + q.keyset(&a) + `
ORDER BY ` + q.orderBy()
	}
	if limit > 0 {
		sql += ` LIMIT ` + a.add(limit+1)
	}
	rows, err := tx.Query(ctx, sql, a.list...)
	return collectPage(rows, err, counted)
}

// walkMetric reads the keyword table in the order of the query's first key, a metric with
// an index (walkIndexes), from the page's position, and keeps the first n keywords that are
// gaps passing the filters: with many gaps, few keywords are read. Ties of the first key
// are ordered by the other keys as they come (an incremental sort). After a position the
// walk is three ordered parts, each an index range: the rest of the position's value of
// the first key, the values after it, the unknown ones.
func walkMetric(ctx context.Context, tx pgx.Tx, m gapMarket, q gapQuery, n int) (pgx.Rows, error) {
	var a sqlArgs
	cond := gapCondition(&a, m, q)
	first := q.order[0]
	col := walkIndexes[first]
	order := q.orderBy()
	order = col + " " + strings.SplitN(order, " ", 2)[1] // the raw column leads: its index gives the order
	part := func(bound string) string {
		return `(SELECT g.keyword_norm, ` + q.sortValues() + ` FROM keyword_metrics k
CROSS JOIN LATERAL (SELECT k.keyword_norm) g
WHERE ` + bound + ` AND ` + cond + `
ORDER BY ` + order + `
LIMIT ` + a.add(n) + `::bigint)`
	}
	var sql string
	if q.after == nil {
		sql = part("true")
	} else {
		rest := gapQuery{filters: q.filters, order: q.order[1:],
			after: &gapPosition{Values: q.after.Values[1:], Key: q.after.Key}}
		var v string
		if first.Field == keywords.FieldSearchVolume { // compared as bigint, so the index serves
			v = a.add(int64(*q.after.Values[0])) + "::bigint"
		} else {
			v = a.add(*q.after.Values[0]) + "::float8"
		}
		beyond := col + " > " + v
		if first.Desc {
			beyond = col + " < " + v
		}
		sql = `SELECT * FROM (` + part(col+` = `+v+` AND `+rest.keyset(&a)) + `
UNION ALL ` + part(beyond) + `
UNION ALL ` + part(col+` IS NULL`) + `) w
ORDER BY ` + q.outerOrder() + ` LIMIT ` + a.add(n) + `::bigint`
	}
	return tx.Query(ctx, sql, a.list...)
}

// walkIndexes are the first keys a walk can follow, each an index of keyword_metrics
// (migrations 00013 and 00029): the column, ordered NULLS LAST then by keyword.
var walkIndexes = map[keywords.OrderKey]string{
	{Field: keywords.FieldSearchVolume, Desc: true}: "k.search_volume",
	{Field: keywords.FieldDifficulty}:               "k.keyword_difficulty",
	{Field: keywords.FieldCPC, Desc: true}:          "k.cpc",
}

// gapCondition is the SQL of "keyword_metrics row k is a gap passing q's filters": a named
// competitor ranks for it (with its best position in the range), the domain does not.
func gapCondition(a *sqlArgs, m gapMarket, q gapQuery) string {
	c, l := a.add(m.country), a.add(m.language)
	comps, dom := a.add(m.competitors), a.add(m.domain)
	cond := `k.country = ` + c + ` AND k.language = ` + l + `
  AND EXISTS (
      SELECT 1 FROM domain_rankings r
      WHERE r.domain = ANY(` + comps + `::text[]) AND r.country = ` + c + ` AND r.language = ` + l + `
        AND r.keyword_norm = k.keyword_norm` + positionBound(a, q) + `)
  AND NOT EXISTS (
      SELECT 1 FROM domain_rankings d
      WHERE d.domain = ` + dom + ` AND d.country = ` + c + ` AND d.language = ` + l + `
        AND d.keyword_norm = k.keyword_norm)`
	if r, ok := q.filters.Ranges[keywords.FieldCompetitorPosition]; ok && r.Min != nil {
		cond += `
  AND NOT EXISTS (
      SELECT 1 FROM domain_rankings r
      WHERE r.domain = ANY(` + comps + `::text[]) AND r.country = ` + c + ` AND r.language = ` + l + `
        AND r.keyword_norm = k.keyword_norm AND r.position < ` + a.add(*r.Min) + `::float8)`
	}
	if f := q.metricFilters(a, "k.keyword_norm"); f != "" {
		cond += "\n  AND " + f
	}
	return cond
}

// positionBound is the walk's bound on a competitor's position: some named competitor
// ranks at most the range's max.
func positionBound(a *sqlArgs, q gapQuery) string {
	r, ok := q.filters.Ranges[keywords.FieldCompetitorPosition]
	if !ok || r.Max == nil {
		return ""
	}
	return ` AND r.position <= ` + a.add(*r.Max) + `::float8`
}

func readGaps(ctx context.Context, tx pgx.Tx, country, language string, competitors, keys []string) ([]keywords.Gap, error) {
	out := make([]keywords.Gap, 0, len(keys))
	rows, err := tx.Query(ctx, gapsReadSQL, country, language, competitors, keys)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var g keywords.Gap
		var intent *string
		if err := rows.Scan(&g.Keyword.Keyword, &g.SearchVolume, &g.Difficulty, &g.CPC, &g.Competition,
			&intent, &g.SERPURLs, &g.CompetitorPositions, &g.Synthetic); err != nil {
			return nil, err
		}
		if intent != nil {
			g.Intent = *intent
		}
		out = append(out, g)
	}
	return out, rows.Err()
}
