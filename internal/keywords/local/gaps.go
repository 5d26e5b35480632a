package local

import (
	"cmp"
	"context"
	"fmt"
	"slices"

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
    SELECT min(` + rankingKeyword + `) AS keyword,
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
		var page []pageRow
		total := 0
		for _, s := range p.planGaps(m, q, req.Limit) {
			var ok bool
			if page, total, ok, err = s.answer(ctx, tx); err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			if ok {
				break
			}
		}
		if total == 0 {
			return nil
		}
		out.Total = total
		if req.Limit > 0 && len(page) > req.Limit {
			page = page[:req.Limit]
			last := page[len(page)-1]
			out.Next = gapPosition{Values: last.values, Key: last.key, Total: total}.token()
		}
		out.Gaps, err = readGaps(ctx, tx, country, language, competitors, page)
		return err
	})
	if err != nil {
		return keywords.GapList{}, fmt.Errorf("local: gaps: %w", err)
	}
	return out, nil
}

// gapStrategy is one way of answering a gaps question in a snapshot: the page (limit+1
// rows when there are more, with their sort values) and how many gaps pass the filters.
// ok is false when the strategy does not apply; the next one is tried.
type gapStrategy struct {
	name   string
	answer func(ctx context.Context, tx pgx.Tx) (page []pageRow, total int, ok bool, err error)
}

// planGaps lists the strategies for the question, tried in this order until one answers:
//
//   - columns: the market's keyword columns are loaded for the snapshot's data: one pass
//     over the competitors' keyword sets in memory filters, counts and sorts (any page;
//     a later page keeps the total its cursor carries);
//   - cursor: a later page: the total its cursor carries, the page by pageAfter;
//   - sets: an unfiltered first page: the total by the keyword sets' operations (a count
//     of the rankings when the sets are stale), the page by pageAfter;
//   - one pass: a filtered first page: one pass over the gaps passing the filters counts
//     them and sorts out the page.
//
// pageAfter (gapPage) walks the keyword table in the order's metric index when the gaps are
// many and the walk's page is exact, and otherwise sorts every gap passing the filters.
func (p *Provider) planGaps(m gapMarket, q gapQuery, limit int) []gapStrategy {
	pageAfter := func(ctx context.Context, tx pgx.Tx, total int) ([]pageRow, int, bool, error) {
		if total == 0 {
			return nil, 0, true, nil
		}
		page, err := p.gapPage(ctx, tx, m, q, limit, total)
		return page, total, true, err
	}
	return []gapStrategy{
		{"columns", func(ctx context.Context, tx pgx.Tx) ([]pageRow, int, bool, error) {
			cols, err := p.columns(ctx, tx, m.country, m.language)
			if err != nil || cols == nil {
				return nil, 0, false, err
			}
			defer cols.release()
			page, total, ok, err := cols.gapsOnColumns(ctx, tx, m, q, limit)
			if err != nil || !ok {
				return nil, 0, false, err
			}
			columnAnswers.Add(1)
			if q.after != nil {
				total = q.after.Total // counted on the first page
			}
			return page, total, true, nil
		}},
		{"cursor", func(ctx context.Context, tx pgx.Tx) ([]pageRow, int, bool, error) {
			if q.after == nil {
				return nil, 0, false, nil
			}
			return pageAfter(ctx, tx, q.after.Total) // counted on the first page
		}},
		{"sets", func(ctx context.Context, tx pgx.Tx) ([]pageRow, int, bool, error) {
			if !q.filters.Empty() {
				return nil, 0, false, nil
			}
			total, fresh, err := countBySets(ctx, tx, m.country, m.language, m.domain, m.competitors)
			if err == nil && !fresh {
				total, err = p.countGaps(ctx, tx, m.country, m.language, m.domain, m.competitors)
			}
			if err != nil {
				return nil, 0, false, err
			}
			return pageAfter(ctx, tx, total)
		}},
		{"one pass", func(ctx context.Context, tx pgx.Tx) ([]pageRow, int, bool, error) {
			page, err := generalPage(ctx, tx, m, q, limit, true)
			if err != nil || len(page) == 0 {
				return nil, 0, true, err
			}
			return page, page[0].total, true, nil
		}},
	}
}

// gapMarket is who a gaps question compares, in which market.
type gapMarket struct {
	country, language, domain string
	competitors               []string
}

// pageRow is a gap of a page: its key and sort values, and (counted pages) the number of
// gaps passing the filters.
type pageRow struct {
	key    string
	values []*float64
	total  int
	// positions are the named competitors' best positions, when the keyword columns
	// chose the row (their keyword sets hold them): the read then asks PostgreSQL only
	// for the keyword's metrics.
	positions map[string]int
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

// walkIndexes are the first keys a walk can follow, each an index of keyword_metrics
// (migrations 00013 and 00029): the column, ordered NULLS LAST then by keyword.
var walkIndexes = map[keywords.OrderKey]string{
	{Field: keywords.FieldSearchVolume, Desc: true}: "k.search_volume",
	{Field: keywords.FieldDifficulty}:               "k.keyword_difficulty",
	{Field: keywords.FieldCPC, Desc: true}:          "k.cpc",
}

// gapMetricsSQL reads the chosen gaps ($4, in order) whose competitors' positions the
// keyword columns gave: their metrics, the keyword as a competitor's ranking row spells it
// where the keyword table has no row, and whether a competitor's ranking row is synthetic
// (a scan of the partial index of synthetic rows, empty for imported data). Against
// gapsReadSQL it leaves out a look-up of every gap's ranking rows: at ten million keywords
// the page's gaps lie all over the table, and those reads were a third of a page's time.
const gapMetricsSQL = `
SELECT coalesce(k.keyword, (SELECT min(` + rankingKeyword + `) FROM domain_rankings r
           WHERE r.domain = ANY($3::text[]) AND r.country = $1 AND r.language = $2
             AND r.keyword_norm = g.keyword_norm)),
       k.search_volume, k.keyword_difficulty, k.cpc, k.competition, k.search_intent, k.serp_urls,
       coalesce(k.synthetic, false) OR g.keyword_norm = ANY(ARRAY(
           SELECT r.keyword_norm FROM domain_rankings r
           WHERE r.synthetic AND r.country = $1 AND r.language = $2 AND r.domain = ANY($3::text[])
             AND r.keyword_norm = ANY($4::text[])))
FROM unnest($4::text[]) WITH ORDINALITY AS g(keyword_norm, ord)
LEFT JOIN keyword_metrics k ON k.country = $1 AND k.language = $2 AND k.keyword_norm = g.keyword_norm
ORDER BY g.ord`

// readGaps reads the page's gaps in order: their metrics and each named competitor's best
// position, which the rows hold when the keyword columns chose them (gapMetricsSQL then
// reads the rest) and gapsReadSQL reads otherwise.
func readGaps(ctx context.Context, tx pgx.Tx, country, language string, competitors []string, page []pageRow) ([]keywords.Gap, error) {
	keys := make([]string, len(page))
	for i, r := range page {
		keys[i] = r.key
	}
	known := len(page) > 0 && page[0].positions != nil
	query := gapsReadSQL
	if known {
		query = gapMetricsSQL
	}
	out := make([]keywords.Gap, 0, len(page))
	rows, err := tx.Query(ctx, query, country, language, competitors, keys)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		if len(out) == len(page) {
			return nil, fmt.Errorf("more gaps read than the page's %d", len(page))
		}
		var g keywords.Gap
		var intent *string
		dest := []any{&g.Keyword.Keyword, &g.SearchVolume, &g.Difficulty, &g.CPC, &g.Competition,
			&intent, &g.SERPURLs, &g.CompetitorPositions, &g.Synthetic}
		if known {
			dest = slices.Delete(dest, 7, 8)
			g.CompetitorPositions = page[len(out)].positions
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		if intent != nil {
			g.Intent = *intent
		}
		out = append(out, g)
	}
	return out, rows.Err()
}
