package dashboard

import (
	"testing"

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
