package openapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/contentapi/contentapi/internal/report"
)

func TestServersNameTheDeployment(t *testing.T) {
	var d struct {
		Servers []struct{ URL string } `json:"servers"`
	}
	if err := json.Unmarshal(JSON("https://api.example.com/base/"), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Servers) != 1 || d.Servers[0].URL != "https://api.example.com/base" {
		t.Fatalf("servers %v", d.Servers)
	}
	if !json.Valid(JSON("")) || Version() == "" {
		t.Fatal("document or version missing")
	}
	if v := doc(t)["openapi"]; v != "3.1.0" {
		t.Fatalf("openapi %v", v)
	}
}

// Every operation has an id, a tag, its credit cost (extension and text), and every response
// documents X-Request-ID. Analysis costs are report.Catalog'; everything else is free.
func TestOperationsAndCosts(t *testing.T) {
	d := doc(t)
	costs, renderCosts, pageRows := map[string]int{}, map[string]int{}, map[string]int{}
	itemBlocks := map[string][2]int{}
	for _, s := range report.Catalog {
		costs[s.Method+" "+s.Path] = s.Cost
		renderCosts[s.Method+" "+s.Path] = s.RenderCost
		pageRows[s.Method+" "+s.Path] = s.PageRows
		itemBlocks[s.Method+" "+s.Path] = [2]int{s.ItemBlock, s.ItemCost}
	}
	n := 0
	for path, item := range d["paths"].(map[string]any) {
		for method, o := range item.(map[string]any) {
			o := o.(map[string]any)
			name := strings.ToUpper(method) + " " + path
			n++
			if o["operationId"] == nil || len(o["tags"].([]any)) == 0 {
				t.Errorf("%s: operationId or tags missing", name)
			}
			cost, ok := o["x-credit-cost"].(float64)
			if !ok {
				t.Errorf("%s: no x-credit-cost", name)
				continue
			}
			if int(cost) != costs[name] {
				t.Errorf("%s: x-credit-cost %v, the service charges %d", name, cost, costs[name])
			}
			if block, _ := o["x-credit-item-block"].(float64); int(block) != itemBlocks[name][0] {
				t.Errorf("%s: x-credit-item-block %v, the service prices blocks of %d items", name, block, itemBlocks[name][0])
			}
			if price, _ := o["x-credit-item-cost"].(float64); int(price) != itemBlocks[name][1] {
				t.Errorf("%s: x-credit-item-cost %v, the service charges %d a block of items", name, price, itemBlocks[name][1])
			}
			if rows, _ := o["x-credit-page-rows"].(float64); int(rows) != pageRows[name] {
				t.Errorf("%s: x-credit-page-rows %v, the service prices pages of %d rows", name, rows, pageRows[name])
			}
			if render, _ := o["x-credit-cost-render"].(float64); int(render) != renderCosts[name] {
				t.Errorf("%s: x-credit-cost-render %v, the service charges %d for a rendered request", name, render, renderCosts[name])
			} else if render > 0 && !strings.Contains(o["description"].(string), fmt.Sprintf("With `\"render\": \"javascript\"`: %d.", int(render))) {
				t.Errorf("%s: description does not state the rendered price %v", name, render)
			}
			if want := fmt.Sprintf("**Credits: %d.**", int(cost)); !strings.Contains(o["description"].(string), want) {
				t.Errorf("%s: description does not say %s", name, want)
			}
			for status, r := range o["responses"].(map[string]any) {
				r := resolve(d, r.(map[string]any))
				h, _ := r["headers"].(map[string]any)
				if h["X-Request-ID"] == nil {
					t.Errorf("%s %s: X-Request-ID not documented", name, status)
				}
			}
		}
	}
	if n < 20 {
		t.Fatalf("only %d operations", n)
	}
	for route := range costs {
		method, path, _ := strings.Cut(route, " ")
		if op(d, path, strings.ToLower(method)) == nil {
			t.Errorf("%s is not documented", route)
		}
	}
}

// The request schemas state the ranges, lengths, enums and defaults that the service's
// validation (report's Normalize) applies: each bound is accepted and one past it refused.
func TestRequestSchemasMatchValidation(t *testing.T) {
	d := doc(t)
	schemas := d["components"].(map[string]any)["schemas"].(map[string]any)
	if got := enumOf(schemas["Country"]); !reflect.DeepEqual(got, report.Countries) {
		t.Errorf("Country enum %v, service %v", got, report.Countries)
	}
	if got := enumOf(schemas["Language"]); !reflect.DeepEqual(got, report.Languages) {
		t.Errorf("Language enum %v, service %v", got, report.Languages)
	}
	for _, spec := range report.Catalog {
		body := resolve(d, op(d, spec.Path, strings.ToLower(spec.Method))["requestBody"].(map[string]any))
		schema := resolve(d, body["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any))
		base := map[string]any{"domain": "example.com"}
		if spec.Kind == report.KindGaps {
			base["competitors"] = []any{"rival.example.org"}
		}
		if err := normalize(spec, base); err != nil {
			t.Fatalf("%s: the minimal request is refused: %v", spec.Path, err)
		}
		required := map[string]bool{}
		for _, r := range schema["required"].([]any) {
			required[r.(string)] = true
		}
		for _, r := range []string{"domain", "competitors"} {
			if _, ok := base[r]; ok != required[r] {
				t.Errorf("%s: %s required %v in the document, %v in the service", spec.Path, r, required[r], ok)
			}
		}
		for name, p := range schema["properties"].(map[string]any) {
			p := flatten(d, p.(map[string]any))
			check := func(what string, v any, ok bool) {
				t.Helper()
				req := clone(base)
				req[name] = v
				err := normalize(spec, req)
				if ok && err != nil {
					t.Errorf("%s: %s %s: refused: %v", spec.Path, name, what, err)
				}
				if !ok && err == nil {
					t.Errorf("%s: %s %s: accepted", spec.Path, name, what)
				}
			}
			if lo, ok := p["minimum"].(float64); ok {
				check("at minimum", int(lo), true)
				check("below minimum", int(lo)-1, false)
			}
			if hi, ok := p["maximum"].(float64); ok {
				check("at maximum", int(hi), true)
				check("above maximum", int(hi)+1, false)
			}
			if n, ok := p["maxLength"].(float64); ok && p["format"] == nil && name != "domain" {
				check("at maxLength", strings.Repeat("a", int(n)), true)
				check("over maxLength", strings.Repeat("a", int(n)+1), false)
			}
			if n, ok := p["maxItems"].(float64); ok {
				item := func(i int) any { return fmt.Sprintf("topic %d", i) }
				switch name {
				case "competitors":
					item = func(i int) any { return fmt.Sprintf("rival%d.example.org", i) }
				case "order_by":
					item = func(i int) any {
						return []string{"search_volume.desc", "keyword_difficulty.asc", "cpc.desc", "keyword.asc"}[i]
					}
				}
				list := func(k int) []any {
					out := make([]any, k)
					for i := range out {
						out[i] = item(i)
					}
					return out
				}
				check("at maxItems", list(int(n)), true)
				check("over maxItems", list(int(n)+1), false)
			}
			if enum := enumOf(p); enum != nil {
				for _, v := range enum {
					check("= "+v, v, true)
				}
				check("not in enum", "zz", false)
			}
			if def, ok := p["default"]; ok {
				got := normalized(t, spec, base)[name]
				if fmt.Sprint(got) != fmt.Sprint(def) {
					t.Errorf("%s: %s default %v in the document, %v in the service", spec.Path, name, def, got)
				}
			}
		}
	}
}

// Every request example is accepted by the service's validation. (That every example
// matches its schema is openapitest's TestExamplesAreValid.)
func TestRequestExamplesAreAccepted(t *testing.T) {
	d := doc(t)
	n := 0
	for _, spec := range report.Catalog {
		body := resolve(d, op(d, spec.Path, strings.ToLower(spec.Method))["requestBody"].(map[string]any))
		ex, ok := body["content"].(map[string]any)["application/json"].(map[string]any)["example"].(map[string]any)
		if !ok {
			continue
		}
		n++
		if err := normalize(spec, ex); err != nil {
			t.Errorf("%s request example refused by the service: %v", spec.Path, err)
		}
	}
	if n == 0 {
		t.Fatal("no request example checked")
	}
}

func TestDocsAssets(t *testing.T) {
	a, ok := DocsAsset("redoc.standalone.js")
	if !ok || a.Gzip == nil || len(a.Gzip) >= len(a.Body) || !strings.HasPrefix(a.ContentType, "application/javascript") {
		t.Fatalf("redoc asset %v", ok)
	}
	if _, ok := DocsAsset("index.html"); ok {
		t.Fatal("the page template is served as an asset")
	}
	if _, ok := DocsAsset("../openapi.yaml"); ok {
		t.Fatal("a path outside docs/ is served")
	}
	page := string(DocsPage("/api/").Body)
	if !strings.Contains(page, `spec-url="/api/v1/openapi.json"`) || !strings.Contains(page, `src="/api/docs/redoc.standalone.js"`) {
		t.Fatalf("page %s", page)
	}
	if regexp.MustCompile(`(?i)(src|href)="(https?:)?//`).MatchString(page) {
		t.Fatal("the page references another host")
	}
	for _, c := range []struct {
		header string
		want   bool
	}{{"gzip", true}, {"br, gzip;q=0.5", true}, {"gzip;q=0", false}, {"identity", false}, {"", false}, {"GZIP", true}} {
		if AcceptsGzip(c.header) != c.want {
			t.Errorf("AcceptsGzip(%q) != %v", c.header, c.want)
		}
	}
	if !NotModified(`W/"x", "y"`, `"y"`) || NotModified(`"x"`, `"y"`) {
		t.Fatal("NotModified")
	}
}

// --- helpers over the document as plain JSON ---

func doc(t *testing.T) map[string]any {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal(JSON(""), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func op(d map[string]any, path, method string) map[string]any {
	item, _ := d["paths"].(map[string]any)[path].(map[string]any)
	o, _ := item[method].(map[string]any)
	return o
}

// resolve follows a local $ref.
func resolve(d map[string]any, v map[string]any) map[string]any {
	for i := 0; i < 10; i++ {
		ref, ok := v["$ref"].(string)
		if !ok {
			return v
		}
		var cur any = d
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			cur = cur.(map[string]any)[part]
		}
		v = cur.(map[string]any)
	}
	return v
}

// flatten merges a property schema with its $ref and allOf members (outer keywords win).
func flatten(d map[string]any, p map[string]any) map[string]any {
	out := map[string]any{}
	parts := []map[string]any{resolve(d, p)}
	if all, ok := p["allOf"].([]any); ok {
		for _, a := range all {
			parts = append(parts, flatten(d, a.(map[string]any)))
		}
	}
	for i := len(parts) - 1; i >= 0; i-- {
		for k, v := range parts[i] {
			out[k] = v
		}
	}
	for k, v := range p {
		if k != "$ref" && k != "allOf" {
			out[k] = v
		}
	}
	return out
}

func enumOf(v any) []string {
	m, _ := v.(map[string]any)
	list, ok := m["enum"].([]any)
	if !ok {
		return nil
	}
	out := make([]string, len(list))
	for i, e := range list {
		out[i] = fmt.Sprint(e)
	}
	return out
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// normalize runs the service's validation of an analysis request given as JSON.
func normalize(spec report.Analysis, body map[string]any) error {
	raw, _ := json.Marshal(body)
	req := spec.NewRequest()
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(req); err != nil {
		return err
	}
	return req.Normalize(report.Options{})
}

func normalized(t *testing.T, spec report.Analysis, body map[string]any) map[string]any {
	t.Helper()
	req := spec.NewRequest()
	raw, _ := json.Marshal(body)
	if err := json.Unmarshal(raw, req); err != nil {
		t.Fatal(err)
	}
	if err := req.Normalize(report.Options{}); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	raw, _ = json.Marshal(req)
	_ = json.Unmarshal(raw, &out)
	for k, v := range out {
		if f, ok := v.(float64); ok {
			out[k] = strconv.Itoa(int(f))
		}
	}
	return out
}

// Each keyword endpoint documents exactly the filter keys and order_by fields its
// validation takes (report.QueryShape); an endpoint that sorts on nothing documents no
// order_by.
func TestQueryShapesDocumented(t *testing.T) {
	d := doc(t)
	field := regexp.MustCompile(`^\^\(([a-z_|]+)\)\\\.\(asc\|desc\)\$$`)
	for _, spec := range report.Catalog {
		paged, ok := spec.NewRequest().(report.PagedRequest)
		if !ok {
			continue
		}
		shape := paged.Shape()
		body := resolve(d, op(d, spec.Path, strings.ToLower(spec.Method))["requestBody"].(map[string]any))
		props := resolve(d, body["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any))["properties"].(map[string]any)
		filters := resolve(d, props["filters"].(map[string]any))["properties"].(map[string]any)
		var keys []string
		for k := range filters {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if want := slices.Sorted(slices.Values(shape.FilterKeys())); !slices.Equal(keys, want) {
			t.Errorf("%s: filters %v documented, the endpoint takes %v", spec.Path, keys, want)
		}
		order, documented := props["order_by"].(map[string]any)
		if len(shape.Order) == 0 {
			if documented {
				t.Errorf("%s: order_by documented, the endpoint refuses every order", spec.Path)
			}
			continue
		}
		items := resolve(d, resolve(d, order)["items"].(map[string]any))
		m := field.FindStringSubmatch(items["pattern"].(string))
		if m == nil {
			t.Errorf("%s: order_by pattern %q", spec.Path, items["pattern"])
			continue
		}
		got := strings.Split(m[1], "|")
		slices.Sort(got)
		var want []string
		for _, f := range shape.Order {
			want = append(want, string(f))
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: order_by fields %v documented, the endpoint sorts on %v", spec.Path, got, want)
		}
	}
}

// schemaKeywords are the keys a schema object of the document may have; any other is a
// mistake such as an unquoted description holding ": ", which YAML reads as a second key.
var schemaKeywords = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`$ref $defs $schema $id $comment type format title description default examples example
		enum const minimum maximum exclusiveMinimum exclusiveMaximum multipleOf minLength maxLength pattern
		items prefixItems minItems maxItems uniqueItems contains properties required additionalProperties
		patternProperties propertyNames minProperties maxProperties allOf anyOf oneOf not if then else
		readOnly writeOnly deprecated discriminator contentMediaType contentEncoding dependentRequired`) {
		schemaKeywords[k] = true
	}
}

// Every schema of the document has only schema keywords (or x- extensions), and every
// number states its format, double (so generators do not make it a float32).
func TestSchemaKeys(t *testing.T) {
	var walk func(path string, s map[string]any)
	walk = func(path string, s map[string]any) {
		for k, v := range s {
			if !schemaKeywords[k] && !strings.HasPrefix(k, "x-") {
				t.Errorf("%s: unexpected key %q", path, k)
			}
			switch k {
			case "properties", "patternProperties", "$defs":
				for n, p := range v.(map[string]any) {
					if m, ok := p.(map[string]any); ok {
						walk(path+"/"+k+"/"+n, m)
					}
				}
			case "items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames":
				if m, ok := v.(map[string]any); ok {
					walk(path+"/"+k, m)
				}
			case "allOf", "anyOf", "oneOf", "prefixItems":
				for i, p := range v.([]any) {
					walk(fmt.Sprintf("%s/%s/%d", path, k, i), p.(map[string]any))
				}
			}
		}
		types, _ := s["type"].([]any)
		if s["type"] == "number" || slices.Contains(types, any("number")) {
			if s["format"] != "double" {
				t.Errorf("%s: a number without format: double", path)
			}
		}
	}
	var find func(path string, v any)
	find = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if m, ok := e.(map[string]any); ok && (k == "schema" || strings.HasSuffix(path, "/components/schemas")) {
					walk(path+"/"+k, m)
					continue
				}
				find(path+"/"+k, e)
			}
		case []any:
			for i, e := range x {
				find(fmt.Sprintf("%s/%d", path, i), e)
			}
		}
	}
	find("#", doc(t))
}
