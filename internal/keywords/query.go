package keywords

// The query shape shared by research, gaps, a domain's rankings and competitor discovery:
// filters, an order of up to three keys and keyset paging. The API checks and normalises a
// query (package report); providers translate it (package local into SQL, package dataforseo
// into DataForSEO Labs' filters, order_by and offset_token). A provider that cannot serve a
// part of a query returns an error wrapping ErrUnsupported, never an answer that ignores it.

import "errors"

// Field names a metric a query filters or sorts on. The names are the API's field names.
type Field string

// Fields a query can filter and sort on. Not every field applies to every question: Position
// (our own position) to gaps and rankings, CompetitorPosition to gaps.
const (
	FieldKeyword            Field = "keyword"
	FieldSearchVolume       Field = "search_volume"
	FieldDifficulty         Field = "keyword_difficulty"
	FieldCPC                Field = "cpc"
	FieldOpportunity        Field = "opportunity_score"
	FieldCompetitorPosition Field = "competitor_position"
	FieldPosition           Field = "position"
	FieldTraffic            Field = "estimated_traffic"
)

// Range bounds a metric, both ends inclusive; a nil end is open. A row whose metric is
// unknown (null) never passes a range on it.
type Range struct {
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
}

// Filters narrow a question's rows; the zero value passes every row.
type Filters struct {
	// Ranges on metrics, keyed by field.
	Ranges map[Field]Range `json:"ranges,omitempty"`
	// Intents, when not empty, keeps rows whose search intent is one of these.
	Intents []string `json:"intents,omitempty"`
	// Include keeps rows whose keyword holds every one of these words; Exclude drops rows
	// whose keyword holds any of them. Words are lower case, whole words.
	Include []string `json:"include,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
}

// Empty reports whether f passes every row.
func (f Filters) Empty() bool {
	return len(f.Ranges) == 0 && len(f.Intents) == 0 && len(f.Include) == 0 && len(f.Exclude) == 0
}

// OrderKey is one key of an order; unknown (null) values sort last in either direction.
// Every order ends, implicitly, with the keyword ascending, so it is total and keyset
// paging is exact.
type OrderKey struct {
	Field Field `json:"field"`
	Desc  bool  `json:"desc,omitempty"`
}

// Page asks for up to Limit rows after the position After, an opaque token the provider
// returned as Next for the previous page of the same query ("" for the first page). The
// API wraps it in a signed cursor tied to the account and the query; providers see only
// their own tokens.
type Page struct {
	Limit int
	After string
}

// ErrUnsupported marks a query part a provider cannot answer (a filter DataForSEO has no
// equivalent for, say); the API turns it into a 400 naming the part, before any charge.
var ErrUnsupported = errors.New("not supported by the keyword data source")

// UnsupportedError is an ErrUnsupported naming the query part ("filters.opportunity_score",
// "order_by[1]") and why the provider cannot answer it.
type UnsupportedError struct {
	Part   string
	Reason string
}

func (e *UnsupportedError) Error() string {
	return e.Part + ": " + e.Reason + ": " + ErrUnsupported.Error()
}

// Is makes errors.Is(err, ErrUnsupported) true.
func (e *UnsupportedError) Is(target error) bool { return target == ErrUnsupported }
