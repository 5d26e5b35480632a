package local

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/contentapi/contentapi/internal/keywords"
)

// A domain's rankings are one row per keyword: the domain's best position for it (a domain
// may rank with several URLs) and the URL holding it (the first by URL on a tie). They are
// answered in one read-only snapshot: on the keyword columns (columns.go) when the keyword
// sets are fresh, choosing the page's keywords and counting in one pass in memory, else by
// three statements on the rankings joined to the keyword table:
//
//  1. Count: how many keywords pass the filters, in all and by position band. Joined, the
//     domain's best positions come from the rankings' primary key alone (it includes the
//     position), in keyword order; the keyword table is joined only when a filter needs its
//     metrics. Only the first page counts: its token carries the counts to the next pages.
//  2. Page: the keys of the first Limit rows after the page token, in the query's order.
//  3. Read: those keywords' metrics, URL and synthetic flag.

// ctrArray is keywords.CTRCurve as an SQL array literal (constants, not input).
var ctrArray = func() string {
	var b strings.Builder
	b.WriteString("'{")
	for i, c := range keywords.CTRCurve() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatFloat(c, 'g', -1, 64))
	}
	b.WriteString("}'::float8[]")
	return b.String()
}()

// rankingColumns are the fields a domain's rankings filter and sort on, read from the
// domain's rankings joined to the keyword table.
func rankingColumns(ctr string) columns {
	return columns{
		fields: map[keywords.Field]string{
			keywords.FieldSearchVolume: "k.search_volume",
			keywords.FieldDifficulty:   "k.keyword_difficulty",
			keywords.FieldCPC:          "k.cpc",
			keywords.FieldPosition:     "r.position",
			keywords.FieldTraffic:      "floor(k.search_volume * coalesce((" + ctr + ")[r.position], 0) + 0.5)",
		},
		intent: "k.search_intent",
		words:  "r.keyword_norm",
		key:    "r.keyword_norm",
	}
}

// rankingsBase is the domain's best position per keyword ($1 domain, $2 country, $3
// language), with the keyword's metrics when joined.
const rankingsBase = `
FROM (SELECT keyword_norm, min(position) AS position FROM domain_rankings
      WHERE domain = $1 AND country = $2 AND language = $3
      GROUP BY keyword_norm) r
%[1]s
WHERE %[2]s`

const rankingsJoin = `LEFT JOIN keyword_metrics k ON k.keyword_norm = r.keyword_norm AND k.country = $2 AND k.language = $3`

// rankingsReadSQL reads the chosen keywords ($4, in order) of the domain: the best ranking
// row (position, then URL), the keyword's metrics.
const rankingsReadSQL = `
SELECT b.keyword, k.search_volume, k.keyword_difficulty, k.cpc, k.competition, k.search_intent,
       k.serp_urls, b.position, b.url, b.synthetic OR coalesce(k.synthetic, false)
FROM unnest($4::text[]) WITH ORDINALITY AS g(keyword_norm, ord)
CROSS JOIN LATERAL (
    SELECT ` + rankingKeyword + ` AS keyword, r.position, r.url, r.synthetic FROM domain_rankings r
    WHERE r.domain = $1 AND r.country = $2 AND r.language = $3 AND r.keyword_norm = g.keyword_norm
    ORDER BY r.position, r.url NULLS FIRST
    LIMIT 1) b
LEFT JOIN keyword_metrics k ON k.keyword_norm = g.keyword_norm AND k.country = $2 AND k.language = $3
ORDER BY g.ord`

// joinedColumns are the fields of the joined rankings.
var joinedColumns = rankingColumns(ctrArray)

// defaultRankingOrder is the order of a request without one: best position first, then
// the highest volume.
var defaultRankingOrder = []keywords.OrderKey{{Field: keywords.FieldPosition}, {Field: keywords.FieldSearchVolume, Desc: true}}

// Rankings returns one page of the keywords the domain ranks for in the market, filtered
// and ordered, with how many pass the filters in all and by position band.
func (p *Provider) Rankings(ctx context.Context, req keywords.RankingsRequest) (keywords.RankingList, error) {
	country, language := Market(req.Country, req.Language)
	out := keywords.RankingList{Rankings: []keywords.Ranking{}, Bands: emptyBands()}
	domain := NormalizeDomain(req.Domain)
	if domain == "" {
		return out, nil
	}
	order := req.Order
	if len(order) == 0 {
		order = defaultRankingOrder
	}
	limit := req.Page.Limit
	if limit <= 0 {
		limit = 100
	}
	err := inSnapshot(ctx, p.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL jit = off"); err != nil {
			return err
		}
		// The statement's fixed arguments: $1–$3 the domain and market.
		q := sqlQuery{args: []any{domain, country, language}}
		if err := q.filters(req.Filters, joinedColumns); err != nil {
			return err
		}
		keys, err := joinedColumns.order(order)
		if err != nil {
			return err
		}
		if done, err := p.rankingsOnColumns(ctx, tx, req, domain, country, language, order, keys, limit, &out); done || err != nil {
			return err
		}
		join := ""
		if needsMetrics(req.Filters, nil) {
			join = rankingsJoin
		}
		countSQL := `SELECT ` + countsSQL() + fmt.Sprintf(rankingsBase, join, q.whereSQL())
		countArgs := q.args
		pq := sqlQuery{args: q.args, where: q.where}
		if err := pq.after(keys, req.Page.After); err != nil {
			return err
		}
		pageSQL := "SELECT " + selectKeys(keys) + fmt.Sprintf(rankingsBase, rankingsJoin, pq.whereSQL()) +
			" ORDER BY " + orderBy(keys) + " LIMIT " + pq.arg(limit+1)
		// A later page repeats the counts of the first (its token carries them).
		counts, err := tokenCounts(req.Page.After, 1+len(keywords.Bands))
		if err != nil {
			return err
		}
		if counts == nil {
			counts = make([]int, 1+len(keywords.Bands))
			targets := make([]any, len(counts))
			for i := range counts {
				targets[i] = &counts[i]
			}
			if err := tx.QueryRow(ctx, countSQL, countArgs...).Scan(targets...); err != nil {
				return err
			}
		}
		out.Total = counts[0]
		for i, b := range keywords.Bands {
			out.Bands[b.Name] = counts[i+1]
		}
		if out.Total == 0 {
			return nil
		}
		rows, err := tx.Query(ctx, pageSQL, pq.args...)
		if err != nil {
			return err
		}
		targets, values := scanKeys(keys)
		var page []string
		var last []any
		for rows.Next() {
			if err := rows.Scan(targets...); err != nil {
				rows.Close()
				return err
			}
			if len(page) == limit {
				out.Next = encodeToken(last, counts)
				break
			}
			last = values()
			page = append(page, last[len(last)-1].(string))
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		out.Rankings, err = readRankings(ctx, tx, domain, country, language, page)
		return err
	})
	if err != nil {
		if errors.Is(err, keywords.ErrUnsupported) { // the query's fault: as it is
			return keywords.RankingList{}, err
		}
		return keywords.RankingList{}, fmt.Errorf("local: rankings: %w", err)
	}
	return out, nil
}

// rankingsOnColumns answers on the keyword columns (columnquery.go) when they are loaded
// for the data of tx's snapshot; done is false when SQL must answer.
func (p *Provider) rankingsOnColumns(ctx context.Context, tx pgx.Tx, req keywords.RankingsRequest, domain, country, language string,
	order []keywords.OrderKey, keys []sortKey, limit int, out *keywords.RankingList) (done bool, err error) {
	cols, err := p.columns(ctx, tx, country, language)
	if err != nil || cols == nil {
		return false, err
	}
	defer cols.release()
	var after []any
	if req.Page.After != "" {
		if after, err = decodeToken(keys, req.Page.After); err != nil {
			return false, err
		}
	}
	counts, err := tokenCounts(req.Page.After, 1+len(keywords.Bands))
	if err != nil {
		return false, err
	}
	page, last, more, counted, ok, err := cols.rankingsOnColumns(ctx, tx, market{country, language}, domain, req.Filters,
		order, after, limit, counts == nil)
	if err != nil || !ok {
		return false, err
	}
	columnAnswers.Add(1)
	if counts == nil {
		counts = counted
	}
	out.Total = counts[0]
	for i, b := range keywords.Bands {
		out.Bands[b.Name] = counts[i+1]
	}
	if more {
		out.Next = encodeToken(last, counts)
	}
	out.Rankings, err = readRankings(ctx, tx, domain, country, language, page)
	return true, err
}

func emptyBands() map[string]int {
	m := make(map[string]int, len(keywords.Bands))
	for _, b := range keywords.Bands {
		m[b.Name] = 0
	}
	return m
}

// needsMetrics reports whether the filters or the order read the keyword table.
func needsMetrics(f keywords.Filters, order []keywords.OrderKey) bool {
	if len(f.Intents) > 0 {
		return true
	}
	for field := range f.Ranges {
		if field != keywords.FieldPosition && field != keywords.FieldCompetitorPosition {
			return true
		}
	}
	for _, k := range order {
		if k.Field != keywords.FieldPosition && k.Field != keywords.FieldKeyword && k.Field != keywords.FieldCompetitorPosition {
			return true
		}
	}
	return false
}

func readRankings(ctx context.Context, tx pgx.Tx, domain, country, language string, keys []string) ([]keywords.Ranking, error) {
	out := make([]keywords.Ranking, 0, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	rows, err := tx.Query(ctx, rankingsReadSQL, domain, country, language, keys)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanRanking(rows)
		if err != nil {
			return nil, err
		}
		r.EstimatedTraffic = keywords.EstimatedTraffic(r.SearchVolume, r.Position)
		out = append(out, r)
	}
	return out, rows.Err()
}

// countsSQL is the select list of a rankings count: every row, then each position band's.
func countsSQL() string {
	out := `count(*)`
	for _, b := range keywords.Bands {
		out += fmt.Sprintf(", count(*) FILTER (WHERE position BETWEEN %d AND %d)", b.From, b.To)
	}
	return out
}
