package deploy

// Facts read from the rest of the repository: the Dockerfile's targets, the cmd/ packages,
// ctl's commands, the variables docs/configuration.md documents, the routes each binary serves.

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contentapi/contentapi/internal/app"
)

const (
	repoRoot   = ".."
	module     = "github.com/contentapi/contentapi"
	dockerfile = "Dockerfile"
	configDoc  = "docs/configuration.md" // the table of every environment variable
)

// targets are the images deploy/Dockerfile builds, each running the binary of the same name.
var targets = []string{"api", "worker", "ctl"}

// renderTarget is the worker image with Chromium (for rendered audits), built beside the
// distroless targets.
const renderTarget = "worker-render"

func readRepoFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dockerStage is one FROM … AS name section of the Dockerfile.
type dockerStage struct {
	Name, From string
	Lines      []string // its instructions, continuation lines joined
}

func parseDockerfile(src string) []dockerStage {
	var stages []dockerStage
	var joined []string
	cur := ""
	for _, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimSpace(line)
		if cur == "" && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if strings.HasSuffix(trimmed, `\`) {
			cur += strings.TrimSuffix(trimmed, `\`) + " "
			continue
		}
		joined = append(joined, cur+trimmed)
		cur = ""
	}
	for _, l := range joined {
		f := strings.Fields(l)
		if strings.EqualFold(f[0], "FROM") {
			st := dockerStage{From: f[1]}
			if len(f) >= 4 && strings.EqualFold(f[2], "AS") {
				st.Name = f[3]
			}
			stages = append(stages, st)
			continue
		}
		if len(stages) > 0 {
			stages[len(stages)-1].Lines = append(stages[len(stages)-1].Lines, l)
		}
	}
	return stages
}

func dockerStages(t *testing.T) map[string]dockerStage {
	t.Helper()
	out := map[string]dockerStage{}
	for _, st := range parseDockerfile(readRepoFile(t, "deploy/"+dockerfile)) {
		if st.Name != "" {
			out[st.Name] = st
		}
	}
	return out
}

// instruction returns the arguments of the stage's last instruction of that name.
func (s dockerStage) instruction(name string) (string, bool) {
	var arg string
	found := false
	for _, l := range s.Lines {
		f := strings.SplitN(l, " ", 2)
		if strings.EqualFold(f[0], name) && len(f) == 2 {
			arg, found = strings.TrimSpace(f[1]), true
		}
	}
	return arg, found
}

var (
	goListOnce sync.Once
	goListOut  string
	goListErr  error
)

// goCommand runs the go tool in the module root, offline.
func goCommand(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// mainPackages runs `go list ./cmd/...` (offline) and returns the main packages by import path.
func mainPackages(t *testing.T) map[string]bool {
	t.Helper()
	goListOnce.Do(func() {
		goListOut, goListErr = goCommand("list", "-e", "-f", "{{.ImportPath}} {{.Name}}", "./cmd/...")
	})
	if goListErr != nil {
		t.Fatalf("go list ./cmd/...: %v\n%s", goListErr, goListOut)
	}
	pkgs := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(goListOut), "\n") {
		if path, name, ok := strings.Cut(line, " "); ok && name == "main" {
			pkgs[path] = true
		}
	}
	return pkgs
}

// documentedVars parses the variable table of docs/configuration.md: name → default.
func documentedVars(t *testing.T) map[string]string {
	t.Helper()
	doc := readRepoFile(t, configDoc)
	row := regexp.MustCompile("(?m)^\\| `([A-Z][A-Z0-9_]*)` \\| ([^|]*) \\|")
	vars := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(doc, -1) {
		def := strings.TrimSpace(m[2])
		if strings.HasPrefix(def, "(empty") {
			def = ""
		}
		vars[m[1]] = strings.Trim(def, "`")
	}
	if len(vars) < 10 {
		t.Fatalf("%s: found only %d variables in its table", configDoc, len(vars))
	}
	return vars
}

// isSecretVar reports whether the configuration treats the variable as a secret (masks it
// in the start log).
func isSecretVar(name string) bool {
	const probe = "probe-value"
	d := app.Describe(func(n string) string {
		if n == name {
			return probe
		}
		return ""
	})
	v, known := d[name]
	return known && v != probe
}

// ctlCommand is one command of ctl's usage text.
type ctlCommand struct {
	Name  string   // "migrate", "credits grant"
	Flags []string // "--if-empty"
}

// ctlCommands reads cmd/ctl/main.go: the commands its usage text lists that its run
// function also dispatches.
func ctlCommands(t *testing.T) map[string]ctlCommand {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(repoRoot, "cmd", "ctl", "main.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var usage string
	handled := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ValueSpec:
			for i, id := range n.Names {
				if id.Name == "usage" && i < len(n.Values) {
					if lit, ok := n.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						usage, _ = strconv.Unquote(lit.Value)
					}
				}
			}
		case *ast.FuncDecl:
			if n.Name.Name != "run" || n.Body == nil {
				return false
			}
			ast.Inspect(n.Body, func(n ast.Node) bool {
				if cc, ok := n.(*ast.CaseClause); ok {
					for _, e := range cc.List {
						if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
							s, _ := strconv.Unquote(lit.Value)
							handled[s] = true
						}
					}
				}
				return true
			})
			return false
		}
		return true
	})
	if usage == "" {
		t.Fatal("cmd/ctl/main.go: no usage constant")
	}
	_, list, ok := strings.Cut(usage, "commands:\n")
	if !ok {
		t.Fatal("cmd/ctl/main.go: usage has no commands: section")
	}
	word := regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	flag := regexp.MustCompile(`--[a-z][a-z0-9-]*`)
	cmds := map[string]ctlCommand{}
	for _, line := range strings.Split(list, "\n") {
		if !strings.HasPrefix(line, "  ") || strings.HasPrefix(line, "   ") {
			continue // blank, or the continuation of a description
		}
		synopsis := strings.TrimSpace(line)
		if i := strings.Index(synopsis, "   "); i >= 0 {
			synopsis = synopsis[:i] // drop the description
		}
		var words []string
		for _, w := range strings.Fields(synopsis) {
			if !word.MatchString(w) {
				break
			}
			words = append(words, w)
		}
		if len(words) == 0 {
			continue
		}
		c := ctlCommand{Name: strings.Join(words, " "), Flags: flag.FindAllString(synopsis, -1)}
		if handled[c.Name] {
			cmds[c.Name] = c
		}
	}
	if len(cmds) == 0 {
		t.Fatal("cmd/ctl/main.go: no command found both in usage and in run's switch")
	}
	return cmds
}

// ctlInvocation mirrors how ctl's run reads its arguments: the command is the first word,
// plus the second when that is not a flag ("credits grant"); the rest are flags and files.
func ctlInvocation(args []string) (cmd string, flags []string) {
	if len(args) == 0 {
		return "", nil
	}
	cmd = args[0]
	rest := args[1:]
	if len(args) > 1 && !strings.HasPrefix(args[1], "-") {
		cmd += " " + args[1]
		rest = args[2:]
	}
	for _, a := range rest {
		if strings.HasPrefix(a, "--") {
			name, _, _ := strings.Cut(a, "=")
			flags = append(flags, name)
		}
	}
	return cmd, flags
}

// checkCtlArgs reports why args are not a command ctl knows.
func checkCtlArgs(cmds map[string]ctlCommand, args []string) error {
	cmd, flags := ctlInvocation(args)
	c, ok := cmds[cmd]
	if !ok {
		return fmt.Errorf("ctl has no command %q (it has %v)", cmd, sortedKeys(cmds))
	}
	for _, f := range flags {
		if !slices.Contains(c.Flags, f) {
			return fmt.Errorf("ctl %s has no flag %s (its usage: %v)", cmd, f, c.Flags)
		}
	}
	return nil
}

// served lists the literal paths a set of Go files registers with the given pattern.
func served(t *testing.T, dir string, pattern *regexp.Regexp) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, filepath.FromSlash(dir), "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range pattern.FindAllStringSubmatch(string(b), -1) {
			paths[m[1]] = true
		}
	}
	return paths
}

// apiRoutes are the root-level GET routes of the API (internal/httpapi registers them on app).
func apiRoutes(t *testing.T) map[string]bool {
	return served(t, "internal/httpapi", regexp.MustCompile(`\bapp\.(?:Get|All)\("(/[^"]*)"`))
}

// workerRoutes are the paths the worker's own HTTP server handles (cmd/worker).
func workerRoutes(t *testing.T) map[string]bool {
	return served(t, "cmd/worker", regexp.MustCompile(`\.Handle(?:Func)?\("(/[^"]*)"`))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
