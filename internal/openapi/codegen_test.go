package openapi

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	// The runtime the generated client imports: kept in go.mod by this import, at the
	// version TestGeneratedClientBuilds compiles against.
	_ "github.com/oapi-codegen/runtime"
)

// The document generates a Go client with oapi-codegen (go.mod's tool, its default options
// for types and client) that builds and passes go vet, and every documented error answer's
// generated type keeps its code (a string type) and its message.
func TestGeneratedClientBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a generated client")
	}
	// Inside the module, so go.mod's versions apply; "_" keeps it out of ./... patterns.
	dir, err := os.MkdirTemp(".", "_generated-client-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "openapi.json"), JSON(""), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("tool", "oapi-codegen", "-generate", "types,client", "-package", "client", "-o", "client.gen.go", "openapi.json")
	if err := os.WriteFile(filepath.Join(dir, "errors_check.go"), errorFieldChecks(t), 0o600); err != nil {
		t.Fatal(err)
	}
	run("build", ".")
	run("vet", ".")
}

// errorFieldChecks is Go source, compiled with the generated client, that reads Code (as a
// string) and Message of the generated type of every error answer of every operation: the
// client's <Operation>Response wrapper's JSON<status> field.
func errorFieldChecks(t *testing.T) []byte {
	t.Helper()
	d := doc(t)
	var lines []string
	for _, item := range d["paths"].(map[string]any) {
		for _, o := range item.(map[string]any) {
			o := o.(map[string]any)
			wrapper := strings.ToUpper(o["operationId"].(string)[:1]) + o["operationId"].(string)[1:] + "Response"
			for status, r := range o["responses"].(map[string]any) {
				if len(status) != 3 || status < "400" {
					continue
				}
				r := resolve(d, r.(map[string]any))
				content, _ := r["content"].(map[string]any)
				if content["application/json"] == nil {
					continue
				}
				schema, _ := json.Marshal(content["application/json"])
				field := "r.JSON" + status
				switch s := string(schema); {
				case strings.Contains(s, "#/components/schemas/ValidationErrorBody"):
					field += ".Error"
				case strings.Contains(s, "#/components/schemas/AuthErrorBody"), strings.Contains(s, "#/components/schemas/BillingErrorBody"):
				default:
					continue // not an error body (readyz's 503 reports its checks)
				}
				lines = append(lines, fmt.Sprintf("func _(r %s) (string, string) { return string(%s.Code), %s.Message }", wrapper, field, field))
			}
		}
	}
	if len(lines) < 50 {
		t.Fatalf("only %d error answers found", len(lines))
	}
	sort.Strings(lines)
	return []byte("package client\n\n" + strings.Join(lines, "\n") + "\n")
}
