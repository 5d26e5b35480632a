package deploy

// The documentation against the repository: the README stays a front door, links lead
// somewhere, the docs name every operation the API serves, and nothing points at documents
// that are not in the repository.

import (
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// docFiles are the Markdown documents of the repository, by path from its root.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "CHANGELOG.md", "deploy/README.md"}
	more, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range more {
		files = append(files, "docs/"+filepath.Base(f))
	}
	return files
}

// The README is read in five minutes: at most 200 lines, opening with the two commands.
func TestREADMEIsAFrontDoor(t *testing.T) {
	lines := strings.Split(strings.TrimRight(readRepoFile(t, "README.md"), "\n"), "\n")
	if len(lines) > 200 {
		t.Errorf("README.md has %d lines; keep it to 200 and move detail to docs/", len(lines))
	}
	run := slices.IndexFunc(lines[:min(5, len(lines))], func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "make run ") })
	test := slices.IndexFunc(lines[:min(5, len(lines))], func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "make test ") })
	if run < 0 || test < run {
		t.Errorf("README.md's first lines should be a `make run` line, then a `make test` line; they are:\n%s", strings.Join(lines[:min(5, len(lines))], "\n"))
	}
}

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdHeading = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
	fence     = regexp.MustCompile("(?ms)^```.*?^```")
)

// slug is the anchor GitHub gives a heading: lower case, punctuation but hyphens and
// underscores dropped, spaces turned into hyphens.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func anchors(doc string) map[string]bool {
	out := map[string]bool{}
	for _, m := range mdHeading.FindAllStringSubmatch(fence.ReplaceAllString(doc, ""), -1) {
		out[slug(m[1])] = true
	}
	return out
}

// Every relative link of the documents names a file of the repository, and every anchor a
// heading of it.
func TestDocLinksResolve(t *testing.T) {
	for _, file := range docFiles(t) {
		doc := readRepoFile(t, file)
		for _, m := range mdLink.FindAllStringSubmatch(fence.ReplaceAllString(doc, ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			rel, anchor, _ := strings.Cut(target, "#")
			dest := file
			if rel != "" {
				dest = path.Clean(path.Join(path.Dir(file), rel))
			}
			if !exists(dest) {
				t.Errorf("%s links to %s, which does not exist", file, target)
				continue
			}
			if anchor != "" && !anchors(readRepoFile(t, dest))[anchor] {
				t.Errorf("%s links to %s: %s has no heading with that anchor", file, target, dest)
			}
		}
	}
}

func exists(rel string) bool {
	m, err := filepath.Glob(filepath.Join(repoRoot, filepath.FromSlash(rel)))
	return err == nil && len(m) == 1
}

// The repository stands alone: no document, and no comment of the code, templates,
// migrations or build files, sends the reader to a specification or design note that is not
// in it. (The names are spelt in pieces here, so this file passes its own check.)
func TestDocsStandAlone(t *testing.T) {
	outside := []string{"SPEC" + ".md", "DESIGN" + ".md", "STYLE" + ".md", "../" + "shared/"}
	text := map[string]bool{".go": true, ".md": true, ".yaml": true, ".yml": true, ".sql": true, ".html": true,
		".css": true, ".js": true, ".json": true, ".sh": true, ".tmpl": true, ".txt": true, ".example": true}
	checked := 0
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != repoRoot && (strings.HasPrefix(name, ".") && name != ".ci" || name == "bin" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !text[filepath.Ext(name)] && name != "Makefile" && !strings.HasPrefix(name, "Dockerfile") && name != "run" {
			return nil
		}
		if info, err := d.Info(); err != nil || info.Size() > 1<<20 {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		rel, _ := filepath.Rel(repoRoot, path)
		for _, ref := range outside {
			if strings.Contains(string(b), ref) {
				t.Errorf("%s refers to %s, which is not in the repository", filepath.ToSlash(rel), ref)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 300 {
		t.Fatalf("checked only %d files: the walk missed the tree", checked)
	}
}

// operations lists "METHOD /path" for every operation of the OpenAPI document.
func operations(t *testing.T) []string {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := yaml.Unmarshal([]byte(readRepoFile(t, "internal/openapi/openapi.yaml")), &doc); err != nil {
		t.Fatal(err)
	}
	var ops []string
	for p, item := range doc.Paths {
		for method := range item {
			if m := strings.ToUpper(method); slices.Contains([]string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}, m) {
				ops = append(ops, m+" "+p)
			}
		}
	}
	if len(ops) < 15 {
		t.Fatalf("openapi.yaml: found only %d operations", len(ops))
	}
	slices.Sort(ops)
	return ops
}

// docs/api.md documents every operation the API serves (the Redoc assets under /docs/ aside),
// and the README's first calls show every /v1 operation.
func TestDocsNameEveryOperation(t *testing.T) {
	ref := readRepoFile(t, "docs/api.md")
	readme := readRepoFile(t, "README.md")
	placeholder := regexp.MustCompile(`\\\{[a-z]+\\\}`)
	for _, op := range operations(t) {
		if strings.HasPrefix(op, "GET /docs/") {
			continue
		}
		if !strings.Contains(ref, "`"+op+"`") {
			t.Errorf("docs/api.md does not document `%s`", op)
		}
		method, p, _ := strings.Cut(op, " ")
		if !strings.HasPrefix(p, "/v1/") {
			continue
		}
		// A line with the method, then the path: "api GET /v1/jobs/JOB_ID" for
		// GET /v1/jobs/{id}, "curl -s -X POST localhost:8080/v1/auth/register".
		call := regexp.MustCompile(`(?m)\b` + method + `\b[^\n]*?` + placeholder.ReplaceAllString(regexp.QuoteMeta(p), `[A-Z_]+`) + `(?:[^/\w]|$)`)
		if !call.MatchString(readme) {
			t.Errorf("README.md's first calls do not show %s", op)
		}
	}
}
