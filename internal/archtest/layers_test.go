package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/contentapi/contentapi"

// floors places every package of the module, bottom first. A package imports only packages
// on its own floor or below; a new package gets a floor here before it builds into tests.
var floors = [][]string{
	// 0: no project imports: errors, time, names, metrics, text, the document, the client (a
	// module of its own, listed with this one's packages through the replace in go.mod).
	{"internal/apperr", "internal/clock", "internal/hostname", "internal/redact", "internal/metrics",
		"internal/plan", "internal/stem", "internal/numfmt", "internal/faulttest", "internal/openapi",
		"internal/billing/billingtest", "internal/archtest", "client"},
	// 1: infrastructure: PostgreSQL, Redis rate limits, the crawler, request bodies.
	{"internal/postgres", "internal/ratelimit", "internal/crawler", "internal/jsonbody", "internal/testenv",
		"internal/openapi/openapitest", "internal/crawler/crawltest"},
	// 2: keyword data: the provider interface and its providers and importers.
	{"internal/keywords", "internal/keywords/cache", "internal/keywords/dataforseo",
		"internal/keywords/local", "internal/keywords/importer", "internal/keywords/sample"},
	// 3: pure analysis (the audit's checks among it) and the credit ledger.
	{"internal/analysis", "internal/audit", "internal/credits"},
	// 4: services: accounts, jobs, the analyses' answers.
	{"internal/auth", "internal/job", "internal/report"},
	// 5: configuration and billing (which reads its price ids from it).
	{"internal/config", "internal/billing"},
	// 6: adapters: HTTP, the dashboard, asynq handlers.
	{"internal/httpapi", "internal/dashboard", "jobs", "internal/mcpserver"},
	// 7: composition: the binaries, their wiring, examples, deployment checks and the client
	// run against the whole service.
	{"internal/app", "internal/app/api", "internal/app/worker", "internal/app/apptest", "cmd/*", "examples/*", "deploy",
		"internal/clienttest"},
}

// concrete are packages only composition, and their own concern, may import: the rest use
// the interface they implement (keywords.Provider).
var concrete = map[string][]string{
	"internal/keywords/local":      {"internal/keywords/", "internal/app/worker", "cmd/"},
	"internal/keywords/dataforseo": {"internal/keywords/", "internal/app/worker", "cmd/"},
	"internal/keywords/cache":      {"internal/keywords/", "internal/app/worker", "cmd/"},
}

// frameworks are third-party packages only the named places may import (the prefixes of
// package paths): Fiber stays in the HTTP adapters, asynq in the job adapters and wiring,
// so the analyses and services below them are tested without either.
var frameworks = map[string][]string{
	"github.com/gofiber/fiber/v2": {"internal/httpapi", "internal/dashboard", "internal/app/api", "cmd/api"},
	// The HTTP side reaches the binaries only through internal/app/api, so the worker and
	// ctl do not link Fiber, the dashboard or the queue dashboard.
	"internal/httpapi":            {"internal/app/api", "cmd/api"},
	"internal/dashboard":          {"internal/httpapi", "internal/app/api", "cmd/api"},
	"github.com/hibiken/asynqmon": {"internal/app/api"},
	// The MCP SDK stays in the MCP server, and reaches the api (through the HTTP side) and
	// ctl mcp: the worker does not link it.
	"github.com/modelcontextprotocol/go-sdk": {"internal/mcpserver"},
	"internal/mcpserver":                     {"internal/httpapi", "internal/app/api", "cmd/api", "cmd/ctl"},
	"github.com/hibiken/asynq":               {"jobs", "internal/config", "internal/app", "cmd/"},
}

func TestImportsRunDownward(t *testing.T) {
	pkgs := listPackages(t)
	if len(pkgs) < 30 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	for _, problem := range check(pkgs) {
		t.Error(problem)
	}
}

// The check itself finds an import running back up, an unplaced package and a concrete
// provider imported where its interface belongs.
func TestCheckFindsViolations(t *testing.T) {
	pkgs := map[string][]string{
		"internal/keywords/local": {"internal/keywords", "internal/analysis"},
		"internal/analysis":       {"internal/keywords", "internal/stem"},
		"internal/report":         {"internal/keywords/local"},
		"internal/newthing":       {"internal/apperr"},
		"cmd/worker":              {"internal/keywords/local", "internal/report"},
		"internal/auth":           {"github.com/gofiber/fiber/v2/middleware/adaptor"},
	}
	got := check(pkgs)
	for _, want := range []string{
		"internal/keywords/local (floor 2) imports internal/analysis (floor 3)",
		"internal/newthing has no floor",
		"internal/report imports internal/keywords/local",
		"internal/auth imports github.com/gofiber/fiber/v2/middleware/adaptor",
	} {
		if !slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, want) }) {
			t.Errorf("check missed %q; found %q", want, got)
		}
	}
	if len(got) != 4 {
		t.Errorf("check found %d problems, want 4: %q", len(got), got)
	}
}

// check returns every import of pkgs (package → its imports, the module's relative to it)
// that runs up the floors, reaches a concrete provider or a framework outside its places,
// and every package without a floor.
func check(pkgs map[string][]string) []string {
	var problems []string
	names := make([]string, 0, len(pkgs))
	for p := range pkgs {
		names = append(names, p)
	}
	slices.Sort(names)
	for _, p := range names {
		floor, ok := floorOf(p)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s has no floor: place it in floors", p))
			continue
		}
		for _, imp := range pkgs[p] {
			if f, ok := floorOf(imp); ok && f > floor {
				problems = append(problems, fmt.Sprintf("%s (floor %d) imports %s (floor %d): the import runs back up", p, floor, imp, f))
			}
			if allowed, ok := concrete[imp]; ok && !within(p, allowed) {
				problems = append(problems, fmt.Sprintf("%s imports %s: use the interface it implements", p, imp))
			}
			for fw, allowed := range frameworks {
				if (imp == fw || strings.HasPrefix(imp, fw+"/")) && !within(p, allowed) {
					problems = append(problems, fmt.Sprintf("%s imports %s: only %s may", p, imp, strings.Join(allowed, ", ")))
				}
			}
		}
	}
	return problems
}

// within reports whether pkg is one of places or below one ending in "/".
func within(pkg string, places []string) bool {
	return slices.ContainsFunc(places, func(a string) bool {
		return pkg == a || (strings.HasSuffix(a, "/") && strings.HasPrefix(pkg, a))
	})
}

func floorOf(pkg string) (int, bool) {
	for i, f := range floors {
		for _, p := range f {
			if p == pkg || (strings.HasSuffix(p, "/*") && strings.HasPrefix(pkg, strings.TrimSuffix(p, "*"))) {
				return i, true
			}
		}
	}
	return 0, false
}

// listPackages runs go list over the module: each package's non-test imports, the module's
// relative to it, others (outside the standard library) by their paths.
func listPackages(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, stderr.String())
	}
	pkgs := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		var own []string
		for _, imp := range p.Imports {
			if rel, ok := relative(imp); ok {
				own = append(own, rel)
			} else if strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") {
				own = append(own, imp)
			}
		}
		if rel, ok := relative(p.ImportPath); ok {
			pkgs[rel] = own
		}
	}
	return pkgs
}

func relative(path string) (string, bool) {
	if path == module {
		return ".", true
	}
	return strings.CutPrefix(path, module+"/")
}
