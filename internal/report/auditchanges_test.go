package report

import (
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestCompareAudits(t *testing.T) {
	at := time.Date(2026, 3, 1, 8, 0, 0, 0, time.FixedZone("CET", 3600))
	many := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = "https://x.test/p" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		}
		slices.Sort(out)
		return out
	}
	prev := AuditSnapshot{JobID: "j1", At: at, Issues: map[string]SnapshotIssue{
		IssueMissingTitle:           {SeverityError, 2, []string{"https://x.test/a", "https://x.test/b"}},
		IssueDuplicateTitle:         {SeverityWarning, 2, []string{"https://x.test/c", "https://x.test/d"}},
		IssueMissingMetaDescription: {SeverityWarning, 3, []string{"https://x.test/a", "https://x.test/b", "https://x.test/c"}},
		IssueMissingH1:              {SeverityWarning, 150, many(100)},
	}}
	cur := map[string]SnapshotIssue{
		IssueBrokenInternalLink:     {SeverityError, 1, []string{"https://x.test/gone"}},
		IssueDuplicateTitle:         {SeverityWarning, 3, []string{"https://x.test/c", "https://x.test/d", "https://x.test/e"}},
		IssueMissingMetaDescription: {SeverityWarning, 1, []string{"https://x.test/c"}},
		IssueMissingH1:              {SeverityWarning, 150, many(100)},
	}
	got := compareAudits(prev, cur)
	want := &AuditChanges{
		PreviousJobID: "j1", PreviousAt: at.UTC(),
		New:    []string{IssueBrokenInternalLink},
		Fixed:  []string{IssueMissingTitle},
		Grown:  []IssueCountChange{{IssueDuplicateTitle, 2, 3}},
		Shrunk: []IssueCountChange{{IssueMissingMetaDescription, 3, 1}},
		URLsAppeared: map[string][]string{
			IssueBrokenInternalLink: {"https://x.test/gone"},
			IssueDuplicateTitle:     {"https://x.test/e"},
		},
		URLsDisappeared: map[string][]string{
			IssueMissingTitle:           {"https://x.test/a", "https://x.test/b"},
			IssueMissingMetaDescription: {"https://x.test/a", "https://x.test/b"},
		},
		// 150 URLs, 100 listed both times: the lists prove nothing about the other 50.
		URLsNotCompared: []string{IssueMissingH1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("compareAudits =\n%+v\nwant\n%+v", got, want)
	}

	same := compareAudits(AuditSnapshot{JobID: "j2", At: at, Issues: cur}, cur)
	if len(same.New)+len(same.Fixed)+len(same.Grown)+len(same.Shrunk)+len(same.URLsAppeared)+len(same.URLsDisappeared) != 0 {
		t.Errorf("an audit compared with an identical one: %+v, want no change", same)
	}
	if got := missingFrom(many(100), nil); len(got) != MaxIssueURLs {
		t.Errorf("missingFrom lists %d URLs, want at most %d", len(got), MaxIssueURLs)
	}
}
