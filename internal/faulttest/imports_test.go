package faulttest

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rankSpan is a domain ranking for keywords "kw <from>" to "kw <to-1>", at position
// 1 + i mod 20 (plus shift, wrapped into 1 to 20) for keyword i.
type rankSpan struct {
	domain   string
	from, to int
	shift    int
}

func (r rankSpan) position(i int) int { return 1 + (i+r.shift)%20 }

// TestImportsAnsweredThroughTheBinaries is the import history that once left paid answers
// stale, run through the real binaries: ctl imports rankings three times into one database
// while the api and worker serve — a first file, a superset three times its size (loaded
// into a new table and switched in), then a smaller file that changes positions and adds
// rows (merged) — and after each, gaps and rankings totals (and rankings at positions 1 to 5)
// asked through the API equal what the files put there, counted here from the files.
func TestImportsAnsweredThroughTheBinaries(t *testing.T) {
	s := newStack(t)
	s.startServices()
	ctx := context.Background()
	key := s.register("imports@example.com")
	s.ctl("plan", "set", "--email", "imports@example.com", "--plan", "enterprise", "--rate-limit", "100000", "--credits-monthly", "0")
	s.ctl("credits", "grant", "--email", "imports@example.com", "--amount", "100000")

	const mine, rival = "mine.example", "rival.example"
	steps := []struct {
		name  string
		spans []rankSpan
	}{
		{"first file (30,000 rows)", []rankSpan{{mine, 0, 10_000, 0}, {rival, 5_000, 25_000, 0}}},
		{"superset, three times the size (switched in)", []rankSpan{{mine, 0, 30_000, 0}, {rival, 5_000, 65_000, 0}}},
		{"smaller file, positions changed and rows added (merged)", []rankSpan{{mine, 0, 2_000, 7}, {mine, 70_000, 71_000, 0}, {rival, 71_000, 73_000, 0}}},
	}
	// The rows in the database after each step, by domain and keyword: a merge overwrites
	// the positions it names and keeps the rest; a switched-in table is the file itself.
	rows := map[string]map[int]int{mine: {}, rival: {}}
	for n, step := range steps {
		var csv strings.Builder
		csv.WriteString("domain,keyword,position,url\n")
		for _, sp := range step.spans {
			for i := sp.from; i < sp.to; i++ {
				fmt.Fprintf(&csv, "%s,kw %06d,%d,https://%s/p/%d\n", sp.domain, i, sp.position(i), sp.domain, i)
				rows[sp.domain][i] = sp.position(i)
			}
		}
		path := filepath.Join(s.dir, fmt.Sprintf("rankings-%d.csv", n))
		if err := os.WriteFile(path, []byte(csv.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		s.ctl("import", "rankings", path)

		wantGaps, wantRankings, wantTop5 := 0, len(rows[mine]), 0
		for i := range rows[rival] {
			if _, ok := rows[mine][i]; !ok {
				wantGaps++
			}
		}
		for _, p := range rows[mine] {
			if p <= 5 {
				wantTop5++
			}
		}
		got := func(path string, body map[string]any) int {
			t.Helper()
			a, err := s.do(ctx, http.MethodPost, path, key, body)
			if err != nil || a.status != http.StatusOK {
				t.Fatalf("%s after %s: %v %d %s", path, step.name, err, a.status, snippet(a.raw))
			}
			total, _ := a.data()["total"].(float64)
			return int(total)
		}
		gaps := got("/v1/keywords/gaps", map[string]any{"domain": mine, "competitors": []string{rival}, "limit": 1})
		rankings := got("/v1/keywords/rankings", map[string]any{"domain": mine, "limit": 1})
		top5 := got("/v1/keywords/rankings", map[string]any{"domain": mine, "limit": 1, "filters": map[string]any{"position": map[string]any{"max": 5}}})
		t.Logf("after the %s: gaps %d, rankings %d, top-5 %d (the files: %d, %d, %d)", step.name, gaps, rankings, top5, wantGaps, wantRankings, wantTop5)
		if gaps != wantGaps || rankings != wantRankings || top5 != wantTop5 {
			t.Errorf("after the %s: gaps / rankings / top-5 totals %d / %d / %d, the files put %d / %d / %d there",
				step.name, gaps, rankings, top5, wantGaps, wantRankings, wantTop5)
		}
	}
}
