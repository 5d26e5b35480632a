package clienttest

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contentapi/contentapi/client"
	"github.com/contentapi/contentapi/internal/jsonbody"
	"github.com/contentapi/contentapi/internal/openapi"
)

// clientSchemas pairs each wire type of the Go client with the OpenAPI schema it mirrors,
// where the names differ; a type named as a schema is paired with it without being listed.
var clientSchemas = map[reflect.Type]string{
	reflect.TypeFor[client.Keyword]():      "KeywordRecord",
	reflect.TypeFor[client.DryRunResult](): "DryRunAnswer.data",
}

// The Go client's types are written by hand; each is checked against the OpenAPI document
// field by field: every property of the schema is a field of the type and every field a
// property, under the same JSON name, of the same kind (string, integer, number, boolean,
// array, object). A field added to the API and not to the client, or the reverse, fails here.
// (client.Meta is read from the envelope and the headers, not decoded as it is.)
func TestClientTypesMatchOpenAPI(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openapi.JSON(""), &doc); err != nil {
		t.Fatal(err)
	}
	schemas := doc.Components.Schemas
	types := []reflect.Type{}
	for _, v := range []any{
		client.APIKey{}, client.Account{}, client.AuditChanges{}, client.AuditIssue{}, client.AuditPage{},
		client.AuditRequest{}, client.AuditResult{}, client.CannibalizationEntry{}, client.CannibalizationRisk{},
		client.CheckoutRequest{}, client.CheckoutSession{}, client.Cluster{}, client.Competitor{},
		client.CompetitorsRequest{}, client.CompetitorsResult{}, client.ContentMapRequest{}, client.ContentMapResult{},
		client.CreateKeyRequest{}, client.Gap{}, client.GapsRequest{}, client.GapsResult{}, client.JobSummary{},
		client.MapRecommendation{}, client.NewAPIKey{}, client.OutlineSection{}, client.PortalRequest{},
		client.PortalSession{}, client.Range{}, client.Ranking{}, client.RankingsRequest{}, client.RankingsResult{},
		client.RecommendRequest{}, client.RecommendResult{}, client.Recommendation{}, client.RegisterRequest{},
		client.Registration{}, client.RenderedPage{}, client.ResearchRequest{}, client.ResearchResult{},
		client.ServiceInfo{}, client.ThinPage{}, client.Usage{}, client.Keyword{}, client.DryRunResult{},
	} {
		types = append(types, reflect.TypeOf(v))
	}
	for _, typ := range types {
		name := typ.Name()
		if s, ok := clientSchemas[typ]; ok {
			name = s
		}
		schema, ok := lookup(schemas, name)
		if !ok {
			t.Errorf("client.%s: no schema %s in the OpenAPI document", typ.Name(), name)
			continue
		}
		props := properties(schemas, schema)
		fields := jsonFields(typ)
		for prop, ps := range props {
			f, ok := fields[prop]
			if !ok {
				t.Errorf("client.%s has no field for %s.%s", typ.Name(), name, prop)
				continue
			}
			if want, got := schemaKind(schemas, ps), goKind(f.Type); want != "" && got != "" && want != got {
				t.Errorf("client.%s.%s (json %q) is a %s; the document's %s.%s is a %s", typ.Name(), f.Name, prop, got, name, prop, want)
			}
		}
		for prop, f := range fields {
			if _, ok := props[prop]; !ok {
				t.Errorf("client.%s.%s (json %q) is not a property of the document's %s", typ.Name(), f.Name, prop, name)
			}
		}
	}
}

// lookup finds a schema by name, or a property's schema by "Schema.property".
func lookup(schemas map[string]any, name string) (any, bool) {
	top, prop, nested := strings.Cut(name, ".")
	s, ok := schemas[top]
	if !ok || !nested {
		return s, ok
	}
	s, ok = properties(schemas, s)[prop]
	return s, ok
}

// resolve follows a schema's $ref.
func resolve(schemas map[string]any, s any) map[string]any {
	m, _ := s.(map[string]any)
	for m != nil {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		m, _ = schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
	}
	return m
}

// properties are an object schema's properties, those of its allOf parts merged.
func properties(schemas map[string]any, s any) map[string]any {
	m := resolve(schemas, s)
	out := map[string]any{}
	for _, part := range asList(m["allOf"]) {
		for k, v := range properties(schemas, part) {
			out[k] = v
		}
	}
	if p, ok := m["properties"].(map[string]any); ok {
		for k, v := range p {
			out[k] = v
		}
	}
	return out
}

// schemaKind is a property's JSON kind, a nullable one's (anyOf with null) unwrapped; ""
// when the schema allows several.
func schemaKind(schemas map[string]any, s any) string {
	m := resolve(schemas, s)
	if m == nil {
		return ""
	}
	if t, ok := m["type"].(string); ok {
		return t
	}
	if ts := asList(m["type"]); len(ts) > 0 {
		ts = slices.DeleteFunc(ts, func(v any) bool { return v == "null" })
		if len(ts) == 1 {
			return ts[0].(string)
		}
		return ""
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		var kinds []string
		for _, alt := range asList(m[key]) {
			if k := schemaKind(schemas, alt); k != "null" && !slices.Contains(kinds, k) {
				kinds = append(kinds, k)
			}
		}
		if len(kinds) == 1 {
			return kinds[0]
		}
	}
	for _, part := range asList(m["allOf"]) {
		if k := schemaKind(schemas, part); k != "" {
			return k
		}
	}
	if m["properties"] != nil {
		return "object"
	}
	return "" // a const or enum without a type, or anything
}

func asList(v any) []any { l, _ := v.([]any); return l }

// jsonFields are a struct type's fields by JSON name, embedded structs' fields included.
func jsonFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			for k, v := range jsonFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f
	}
	return out
}

// goKind is the JSON kind a Go type encodes as; "" when it may be several.
func goKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == reflect.TypeFor[time.Time]():
		return "string"
	case t == reflect.TypeFor[json.RawMessage]():
		return ""
	case t.Implements(reflect.TypeFor[json.Marshaler]()) || reflect.PointerTo(t).Implements(reflect.TypeFor[json.Marshaler]()):
		return ""
	}
	return jsonbody.Kind(t)
}
