package importer_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/keywords/importer"
	"github.com/contentapi/contentapi/internal/testenv"
)

// getURLs returns the URLs stored for a domain's keyword, sorted ("" for none).
func getURLs(t *testing.T, pool *pgxpool.Pool, domain, country, keyword string) []string {
	t.Helper()
	return queryStrings(t, pool, `
		SELECT coalesce(url, '') FROM domain_rankings
		WHERE domain = $1 AND country = $2 AND language = 'en' AND keyword_norm = keyword_normalize($3)
		ORDER BY 1`, domain, country, keyword)
}

// queryStrings returns the one text column of a query's rows.
func queryStrings(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func gz(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// A Search Console export lists every page of a query: each is kept, a row repeating a
// page is merged (best position) and reported as merged, not as loaded; a later file for
// the same query replaces its pages.
func TestImportRankingsSeveralURLsPerKeyword(t *testing.T) {
	pool := testenv.Postgres(t)
	ctx := context.Background()
	file := "Query,Page,Position\n" +
		"aeropress recipe,https://brewlab.example/aeropress,3\n" +
		"aeropress recipe,https://brewlab.example/blog/aeropress-guide,7\n" +
		"aeropress recipe,https://brewlab.example/aeropress,5\n" + // the first page again, worse
		"moka pot,https://brewlab.example/moka,2\n"
	rep, err := importer.ImportRankings(ctx, pool, strings.NewReader(file), importer.Options{Country: "ca"})
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, rep, 4, 3, nil)
	if rep.Merged != 1 || rep.Unchanged != 0 {
		t.Errorf("merged %d unchanged %d, want 1 and 0", rep.Merged, rep.Unchanged)
	}
	want := []string{"https://brewlab.example/aeropress", "https://brewlab.example/blog/aeropress-guide"}
	if got := getURLs(t, pool, "brewlab.example", "ca", "aeropress recipe"); !slices.Equal(got, want) {
		t.Errorf("URLs %v, want %v", got, want)
	}
	if pos, _ := getPosition(t, pool, "brewlab.example", "ca", "aeropress recipe"); pos != 3 {
		t.Errorf("best position %d, want 3", pos)
	}

	// A newer export where the guide no longer ranks: its row goes; moka pot, not in the
	// file, stays.
	file = "Query,Page,Position\naeropress recipe,https://brewlab.example/aeropress,2\n"
	if _, err := importer.ImportRankings(ctx, pool, strings.NewReader(file), importer.Options{Country: "ca"}); err != nil {
		t.Fatal(err)
	}
	if got := getURLs(t, pool, "brewlab.example", "ca", "aeropress recipe"); !slices.Equal(got, want[:1]) {
		t.Errorf("after the newer export: URLs %v, want %v", got, want[:1])
	}
	if got := getURLs(t, pool, "brewlab.example", "ca", "moka pot"); len(got) != 1 {
		t.Errorf("moka pot URLs %v, want its one page kept", got)
	}
}

// A gzip file is recognised by its content, whatever its name, and loads like the plain one.
func TestImportGzip(t *testing.T) {
	pool := testenv.Postgres(t)
	ctx := context.Background()
	plain := "keyword,volume,kd\nzipped keyword,880,12\nzipped other,-,\n"
	rep, err := importer.ImportKeywords(ctx, pool, bytes.NewReader(gz(t, plain)), importer.Options{Country: "ie"})
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, rep, 2, 2, nil)
	checkMetrics(t, getMetrics(t, pool, "ie", "en", "zipped keyword"), "zipped keyword", i64(880), f64(12), nil, nil, nil)

	// A damaged gzip file fails the import and loads nothing.
	damaged := gz(t, "keyword,volume\n"+strings.Repeat("broken zip row,1\n", 5000))
	damaged = damaged[:len(damaged)/2]
	if _, err := importer.ImportKeywords(ctx, pool, bytes.NewReader(damaged), importer.Options{Country: "nz"}); err == nil {
		t.Fatal("a truncated gzip file imported without error")
	}
	if getMetrics(t, pool, "nz", "en", "broken zip row") != nil {
		t.Error("rows of the failed import were stored")
	}
}

// Importing the same file again reports every row unchanged and rewrites none of them.
func TestReimportIsIdempotent(t *testing.T) {
	pool := testenv.Postgres(t)
	ctx := context.Background()
	file := "Keyword,Domain,Position,URL,Search Volume,KD\n" +
		"idem one,idem.example,4,https://idem.example/one,100,20\n" +
		"idem one,idem.example,9,https://idem.example/uno,100,20\n" +
		"idem two,idem.example,1,https://idem.example/two,50,\n"
	opts := importer.Options{Country: "au", Source: "semrush"}
	first, err := importer.ImportRankings(ctx, pool, strings.NewReader(file), opts)
	if err != nil {
		t.Fatal(err)
	}
	state := func() string {
		var s string
		if err := pool.QueryRow(ctx, `SELECT
			(SELECT string_agg(xmin::text || url || position || updated_at::text, ',' ORDER BY url) FROM domain_rankings WHERE country = 'au')
			|| (SELECT string_agg(xmin::text || keyword || updated_at::text, ',' ORDER BY keyword) FROM keyword_metrics WHERE country = 'au')`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := state()
	second, err := importer.ImportRankings(ctx, pool, strings.NewReader(file), opts)
	if err != nil {
		t.Fatal(err)
	}
	if first.Loaded != 3 || first.Unchanged != 0 || second.Loaded != 3 || second.Unchanged != 3 {
		t.Errorf("reports %+v then %+v; want 3 loaded, then 3 loaded and unchanged", first, second)
	}
	if after := state(); after != before {
		t.Errorf("re-import rewrote rows:\n%s\n%s", before, after)
	}
}

// Rejected rows are left out of the COPY stream while the rows around them load; the
// report lists the first MaxRejectionDetails and counts them all.
func TestImportRejectsRowsInTheStream(t *testing.T) {
	pool := testenv.Postgres(t)
	var b strings.Builder
	b.WriteString("keyword,volume\nstream first,1\n")
	bad := importer.MaxRejectionDetails + 5
	for i := 0; i < bad; i++ {
		fmt.Fprintf(&b, "stream bad %d,lots\n", i)
	}
	b.WriteString("stream last,2\n")
	var calls []int
	rep, err := importer.ImportKeywords(context.Background(), pool, strings.NewReader(b.String()),
		importer.Options{Country: "za", Progress: func(read int) { calls = append(calls, read) }})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Read != bad+2 || rep.Loaded != 2 || rep.RejectedRows != bad || len(rep.Rejected) != importer.MaxRejectionDetails {
		t.Fatalf("report read %d loaded %d rejected %d (%d listed)", rep.Read, rep.Loaded, rep.RejectedRows, len(rep.Rejected))
	}
	if r := rep.Rejected[0]; r.Line != 3 || !strings.Contains(r.Reason, `"lots" is not a number`) {
		t.Errorf("first rejection %+v", r)
	}
	for _, k := range []string{"stream first", "stream last"} {
		if getMetrics(t, pool, "za", "en", k) == nil {
			t.Errorf("%q not loaded", k)
		}
	}
	if len(calls) == 0 || calls[len(calls)-1] != rep.Read {
		t.Errorf("progress calls %v; the last must report all %d rows read", calls, rep.Read)
	}
}

// endless is a 32 MiB run of one byte (as good as endless), counting what was read of it.
type endless struct {
	fill byte
	read int
}

func (e *endless) Read(p []byte) (int, error) {
	if e.read >= 32<<20 {
		return 0, io.EOF
	}
	p = p[:min(len(p), 32<<20-e.read)]
	for i := range p {
		p[i] = e.fill
	}
	e.read += len(p)
	return len(p), nil
}

// A quote left open, or a file without line breaks, would be read whole into one record:
// a record is bounded, and the import fails saying why, having read little of the file.
func TestImportBoundsOneRecord(t *testing.T) {
	pool := testenv.Postgres(t)
	ctx := context.Background()
	for name, head := range map[string]string{
		"open quote":       "keyword,volume\nbounded first,1\n\"bounded open,",
		"no line break":    "keyword,volume\nbounded first,1\n",
		"header unbounded": "keyword,volume",
	} {
		t.Run(name, func(t *testing.T) {
			rest := &endless{fill: 'a'}
			_, err := importer.ImportKeywords(ctx, pool, io.MultiReader(strings.NewReader(head), rest), importer.Options{Country: "gy"})
			if err == nil || !strings.Contains(err.Error(), "a row longer than") {
				t.Fatalf("err %v, want the row-length error", err)
			}
			if rest.read > 4<<20 {
				t.Errorf("read %d bytes of the endless row before refusing it", rest.read)
			}
		})
	}
	if getMetrics(t, pool, "gy", "en", "bounded first") != nil {
		t.Error("rows of a failed import were stored")
	}
	// Rows up to the bound still load, quoted line breaks included.
	long := strings.Repeat("x", 900<<10)
	file := "keyword,volume,serp_urls\n\"bounded long\nrow\",1,https://a.example/" + long + "\nbounded after,2,\n"
	rep, err := importer.ImportKeywords(ctx, pool, strings.NewReader(file), importer.Options{Country: "gy"})
	if err != nil || rep.Loaded != 2 {
		t.Fatalf("report %+v, err %v", rep, err)
	}
}

// After the file is read, Options.Stage follows the import: the rows written, then, for a
// table written anew, each of its indexes built, counted up to all of them, then the
// tables analysed.
func TestImportReportsStages(t *testing.T) {
	pool := testenv.Postgres(t)
	ctx := context.Background()
	importer.AlwaysNewTable(t, nil)
	var indexes int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_index WHERE indrelid = 'keyword_metrics'::regclass`).Scan(&indexes); err != nil {
		t.Fatal(err)
	}
	type call struct {
		stage       string
		done, total int
	}
	want := []call{{importer.StageWriting, 0, 0}}
	for i := 0; i <= indexes; i++ {
		want = append(want, call{importer.StageIndexes, i, indexes})
	}
	want = append(want, call{importer.StageAnalysing, 0, 0})
	var calls []call
	_, err := importer.ImportKeywords(ctx, pool, strings.NewReader("keyword,volume\nstage one,1\nstage two,2\n"),
		importer.Options{Country: "zb", Stage: func(stage string, done, total int) { calls = append(calls, call{stage, done, total}) }})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(calls, want) {
		t.Errorf("stages %v, want %v", calls, want)
	}
}

// The words of imported keywords are in keyword_words, whichever way the file was written:
// row by row (the table's trigger adds them) or as a new table (added beside its index
// builds, before the switch).
func TestImportAddsKeywordWords(t *testing.T) {
	pool := testenv.Postgres(t)
	ctx := context.Background()
	words := func(country string) []string {
		return queryStrings(t, pool, `SELECT word FROM keyword_words WHERE country = $1 AND language = 'en' ORDER BY word`, country)
	}
	load := func(country, file string) {
		t.Helper()
		if _, err := importer.ImportKeywords(ctx, pool, strings.NewReader(file), importer.Options{Country: country}); err != nil {
			t.Fatal(err)
		}
	}
	load("zc", "keyword,volume\nWords  Row BY row,1\nrow-by-row words,2\n")
	if got, want := words("zc"), []string{"by", "row", "row-by-row", "words"}; !slices.Equal(got, want) {
		t.Errorf("row by row: words %q, want %q", got, want)
	}
	t.Run("new table", func(t *testing.T) {
		importer.AlwaysNewTable(t, nil)
		load("zd", "keyword,volume\nNew table words,1\nnew words,2\n")
		if got, want := words("zd"), []string{"new", "table", "words"}; !slices.Equal(got, want) {
			t.Errorf("new table: words %q, want %q", got, want)
		}
	})
	// The new table took the old one's trigger: a row written later, row by row, adds its
	// words.
	load("zd", "keyword,volume\nlater words,3\n")
	if got := words("zd"); !slices.Contains(got, "later") {
		t.Errorf("after the switch: words %q lack later", got)
	}
}
