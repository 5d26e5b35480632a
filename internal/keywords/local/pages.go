package local

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/contentapi/contentapi/internal/keywords"
)

// The SQL of a query's filters, order and keyset page, for the questions whose rows this
// provider lists one by one (a domain's rankings). Each question names the SQL expression of
// every field it can filter or sort on (columns); a filter or order key on a field it has not
// named is an error wrapping keywords.ErrUnsupported.
//
// Order: each key's value is read as double precision with an unknown (null) value replaced
// by +∞ (ascending) or -∞ (descending), so that unknowns sort last either way and every
// value compares; the keyword (its normalised text) ends every order, so it is total. A page
// token is the last row's values of these keys: the next page holds the rows after it in
// that order (a keyset condition written out key by key), whatever the directions.

// columns maps the fields a question filters and sorts on to SQL expressions.
type columns struct {
	fields map[keywords.Field]string
	// intent and words are the expressions of the search intent and of the keyword's
	// normalised text (space-separated words); key is the unique row key ending every order.
	intent, words, key string
}

// sqlQuery collects a statement's arguments and conditions.
type sqlQuery struct {
	args  []any
	where []string
}

// arg adds an argument and returns its placeholder.
func (q *sqlQuery) arg(v any) string { return placeholder(&q.args, v) }

// filters adds the conditions of f.
func (q *sqlQuery) filters(f keywords.Filters, cols columns) error {
	for _, field := range sortedFields(f.Ranges) {
		r := f.Ranges[field]
		col, ok := cols.fields[field]
		if !ok || field == keywords.FieldKeyword {
			return fmt.Errorf("filters.%s: %w", field, keywords.ErrUnsupported)
		}
		q.where = append(q.where, rangeSQL(q.arg, "("+col+")", r))
	}
	if len(f.Intents) > 0 {
		q.where = append(q.where, fmt.Sprintf("%s = ANY(%s::text[])", cols.intent, q.arg(f.Intents)))
	}
	if len(f.Include) > 0 {
		q.where = append(q.where, fmt.Sprintf("string_to_array(%s, ' ') @> %s::text[]", cols.words, q.arg(lower(f.Include))))
	}
	if len(f.Exclude) > 0 {
		q.where = append(q.where, fmt.Sprintf("NOT (string_to_array(%s, ' ') && %s::text[])", cols.words, q.arg(lower(f.Exclude))))
	}
	return nil
}

func lower(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = strings.ToLower(w)
	}
	return out
}

// sortedFields returns the fields of a filter's ranges in a fixed order, so one query is
// always the same statement.
func sortedFields(m map[keywords.Field]keywords.Range) []keywords.Field {
	out := make([]keywords.Field, 0, len(m))
	for f := range m {
		out = append(out, f)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// sortKey is one key of an order in SQL: its expression and direction; text keys are the
// row key's kind (the keyword), numeric ones double precision.
type sortKey struct {
	expr string
	desc bool
	text bool
}

// order returns the SQL keys of an order: the given keys, then the row key ascending.
func (cols columns) order(keys []keywords.OrderKey) ([]sortKey, error) {
	var out []sortKey
	for i, k := range keys {
		if k.Field == keywords.FieldKeyword {
			out = append(out, sortKey{expr: cols.key, desc: k.Desc, text: true})
			continue
		}
		col, ok := cols.fields[k.Field]
		if !ok {
			return nil, fmt.Errorf("order_by[%d] %s: %w", i, k.Field, keywords.ErrUnsupported)
		}
		unknown := "'Infinity'"
		if k.Desc {
			unknown = "'-Infinity'"
		}
		out = append(out, sortKey{expr: fmt.Sprintf("coalesce((%s)::float8, %s)", col, unknown), desc: k.Desc})
	}
	return append(out, sortKey{expr: cols.key, text: true}), nil
}

// orderBy is the ORDER BY list of the keys.
func orderBy(keys []sortKey) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k.expr
		if k.desc {
			parts[i] += " DESC"
		}
	}
	return strings.Join(parts, ", ")
}

// selectKeys is the keys as a select list, for reading the last row's values.
func selectKeys(keys []sortKey) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k.expr
	}
	return strings.Join(parts, ", ")
}

// after adds the keyset condition of a page token: the rows after the token's values in the
// keys' order.
func (q *sqlQuery) after(keys []sortKey, token string) error {
	if token == "" {
		return nil
	}
	vals, err := decodeToken(keys, token)
	if err != nil {
		return err
	}
	ph := make([]string, len(keys))
	for i, k := range keys {
		if k.text {
			ph[i] = q.arg(vals[i].(string))
		} else {
			ph[i] = q.arg(vals[i].(float64)) + "::float8"
		}
	}
	var or []string
	for i, k := range keys {
		var and []string
		for j := 0; j < i; j++ {
			and = append(and, fmt.Sprintf("%s = %s", keys[j].expr, ph[j]))
		}
		op := ">"
		if k.desc {
			op = "<"
		}
		and = append(and, fmt.Sprintf("%s %s %s", k.expr, op, ph[i]))
		or = append(or, "("+strings.Join(and, " AND ")+")")
	}
	q.where = append(q.where, "("+strings.Join(or, " OR ")+")")
	return nil
}

// ErrBadToken is a page token that does not continue the query it came with (the API's
// signed cursor makes that a tampered or foreign token): a part of the query this provider
// cannot answer.
var ErrBadToken = fmt.Errorf("local: the page token does not continue this query: %w", keywords.ErrUnsupported)

// pageToken is a page token: the last row's key values (numbers in Go's shortest exact
// form, ±Inf included; texts as they are) and the counts the first page made, which later
// pages repeat rather than count again.
type pageToken struct {
	Values []string `json:"v"`
	Counts []int    `json:"c,omitempty"`
}

// encodeToken writes a page token.
func encodeToken(vals []any, counts []int) string {
	t := pageToken{Values: make([]string, len(vals)), Counts: counts}
	for i, v := range vals {
		switch v := v.(type) {
		case float64:
			t.Values[i] = strconv.FormatFloat(v, 'g', -1, 64)
		case string:
			t.Values[i] = v
		}
	}
	b, _ := json.Marshal(t) // strings and numbers only: cannot fail
	return base64.RawURLEncoding.EncodeToString(b)
}

// tokenCounts returns the counts a page token carries (nil without a token).
func tokenCounts(token string, n int) ([]int, error) {
	if token == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(token)
	var t pageToken
	if err != nil || json.Unmarshal(b, &t) != nil || len(t.Counts) != n {
		return nil, ErrBadToken
	}
	return t.Counts, nil
}

func decodeToken(keys []sortKey, token string) ([]any, error) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	var t pageToken
	if err != nil || json.Unmarshal(b, &t) != nil || len(t.Values) != len(keys) {
		return nil, ErrBadToken
	}
	s := t.Values
	out := make([]any, len(keys))
	for i, k := range keys {
		if k.text {
			out[i] = s[i]
			continue
		}
		f, err := strconv.ParseFloat(s[i], 64)
		if err != nil {
			return nil, ErrBadToken
		}
		out[i] = f
	}
	return out, nil
}

// scanKeys makes the scan targets of the keys' values.
func scanKeys(keys []sortKey) ([]any, func() []any) {
	targets := make([]any, len(keys))
	floats := make([]float64, len(keys))
	texts := make([]string, len(keys))
	for i, k := range keys {
		if k.text {
			targets[i] = &texts[i]
		} else {
			targets[i] = &floats[i]
		}
	}
	return targets, func() []any {
		out := make([]any, len(keys))
		for i, k := range keys {
			if k.text {
				out[i] = texts[i]
			} else {
				out[i] = floats[i]
			}
		}
		return out
	}
}

// whereSQL is the conditions joined with AND, or "true".
func (q *sqlQuery) whereSQL() string {
	if len(q.where) == 0 {
		return "true"
	}
	return strings.Join(q.where, " AND ")
}
