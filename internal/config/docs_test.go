package config

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// Every variable is documented in docs/configuration.md with its default: a row
// "| `NAME` | default | meaning |", the default in backquotes, or "(empty…)" for none.
func TestDocsListEveryVariable(t *testing.T) {
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([A-Z][A-Z0-9_]*)` \\| ([^|]*) \\|")
	documented := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]] = strings.TrimSpace(m[2])
	}
	for _, v := range vars {
		def, ok := documented[v.name]
		switch {
		case !ok:
			t.Errorf("docs/configuration.md does not list %s", v.name)
		case v.def == "" && !strings.HasPrefix(def, "(empty"):
			t.Errorf("docs/configuration.md gives %s the default %s; it has none, so write (empty…)", v.name, def)
		case v.def != "" && def != "`"+v.def+"`":
			t.Errorf("docs/configuration.md gives %s the default %s, want `%s`", v.name, def, v.def)
		}
		delete(documented, v.name)
	}
	for name := range documented {
		t.Errorf("docs/configuration.md lists %s, which the configuration does not read", name)
	}
}
