package dashboard

import (
	"cmp"
	"encoding/json"
	"fmt"
	"html/template"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/contentapi/contentapi/internal/numfmt"
	"github.com/contentapi/contentapi/internal/report"
)

// The content map report, and the generic view of any JSON (a kind this build has no view
// for): nested objects as sections, lists of objects as sortable tables.

// mapView is a content map: its summary tiles, plan, rankings, gaps and pages.
type mapView struct {
	report.ContentMapResult
	Gaps *gapsView
}

func newMapView(r report.ContentMapResult) *mapView {
	slices.SortStableFunc(r.Recommendations, func(a, b report.MapRecommendation) int { return cmp.Compare(a.Priority, b.Priority) })
	comps := map[string]bool{}
	for _, g := range r.CompetitorGaps.Gaps {
		for c := range g.CompetitorPositions {
			comps[c] = true
		}
	}
	return &mapView{ContentMapResult: r, Gaps: newGapsView(r.Domain, slices.Collect(maps.Keys(comps)), r.CompetitorGaps.Gaps)}
}

// node is a JSON value laid out for the generic view: an object as a list of named values,
// an array of objects as a table when they share scalar fields, else as a list.
type node struct {
	Label  string
	Scalar string  // set for a string, number, boolean or null
	Fields []*node // an object's fields, in key order
	Items  []*node // an array's elements
	Table  *table  // an array of objects with scalar fields only
	More   int     // elements left out
}

type table struct {
	Columns []string
	Rows    [][]string
}

// genericMaxItems and genericMaxDepth bound the generic view of an unknown result.
const (
	genericMaxItems = 500
	genericMaxDepth = 8
)

func newNode(label string, x any, depth int) *node {
	n := &node{Label: humanize(label)}
	if depth > genericMaxDepth {
		b, _ := json.Marshal(x)
		n.Scalar = truncate(string(b), 200)
		return n
	}
	switch x := x.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			n.Fields = append(n.Fields, newNode(k, x[k], depth+1))
		}
	case []any:
		if t := asTable(x); t != nil {
			n.Table = t
			return n
		}
		for i, e := range x {
			if i == genericMaxItems {
				n.More = len(x) - i
				break
			}
			n.Items = append(n.Items, newNode("", e, depth+1))
		}
	default:
		n.Scalar = scalarText(x)
	}
	return n
}

func scalarText(x any) string {
	switch x := x.(type) {
	case nil:
		return "—"
	case string:
		return x
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(x)
}

// asTable lays out an array of objects whose fields are all scalars (or lists of scalars)
// as a table, or returns nil.
func asTable(xs []any) *table {
	if len(xs) == 0 {
		return nil
	}
	cols := map[string]bool{}
	for _, x := range xs {
		m, ok := x.(map[string]any)
		if !ok {
			return nil
		}
		for k, v := range m {
			switch v := v.(type) {
			case map[string]any:
				return nil
			case []any:
				for _, e := range v {
					switch e.(type) {
					case map[string]any, []any:
						return nil
					}
				}
			}
			cols[k] = true
		}
	}
	t := &table{}
	for k := range cols {
		t.Columns = append(t.Columns, k)
	}
	sort.Strings(t.Columns)
	for i, x := range xs {
		if i == genericMaxItems {
			break
		}
		m := x.(map[string]any)
		row := make([]string, len(t.Columns))
		for j, k := range t.Columns {
			if v, ok := m[k]; ok {
				if list, ok := v.([]any); ok {
					parts := make([]string, len(list))
					for i, e := range list {
						parts[i] = scalarText(e)
					}
					row[j] = strings.Join(parts, ", ")
				} else {
					row[j] = scalarText(v)
				}
			}
		}
		t.Rows = append(t.Rows, row)
	}
	for i, c := range t.Columns {
		t.Columns[i] = humanize(c)
	}
	return t
}

// humanize turns a JSON field name into a heading: "search_volume" → "Search volume".
func humanize(s string) string {
	if s == "" {
		return ""
	}
	s = strings.ReplaceAll(s, "_", " ")
	return strings.ToUpper(s[:1]) + s[1:]
}

func init() {
	maps.Copy(funcs, template.FuncMap{
		"sub":       func(a, b int) int { return a - b },
		"thousands": numfmt.Count,
		"fmtv":      fmtValue,
		"sortv":     sortValue,
		"money": func(x *float64) string {
			if x == nil {
				return "—"
			}
			return strconv.FormatFloat(*x, 'f', 2, 64)
		},
		"human":     humanize,
		"hasPrefix": strings.HasPrefix,
		"plural":    plural,
		"initial": func(s string) string {
			if s == "" {
				return ""
			}
			return strings.ToUpper(s[:1])
		},
		"has":      func(xs []string, x string) bool { return slices.Contains(xs, x) },
		"upper":    strings.ToUpper,
		"int64":    func(n int) int64 { return int64(n) },
		"kindname": kindName,
		"subject":  func(raw json.RawMessage) string { return subjectOf(raw) },
		"title":    humanize,
	})
}

// fmtValue writes an optional metric: "—" when unknown, integers with separators, other
// numbers with at most one decimal.
func fmtValue(x any) string {
	switch x := x.(type) {
	case *int64:
		if x != nil {
			return numfmt.Count(*x)
		}
	case *int:
		if x != nil {
			return numfmt.Count(int64(*x))
		}
	case *float64:
		if x != nil {
			return strconv.FormatFloat(math.Round(*x*10)/10, 'f', -1, 64)
		}
	case int:
		return numfmt.Count(int64(x))
	case int64:
		return numfmt.Count(x)
	case float64:
		return strconv.FormatFloat(math.Round(x*10)/10, 'f', -1, 64)
	}
	return "—"
}

// sortValue is a metric's raw value for the sortable tables' script ("" when unknown).
func sortValue(x any) string {
	switch x := x.(type) {
	case *int64:
		if x != nil {
			return strconv.FormatInt(*x, 10)
		}
	case *int:
		if x != nil {
			return strconv.Itoa(*x)
		}
	case *float64:
		if x != nil {
			return strconv.FormatFloat(*x, 'f', -1, 64)
		}
	}
	return ""
}
