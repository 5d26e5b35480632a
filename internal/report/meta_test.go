package report

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/dataforseo"
	"github.com/contentapi/contentapi/internal/keywords/local"
)

func TestAnswerMeta(t *testing.T) {
	made, real := keywords.Keyword{Keyword: "a", Synthetic: true}, keywords.Keyword{Keyword: "b"}
	count := func(ks ...keywords.Keyword) rows {
		var c rows
		c.add(ks...)
		return c
	}
	loc := &Builder{Keywords: local.New(nil)}
	dfs := &Builder{Keywords: dataforseo.New(dataforseo.Config{})}
	tests := []struct {
		name    string
		b       *Builder
		rows    rows
		source  string
		warning string // a warning it must carry, "" for none
	}{
		{"all synthetic", loc, count(made, made), sourceSynthetic, syntheticWarning},
		{"some synthetic", loc, count(made, real, real), sourceMixed, "1 of its 3 keyword rows are made up"},
		{"imported", loc, count(real), sourceImported, ""},
		{"no rows", loc, count(), sourceImported, ""},
		{"provider", dfs, count(real), sourceProvider, ""},
	}
	for _, tt := range tests {
		m := tt.b.meta(tt.rows, []string{"own warning"})
		if m.DataSource != tt.source || m.Warnings[0] != "own warning" {
			t.Errorf("%s: %+v, want %s with the answer's own warning first", tt.name, m, tt.source)
		}
		if got := strings.Join(m.Warnings[1:], "\n"); (tt.warning == "") != (got == "") || !strings.Contains(got, tt.warning) {
			t.Errorf("%s: warnings %q, want %q", tt.name, m.Warnings, tt.warning)
		}
	}

	// The meta travels beside the result, never inside its JSON, and is read back as stored.
	res := ResearchResult{Domain: "x.example", Clusters: []ClusterRecord{}}
	res.meta = loc.meta(count(made), nil)
	body, _ := json.Marshal(res)
	if strings.Contains(string(body), "synthetic") || strings.Contains(string(body), "data_source") {
		t.Errorf("result JSON %s carries its meta", body)
	}
	stored, _ := json.Marshal(res.AnswerMeta())
	if got, ok := StoredMeta(stored); !ok || !reflect.DeepEqual(got, res.meta) {
		t.Errorf("stored meta %s read back as %+v, %v", stored, got, ok)
	}
	if _, ok := StoredMeta(nil); ok {
		t.Error("a job without stored meta has none")
	}
}
