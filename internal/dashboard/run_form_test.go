package dashboard

import (
	"slices"
	"strings"
	"testing"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/report"
)

// futureRequest stands for an endpoint added to the catalogue later, with fields of every
// shape; the embedded request lends it the report.Request methods.
type futureRequest struct {
	*report.ResearchRequest `json:"-"`

	Domain    string             `json:"domain"`
	MinVolume *int               `json:"min_volume,omitempty"`
	OrderBy   []string           `json:"order_by,omitempty"`
	Exact     *bool              `json:"exact,omitempty"`
	Filters   *struct{ Min int } `json:"filters,omitempty"`
	Weights   []int              `json:"weights,omitempty"`
	Cursor    string             `json:"cursor,omitempty"`
	report.Callback
}

// A request type added later gets its form from its fields: each shape an input, nested
// objects, the cursor and the callback left to the API.
func TestNewFormFromRequestType(t *testing.T) {
	a := report.Analysis{Path: "/v1/future", NewRequest: func() report.Request { return &futureRequest{} }}
	got := map[string]string{}
	var order []string
	for _, f := range newForm(a) {
		got[f.Name] = f.Input
		order = append(order, f.Name+":"+f.Label)
	}
	want := map[string]string{"domain": "text", "min_volume": "number", "order_by": "textarea", "exact": "checkbox"}
	if len(got) != len(want) {
		t.Fatalf("fields %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: input %q, want %q", k, got[k], v)
		}
	}
	if order[1] != "min_volume:Min volume" {
		t.Errorf("fields in order %v", order)
	}
}

// A keyword analysis's form offers exactly the order fields and filters its endpoint
// takes (report.ShapeOf, the shape Normalize checks against): as many sort keys as
// order_by takes, each a select of the order fields, a range per bounded metric, and no
// free text for order_by.
func TestFormOffersTheEndpointsQuery(t *testing.T) {
	for _, a := range report.Catalog {
		shape, paged := report.ShapeOf(a.Kind)
		fields := map[string]formField{}
		for _, f := range newForm(a) {
			fields[f.Name] = f
		}
		if !paged {
			if _, ok := fields["filters.intent"]; ok {
				t.Errorf("%s: filters offered to an analysis without a query", a.Kind)
			}
			continue
		}
		order, ok := fields["order_by"]
		switch {
		case len(shape.Order) == 0 && ok:
			t.Errorf("%s: order_by offered, which the endpoint refuses", a.Kind)
		case len(shape.Order) > 0 && (!ok || order.Input != "order" || len(order.Keys) != min(report.MaxOrderKeys, len(shape.Order)) || len(order.Labels) != len(order.Options) || order.Hint == ""):
			t.Errorf("%s: order_by %+v, want %d sort keys with a hint", a.Kind, order, report.MaxOrderKeys)
		}
		for i, k := range shape.Order {
			if len(order.Options) != len(shape.Order) || order.Options[i] != string(k) {
				t.Errorf("%s: order options %v, want %v", a.Kind, order.Options, shape.Order)
				break
			}
		}
		ranges := 0
		for name, f := range fields {
			if f.Input == "range" {
				ranges++
				if !slices.Contains(shape.Ranges, keywords.Field(strings.TrimPrefix(name, "filters."))) {
					t.Errorf("%s: %s offered, which the endpoint refuses", a.Kind, name)
				}
			}
		}
		if ranges != len(shape.Ranges) {
			t.Errorf("%s: %d range filters, want %d", a.Kind, ranges, len(shape.Ranges))
		}
		for _, name := range []string{"filters.intent", "filters.include", "filters.exclude"} {
			if _, ok := fields[name]; !ok {
				t.Errorf("%s: no %s", a.Kind, name)
			}
		}
	}
}
