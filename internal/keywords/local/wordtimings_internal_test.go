package local

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// TestWordIndexTimings is a measuring tool, skipped unless WORD_INDEX_DSN names a database
// (a kept bench-scale one): it builds the us/en word index, times each bench term's look-up
// twice with what it read, and with WORD_INDEX_ORACLE set compares three terms' most similar
// keywords with plain SQL over the whole market (minutes at 10M keywords). The figures of
// docs/keyword-data-at-scale.md, "Research from a word index", came from it.
func TestWordIndexTimings(t *testing.T) {
	dsn := os.Getenv("WORD_INDEX_DSN")
	if dsn == "" {
		t.Skip("WORD_INDEX_DSN is not set")
	}
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	t0 := time.Now()
	var v columnsVersion
	if err := pool.QueryRow(ctx, keywordsVersionSQL).Scan(&v.data, &v.token); err != nil {
		t.Fatal(err)
	}
	ix, err := (&wordStore{dir: t.TempDir()}).get(ctx, pool, market{"us", "en"}, v, true)
	if err != nil || ix == nil {
		t.Fatalf("no index: %v", err)
	}
	defer ix.release()
	t.Logf("built in %s, %d MB; after the build:", time.Since(t0).Round(time.Millisecond), ix.size>>20)
	status, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "VmHWM") || strings.HasPrefix(l, "RssAnon") || strings.HasPrefix(l, "RssFile") {
			t.Log(l)
		}
	}
	if os.Getenv("WORD_INDEX_ORACLE") != "" {
		for _, term := range []string{"how to make latte at home", "banigu americano batezoli", "nirelite kettle tusadazo"} {
			got, _ := ix.similar(term, 0.3, 500)
			rows, err := pool.Query(ctx, `SELECT keyword_norm, similarity(keyword, $1) FROM keyword_metrics
				WHERE country = 'us' AND language = 'en' ORDER BY 2 DESC, 1 LIMIT $2`, term, len(got))
			if err != nil {
				t.Fatal(err)
			}
			have := map[string]bool{}
			for _, f := range got {
				have[f.key] = true
			}
			missing := 0
			var k string
			var sim float32
			if _, err := pgx.ForEachRow(rows, []any{&k, &sim}, func() error {
				if !have[k] && sim > got[len(got)-1].sim {
					missing++
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d of the exact %d most similar missing", term, missing, len(got))
		}
	}
	terms := []string{"how to make latte at home", "espresso machine", "best coffee grinder", "cold brew coffee maker", "french press ratio",
		"latte", "coffee", "arabica", "home", "espresso",
		"banigu americano batezoli", "mohagulo nilopo", "nirelite kettle tusadazo", "rezolote migufeha posalo", "pote liruba molomigu"}
	for _, term := range terms {
		for range 2 {
			var st lookupStats
			t0 := time.Now()
			got, _ := ix.similarStats(term, 0.3, 500, &st)
			took := time.Since(t0)
			bar := float32(0)
			if len(got) > 0 {
				bar = got[len(got)-1].sim
			}
			t.Logf("%-28s %6.1f ms: %d found, bar %.3f; %d words share a trigram, %d of %d sets read, %d postings, %d keywords checked",
				term, float64(took.Microseconds())/1000, len(got), bar, st.words, st.setsRead, st.sets, st.postings, st.verified)
		}
	}
}
