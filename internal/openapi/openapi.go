// Package openapi holds the API's OpenAPI 3.1 document (openapi.yaml, embedded), serves it as
// JSON and bundles the human-readable reference (Redoc, see docs/decisions.md). It imports neither
// Fiber nor anything of the service: the HTTP layer adapts the accessors. Validating the API
// against the document is openapitest's, which only tests import.
package openapi

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"go.yaml.in/yaml/v4"
)

//go:embed openapi.yaml
var source []byte

// YAML returns the document's source, as written.
func YAML() []byte { return bytes.Clone(source) }

// root is the parsed source, parsed on first use rather than at init: parsing and rendering
// the document allocates more than every other package's init together, and the api serves
// it only when asked. A broken document still panics on first use (every test of this
// package and of internal/httpapi parses it, so one cannot reach a release).
var root = sync.OnceValue(func() *yaml.Node { return mustParse(source) })

func mustParse(src []byte) *yaml.Node {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		panic(fmt.Sprintf("openapi: openapi.yaml: %v", err))
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		panic("openapi: openapi.yaml is not one YAML mapping")
	}
	if _, err := render(doc.Content[0], ""); err != nil {
		panic(fmt.Sprintf("openapi: openapi.yaml: %v", err))
	}
	return doc.Content[0]
}

// JSON returns the document as indented JSON. When serverURL is not empty, the document's
// servers list names it alone, so the reference and generated clients point at the
// deployment that served it.
func JSON(serverURL string) []byte {
	out, err := render(root(), serverURL)
	if err != nil {
		panic(err) // mustParse rendered the same tree already
	}
	return out
}

// Version is the document's info.version, the API's version string.
func Version() string {
	doc := root()
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if doc.Content[i].Value == "info" {
			info := doc.Content[i+1]
			for j := 0; j+1 < len(info.Content); j += 2 {
				if info.Content[j].Value == "version" {
					return info.Content[j+1].Value
				}
			}
		}
	}
	return ""
}

// render writes the tree as JSON, keeping the source's key order (json.Marshal of a map
// would sort it), resolving YAML aliases, and replacing the top-level servers when asked.
func render(n *yaml.Node, serverURL string) ([]byte, error) {
	var buf bytes.Buffer
	w := &jsonWriter{buf: &buf}
	if err := w.node(n, serverURL, 0); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, buf.Bytes(), "", "  "); err != nil {
		return nil, fmt.Errorf("openapi: rendered JSON is invalid: %w", err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

type jsonWriter struct{ buf *bytes.Buffer }

func (w *jsonWriter) str(s string) {
	enc := json.NewEncoder(w.buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	w.buf.Truncate(w.buf.Len() - 1) // Encode's newline
}

func (w *jsonWriter) node(n *yaml.Node, serverURL string, depth int) error {
	if depth > 200 {
		return fmt.Errorf("openapi: nesting too deep (alias cycle?) at line %d", n.Line)
	}
	switch n.Kind {
	case yaml.AliasNode:
		return w.node(n.Alias, "", depth+1)
	case yaml.MappingNode:
		w.buf.WriteByte('{')
		seen := make(map[string]bool, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.Value == "<<" {
				return fmt.Errorf("openapi: line %d: keys must be plain scalars (no merge keys)", k.Line)
			}
			if seen[k.Value] {
				return fmt.Errorf("openapi: line %d: duplicate key %q", k.Line, k.Value)
			}
			seen[k.Value] = true
			if i > 0 {
				w.buf.WriteByte(',')
			}
			w.str(k.Value)
			w.buf.WriteByte(':')
			if depth == 0 && k.Value == "servers" && serverURL != "" {
				w.buf.WriteString(`[{"url":`)
				w.str(strings.TrimRight(serverURL, "/"))
				w.buf.WriteString(`,"description":"This deployment."}]`)
				continue
			}
			if err := w.node(v, "", depth+1); err != nil {
				return err
			}
		}
		w.buf.WriteByte('}')
	case yaml.SequenceNode:
		w.buf.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				w.buf.WriteByte(',')
			}
			if err := w.node(c, "", depth+1); err != nil {
				return err
			}
		}
		w.buf.WriteByte(']')
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			w.buf.WriteString("null")
		case "!!bool":
			var b bool
			if err := n.Decode(&b); err != nil {
				return fmt.Errorf("openapi: line %d: %w", n.Line, err)
			}
			fmt.Fprint(w.buf, b)
		case "!!int", "!!float":
			if !json.Valid([]byte(n.Value)) { // 0x1F, .inf, 1_000: YAML numbers JSON lacks
				return fmt.Errorf("openapi: line %d: number %q is not valid JSON; quote it", n.Line, n.Value)
			}
			w.buf.WriteString(n.Value)
		case "!!str":
			w.str(n.Value)
		default:
			return fmt.Errorf("openapi: line %d: unsupported YAML tag %s", n.Line, n.ShortTag())
		}
	default:
		return fmt.Errorf("openapi: line %d: unsupported YAML node", n.Line)
	}
	return nil
}
