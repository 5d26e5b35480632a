package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/contentapi/contentapi/internal/report"
)

// Every tool declares an output schema with one type per node (no type lists, so no
// nullable written as ["null", T]) and references only into its own $defs; the structured
// content of the document's examples (as the tool returns it) and of a tool error is valid
// against it.
func TestOutputSchemas(t *testing.T) {
	tools := listTools(t)
	if len(tools) != len(report.Catalog)+3 {
		t.Fatalf("%d tools", len(tools))
	}
	for _, tool := range tools {
		raw, _ := json.Marshal(tool.OutputSchema)
		if tool.OutputSchema == nil || !strings.Contains(string(raw), `"data"`) {
			t.Errorf("%s: output schema %s", tool.Name, raw)
			continue
		}
		if strings.Contains(string(raw), `"type":[`) || strings.Contains(string(raw), `#/components/`) {
			t.Errorf("%s: a type list or a reference outside the schema: %s", tool.Name, raw)
		}
		errResult := toolError("NO_DATA", "nothing", "3")
		validate(t, tool.Name+" error", raw, errResult.StructuredContent)
	}
	doc, err := document()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool, method, path string
	}{{"keywords_research", http.MethodPost, "/v1/keywords/research"}, {"get_usage", http.MethodGet, "/v1/usage"}} {
		responses := operation(doc, c.method, c.path)["responses"].(map[string]any)
		media := resolve(doc, responses["200"])["content"].(map[string]any)["application/json"].(map[string]any)
		example, _ := json.Marshal(media["example"])
		r := answerResult(c.tool, Answer{Status: 200, Body: example})
		if r.IsError {
			t.Fatalf("%s: example is an error: %s", c.tool, example)
		}
		for _, tool := range tools {
			if tool.Name == c.tool {
				raw, _ := json.Marshal(tool.OutputSchema)
				validate(t, c.tool+" example", raw, r.StructuredContent)
			}
		}
	}
}

func validate(t *testing.T, what string, schema []byte, v any) {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: resolve: %v", what, err)
	}
	raw, _ := json.Marshal(v)
	var instance any
	_ = json.Unmarshal(raw, &instance)
	if err := resolved.Validate(instance); err != nil {
		t.Errorf("%s: %s: %v", what, raw, err)
	}
}

// listTools lists the server's tools as a client does.
func listTools(t *testing.T) []*mcp.Tool {
	t.Helper()
	srv, err := NewServer(Options{Caller: nil, Authorization: func(*mcp.CallToolRequest) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

// docs/mcp.md's tool table lists exactly the server's tools.
func TestDocsListEveryTool(t *testing.T) {
	raw, err := os.ReadFile("../../docs/mcp.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| `(?:GET|POST) ")
	var documented []string
	for _, m := range row.FindAllStringSubmatch(string(raw), -1) {
		documented = append(documented, m[1])
	}
	var served []string
	for _, tool := range listTools(t) {
		served = append(served, tool.Name)
	}
	slices.Sort(documented)
	slices.Sort(served)
	if !slices.Equal(documented, served) {
		t.Errorf("docs/mcp.md lists %v; the server has %v", documented, served)
	}
}
