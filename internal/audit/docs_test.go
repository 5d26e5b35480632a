package audit

import (
	"os"
	"strings"
	"testing"
)

// TestDocsListEveryType: docs/audit-checks.md has a row for every registered type, with
// its severity, so the document cannot fall behind the checks.
func TestDocsListEveryType(t *testing.T) {
	b, err := os.ReadFile("../../docs/audit-checks.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, c := range Checks() {
		if row := "| `" + c.Type + "` | " + c.Severity + " |"; !strings.Contains(doc, row) {
			t.Errorf("docs/audit-checks.md has no row starting %q", row)
		}
	}
}
