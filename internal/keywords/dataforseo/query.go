package dataforseo

// The translation of the shared query shape (keywords.Filters, keywords.OrderKey,
// keywords.Page) into DataForSEO Labs' task fields: filters (at most 8 conditions joined by
// "and"), order_by (at most 3 rules "path,asc|desc"), limit (at most 1,000) and offset or
// offset_token. A part DataForSEO cannot express is an error wrapping
// keywords.ErrUnsupported that names the part, before any call is made.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/contentapi/contentapi/internal/keywords"
)

// MaxFilters is the most conditions DataForSEO Labs accepts in one task's filters.
const MaxFilters = 8

// MaxOrderRules is the most rules DataForSEO Labs accepts in one task's order_by.
const MaxOrderRules = 3

// endpoint describes where an endpoint's items keep the fields a query names: the prefix of
// the keyword object ("" for keyword_ideas, whose items are keyword objects, and
// "keyword_data." for the others) and, per field only some endpoints have, its path.
type endpoint struct {
	name    string
	keyword string // prefix of the keyword object in an item
	extra   map[keywords.Field]string
}

var (
	ideasEndpoint = endpoint{name: "keyword_ideas"}
	gapsEndpoint  = endpoint{name: "domain_intersection", keyword: "keyword_data.",
		extra: map[keywords.Field]string{keywords.FieldCompetitorPosition: "first_domain_serp_element.rank_group"}}
	rankingsEndpoint = endpoint{name: "ranked_keywords", keyword: "keyword_data.",
		extra: map[keywords.Field]string{keywords.FieldPosition: "ranked_serp_element.serp_item.rank_group"}}
)

// path is the DataForSEO path of a field for the endpoint, or "" when it has none:
// opportunity_score is this service's own score and estimated_traffic its own CTR curve,
// which DataForSEO does not compute.
func (e endpoint) path(f keywords.Field) string {
	switch f {
	case keywords.FieldKeyword:
		return e.keyword + "keyword"
	case keywords.FieldSearchVolume:
		return e.keyword + "keyword_info.search_volume"
	case keywords.FieldDifficulty:
		return e.keyword + "keyword_properties.keyword_difficulty"
	case keywords.FieldCPC:
		return e.keyword + "keyword_info.cpc"
	}
	return e.extra[f]
}

// unsupported is a *keywords.UnsupportedError: the message's text before the first ": " is
// the query part.
func unsupported(format string, args ...any) error {
	part, reason, _ := strings.Cut(fmt.Sprintf(format, args...), ": ")
	return &keywords.UnsupportedError{Part: part, Reason: reason}
}

// filters translates f into DataForSEO's filters array, nil when f is empty: one condition
// as a bare [field, operator, value], several joined by "and". Ranges are
// ">=" and "<=" conditions; intents one "in" condition on search_intent_info.main_intent;
// include and exclude words "match" and "not_match" conditions on the keyword (DataForSEO's
// whole-word full-text match).
func (e endpoint) filters(f keywords.Filters) ([]any, error) {
	var conds [][]any
	for _, field := range rangeOrder {
		r, ok := f.Ranges[field]
		if !ok {
			continue
		}
		p := e.path(field)
		if p == "" || field == keywords.FieldKeyword {
			return nil, unsupported("filters.%s: DataForSEO's %s has no such field", field, e.name)
		}
		if r.Min != nil {
			conds = append(conds, []any{p, ">=", *r.Min})
		}
		if r.Max != nil {
			conds = append(conds, []any{p, "<=", *r.Max})
		}
	}
	for field := range f.Ranges {
		if !knownRange[field] {
			return nil, unsupported("filters.%s: not a field DataForSEO can filter on", field)
		}
	}
	if len(f.Intents) > 0 {
		conds = append(conds, []any{e.keyword + "search_intent_info.main_intent", "in", f.Intents})
	}
	for _, w := range f.Include {
		conds = append(conds, []any{e.keyword + "keyword", "match", w})
	}
	for _, w := range f.Exclude {
		conds = append(conds, []any{e.keyword + "keyword", "not_match", w})
	}
	if len(conds) > MaxFilters {
		return nil, unsupported("filters: DataForSEO takes at most %d conditions and these need %d (each end of a range, the intent list and each include or exclude word is one)", MaxFilters, len(conds))
	}
	switch len(conds) {
	case 0:
		return nil, nil
	case 1:
		// DataForSEO documents one condition as a bare [field, operator, value].
		return conds[0], nil
	}
	out := make([]any, 0, 2*len(conds)-1)
	for i, c := range conds {
		if i > 0 {
			out = append(out, "and")
		}
		out = append(out, c)
	}
	return out, nil
}

// rangeOrder fixes the order filters are sent in, so equal queries send equal tasks.
var rangeOrder = []keywords.Field{keywords.FieldSearchVolume, keywords.FieldDifficulty, keywords.FieldCPC,
	keywords.FieldOpportunity, keywords.FieldCompetitorPosition, keywords.FieldPosition, keywords.FieldTraffic, keywords.FieldKeyword}

var knownRange = func() map[keywords.Field]bool {
	m := map[keywords.Field]bool{}
	for _, f := range rangeOrder {
		m[f] = true
	}
	return m
}()

// orderBy translates an order into order_by rules, then def when order is empty. The
// keyword ascending is added as the last rule while there is room, so equal values come in
// one order every time.
func (e endpoint) orderBy(order []keywords.OrderKey, def []string) ([]string, error) {
	if len(order) == 0 {
		return def, nil
	}
	if len(order) > MaxOrderRules {
		return nil, unsupported("order_by: DataForSEO takes at most %d keys", MaxOrderRules)
	}
	out := make([]string, 0, MaxOrderRules)
	hasKeyword := false
	for i, k := range order {
		p := e.path(k.Field)
		if p == "" {
			return nil, unsupported("order_by[%d]: DataForSEO's %s cannot sort by %s", i, e.name, k.Field)
		}
		dir := "asc"
		if k.Desc {
			dir = "desc"
		}
		hasKeyword = hasKeyword || k.Field == keywords.FieldKeyword
		out = append(out, p+","+dir)
	}
	if !hasKeyword && len(out) < MaxOrderRules {
		out = append(out, e.path(keywords.FieldKeyword)+",asc")
	}
	return out, nil
}

// Page tokens. DataForSEO's offset_token continues a query exactly (its docs: same task,
// only limit may change); where it gives none, the offset does. A token also carries the
// total the walk's first page counted, so every page of a walk answers the same total. A
// merged answer (gaps of several competitors) keeps one offset per competitor. Tokens made
// before totals were carried ("t:", "o:") are still read.
const (
	tokenPage        = "p:" // p:OFFSET:TOTAL:OFFSET_TOKEN (the offset_token may be empty)
	tokenOffsetToken = "t:" // t:OFFSET:OFFSET_TOKEN
	tokenOffset      = "o:" // o:OFFSET
	tokenOffsets     = "m:" // m:OFFSET,OFFSET…;TOTAL (one offset per competitor)
)

// at is where a page stands in a walk: the offset of its first item, the items it asks
// for, and the total the walk's first page counted (-1 when the token carries none).
type at struct{ offset, limit, total int }

// page sets limit and the continuation of after on task (limit 0 is maxLimit) and returns
// where the page stands.
func page(task map[string]any, limit int, after string) (at, error) {
	limit = limitOf(limit)
	task["limit"] = limit
	p := at{limit: limit, total: -1}
	if after == "" {
		return p, nil
	}
	kind, rest, _ := strings.Cut(after, ":")
	offset, rest, _ := strings.Cut(rest, ":")
	n, err := strconv.Atoi(offset)
	if err != nil || n < 0 {
		return at{}, badToken()
	}
	p.offset = n
	switch kind + ":" {
	case tokenPage:
		total, token, _ := strings.Cut(rest, ":")
		if p.total, err = strconv.Atoi(total); err != nil || p.total < n {
			return at{}, badToken()
		}
		if token != "" {
			task["offset_token"] = token
		} else {
			task["offset"] = n
		}
	case tokenOffsetToken:
		if rest == "" {
			return at{}, badToken()
		}
		task["offset_token"] = rest
	case tokenOffset:
		task["offset"] = n
	default:
		return at{}, badToken()
	}
	return p, nil
}

// limitOf is the items a page asks for: limit, or maxLimit for 0 and beyond it.
func limitOf(limit int) int {
	if limit <= 0 || limit > maxLimit {
		return maxLimit
	}
	return limit
}

func badToken() error {
	return &keywords.ProviderError{Provider: Name, Code: 40501, Message: "the page token is not one this provider made", Permanent: true}
}

// pageResult is the part of a Labs result that says where the answer stands.
type pageResult struct {
	TotalCount  int    `json:"total_count"`
	OffsetToken string `json:"offset_token"`
}

// walk reads the answer r to the page p, of which used items of the returned ones were
// used: the walk's total and the token of the next page ("" when none is left).
//
// The total is the first page's total_count, carried by the tokens, so every page of a walk
// says the same. total_count may count more items than DataForSEO returns: a page holding
// fewer items than it asked for is where the items end, so it is the last page and its
// total is the items reached. A page past the end (an old token) comes back empty, without
// a next page. DataForSEO's offset_token continues after every item it returned; when fewer
// were used, the offset does.
func (p at) walk(r pageResult, used, returned int) (total int, next string) {
	total = r.TotalCount
	if p.total >= 0 {
		total = p.total
	}
	if returned < p.limit {
		total = p.offset + returned
	}
	end := p.offset + used
	if used == 0 || end >= total {
		return total, ""
	}
	token := ""
	if r.OffsetToken != "" && used == returned {
		token = r.OffsetToken
	}
	return total, tokenPage + strconv.Itoa(end) + ":" + strconv.Itoa(total) + ":" + token
}

// offsets reads a merged answer's token: one offset per competitor, in request order, and
// the total of the walk's first page (-1 when the token carries none).
func offsets(after string, n int) ([]int, int, error) {
	out := make([]int, n)
	if after == "" {
		return out, -1, nil
	}
	list, total, carried := strings.Cut(strings.TrimPrefix(after, tokenOffsets), ";")
	parts := strings.Split(list, ",")
	if !strings.HasPrefix(after, tokenOffsets) || len(parts) != n {
		return nil, 0, badToken()
	}
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return nil, 0, badToken()
		}
		out[i] = v
	}
	t := -1
	if carried {
		var err error
		if t, err = strconv.Atoi(total); err != nil || t < 0 {
			return nil, 0, badToken()
		}
	}
	return out, t, nil
}

// offsetsToken is the token "m:OFFSET,OFFSET…;TOTAL".
func offsetsToken(offs []int, total int) string {
	parts := make([]string, len(offs))
	for i, o := range offs {
		parts[i] = strconv.Itoa(o)
	}
	return tokenOffsets + strings.Join(parts, ",") + ";" + strconv.Itoa(total)
}
