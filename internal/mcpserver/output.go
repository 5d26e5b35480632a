package mcpserver

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// Output schemas. A tool's structured content is {data, meta} from the API's answer, or
// {error} for a tool error, so its output schema is read from the document's answers of the
// endpoint the tool calls: data and meta are the answers' own (the 200's and, where a job may
// still be running, the 202's), with the components they name copied into $defs. The
// document is OpenAPI 3.1, whose nullable values are written type: [T, "null"]; here each is
// anyOf [{type: T, …}, {type: "null"}], one type per branch, which clients mapping schemas
// onto a single-type dialect accept.

// answer picks, from a 200 answer's body written as oneOf (a result or a dry run's answer),
// the one a tool returns.
type answer int

const (
	resultAnswer answer = iota // the first: the result
	dryRunAnswer               // the second: the dry run's answer
)

// outputSchema is the output schema of a tool calling method path, whose 200 answer is
// read as pick; with pending, the 202 answer (a job still running) is a data too.
func outputSchema(method, path string, pick answer, pending bool) map[string]any {
	doc, err := document()
	if err != nil {
		return nil
	}
	responses, _ := operation(doc, method, path)["responses"].(map[string]any)
	bodies := []map[string]any{jsonBody(doc, responses["200"])}
	if alts, ok := bodies[0]["oneOf"].([]any); ok && int(pick) < len(alts) {
		bodies[0] = resolve(doc, alts[pick])
	}
	if pending {
		bodies = append(bodies, jsonBody(doc, responses["202"]))
	}
	var data, meta []any
	for _, b := range bodies {
		props, _ := b["properties"].(map[string]any)
		if d, ok := props["data"]; ok {
			data = append(data, d)
		}
		if m, ok := props["meta"]; ok && !slices.ContainsFunc(meta, func(x any) bool { return sameJSON(x, m) }) {
			meta = append(meta, m)
		}
	}
	defs := map[string]any{}
	props := map[string]any{
		"data":  portable(doc, oneOrAny(data), defs),
		"error": errorSchema,
	}
	if len(meta) > 0 {
		props["meta"] = portable(doc, oneOrAny(meta), defs)
	}
	out := map[string]any{"type": "object", "properties": props,
		"description": "The API's answer: data and meta when the call succeeded (data is the pending job when it was still running), error when it was refused or failed."}
	if len(defs) > 0 {
		out["$defs"] = defs
	}
	return out
}

// errorSchema is a tool error's structured content: the API's error object.
var errorSchema = map[string]any{
	"type":     "object",
	"required": []any{"code", "message"},
	"properties": map[string]any{
		"code":             map[string]any{"type": "string"},
		"message":          map[string]any{"type": "string"},
		"retry_after":      map[string]any{"type": "integer", "description": "Seconds to wait, when the API sent Retry-After."},
		"job_id":           map[string]any{"type": "string"},
		"status":           map[string]any{"type": "string"},
		"credits_refunded": map[string]any{"type": "integer"},
	},
	"additionalProperties": true,
}

func oneOrAny(list []any) any {
	if len(list) == 1 {
		return list[0]
	}
	return map[string]any{"anyOf": list}
}

func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// generic keywords stay beside an anyOf; the others describe the non-null branch.
var generic = map[string]bool{"description": true, "title": true, "default": true, "examples": true, "deprecated": true,
	"readOnly": true, "writeOnly": true}

// portable copies a schema of the document as JSON Schema a strict client reads: its
// components references point into defs (filled as they are met), nullable types are anyOf
// branches, and OpenAPI's own keywords (example, discriminator, x-…) are left out.
func portable(doc map[string]any, v any, defs map[string]any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = portable(doc, e, defs)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			switch {
			case k == "example" || k == "discriminator" || k == "xml" || k == "externalDocs" || strings.HasPrefix(k, "x-"):
			case k == "$ref":
				ref, _ := e.(string)
				name, ok := strings.CutPrefix(ref, "#/components/schemas/")
				if !ok {
					out[k] = e
					continue
				}
				if _, seen := defs[name]; !seen {
					defs[name] = nil // placeholder: a schema that names itself stops here
					defs[name] = portable(doc, lookupPointer(doc, ref), defs)
				}
				out[k] = "#/$defs/" + name
			case k == "properties" || k == "patternProperties" || k == "$defs":
				m, _ := e.(map[string]any)
				props := make(map[string]any, len(m))
				for n, p := range m {
					props[n] = portable(doc, p, defs)
				}
				out[k] = props
			default:
				out[k] = portable(doc, e, defs)
			}
		}
		return splitNull(out)
	}
	return v
}

// splitNull writes {type: [T, "null"], …} as anyOf [{type: T, …}, {type: "null"}], the
// generic keywords (description, default, …) kept beside it; an enum loses its null.
func splitNull(s map[string]any) map[string]any {
	types, ok := s["type"].([]any)
	if !ok {
		return s
	}
	var kept []any
	for _, t := range types {
		if t != "null" {
			kept = append(kept, t)
		}
	}
	if len(kept) == len(types) || len(kept) == 0 {
		return s
	}
	out := map[string]any{}
	branch := map[string]any{}
	for _, k := range slices.Sorted(maps.Keys(s)) {
		switch {
		case k == "type":
		case generic[k]:
			out[k] = s[k]
		case k == "enum":
			enum, _ := s[k].([]any)
			branch[k] = slices.DeleteFunc(slices.Clone(enum), func(v any) bool { return v == nil })
		default:
			branch[k] = s[k]
		}
	}
	var branches []any
	for _, t := range kept {
		b := maps.Clone(branch)
		b["type"] = t
		branches = append(branches, b)
	}
	out["anyOf"] = append(branches, map[string]any{"type": "null"})
	return out
}
