package mcpserver

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/contentapi/contentapi/internal/report"
)

func contentText(r *mcp.CallToolResult, i int) string {
	if i >= len(r.Content) {
		return ""
	}
	tc, _ := r.Content[i].(*mcp.TextContent)
	if tc == nil {
		return ""
	}
	return tc.Text
}

// Each analysis's tool schema has exactly its request type's JSON fields (and
// idempotency_key), the document's required fields and descriptions, and a unique name.
func TestAnalysisSchemas(t *testing.T) {
	names := map[string]bool{}
	for _, a := range report.Catalog {
		name := ToolName(a)
		if names[name] || !strings.Contains(name, "_") {
			t.Errorf("tool name %q (from %s) repeated or malformed", name, a.Path)
		}
		names[name] = true
		s, err := inputSchema(a)
		if err != nil {
			t.Fatal(err)
		}
		props := s["properties"].(map[string]any)
		var got []string
		for k := range props {
			got = append(got, k)
		}
		slices.Sort(got)
		want := jsonFields(reflect.TypeOf(a.NewRequest()).Elem())
		want = append(want, argIdempotencyKey)
		if p, ok := a.NewRequest().(report.PagedRequest); ok {
			shape := p.Shape()
			filters := props["filters"].(map[string]any)["properties"].(map[string]any)
			if got, want := slices.Sorted(maps.Keys(filters)), slices.Sorted(slices.Values(shape.FilterKeys())); !slices.Equal(got, want) {
				t.Errorf("%s: filters %v, the endpoint takes %v", name, got, want)
			}
			if len(shape.Order) == 0 {
				want = slices.DeleteFunc(want, func(s string) bool { return s == "order_by" })
			} else {
				enum := props["order_by"].(map[string]any)["items"].(map[string]any)["enum"]
				if !reflect.DeepEqual(enum, shape.OrderValues()) {
					t.Errorf("%s: order_by %v, the endpoint sorts on %v", name, enum, shape.OrderValues())
				}
			}
		}
		if raw, _ := json.Marshal(s); strings.Contains(string(raw), `"null"`) {
			t.Errorf("%s: a type allows null: %s", name, raw)
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: properties %v, want the request's %v", name, got, want)
		}
		if s["additionalProperties"] != false {
			t.Errorf("%s: additional properties allowed", name)
		}
		if req, _ := s["required"].([]string); !slices.Contains(req, "domain") || slices.Contains(req, "country") {
			t.Errorf("%s: required %v: want domain, and not country (it has a default)", name, req)
		}
		if d, _ := props["domain"].(map[string]any)["description"].(string); d == "" {
			t.Errorf("%s: domain has no description from the OpenAPI document", name)
		}
		if r := returns(a); r == "" {
			t.Errorf("%s: no answer fields from the OpenAPI document", name)
		}
	}
}

// jsonFields lists a struct's JSON field names, embedded structs' included.
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "-" && name != "" {
			out = append(out, name)
		}
	}
	return out
}

func TestSplitArguments(t *testing.T) {
	body, key, bad := splitArguments(json.RawMessage(`{"domain":"a.example","idempotency_key":"k-1","limit":3}`))
	if bad != nil || key != "k-1" || string(body) != `{"domain":"a.example","limit":3}` {
		t.Fatalf("split: %s %q %+v", body, key, bad)
	}
	if body, _, bad := splitArguments(nil); bad != nil || string(body) != "{}" {
		t.Fatalf("no arguments: %s %+v", body, bad)
	}
	if _, _, bad := splitArguments(json.RawMessage(`[1]`)); bad == nil || !bad.IsError {
		t.Fatal("an array is not arguments")
	}
}

// An answer becomes structured content and a summary; every error shape a tool error.
func TestAnswerResult(t *testing.T) {
	ok := answerResult("keywords_research", Answer{Status: 200, Body: []byte(`{"success":true,"data":{"domain":"a.example","clusters":[1,2],"total_keywords":7},"meta":{"credits_used":5,"credits_remaining":45,"job_id":"j1","data_source":"imported"}}`)})
	if ok.IsError || ok.StructuredContent == nil {
		t.Fatalf("ok: %+v", ok)
	}
	summary := contentText(ok, 0)
	for _, s := range []string{"2 clusters", "total_keywords 7", "5 credits used, 45 remaining", "Data source: imported", "Job j1"} {
		if !strings.Contains(summary, s) {
			t.Errorf("summary %q lacks %q", summary, s)
		}
	}
	pending := answerResult("content_audit", Answer{Status: 202, Body: []byte(`{"success":true,"data":{"job_id":"j2","status":"running"}}`)})
	if pending.IsError || !strings.Contains(contentText(pending, 0), `get_job with job_id "j2"`) {
		t.Fatalf("pending: %s", contentText(pending, 0))
	}
	cases := []struct {
		ans  Answer
		code string
		text string
	}{
		{Answer{Status: 429, RetryAfter: "12", Body: []byte(`{"error":"Too Many Requests","message":"Rate limit","code":"RATE_LIMIT_EXCEEDED"}`)}, "RATE_LIMIT_EXCEEDED", "Retry after 12 seconds."},
		{Answer{Status: 400, Body: []byte(`{"success":false,"error":{"code":"VALIDATION_ERROR","message":"domain is required"}}`)}, "VALIDATION_ERROR", "domain is required"},
		{Answer{Status: 422, Body: []byte(`{"success":false,"error":{"code":"NO_DATA","message":"Nothing was charged.","job_id":"j3","credits_refunded":5}}`)}, "NO_DATA", "Nothing was charged."},
		{Answer{Status: 502, Body: []byte(`<html>`)}, "INTERNAL_ERROR", "not JSON"},
	}
	for _, c := range cases {
		r := answerResult("t", c.ans)
		e, _ := r.StructuredContent.(map[string]any)["error"].(map[string]any)
		if !r.IsError || e["code"] != c.code || !strings.HasPrefix(contentText(r, 0), c.code+": ") || !strings.Contains(contentText(r, 0), c.text) {
			t.Errorf("%d %s: %+v %q", c.ans.Status, c.ans.Body, e, contentText(r, 0))
		}
	}
}
