package mcpserver

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/contentapi/contentapi/internal/jsonbody"
	"github.com/contentapi/contentapi/internal/report"
)

// A call whose arguments its tool's input schema accepts is never refused for its shape:
// arguments generated from each analysis tool's schema (seeded, so a failure repeats), sent
// through the tool's own translation (splitArguments), pass the API's strict decoder and the
// request's Normalize, the two steps by which the endpoint refuses a body with 400 before
// any job. The generator follows the schema alone, except for what the schema can only say
// in words (a range's min not above its max, a word not both included and excluded, an order
// field named once) and for the values of free text that stand for addresses (domains,
// URLs: refusing "qwxz" as a domain is about its value, not its shape; cursor is left out,
// as only the API issues one).
func TestSchemaValidArgumentsAreAccepted(t *testing.T) {
	const runs = 400
	for _, a := range report.Catalog {
		schema, err := inputSchema(a)
		if err != nil {
			t.Fatal(err)
		}
		// Round-trip, so the generator reads the schema as a client does.
		raw, _ := json.Marshal(schema)
		var s map[string]any
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		name := ToolName(a)
		rng := rand.New(rand.NewPCG(29, uint64(len(name))))
		for i := range runs {
			args := generate(rng, s, "").(map[string]any)
			keepRelations(args)
			body, err := json.Marshal(args)
			if err != nil {
				t.Fatal(err)
			}
			split, _, bad := splitArguments(body)
			if bad != nil {
				t.Fatalf("%s: %s: %s", name, body, contentText(bad, 0))
			}
			req := a.NewRequest()
			if err := jsonbody.Decode(split, req); err != nil {
				t.Fatalf("%s run %d: schema-valid arguments refused by the decoder: %v\n%s", name, i, err, body)
			}
			if err := req.Normalize(report.Options{}); err != nil {
				t.Fatalf("%s run %d: schema-valid arguments refused: %v\n%s", name, i, err, body)
			}
		}
	}
}

// samples are valid values of the free-text properties that name addresses.
var samples = map[string][]string{
	"domain":       {"example.com", "www.shop.example.org", "https://blog.example.net/path"},
	"competitors":  {"rival.example.com", "other.example.org", "third.example.net"},
	"sitemap_url":  {""},
	"callback_url": {"https://hooks.example.com/contentapi"},
}

var words = []string{"coffee", "brew", "grinder", "espresso", "beans", "roast", "filter", "kettle", "cold", "latte", "mug", "tea"}

// generate returns a value the schema accepts: an object with its required properties and
// a random choice of the others, and so on down.
func generate(rng *rand.Rand, s map[string]any, name string) any {
	if enum, ok := s["enum"].([]any); ok {
		return enum[rng.IntN(len(enum))]
	}
	switch s["type"] {
	case "object":
		props, _ := s["properties"].(map[string]any)
		required, _ := s["required"].([]any)
		out := map[string]any{}
		min := 0
		if m, ok := s["minProperties"].(float64); ok {
			min = int(m)
		}
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range props {
				if !yield(k) {
					return
				}
			}
		}) {
			if k == "cursor" {
				continue
			}
			if slices.Contains(required, any(k)) || rng.IntN(2) == 0 {
				out[k] = generate(rng, props[k].(map[string]any), k)
			}
		}
		for k := range props {
			if len(out) >= min {
				break
			}
			out[k] = generate(rng, props[k].(map[string]any), k)
		}
		return out
	case "array":
		items, _ := s["items"].(map[string]any)
		lo, hi := 0, 4
		if m, ok := s["minItems"].(float64); ok {
			lo = int(m)
		}
		if m, ok := s["maxItems"].(float64); ok && int(m) < hi {
			hi = int(m)
		}
		n := lo + rng.IntN(hi-lo+1)
		var out []any
		for range n {
			v := generate(rng, items, name)
			if s["uniqueItems"] == true && slices.Contains(out, v) {
				continue
			}
			out = append(out, v)
		}
		if out == nil {
			out = []any{}
		}
		return out
	case "integer", "number":
		lo, hi := 0.0, 10000.0
		if m, ok := s["minimum"].(float64); ok {
			lo = m
		}
		if m, ok := s["maximum"].(float64); ok {
			hi = m
		}
		if s["type"] == "integer" {
			return int(lo) + rng.IntN(int(hi-lo)+1)
		}
		return lo + rng.Float64()*(hi-lo)
	case "boolean":
		return rng.IntN(2) == 0
	case "string":
		if v, ok := samples[name]; ok {
			return v[rng.IntN(len(v))]
		}
		if name == argIdempotencyKey {
			return fmt.Sprintf("key-%d", rng.Int())
		}
		max := 30
		if m, ok := s["maxLength"].(float64); ok && int(m) < max {
			max = int(m)
		}
		if _, word := s["pattern"]; word { // a filter word: one word
			w := words[rng.IntN(len(words))]
			return w[:min(max, len(w))]
		}
		var b strings.Builder
		for b.Len() == 0 || rng.IntN(3) > 0 {
			w := words[rng.IntN(len(words))]
			if b.Len()+len(w)+1 > max {
				break
			}
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(w)
		}
		return b.String()
	}
	panic(fmt.Sprintf("no generator for %v", s))
}

// keepRelations makes generated arguments keep the rules their schema states only in
// words: each range's min at most its max, no word both included and excluded, each order
// field at most once.
func keepRelations(args map[string]any) {
	if f, ok := args["filters"].(map[string]any); ok {
		for _, v := range f {
			if r, ok := v.(map[string]any); ok {
				lo, okLo := r["min"].(float64)
				hi, okHi := r["max"].(float64)
				if okLo && okHi && lo > hi {
					r["min"], r["max"] = hi, lo
				}
			}
		}
		inc, _ := f["include"].([]any)
		if exc, ok := f["exclude"].([]any); ok {
			f["exclude"] = slices.DeleteFunc(exc, func(w any) bool { return slices.Contains(inc, w) })
		}
	}
	if order, ok := args["order_by"].([]any); ok {
		seen := map[string]bool{}
		args["order_by"] = slices.DeleteFunc(order, func(v any) bool {
			field, _, _ := strings.Cut(v.(string), ".")
			defer func() { seen[field] = true }()
			return seen[field]
		})
	}
}
