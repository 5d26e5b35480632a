package clienttest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"sort"
	"strconv"
	"testing"

	"go.yaml.in/yaml/v4"
)

// stringConsts returns the values of a Go file's string constants that look like error
// codes (UPPER_SNAKE_CASE), by name.
func stringConsts(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	code := regexp.MustCompile(`^[A-Z][A-Z_]+$`)
	out := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				if v, err := strconv.Unquote(lit.Value); err == nil && code.MatchString(v) {
					out[name.Name] = v
				}
			}
		}
	}
	return out
}

// Every error code the server answers with has a constant here: the codes of
// internal/apperr, the job failure codes the error mapper knows (internal/httpapi/errors.go)
// and the ErrorCode enum of the OpenAPI document.
func TestEveryServerErrorCodeHasAConstant(t *testing.T) {
	have := map[string]bool{}
	for _, v := range stringConsts(t, "../../client/errors.go") {
		have[v] = true
	}
	want := map[string]string{}
	for _, v := range stringConsts(t, "../apperr/apperr.go") {
		want[v] = "internal/apperr"
	}
	mapper, err := os.ReadFile("../httpapi/errors.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^\s*"([A-Z][A-Z_]+)":\s+http\.Status`).FindAllSubmatch(mapper, -1) {
		want[string(m[1])] = "internal/httpapi statusOf"
	}
	doc, err := os.ReadFile("../openapi/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Components struct {
			Schemas struct {
				ErrorCode struct {
					Enum []string `yaml:"enum"`
				} `yaml:"ErrorCode"`
			} `yaml:"schemas"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(doc, &spec); err != nil {
		t.Fatal(err)
	}
	for _, c := range spec.Components.Schemas.ErrorCode.Enum {
		want[c] = "the OpenAPI ErrorCode enum"
	}
	if len(want) < 20 {
		t.Fatalf("found only %d server codes: %v", len(want), want)
	}
	var missing []string
	for c, from := range want {
		if !have[c] {
			missing = append(missing, c+" (from "+from+")")
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("codes without a client constant: %v", missing)
	}
}
