package openapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/contentapi/contentapi/internal/report"
)

func TestDocumentIsValidOpenAPI31(t *testing.T) {
	if err := ValidateDocument(); err != nil {
		t.Fatal(err)
	}
	var d struct {
		OpenAPI string `json:"openapi"`
	}
	if err := json.Unmarshal(JSON(""), &d); err != nil || d.OpenAPI != "3.1.0" {
		t.Fatalf("openapi %q %v", d.OpenAPI, err)
	}
}

// The validator is real: a document that breaks the OpenAPI schema is refused.
func TestValidatorRefusesBrokenDocuments(t *testing.T) {
	for name, mutate := range map[string]func(map[string]any){
		"response without description": func(d map[string]any) {
			op(d, "/v1/usage", "get")["responses"].(map[string]any)["200"].(map[string]any)["description"] = nil
			delete(op(d, "/v1/usage", "get")["responses"].(map[string]any)["200"].(map[string]any), "description")
		},
		"parameter without in": func(d map[string]any) {
			delete(op(d, "/v1/keys/{id}", "delete")["parameters"].([]any)[0].(map[string]any), "in")
		},
		"info without title": func(d map[string]any) { delete(d["info"].(map[string]any), "title") },
	} {
		var d map[string]any
		if err := json.Unmarshal(JSON(""), &d); err != nil {
			t.Fatal(err)
		}
		mutate(d)
		spec, _ := json.Marshal(d)
		if err := validateSpec(spec); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

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
}

// Every operation has an id, a tag, its credit cost (extension and text), and every response
// documents X-Request-ID. Analysis costs are report.Specs'; everything else is free.
func TestOperationsAndCosts(t *testing.T) {
	d := doc(t)
	costs := map[string]int{}
	for _, s := range report.Specs {
		costs["POST "+s.Endpoint] = s.Cost
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
	for _, spec := range report.Specs {
		body := resolve(d, op(d, spec.Endpoint, "post")["requestBody"].(map[string]any))
		schema := resolve(d, body["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any))
		base := map[string]any{"domain": "example.com"}
		if spec.Kind == report.KindGaps {
			base["competitors"] = []any{"rival.example.org"}
		}
		if err := normalize(spec, base); err != nil {
			t.Fatalf("%s: the minimal request is refused: %v", spec.Endpoint, err)
		}
		required := map[string]bool{}
		for _, r := range schema["required"].([]any) {
			required[r.(string)] = true
		}
		for _, r := range []string{"domain", "competitors"} {
			if _, ok := base[r]; ok != required[r] {
				t.Errorf("%s: %s required %v in the document, %v in the service", spec.Endpoint, r, required[r], ok)
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
					t.Errorf("%s: %s %s: refused: %v", spec.Endpoint, name, what, err)
				}
				if !ok && err == nil {
					t.Errorf("%s: %s %s: accepted", spec.Endpoint, name, what)
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
				if name == "competitors" {
					item = func(i int) any { return fmt.Sprintf("rival%d.example.org", i) }
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
					t.Errorf("%s: %s default %v in the document, %v in the service", spec.Endpoint, name, def, got)
				}
			}
		}
	}
}

// Every example in the document is valid against its schema, and request examples are
// accepted by the service's validation.
func TestExamplesAreValid(t *testing.T) {
	c, err := load()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for path, item := range c.model.Paths.PathItems.FromOldest() {
		for method, o := range item.GetOperations().FromOldest() {
			if o.RequestBody != nil {
				for ctype, mt := range o.RequestBody.Content.FromOldest() {
					if mt.Example == nil || ctype != "application/json" {
						continue
					}
					var v any
					if err := mt.Example.Decode(&v); err != nil {
						t.Fatal(err)
					}
					raw, _ := json.Marshal(v)
					n++
					if ok, errs := c.schemas.ValidateSchemaBytes(mt.Schema.Schema(), raw); !ok {
						t.Errorf("%s %s request example: %v", method, path, describe("example is not valid", errs))
					}
					for _, s := range report.Specs {
						if s.Endpoint == path {
							if err := normalize(s, v.(map[string]any)); err != nil {
								t.Errorf("%s request example refused by the service: %v", path, err)
							}
						}
					}
				}
			}
			for status, r := range o.Responses.Codes.FromOldest() {
				if r.Content == nil {
					continue
				}
				for ctype, mt := range r.Content.FromOldest() {
					if mt.Example == nil || ctype != "application/json" {
						continue
					}
					var v any
					if err := mt.Example.Decode(&v); err != nil {
						t.Fatal(err)
					}
					raw, _ := json.Marshal(v)
					n++
					if ok, errs := c.schemas.ValidateSchemaBytes(mt.Schema.Schema(), raw); !ok {
						t.Errorf("%s %s %s example: %v", method, path, status, describe("example is not valid", errs))
					}
				}
			}
		}
	}
	if n < 10 {
		t.Fatalf("only %d examples checked", n)
	}
}

func TestValidateResponse(t *testing.T) {
	h := func(kv ...string) http.Header {
		out := http.Header{"Content-Type": {"application/json"}}
		for i := 0; i+1 < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	rate := []string{"X-Request-ID", "r1", "X-RateLimit-Limit", "10", "X-RateLimit-Remaining", "9", "X-RateLimit-Reset", "0"}
	usage := `{"success":true,"data":{"plan":"free","credits_used":0,"credits_limit":50,"credits_remaining":50,"rate_limit":10,"recent_calls":[],"upgrade_url":"https://dash.example/billing"}}`
	gaps := `{"success":true,"data":{"domain":"a.example","competitors":["b.example"],"gaps":[{"keyword":"k","search_volume":null,"keyword_difficulty":12.5,"competitor_positions":{"b.example":3}}],"total_gaps":1,"source":"local"},"meta":{"credits_used":10,"credits_remaining":40,"request_id":"r1","job_id":"0b8f3c52-8d7e-4d0a-a1f9-3e6c2b5d4a17","status":"succeeded"}}`
	cases := []struct {
		name           string
		method, path   string
		status         int
		header         http.Header
		body           string
		ok             bool
		wantUndocument bool
	}{
		{"usage", "GET", "/v1/usage", 200, h(rate...), usage, true, false},
		{"usage with a query", "GET", "/v1/usage?x=1", 200, h(rate...), usage, true, false},
		{"usage without rate headers", "GET", "/v1/usage", 200, h("X-Request-ID", "r1"), usage, false, false},
		{"usage with an extra field", "GET", "/v1/usage", 200, h(rate...), strings.Replace(usage, `"plan"`, `"surprise":1,"plan"`, 1), false, false},
		{"usage with a wrong type", "GET", "/v1/usage", 200, h(rate...), strings.Replace(usage, `"credits_used":0`, `"credits_used":"0"`, 1), false, false},
		{"usage with an undocumented header", "GET", "/v1/usage", 200, h(append(rate, "X-Surprise", "1")...), usage, false, false},
		{"undocumented status", "GET", "/v1/usage", 418, h(rate...), `{}`, false, false},
		{"gaps with nulls and a map", "POST", "/v1/keywords/gaps", 200, h(rate...), gaps, true, false},
		{"gaps with a string position", "POST", "/v1/keywords/gaps", 200, h(rate...), strings.Replace(gaps, `:3}`, `:"3"}`, 1), false, false},
		{"job by template", "GET", "/v1/jobs/{id}", 200, h(rate...), gaps, true, false},
		{"auth error", "GET", "/v1/usage", 401, h("X-Request-ID", "r1"), `{"error":"Unauthorized","message":"m","code":"INVALID_API_KEY"}`, true, false},
		{"auth error in the validation shape", "GET", "/v1/usage", 401, h("X-Request-ID", "r1"), `{"success":false,"error":{"code":"INVALID_API_KEY","message":"m"}}`, false, false},
		{"auth error with another code", "GET", "/v1/usage", 401, h("X-Request-ID", "r1"), `{"error":"Unauthorized","message":"m","code":"EXPIRED_API_KEY"}`, false, false},
		{"429 without Retry-After", "GET", "/v1/usage", 429, h(rate...), `{"error":"Too Many Requests","message":"m","code":"RATE_LIMIT_EXCEEDED"}`, false, false},
		{"unknown path 404", "GET", "/v1/nothing", 404, h("X-Request-ID", "r1"), `{"success":false,"error":{"code":"NOT_FOUND","message":"m"}}`, true, false},
		{"unknown billing path 404", "GET", "/v1/billing/nothing", 404, h("X-Request-ID", "r1"), `{"status":"error","error":"Not Found","message":"m","code":"NOT_FOUND"}`, true, false},
		{"unknown path 404, other body", "GET", "/v1/nothing", 404, h("X-Request-ID", "r1"), `{"oops":1}`, false, false},
		{"unknown path 200", "GET", "/v1/nothing", 200, h("X-Request-ID", "r1"), `{}`, false, true},
		{"unknown method 405", "PATCH", "/v1/usage", 405, h("X-Request-ID", "r1", "Allow", "GET, HEAD"), `{"success":false,"error":{"code":"METHOD_NOT_ALLOWED","message":"m"}}`, true, false},
		{"unknown method 405 without Allow", "PATCH", "/v1/usage", 405, h("X-Request-ID", "r1"), `{"success":false,"error":{"code":"METHOD_NOT_ALLOWED","message":"m"}}`, false, false},
		{"unknown method 405, other code", "PATCH", "/v1/usage", 405, h("X-Request-ID", "r1", "Allow", "GET"), `{"success":false,"error":{"code":"NOT_FOUND","message":"m"}}`, false, false},
		{"unknown billing method 405", "GET", "/v1/billing/checkout", 405, h("X-Request-ID", "r1", "Allow", "POST"), `{"status":"error","error":"Method Not Allowed","message":"m","code":"METHOD_NOT_ALLOWED"}`, true, false},
	}
	for _, c := range cases {
		err := ValidateResponse(c.method, c.path, c.status, c.header, []byte(c.body))
		if (err == nil) != c.ok {
			t.Errorf("%s: ok %v, want %v: %v", c.name, err == nil, c.ok, err)
		}
		if c.wantUndocument != errors.Is(err, ErrUndocumented) {
			t.Errorf("%s: %v, want ErrUndocumented %v", c.name, err, c.wantUndocument)
		}
	}
}

func TestParentName(t *testing.T) {
	for msg, want := range map[string]string{
		"response property 'a.example' at '$.body.data.gaps[0].competitor_positions['a.example']' is not declared in schema": "competitor_positions",
		"response property 'GET /v1/usage' at '$.body.endpoints.GET /v1/usage' is not declared in schema":                    "endpoints",
		"response property 'x' at '$.body.data.x' is not declared in schema":                                                 "data",
	} {
		name := regexp.MustCompile(`property '([^']*)'`).FindStringSubmatch(msg)[1]
		if got := parentName(msg, name); got != want {
			t.Errorf("%q: %q, want %q", msg, got, want)
		}
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
func normalize(spec report.Spec, body map[string]any) error {
	raw, _ := json.Marshal(body)
	req := spec.New()
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(req); err != nil {
		return err
	}
	return req.Normalize(report.Options{})
}

func normalized(t *testing.T, spec report.Spec, body map[string]any) map[string]any {
	t.Helper()
	req := spec.New()
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
