package report

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/keywords"
)

// The query part of a keyword request body: filters, order_by, limit (up to MaxPageRows)
// and cursor. Every keyword endpoint (research, gaps, a domain's rankings, competitor
// discovery) reads it the same way: Normalize checks it against the endpoint's QueryShape
// and leaves it in one canonical form, so a stored request normalises to itself and the
// cursor's query hash (cursor.go) does not depend on how the caller spelt it.

// MaxPageRows is the largest limit a keyword endpoint takes.
const MaxPageRows = 1000

// RangeFilter bounds a metric; both ends are inclusive and at least one is given.
type RangeFilter struct {
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
}

// QueryFilters is the body's filters object. A key the endpoint does not know is refused by
// the decoder (unknown field "filters.<key>"), one it knows but does not apply by Normalize.
type QueryFilters struct {
	SearchVolume       *RangeFilter `json:"search_volume,omitempty"`
	KeywordDifficulty  *RangeFilter `json:"keyword_difficulty,omitempty"`
	CPC                *RangeFilter `json:"cpc,omitempty"`
	OpportunityScore   *RangeFilter `json:"opportunity_score,omitempty"`
	CompetitorPosition *RangeFilter `json:"competitor_position,omitempty"`
	Position           *RangeFilter `json:"position,omitempty"`
	EstimatedTraffic   *RangeFilter `json:"estimated_traffic,omitempty"`
	// Intent keeps rows whose search intent is one of these.
	Intent []string `json:"intent,omitempty"`
	// Include keeps rows whose keyword holds every one of these words; Exclude drops rows
	// whose keyword holds any of them.
	Include []string `json:"include,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
}

// ranges lists the filter's ranges by field, in the order of the API's field list.
func (f *QueryFilters) ranges() []struct {
	field keywords.Field
	r     **RangeFilter
} {
	return []struct {
		field keywords.Field
		r     **RangeFilter
	}{
		{keywords.FieldSearchVolume, &f.SearchVolume},
		{keywords.FieldDifficulty, &f.KeywordDifficulty},
		{keywords.FieldCPC, &f.CPC},
		{keywords.FieldOpportunity, &f.OpportunityScore},
		{keywords.FieldCompetitorPosition, &f.CompetitorPosition},
		{keywords.FieldPosition, &f.Position},
		{keywords.FieldTraffic, &f.EstimatedTraffic},
	}
}

// Query is the filters, order_by and cursor of a keyword request; the request keeps its own
// limit. Embedded in the request, its members are the body's.
type Query struct {
	Filters *QueryFilters `json:"filters,omitempty"`
	OrderBy []string      `json:"order_by,omitempty"`
	Cursor  string        `json:"cursor,omitempty"`
}

// QueryShape is what one endpoint's query may name.
type QueryShape struct {
	// Ranges are the fields filters may bound; Order the fields order_by may name.
	Ranges []keywords.Field
	Order  []keywords.Field
	// Why, when set, explains for a field in neither list why it does not apply.
	Why map[keywords.Field]string
}

// Intents are the values of filters.intent.
var Intents = []string{"informational", "navigational", "commercial", "transactional"}

// Bounds of a query, the same for every keyword endpoint.
const (
	MaxOrderKeys   = 3  // keys order_by may name
	MaxFilterWords = 10 // words filters.include or filters.exclude may list
	MaxWordLength  = 50 // characters of one such word
)

// wordSpaces are the characters a filter word may not hold (it is one word).
const wordSpaces = " \t\r\n\u00a0"

// PagedRequest is a request with a query and a limit: the API checks its cursor, and its
// price depends on its limit (Analysis.PageRows).
type PagedRequest interface {
	Request
	PageQuery() *Query
	PageLimit() int
	// Shape is what the endpoint's query may name: Normalize checks the query against it,
	// and the MCP tools' input schemas are generated from it.
	Shape() QueryShape
}

// normalize checks the query against the endpoint's shape and puts it in canonical form.
func (q *Query) normalize(shape QueryShape) error {
	if err := q.normalizeFilters(shape); err != nil {
		return err
	}
	if err := q.normalizeOrder(shape); err != nil {
		return err
	}
	q.Cursor = strings.TrimSpace(q.Cursor)
	if len(q.Cursor) > maxCursorLength {
		return apperr.New(apperr.InvalidCursor, "cursor is not a cursor this service issued")
	}
	return nil
}

func (q *Query) normalizeFilters(shape QueryShape) error {
	f := q.Filters
	if f == nil {
		return nil
	}
	for _, fr := range f.ranges() {
		r := *fr.r
		if r == nil {
			continue
		}
		name := "filters." + string(fr.field)
		if !slices.Contains(shape.Ranges, fr.field) {
			return notApplicable(name, shape.Why[fr.field])
		}
		switch {
		case r.Min == nil && r.Max == nil:
			return apperr.Invalid("%s must have a min or a max", name)
		case r.Min != nil && *r.Min < 0:
			return apperr.Invalid("%s.min must not be negative", name)
		case r.Max != nil && *r.Max < 0:
			return apperr.Invalid("%s.max must not be negative", name)
		case r.Min != nil && r.Max != nil && *r.Min > *r.Max:
			return apperr.Invalid("%s.min must not be greater than %s.max", name, name)
		}
	}
	var err error
	if f.Intent, err = intentList(f.Intent); err != nil {
		return err
	}
	if f.Include, err = wordList("filters.include", f.Include); err != nil {
		return err
	}
	if f.Exclude, err = wordList("filters.exclude", f.Exclude); err != nil {
		return err
	}
	for _, w := range f.Include {
		if slices.Contains(f.Exclude, w) {
			return apperr.Invalid("filters.exclude names %q, which filters.include requires: nothing could match", w)
		}
	}
	if q.Filters.Empty() {
		q.Filters = nil // {} is no filter: stored as if not sent
	}
	return nil
}

func notApplicable(name, why string) error {
	if why != "" {
		return apperr.Invalid("%s does not apply to this endpoint: %s", name, why)
	}
	return apperr.Invalid("%s does not apply to this endpoint", name)
}

// Empty reports whether the filters pass every row.
func (f *QueryFilters) Empty() bool {
	if f == nil {
		return true
	}
	for _, fr := range f.ranges() {
		if *fr.r != nil {
			return false
		}
	}
	return len(f.Intent) == 0 && len(f.Include) == 0 && len(f.Exclude) == 0
}

func intentList(list []string) ([]string, error) {
	if len(list) == 0 {
		return nil, nil
	}
	var out []string
	for i, v := range list {
		v = strings.ToLower(strings.TrimSpace(v))
		if !slices.Contains(Intents, v) {
			return nil, apperr.Invalid("filters.intent[%d] must be one of %s", i, strings.Join(Intents, ", "))
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out, nil
}

// wordList checks include or exclude: single words, lower-cased, without repeats, sorted.
func wordList(field string, list []string) ([]string, error) {
	if len(list) == 0 {
		return nil, nil
	}
	if len(list) > MaxFilterWords {
		return nil, apperr.Invalid("%s may have at most %d words", field, MaxFilterWords)
	}
	var out []string
	for i, v := range list {
		v = strings.ToLower(strings.TrimSpace(v))
		switch {
		case v == "":
			return nil, apperr.Invalid("%s[%d] must not be empty", field, i)
		case strings.ContainsFunc(v, isSpace):
			return nil, apperr.Invalid("%s[%d] must be one word (send several words as several items)", field, i)
		case utf8.RuneCountInString(v) > MaxWordLength:
			return nil, apperr.Invalid("%s[%d] must be at most %d characters", field, i, MaxWordLength)
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out, nil
}

func isSpace(r rune) bool { return strings.ContainsRune(wordSpaces, r) }

func (q *Query) normalizeOrder(shape QueryShape) error {
	if len(q.OrderBy) == 0 {
		q.OrderBy = nil
		return nil
	}
	if len(q.OrderBy) > MaxOrderKeys {
		return apperr.Invalid("order_by may have at most %d keys (the keyword breaks remaining ties)", MaxOrderKeys)
	}
	seen := map[string]bool{}
	for i, v := range q.OrderBy {
		v = strings.ToLower(strings.TrimSpace(v))
		field, dir, ok := strings.Cut(v, ".")
		name := fmt.Sprintf("order_by[%d]", i)
		if !ok || (dir != "asc" && dir != "desc") {
			return apperr.Invalid("%s must be a field and a direction, like \"search_volume.desc\" or \"keyword.asc\"", name)
		}
		if !slices.Contains(shape.Order, keywords.Field(field)) {
			if why := shape.Why[keywords.Field(field)]; why != "" {
				return apperr.Invalid("%s: %s does not apply to this endpoint: %s", name, field, why)
			}
			return apperr.Invalid("%s: %s is not a field this endpoint sorts on (one of %s)", name, clipText(field, 40), fieldNames(shape.Order))
		}
		if seen[field] {
			return apperr.Invalid("%s names %s a second time", name, field)
		}
		seen[field] = true
		q.OrderBy[i] = v
	}
	return nil
}

func fieldNames(fields []keywords.Field) string {
	s := make([]string, len(fields))
	for i, f := range fields {
		s[i] = string(f)
	}
	return strings.Join(s, ", ")
}

func clipText(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// KeywordFilters is the query's filters in the providers' form.
func (q *Query) KeywordFilters() keywords.Filters {
	var out keywords.Filters
	f := q.Filters
	if f == nil {
		return out
	}
	for _, fr := range f.ranges() {
		if r := *fr.r; r != nil {
			if out.Ranges == nil {
				out.Ranges = map[keywords.Field]keywords.Range{}
			}
			out.Ranges[fr.field] = keywords.Range{Min: r.Min, Max: r.Max}
		}
	}
	out.Intents, out.Include, out.Exclude = f.Intent, f.Include, f.Exclude
	return out
}

// KeywordOrder is the query's order in the providers' form; nil for the endpoint's default.
func (q *Query) KeywordOrder() []keywords.OrderKey {
	var out []keywords.OrderKey
	for _, v := range q.OrderBy {
		field, dir, _ := strings.Cut(v, ".")
		out = append(out, keywords.OrderKey{Field: keywords.Field(field), Desc: dir == "desc"})
	}
	return out
}

// PageQuery returns the query, for the API's cursor check.
func (q *Query) PageQuery() *Query { return q }

// The query shapes of the keyword endpoints.
var (
	// ResearchShape: research lists keywords, with no ranking behind them.
	// The opportunity score is not among its fields: it is computed from the domain's
	// positions once the ideas are read, and neither keyword data source can filter or sort
	// the ideas on it (the service's own data refuses it, DataForSEO has no such field), so
	// the request is refused when it is checked, before any job or charge.
	ResearchShape = QueryShape{
		Ranges: []keywords.Field{keywords.FieldSearchVolume, keywords.FieldDifficulty, keywords.FieldCPC},
		Order:  []keywords.Field{keywords.FieldSearchVolume, keywords.FieldDifficulty, keywords.FieldCPC, keywords.FieldKeyword},
		Why: map[keywords.Field]string{
			keywords.FieldOpportunity: "the opportunity score is computed from the domain's positions after the keywords are read, " +
				"so they cannot be filtered or sorted on it (each cluster lists its keywords by it)",
			keywords.FieldCompetitorPosition: "research lists keywords, not a competitor's rankings",
			keywords.FieldPosition:           "research lists keywords, not the domain's rankings",
			keywords.FieldTraffic:            "research lists keywords, not the domain's rankings",
		},
	}
	// GapsShape: a gap is a keyword the domain does not rank for, and its answer shows no
	// opportunity score.
	GapsShape = QueryShape{
		Ranges: []keywords.Field{keywords.FieldSearchVolume, keywords.FieldDifficulty, keywords.FieldCPC, keywords.FieldCompetitorPosition},
		Order:  []keywords.Field{keywords.FieldSearchVolume, keywords.FieldDifficulty, keywords.FieldCPC, keywords.FieldCompetitorPosition, keywords.FieldKeyword},
		Why: map[keywords.Field]string{
			keywords.FieldPosition:    "a gap is a keyword the domain does not rank for, so it has no position",
			keywords.FieldTraffic:     "a gap is a keyword the domain does not rank for, so it has no traffic",
			keywords.FieldOpportunity: "gaps carry no opportunity score (research and recommendations do)",
		},
	}
)
