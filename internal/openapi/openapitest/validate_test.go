package openapitest

import (
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"testing"

	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
	"github.com/pb33f/libopenapi/orderedmap"

	"github.com/contentapi/contentapi/internal/openapi"
)

func TestDocumentIsValidOpenAPI31(t *testing.T) {
	if err := ValidateDocument(); err != nil {
		t.Fatal(err)
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
		if err := json.Unmarshal(openapi.JSON(""), &d); err != nil {
			t.Fatal(err)
		}
		mutate(d)
		spec, _ := json.Marshal(d)
		if err := validateSpec(spec); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// Every example in the document is valid against its schema. (That request examples are
// accepted by the service is openapi's TestRequestExamplesAreAccepted.)
func TestExamplesAreValid(t *testing.T) {
	c, err := load()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	check := func(what string, content *orderedmap.Map[string, *v3.MediaType]) {
		t.Helper()
		mt := content.GetOrZero("application/json")
		if mt == nil || mt.Example == nil {
			return
		}
		var v any
		if err := mt.Example.Decode(&v); err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(v)
		n++
		if ok, errs := c.schemas.ValidateSchemaBytes(mt.Schema.Schema(), raw); !ok {
			t.Errorf("%s example: %v", what, describe("example is not valid", errs))
		}
	}
	for path, item := range c.model.Paths.PathItems.FromOldest() {
		for method, o := range item.GetOperations().FromOldest() {
			if o.RequestBody != nil {
				check(method+" "+path+" request", o.RequestBody.Content)
			}
			for status, r := range o.Responses.Codes.FromOldest() {
				if r.Content != nil {
					check(method+" "+path+" "+status, r.Content)
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
	usage := `{"success":true,"data":{"plan":"free","credits_used":0,"credits_limit":50,"credits_remaining":50,"period_start":"2026-02-28T09:00:00Z","period_end":"2026-03-31T09:00:00Z","rate_limit":10,"recent_calls":[],"upgrade_url":"https://dash.example/billing"}}`
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

func op(d map[string]any, path, method string) map[string]any {
	item, _ := d["paths"].(map[string]any)[path].(map[string]any)
	o, _ := item[method].(map[string]any)
	return o
}
