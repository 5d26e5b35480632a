package local_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sync"
	"testing"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/local"
)

// Workers sharing a directory share a market's columns through one file: the first to need
// them loads them from the database and writes the file, the others (asking at the same
// time included) map it. A damaged file is reported, loaded again and rewritten; new data
// gets a new file and the market's older one is removed.
func TestColumnFilesShared(t *testing.T) {
	pool := setsFixture(t)
	ctx := context.Background()
	dir := t.TempDir()
	var mu sync.Mutex
	var warned []error
	worker := func() *local.Provider {
		return local.New(pool, local.WithColumnFiles(dir, func(err error) {
			mu.Lock()
			defer mu.Unlock()
			warned = append(warned, err)
		}))
	}
	req := keywords.GapsRequest{Domain: "ours.example", Competitors: []string{"comp1.example"}, Country: "pg", Language: "en", Limit: 7,
		Filters: keywords.Filters{Include: []string{"alpha"}}, Order: []keywords.OrderKey{{Field: keywords.FieldDifficulty}}}
	want, err := local.New(pool).Gaps(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	// ask asks req of n new workers at once and checks their answers, from the columns, and
	// how many loaded the columns from the database and how many mapped a file.
	ask := func(t *testing.T, n int, wantLoads, wantOpens int64) {
		t.Helper()
		loads, opens, answers := local.ColumnLoads(), local.ColumnFileOpens(), local.ColumnAnswers()
		var wg sync.WaitGroup
		got := make([]keywords.GapList, n)
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() { got[i], errs[i] = worker().Gaps(ctx, req) })
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			if !reflect.DeepEqual(got[i], want) {
				t.Fatalf("worker %d: %+v, want %+v", i, got[i], want)
			}
		}
		if a := local.ColumnAnswers() - answers; a != int64(n) {
			t.Fatalf("%d of %d answers from the columns", a, n)
		}
		if l, o := local.ColumnLoads()-loads, local.ColumnFileOpens()-opens; l != wantLoads || o != wantOpens {
			t.Fatalf("%d loads from the database and %d files mapped, want %d and %d", l, o, wantLoads, wantOpens)
		}
	}
	files := func(t *testing.T) []string {
		t.Helper()
		names, err := filepath.Glob(filepath.Join(dir, "pg-en-*.cols"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			st, err := os.Stat(name)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != 0o600 {
				t.Errorf("%s is %v, want -rw-------", name, st.Mode().Perm())
			}
		}
		return names
	}

	ask(t, 3, 1, 2) // one loads and writes, two wait for its file
	first := files(t)
	if len(first) != 1 {
		t.Fatalf("column files %v, want one", first)
	}
	ask(t, 1, 0, 1)

	// One byte changed: refused with a warning, loaded again, written again.
	b, err := os.ReadFile(first[0])
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-3] ^= 0x20
	if err := os.WriteFile(first[0], b, 0o600); err != nil {
		t.Fatal(err)
	}
	ask(t, 1, 1, 0)
	if len(warned) != 1 {
		t.Fatalf("warnings %v, want one for the damaged file", warned)
	}
	ask(t, 1, 0, 1)

	// New data (a write moves the data's token on): a new file, the old one removed.
	token := func() (tok [16]byte) {
		if err := pool.QueryRow(ctx, `SELECT token FROM keyword_data_state`).Scan(&tok); err != nil {
			t.Fatal(err)
		}
		return tok
	}
	before := token()
	if _, err := pool.Exec(ctx, `DELETE FROM domain_rankings WHERE false`); err != nil {
		t.Fatal(err)
	}
	if token() == before {
		t.Fatal("a write to the rankings left the data's token as it was")
	}
	if err := local.BuildKeywordSets(ctx, pool); err != nil {
		t.Fatal(err)
	}
	ask(t, 2, 1, 1)
	if now := files(t); len(now) != 1 || now[0] == first[0] {
		t.Fatalf("column files %v after new data, want one other than %v", now, first)
	}
	if len(warned) != 1 {
		t.Fatalf("warnings %v", warned)
	}
}

// A column file built in place from the database, its pages let go as it is written, holds
// the bytes a file written from the same columns in the heap holds.
func TestColumnFileBuiltInPlace(t *testing.T) {
	pool := setsFixture(t)
	old := local.SetMappedMemoryLimit(1) // every check of the bound lets the pages go
	t.Cleanup(func() { local.SetMappedMemoryLimit(old) })
	built, written, err := local.ColumnFilesBothWays(context.Background(), pool, t.TempDir(), "pg", "en")
	if err != nil {
		t.Fatal(err)
	}
	if len(built) < 600*(8*3+4+1) {
		t.Fatalf("a column file of %d bytes for 600 keywords", len(built))
	}
	if !bytes.Equal(built, written) {
		at := 0
		for at < min(len(built), len(written)) && built[at] == written[at] {
			at++
		}
		t.Fatalf("the built file (%d bytes) differs from the written one (%d bytes) at byte %d", len(built), len(written), at)
	}
}

// A column file whose pages fail under the load (here: the file cut to nothing once mapped,
// so every write through the mapping faults) fails that load with an error, leaves no file
// behind, and the process goes on.
func TestColumnFileFaultFailsTheLoad(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("column files are written in place on Linux only")
	}
	pool := setsFixture(t)
	dir := t.TempDir()
	err := local.BuildColumnFileCutShort(t, pool, dir, "pg", "en")
	if err == nil {
		t.Fatal("a load writing through a mapping of nothing succeeded")
	}
	t.Log(err)
	if names, _ := filepath.Glob(filepath.Join(dir, "*")); len(names) != 0 {
		t.Fatalf("files left behind: %v", names)
	}
}
