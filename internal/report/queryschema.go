package report

import "slices"

// The JSON schemas of a query's filters and order_by, generated from the endpoint's
// QueryShape and the bounds Normalize checks, so that a client following them (an MCP tool's
// input schema) sends nothing the endpoint refuses for its shape. What a schema cannot say
// (a range's min above its max, a word both included and excluded, a field named twice in
// order_by) is in the descriptions; Normalize still names it.

// FilterKeys are the keys the shape's filters object takes: its ranges, then intent,
// include and exclude (which every keyword endpoint applies).
func (s QueryShape) FilterKeys() []string {
	out := make([]string, 0, len(s.Ranges)+3)
	for _, f := range s.Ranges {
		out = append(out, string(f))
	}
	return append(out, "intent", "include", "exclude")
}

// OrderValues are the values order_by takes: each order field with .asc and .desc. None
// means the endpoint takes no order_by.
func (s QueryShape) OrderValues() []string {
	var out []string
	for _, f := range s.Order {
		out = append(out, string(f)+".asc", string(f)+".desc")
	}
	return out
}

// FiltersSchema is the JSON schema of the filters object.
func (s QueryShape) FiltersSchema() map[string]any {
	props := map[string]any{}
	for _, f := range s.Ranges {
		props[string(f)] = map[string]any{
			"type":                 "object",
			"additionalProperties": false,
			"minProperties":        1,
			"description":          "Inclusive bounds on " + string(f) + "; at least one, min not above max. A row whose value is unknown never passes.",
			"properties": map[string]any{
				"min": map[string]any{"type": "number", "minimum": 0},
				"max": map[string]any{"type": "number", "minimum": 0},
			},
		}
	}
	props["intent"] = map[string]any{
		"type":        "array",
		"description": "Keeps rows whose search intent is one of these.",
		"items":       map[string]any{"type": "string", "enum": slices.Clone(Intents)},
	}
	word := func(d string) map[string]any {
		return map[string]any{
			"type":        "array",
			"maxItems":    MaxFilterWords,
			"description": d,
			"items": map[string]any{"type": "string", "minLength": 1, "maxLength": MaxWordLength,
				"pattern": "^[^" + wordSpaces + "]+$"},
		}
	}
	props["include"] = word("Single words, every one of which the keyword must hold (any case).")
	props["exclude"] = word("Single words, none of which the keyword may hold (any case); none of them in include.")
	return map[string]any{"type": "object", "additionalProperties": false, "properties": props}
}

// OrderSchema is the JSON schema of order_by, nil when the endpoint takes none.
func (s QueryShape) OrderSchema() map[string]any {
	values := s.OrderValues()
	if len(values) == 0 {
		return nil
	}
	return map[string]any{
		"type":        "array",
		"maxItems":    MaxOrderKeys,
		"uniqueItems": true,
		"description": "Up to three sort keys, <field>.asc or <field>.desc, each field at most once; unknown values sort last either way and the keyword breaks remaining ties.",
		"items":       map[string]any{"type": "string", "enum": values},
	}
}
