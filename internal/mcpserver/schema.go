package mcpserver

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/contentapi/contentapi/internal/openapi"
	"github.com/contentapi/contentapi/internal/report"
)

// The schema of a tool's input has two sources and no third. Its properties and their JSON
// types are generated from the analysis's request type (the struct the API decodes strictly
// and validates), so the tool takes exactly the fields the endpoint takes; their
// descriptions, bounds, enums, defaults and which are required are read from the API's
// OpenAPI document, where the endpoint is already described for people.

// annotationKeys are the keywords copied from the OpenAPI document onto a property: the
// ones that describe a value without changing its JSON type.
var annotationKeys = []string{"description", "enum", "default", "minimum", "maximum", "minLength", "maxLength",
	"minItems", "maxItems", "format", "pattern", "examples", "uniqueItems"}

// document is the API's OpenAPI document, parsed once.
var document = sync.OnceValues(func() (map[string]any, error) {
	var doc map[string]any
	if err := json.Unmarshal(openapi.JSON(""), &doc); err != nil {
		return nil, fmt.Errorf("mcpserver: read the OpenAPI document: %w", err)
	}
	return doc, nil
})

// operation is an endpoint's operation object in the document, or nil.
func operation(doc map[string]any, method, path string) map[string]any {
	paths, _ := doc["paths"].(map[string]any)
	item, _ := paths[path].(map[string]any)
	op, _ := item[strings.ToLower(method)].(map[string]any)
	return op
}

// resolve follows a local $ref ("#/components/schemas/X"); allOf of one schema is read
// through too.
func resolve(doc map[string]any, v any) map[string]any {
	var last map[string]any
	chain(doc, v, func(m map[string]any) { last = m })
	return last
}

// annotations is a documented property with what its $ref or single allOf adds under the
// keywords it states itself ({allOf: [List], minItems: 1} keeps its minItems and the list's
// items).
func annotations(doc map[string]any, v any) map[string]any {
	var out map[string]any
	chain(doc, v, func(m map[string]any) {
		if out == nil {
			out = map[string]any{}
		}
		for k, x := range m {
			if _, set := out[k]; !set {
				out[k] = x
			}
		}
	})
	return out
}

// chain visits a schema, then what its $ref or single allOf names, and so on (at most 8).
func chain(doc map[string]any, v any, visit func(map[string]any)) {
	for range 8 {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		visit(m)
		switch all, _ := m["allOf"].([]any); {
		case m["$ref"] != nil:
			ref, _ := m["$ref"].(string)
			v = lookupPointer(doc, ref)
		case len(all) == 1 && m["properties"] == nil:
			v = all[0]
		default:
			return
		}
	}
}

func lookupPointer(doc map[string]any, ref string) any {
	var v any = doc
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[part]
	}
	return v
}

// jsonBody is the JSON schema of an operation's request body or of a response's body.
func jsonBody(doc map[string]any, holder any) map[string]any {
	h := resolve(doc, holder)
	content, _ := h["content"].(map[string]any)
	media, _ := content["application/json"].(map[string]any)
	return resolve(doc, media["schema"])
}

// inputSchema is the schema of an analysis tool's arguments: the request type's, annotated
// from the document, plus idempotency_key.
func inputSchema(a report.Analysis) (map[string]any, error) {
	t := reflect.TypeOf(a.NewRequest())
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	generated, err := jsonschema.ForType(t, &jsonschema.ForOptions{})
	if err != nil {
		return nil, fmt.Errorf("mcpserver: schema of %s: %w", a.Kind, err)
	}
	raw, err := json.Marshal(generated)
	if err != nil {
		return nil, err
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		return nil, err
	}
	props, _ := schema["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
		schema["properties"] = props
	}
	doc, err := document()
	if err != nil {
		return nil, err
	}
	op := operation(doc, a.Method, a.Path)
	if body := jsonBody(doc, op["requestBody"]); body != nil {
		documented, _ := body["properties"].(map[string]any)
		for name, p := range props {
			d := annotations(doc, documented[name])
			prop, _ := p.(map[string]any)
			if d == nil || prop == nil {
				continue
			}
			for _, k := range annotationKeys {
				if v, ok := d[k]; ok {
					prop[k] = v
				}
			}
			if items := resolve(doc, d["items"]); items != nil {
				if it, ok := prop["items"].(map[string]any); ok {
					for _, k := range annotationKeys {
						if v, ok := items[k]; ok {
							it[k] = v
						}
					}
				}
			}
		}
		if req, ok := body["required"].([]any); ok {
			var names []string
			for _, r := range req {
				if n, ok := r.(string); ok && props[n] != nil {
					names = append(names, n)
				}
			}
			slices.Sort(names)
			schema["required"] = names
		}
	}
	if err := shapeQuery(a, props); err != nil {
		return nil, err
	}
	dropNull(schema)
	props[argIdempotencyKey] = map[string]any{
		"type":      "string",
		"minLength": 1,
		"maxLength": 255,
		"description": "Optional. The call's Idempotency-Key: a retry with the same key and the same arguments " +
			"within 24 hours returns the first call's job and result and is charged once.",
	}
	return schema, nil
}

// shapeQuery puts the endpoint's own filters and order_by (report.QueryShape, what its
// Normalize checks) in place of the request type's, which lists every key of every keyword
// endpoint. An endpoint that takes no order_by has none in its schema.
func shapeQuery(a report.Analysis, props map[string]any) error {
	paged, ok := a.NewRequest().(report.PagedRequest)
	if !ok {
		return nil
	}
	shape := paged.Shape()
	for name, s := range map[string]map[string]any{"filters": shape.FiltersSchema(), "order_by": shape.OrderSchema()} {
		old, _ := props[name].(map[string]any)
		if old == nil {
			return fmt.Errorf("mcpserver: %s has no %s", a.Path, name)
		}
		if s == nil {
			delete(props, name)
			continue
		}
		if d, ok := old["description"].(string); ok && s["description"] == nil {
			s["description"] = d
		}
		props[name] = s
	}
	return nil
}

// dropNull writes a type that allows null, as the schema generator writes an optional
// pointer or slice (["null", "integer"]), as the type alone: leaving the member out is how
// an argument is not given, and clients that read "type" as one name accept it.
func dropNull(v any) {
	switch x := v.(type) {
	case map[string]any:
		if types, ok := x["type"].([]any); ok {
			var kept []any
			for _, t := range types {
				if t != "null" {
					kept = append(kept, t)
				}
			}
			if len(kept) == 1 {
				x["type"] = kept[0]
			} else {
				x["type"] = kept
			}
		}
		for _, m := range x {
			dropNull(m)
		}
	case []any:
		for _, m := range x {
			dropNull(m)
		}
	}
}

// returns describes what an analysis answers: the fields of its data, from the document's
// 200 response.
func returns(a report.Analysis) string {
	doc, err := document()
	if err != nil {
		return ""
	}
	responses, _ := operation(doc, a.Method, a.Path)["responses"].(map[string]any)
	body := jsonBody(doc, responses["200"])
	if alts, ok := body["oneOf"].([]any); ok && len(alts) > 0 { // the result, or the dry run's answer
		body = resolve(doc, alts[0])
	}
	props, _ := body["properties"].(map[string]any)
	data := resolve(doc, props["data"])
	fields, _ := data["properties"].(map[string]any)
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// operationText is the first paragraph of the operation's description in the document.
func operationText(a report.Analysis) string {
	doc, err := document()
	if err != nil {
		return ""
	}
	d, _ := operation(doc, a.Method, a.Path)["description"].(string)
	first, _, _ := strings.Cut(strings.TrimSpace(d), "\n\n")
	return strings.Join(strings.Fields(first), " ")
}

// schemaFor generates a helper tool's input schema from its argument type.
func schemaFor[T any]() map[string]any {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{})
	if err != nil {
		panic(err) // the types are this package's own
	}
	raw, _ := json.Marshal(s)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	dropNull(m)
	return m
}
