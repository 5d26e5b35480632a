package local

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/contentapi/contentapi/internal/keywords"
)

// A gaps query's filters, order and keyset position, as SQL over two aliases: k, the gap's
// keyword_metrics row (absent: every metric NULL), and g, the gap (g.keyword_norm, and
// g.cpos, the best position of the named competitors).

// sqlArgs collects a statement's arguments and names them $n.
type sqlArgs struct{ list []any }

func (a *sqlArgs) add(v any) string { return placeholder(&a.list, v) }

// placeholder appends v to the arguments and returns its placeholder ($n).
func placeholder(args *[]any, v any) string {
	*args = append(*args, v)
	return "$" + strconv.Itoa(len(*args))
}

// gapColumn is the SQL of a field of a gap, as float8 for the metrics (a volume fits).
func gapColumn(f keywords.Field) (string, bool) {
	switch f {
	case keywords.FieldSearchVolume:
		return "k.search_volume::float8", true
	case keywords.FieldDifficulty:
		return "k.keyword_difficulty", true
	case keywords.FieldCPC:
		return "k.cpc", true
	case keywords.FieldCompetitorPosition:
		return "g.cpos::float8", true
	case keywords.FieldKeyword:
		return "g.keyword_norm", true
	}
	return "", false
}

// defaultGapOrder is the providers' order: highest volume first.
var defaultGapOrder = []keywords.OrderKey{{Field: keywords.FieldSearchVolume, Desc: true}}

// gapQuery is a checked gaps query.
type gapQuery struct {
	filters keywords.Filters
	order   []keywords.OrderKey // without the keyword tiebreak, unless asked for
	after   *gapPosition
}

// gapPosition is a keyset position: the sort values of the last row of a page (nil: NULL)
// and its key, and the total counted on the first page.
type gapPosition struct {
	Values []*float64 `json:"v"`
	Key    string     `json:"k"`
	Total  int        `json:"t"`
}

func newGapQuery(req keywords.GapsRequest) (gapQuery, error) {
	q := gapQuery{filters: req.Filters, order: req.Order}
	if len(q.order) == 0 {
		q.order = defaultGapOrder
	}
	for _, o := range q.order {
		if _, ok := gapColumn(o.Field); !ok {
			return q, fmt.Errorf("order by %s: %w", o.Field, keywords.ErrUnsupported)
		}
	}
	for f := range q.filters.Ranges {
		if _, ok := gapColumn(f); !ok || f == keywords.FieldKeyword {
			return q, fmt.Errorf("filter on %s: %w", f, keywords.ErrUnsupported)
		}
	}
	if req.After != "" {
		raw, err := base64.RawURLEncoding.DecodeString(req.After)
		var p gapPosition
		if err != nil || json.Unmarshal(raw, &p) != nil || len(p.Values) != len(q.order) {
			return q, fmt.Errorf("local: gaps: the page token does not fit this query: %w", keywords.ErrUnsupported)
		}
		q.after = &p
	}
	return q, nil
}

// token encodes the position after a row with these sort values and key.
func (p gapPosition) token() string {
	raw, _ := json.Marshal(p)
	return base64.RawURLEncoding.EncodeToString(raw)
}

// metricFiltered reports whether a filter needs the keyword's metrics row: a range on a
// metric or an intent list.
func (q gapQuery) metricFiltered() bool {
	for f := range q.filters.Ranges {
		if f != keywords.FieldCompetitorPosition {
			return true
		}
	}
	return len(q.filters.Intents) > 0
}

// ordersBy reports whether the order has a key on the field.
func (q gapQuery) ordersBy(f keywords.Field) bool {
	for _, o := range q.order {
		if o.Field == f {
			return true
		}
	}
	return false
}

// walkable reports whether the order can be followed on a keyword_metrics index: its first
// key has one, and no key needs the competitors' positions.
func (q gapQuery) walkable() bool {
	if _, ok := walkIndexes[q.order[0]]; !ok {
		return false
	}
	return !q.ordersBy(keywords.FieldCompetitorPosition)
}

// outerOrder is orderBy over the columns of a page's rows: (keyword_norm, sort values...).
func (q gapQuery) outerOrder() string {
	var parts []string
	for i, o := range q.order {
		dir := " ASC NULLS LAST"
		if o.Desc {
			dir = " DESC NULLS LAST"
		}
		if o.Field == keywords.FieldKeyword {
			parts = append(parts, "1"+strings.Replace(dir, " NULLS LAST", "", 1))
			continue
		}
		parts = append(parts, strconv.Itoa(i+2)+dir)
	}
	return strings.Join(append(parts, "1"), ", ")
}

// metricFilters is the SQL of the filters on the keyword's metrics and words (alias k and
// the key kn), "" for none. Positions are left to the caller.
func (q gapQuery) metricFilters(a *sqlArgs, kn string) string {
	var conds []string
	if r, ok := q.filters.Ranges[keywords.FieldSearchVolume]; ok {
		// The column itself against whole numbers, so that its index can serve the range.
		if r.Min != nil {
			conds = append(conds, "k.search_volume >= "+a.add(wholeVolume(math.Ceil(*r.Min)))+"::bigint")
		}
		if r.Max != nil {
			conds = append(conds, "k.search_volume <= "+a.add(wholeVolume(math.Floor(*r.Max)))+"::bigint")
		}
	}
	for _, f := range []keywords.Field{keywords.FieldDifficulty, keywords.FieldCPC} {
		r, ok := q.filters.Ranges[f]
		if !ok {
			continue
		}
		col, _ := gapColumn(f)
		conds = append(conds, rangeSQL(a.add, col, r))
	}
	if len(q.filters.Intents) > 0 {
		conds = append(conds, "k.search_intent = ANY("+a.add(q.filters.Intents)+"::text[])")
	}
	if w := q.wordFilters(a, kn); w != "" {
		conds = append(conds, w)
	}
	return strings.Join(conds, " AND ")
}

// wordFilters is the SQL of the include and exclude words on the key kn, "" for none.
func (q gapQuery) wordFilters(a *sqlArgs, kn string) string {
	var conds []string
	for _, w := range q.filters.Include {
		conds = append(conds, "position(' ' || "+a.add(w)+"::text || ' ' in ' ' || "+kn+" || ' ') > 0")
	}
	for _, w := range q.filters.Exclude {
		conds = append(conds, "position(' ' || "+a.add(w)+"::text || ' ' in ' ' || "+kn+" || ' ') = 0")
	}
	return strings.Join(conds, " AND ")
}

// wholeVolume is a whole number bound of a volume as a bigint, clamped to its range.
func wholeVolume(v float64) int64 {
	return int64(math.Max(-1, math.Min(v, 1<<62)))
}

// rangeSQL is the SQL of the range r on col, its bounds added by arg: "true" for none.
func rangeSQL(arg func(any) string, col string, r keywords.Range) string {
	var c []string
	if r.Min != nil {
		c = append(c, col+" >= "+arg(*r.Min)+"::float8")
	}
	if r.Max != nil {
		c = append(c, col+" <= "+arg(*r.Max)+"::float8")
	}
	if len(c) == 0 {
		return "true"
	}
	return strings.Join(c, " AND ")
}

// allFilters is metricFilters and the competitor-position range on g.cpos.
func (q gapQuery) allFilters(a *sqlArgs) string {
	conds := []string{"true"}
	if f := q.metricFilters(a, "g.keyword_norm"); f != "" {
		conds = append(conds, f)
	}
	if r, ok := q.filters.Ranges[keywords.FieldCompetitorPosition]; ok {
		conds = append(conds, rangeSQL(a.add, "g.cpos::float8", r))
	}
	return strings.Join(conds, " AND ")
}

// keyset is the SQL of "the row comes after q.after" in q's order, NULLs last in either
// direction and the key ascending last: "true" on the first page.
func (q gapQuery) keyset(a *sqlArgs) string {
	if q.after == nil {
		return "true"
	}
	expr := "g.keyword_norm > " + a.add(q.after.Key) + "::text"
	for i := len(q.order) - 1; i >= 0; i-- {
		o := q.order[i]
		col, _ := gapColumn(o.Field)
		v := q.after.Values[i]
		var gt, eq string
		switch {
		case o.Field == keywords.FieldKeyword:
			// The key itself: its value is the position's key.
			op := ">"
			if o.Desc {
				op = "<"
			}
			p := a.add(q.after.Key) + "::text"
			gt, eq = col+" "+op+" "+p, col+" = "+p
		case v == nil:
			gt, eq = "false", col+" IS NULL"
		default:
			op := ">"
			if o.Desc {
				op = "<"
			}
			p := a.add(*v) + "::float8"
			gt, eq = "("+col+" IS NULL OR "+col+" "+op+" "+p+")", col+" = "+p
		}
		expr = "(" + gt + " OR (" + eq + " AND " + expr + "))"
	}
	return expr
}

// orderBy is the SQL of q's order, NULLs last, the key ascending last.
func (q gapQuery) orderBy() string {
	var parts []string
	for _, o := range q.order {
		col, _ := gapColumn(o.Field)
		dir := " ASC NULLS LAST"
		if o.Desc {
			dir = " DESC NULLS LAST"
		}
		parts = append(parts, col+dir)
	}
	return strings.Join(append(parts, "g.keyword_norm"), ", ")
}

// sortValues is the SQL list of q's sort values, as float8 (the keyword's as NULL).
func (q gapQuery) sortValues() string {
	var parts []string
	for _, o := range q.order {
		col, _ := gapColumn(o.Field)
		if o.Field == keywords.FieldKeyword {
			col = "NULL::float8"
		}
		parts = append(parts, col)
	}
	return strings.Join(parts, ", ")
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
