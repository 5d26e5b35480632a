package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/contentapi/contentapi/internal/crawler"
)

func TestDefuse(t *testing.T) {
	cases := map[string]string{
		"=HYPERLINK(\"x\")":      "'=HYPERLINK(\"x\")",
		"+cmd":                   "'+cmd",
		"@SUM(A1)":               "'@SUM(A1)",
		"-12.5":                  "-12.5",
		"-2+3+cmd|' /C calc'!A0": "'-2+3+cmd|' /C calc'!A0", // a formula led by a minus sign
		"\tcmd":                  "'\tcmd",
		"\r=1+1":                 "'\r=1+1",
		"+1":                     "+1", // a number stays a number
		"cold brew":              "cold brew",
		"":                       "",
	}
	for in, want := range cases {
		if got := defuse(in); got != want {
			t.Errorf("defuse(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestAuditCSVColumns: every page row carries its depth, how it was found, what rendering
// showed and the issue types listing it; error rows carry their issues too.
func TestAuditCSVColumns(t *testing.T) {
	depth := 2
	status := 404
	res := AuditResult{
		Pages: []AuditPage{
			{URL: "https://a.example/", Status: 200, Title: "Home", Depth: new(int), Source: "both",
				Rendered: &crawler.Rendered{Title: "Home | App", WordCount: 320}},
			{URL: "https://a.example/deep", Status: 200, Title: "=cmd", Depth: &depth, Source: "links",
				Rendered: &crawler.Rendered{Error: "rendering timed out after 15s"}},
		},
		Errors: []PageError{{URL: "https://a.example/gone", Status: &status}},
		Issues: []AuditIssue{
			{Type: "broken_pages", URLs: []string{"https://a.example/gone"}},
			{Type: "missing_meta_description", URLs: []string{"https://a.example/", "https://a.example/deep"}},
			{Type: "deep_pages", URLs: []string{"https://a.example/deep"}},
		},
	}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	out, err := CSV(string(KindAudit), raw)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"url", "status", "title", "word_count", "meta_description", "thin", "noindex", "cannibalization_keywords",
			"depth", "source", "rendered_title", "rendered_word_count", "render_error", "issues"},
		{"https://a.example/", "200", "Home", "0", "", "false", "false", "", "0", "both", "Home | App", "320", "", "missing_meta_description"},
		{"https://a.example/deep", "200", "'=cmd", "0", "", "false", "false", "", "2", "links", "", "", "rendering timed out after 15s",
			"missing_meta_description; deep_pages"},
		{"https://a.example/gone", "404", "", "", "", "", "", "", "", "", "", "", "", "broken_pages"},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("audit CSV:\n got %q\nwant %q", rows, want)
	}
}
