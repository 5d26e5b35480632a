package importer_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/keywords/importer"
	"github.com/contentapi/contentapi/internal/testenv"
)

// loadScenario imports a series of files into country c and returns what each import
// reported and, after each, which rows it left with a new updated_at. It exercises what an
// import must do whichever way it writes: repeated keys merged (a keyword written two ways,
// and "K" the Kelvin sign, which PostgreSQL lower-cases to an ASCII "k"), absent columns
// kept, a synthetic row made real, several URLs per keyword, stale URLs dropped, and files
// imported again written nowhere.
func loadScenario(t *testing.T, pool *pgxpool.Pool, c string) []string {
	t.Helper()
	ctx := context.Background()
	var log []string
	stamps := func() map[string]time.Time {
		rows, err := pool.Query(ctx, `SELECT 'k ' || keyword_norm, updated_at FROM keyword_metrics WHERE country = $1
			UNION ALL SELECT 'r ' || domain || ' ' || keyword_norm || ' ' || coalesce(url, ''), updated_at
			FROM domain_rankings WHERE country = $1`, c)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]time.Time{}
		for rows.Next() {
			var k string
			var at time.Time
			if err := rows.Scan(&k, &at); err != nil {
				t.Fatal(err)
			}
			m[k] = at
		}
		return m
	}
	step := func(rankings bool, file string) {
		t.Helper()
		before := stamps()
		opts := importer.Options{Country: c, Source: "scenario"}
		var rep importer.Report
		var err error
		if rankings {
			rep, err = importer.ImportRankings(ctx, pool, strings.NewReader(file), opts)
		} else {
			rep, err = importer.ImportKeywords(ctx, pool, strings.NewReader(file), opts)
		}
		if err != nil {
			t.Fatalf("import %q: %v", file, err)
		}
		var written []string
		after := stamps()
		for k, at := range after {
			if b, ok := before[k]; !ok || !b.Equal(at) {
				written = append(written, k)
			}
		}
		for k := range before {
			if _, ok := after[k]; !ok {
				written = append(written, "deleted "+k)
			}
		}
		slices.Sort(written)
		log = append(log, fmt.Sprintf("read %d loaded %d unchanged %d merged %d rejected %d; written %v",
			rep.Read, rep.Loaded, rep.Unchanged, rep.Merged, rep.RejectedRows, written))
	}
	step(false, "keyword,volume,kd,cpc,intent\nBudget App,100,30,2.50,informational\nsavings goal,50,20,1.00,\n"+
		"budget  app,120,31,2.60,commercial\n")
	if _, err := pool.Exec(ctx, `INSERT INTO keyword_metrics (keyword, country, language, search_volume, cpc, source, synthetic)
		VALUES ('made up', $1, 'en', 999, 9.99, 'sample', true)`, c); err != nil {
		t.Fatal(err)
	}
	second := "keyword,volume,kd\nBUDGET APP,200,\nmade up,10,5\n"
	step(false, second)
	step(false, second)
	step(true, "domain,keyword,position,url,search volume\n"+
		"brew.example,budget app,7,https://brew.example/b,\n"+
		"brew.example,budget app,5,https://brew.example/a,\n"+
		"brew.example,Budget App,3,https://brew.example/a,210\n"+
		"brew.example,\u212aelvin,4,https://brew.example/k,\n"+
		"brew.example,kelvin,2,https://brew.example/k,\n"+
		"www.other.example,savings goal,1,,\n")
	newer := "domain,keyword,position,url\nbrew.example,budget app,1,https://brew.example/c\nbrew.example,kelvin,2,https://brew.example/k\n"
	step(true, newer)
	step(true, newer)
	// Groups of several rows: budget app's stored URL is not among the file's two (stale);
	// kelvin's is, beside a new one.
	several := "domain,keyword,position,url\nbrew.example,budget app,4,https://brew.example/d\n" +
		"brew.example,budget app,6,https://brew.example/e\nbrew.example,kelvin,2,https://brew.example/k\n" +
		"brew.example,kelvin,3,https://brew.example/m\n"
	step(true, several)
	step(true, several)
	return log
}

// tableState renders the rows of country c, but for updated_at.
func tableState(t *testing.T, pool *pgxpool.Pool, c string) string {
	t.Helper()
	var s string
	if err := pool.QueryRow(context.Background(), `SELECT
		coalesce((SELECT string_agg(concat_ws('|', keyword, keyword_norm, language, search_volume, keyword_difficulty, cpc,
			competition, search_intent, serp_urls, source, synthetic), E'\n' ORDER BY keyword_norm)
		 FROM keyword_metrics WHERE country = $1), '') || E'\n--\n' ||
		coalesce((SELECT string_agg(concat_ws('|', domain, coalesce(keyword, 'NULL'), keyword_norm, language, position, url, url_hash, source, synthetic),
			E'\n' ORDER BY domain, keyword_norm, url)
		 FROM domain_rankings WHERE country = $1), '')`, c).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// schemaPool returns a pool whose unqualified tables are empty copies of keyword_metrics
// and domain_rankings (indexes and triggers too) in a schema of their own.
func schemaPool(t *testing.T, schema string) *pgxpool.Pool {
	t.Helper()
	pool, dsn := testenv.PostgresDSN(t)
	ctx := context.Background()
	for _, table := range []string{"keyword_metrics", "domain_rankings"} {
		if _, err := pool.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+schema+`;
			CREATE TABLE `+schema+`.`+table+` (LIKE public.`+table+` INCLUDING ALL)`); err != nil {
			t.Fatal(err)
		}
		rows, err := pool.Query(ctx, `SELECT replace(pg_get_triggerdef(oid), ' ON public.', ' ON `+schema+`.')
			FROM pg_trigger WHERE tgrelid = $1::regclass AND NOT tgisinternal`, table)
		if err != nil {
			t.Fatal(err)
		}
		defs, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range defs {
			if _, err := pool.Exec(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema + ", public"
	p, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Close()
		_, _ = pool.Exec(context.Background(), `DROP SCHEMA `+schema+` CASCADE`)
	})
	return p
}

// A file is written row by row into the table or as a new table that replaces it
// (swap.go), into an empty table first; both give the same rows, the same reports and the
// same updated_at changes.
func TestNewTableWritesWhatRowsWrite(t *testing.T) {
	rowsPool, tablePool := schemaPool(t, "by_rows"), schemaPool(t, "by_table")
	rowsLog := loadScenario(t, rowsPool, "xa")
	rowsState := tableState(t, rowsPool, "xa")
	importer.AlwaysNewTable(t, nil)
	tableLog := loadScenario(t, tablePool, "xa")
	if tableState := tableState(t, tablePool, "xa"); tableState != rowsState {
		t.Errorf("rows written differ:\nrow by row:\n%s\nnew table:\n%s", rowsState, tableState)
	}
	if !slices.Equal(rowsLog, tableLog) {
		t.Errorf("imports differ:\nrow by row:\n%s\nnew table:\n%s", strings.Join(rowsLog, "\n"), strings.Join(tableLog, "\n"))
	}
	// And they are the right rows.
	want := []string{
		"read 3 loaded 2 unchanged 0 merged 1 rejected 0; written [k budget app k savings goal]",
		"read 2 loaded 2 unchanged 0 merged 0 rejected 0; written [k budget app k made up]",
		"read 2 loaded 2 unchanged 2 merged 0 rejected 0; written []",
		"read 6 loaded 4 unchanged 0 merged 2 rejected 0; written [k budget app k kelvin k savings goal " +
			"r brew.example budget app https://brew.example/a r brew.example budget app https://brew.example/b " +
			"r brew.example kelvin https://brew.example/k r other.example savings goal ]",
		"read 2 loaded 2 unchanged 1 merged 0 rejected 0; written [deleted r brew.example budget app https://brew.example/a " +
			"deleted r brew.example budget app https://brew.example/b r brew.example budget app https://brew.example/c]",
		"read 2 loaded 2 unchanged 2 merged 0 rejected 0; written []",
		"read 4 loaded 4 unchanged 1 merged 0 rejected 0; written [deleted r brew.example budget app https://brew.example/c " +
			"r brew.example budget app https://brew.example/d r brew.example budget app https://brew.example/e " +
			"r brew.example kelvin https://brew.example/m]",
		"read 4 loaded 4 unchanged 4 merged 0 rejected 0; written []",
	}
	if !slices.Equal(rowsLog, want) {
		t.Errorf("imports:\n%s\nwant:\n%s", strings.Join(rowsLog, "\n"), strings.Join(want, "\n"))
	}
	for _, p := range []*pgxpool.Pool{rowsPool, tablePool} {
		checkMetrics(t, getMetrics(t, p, "xa", "en", "budget app"), "budget app", i64(210), nil, f64(2.6), nil, str("commercial"))
		checkMetrics(t, getMetrics(t, p, "xa", "en", "made up"), "made up", i64(10), f64(5), nil, nil, nil)
		if got := getURLs(t, p, "brew.example", "xa", "budget app"); !slices.Equal(got, []string{"https://brew.example/d", "https://brew.example/e"}) {
			t.Errorf("budget app URLs %v", got)
		}
		if pos, _ := getPosition(t, p, "brew.example", "xa", "kelvin"); pos != 2 {
			t.Errorf("kelvin position %d, want 2", pos)
		}
	}
}

// tableDefinition lists a table's indexes, constraints and triggers as PostgreSQL prints
// them.
func tableDefinition(t *testing.T, pool *pgxpool.Pool, table string) []string {
	t.Helper()
	return queryStrings(t, pool, `
		SELECT 'index ' || indexname || ' ' || indexdef FROM pg_indexes WHERE tablename = $1
		UNION ALL SELECT 'constraint ' || conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = $1::regclass
		UNION ALL SELECT 'trigger ' || pg_get_triggerdef(oid) FROM pg_trigger WHERE tgrelid = $1::regclass AND NOT tgisinternal
		UNION ALL SELECT 'column ' || attname || ' ' || format_type(atttypid, atttypmod) || ' ' || attnotnull || ' '
			|| coalesce(pg_get_expr(d.adbin, d.adrelid), '') || attgenerated::text
		FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
		WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped
		ORDER BY 1`, table)
}

// While an import builds its new table, the API reads the old one (an import locks out
// other writers only), and the table that takes its place has the same columns, indexes,
// constraints and triggers under the same names.
func TestNewTableKeepsDefinitionAndReaders(t *testing.T) {
	pool := testenv.Postgres(t)
	ctx := context.Background()
	if _, err := importer.ImportKeywords(ctx, pool, strings.NewReader("keyword,volume\nalready here,5\n"), importer.Options{Country: "xr"}); err != nil {
		t.Fatal(err)
	}
	kwDef, rkDef := tableDefinition(t, pool, "keyword_metrics"), tableDefinition(t, pool, "domain_rankings")
	if len(kwDef) < 20 || len(rkDef) < 10 {
		t.Fatalf("definitions too short: %v %v", kwDef, rkDef)
	}
	var seen []int
	importer.AlwaysNewTable(t, func() {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		var n int
		if err := pool.QueryRow(rctx, `SELECT count(*) FROM keyword_metrics WHERE country = 'xr'`).Scan(&n); err != nil {
			t.Errorf("read during the import: %v", err)
		}
		seen = append(seen, n)
		// Writers wait: other imports and the sample set on the advisory lock, anyone on
		// the table's lock (checked while keyword_metrics is switched, the first time).
		var free bool
		if err := pool.QueryRow(rctx, `SELECT pg_try_advisory_xact_lock($1)`, importer.WritersLock).Scan(&free); err != nil || free {
			t.Errorf("the writers' lock was free (%v)", err)
		}
		if len(seen) > 1 {
			return
		}
		err := pgx.BeginFunc(rctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(rctx, `SET LOCAL lock_timeout = '50ms'`); err != nil {
				return err
			}
			_, err := tx.Exec(rctx, `UPDATE keyword_metrics SET cpc = 1 WHERE country = 'xr'`)
			return err
		})
		if err == nil || !strings.Contains(err.Error(), "lock timeout") {
			t.Errorf("a write during the import: %v, want a lock timeout", err)
		}
	})
	file := "keyword,volume\nalready here,6\nnew one,1\nnew two,2\n"
	if _, err := importer.ImportKeywords(ctx, pool, strings.NewReader(file), importer.Options{Country: "xr"}); err != nil {
		t.Fatal(err)
	}
	if _, err := importer.ImportRankings(ctx, pool, strings.NewReader("domain,keyword,position\nr.example,new one,3\n"), importer.Options{Country: "xr"}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen, []int{1, 3}) {
		t.Errorf("readers saw %v rows before each switch, want the committed 1, then 3", seen)
	}
	if got := tableDefinition(t, pool, "keyword_metrics"); !slices.Equal(got, kwDef) {
		t.Errorf("keyword_metrics after the switch:\n%s\nbefore:\n%s", strings.Join(got, "\n"), strings.Join(kwDef, "\n"))
	}
	if got := tableDefinition(t, pool, "domain_rankings"); !slices.Equal(got, rkDef) {
		t.Errorf("domain_rankings after the switch:\n%s\nbefore:\n%s", strings.Join(got, "\n"), strings.Join(rkDef, "\n"))
	}
	checkMetrics(t, getMetrics(t, pool, "xr", "en", "already here"), "already here", i64(6), nil, nil, nil, nil)
	var stray int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_class WHERE relname LIKE '%\_import%'`).Scan(&stray); err != nil || stray != 0 {
		t.Errorf("%d relations left named *_import* (%v)", stray, err)
	}
}

// Rows written by others than the importer (the sample set, a hand-written INSERT) get
// their keys from the table's triggers; changing a keyword or URL recomputes them.
func TestKeysOfOtherWriters(t *testing.T) {
	pool := testenv.Postgres(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `INSERT INTO domain_rankings (domain, keyword, country, language, position, url, source)
		VALUES ('hand.example', 'Hand  Written', 'xh', 'en', 1, 'https://hand.example/', 'manual')`); err != nil {
		t.Fatal(err)
	}
	check := func(wantNorm, wantURL string) {
		t.Helper()
		var ok bool
		if err := pool.QueryRow(ctx, `SELECT keyword_norm = $1 AND keyword_norm = keyword_normalize(keyword)
			AND url_hash = md5(coalesce($2, ''))::uuid AND url IS NOT DISTINCT FROM nullif($2, '')
			FROM domain_rankings WHERE country = 'xh'`, wantNorm, wantURL).Scan(&ok); err != nil || !ok {
			t.Errorf("keys are not those of %q and %q (%v)", wantNorm, wantURL, err)
		}
	}
	check("hand written", "https://hand.example/")
	if _, err := pool.Exec(ctx, `UPDATE domain_rankings SET keyword = 'Other Words', url = NULL WHERE country = 'xh'`); err != nil {
		t.Fatal(err)
	}
	check("other words", "")
	if _, err := pool.Exec(ctx, `UPDATE domain_rankings SET keyword_norm = 'wrong' WHERE country = 'xh'`); err != nil {
		t.Fatal(err)
	}
	check("other words", "")
	if _, err := pool.Exec(ctx, `INSERT INTO keyword_metrics (keyword, country, language, source) VALUES (' Mixed Case ', 'xh', 'en', 'manual')`); err != nil {
		t.Fatal(err)
	}
	var norm string
	var ntrgm int
	if err := pool.QueryRow(ctx, `SELECT keyword_norm, ntrgm FROM keyword_metrics WHERE country = 'xh'`).Scan(&norm, &ntrgm); err != nil || norm != "mixed case" || ntrgm != 11 {
		t.Errorf("keyword_norm %q, ntrgm %d (%v); want mixed case, 11", norm, ntrgm, err)
	}
	if _, err := pool.Exec(ctx, `UPDATE keyword_metrics SET keyword = 'Mixed Cases' WHERE country = 'xh'`); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT ntrgm FROM keyword_metrics WHERE country = 'xh'`).Scan(&ntrgm); err != nil || ntrgm != 12 {
		t.Errorf("ntrgm after the keyword changed %d (%v), want 12", ntrgm, err)
	}
}

// Go normalises keywords only while it agrees with the server's keyword_normalize: under a
// different definition the server's is used.
func TestImportFollowsServerNormalization(t *testing.T) {
	pool := testenv.Postgres(t)
	ctx := context.Background()
	var def string
	if err := pool.QueryRow(ctx, `SELECT pg_get_functiondef('keyword_normalize(text)'::regprocedure)`).Scan(&def); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := pool.Exec(context.Background(), def); err != nil {
			t.Errorf("restore keyword_normalize: %v", err)
		}
	})
	// A definition that also reads a hyphen as a space.
	if _, err := pool.Exec(ctx, `CREATE OR REPLACE FUNCTION keyword_normalize(k text) RETURNS text
		LANGUAGE sql IMMUTABLE PARALLEL SAFE
		RETURN lower(btrim(regexp_replace(replace(k, '-', ' '), '\s+', ' ', 'g')))`); err != nil {
		t.Fatal(err)
	}
	file := "keyword,volume\nPour-Over Kettle,10\npour over kettle,20\n"
	rep, err := importer.ImportKeywords(ctx, pool, strings.NewReader(file), importer.Options{Country: "xn"})
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, rep, 2, 1, nil)
	var norm string
	var vol int64
	if err := pool.QueryRow(ctx, `SELECT keyword_norm, search_volume FROM keyword_metrics WHERE country = 'xn'`).Scan(&norm, &vol); err != nil || norm != "pour over kettle" || vol != 20 {
		t.Errorf("stored %q with volume %d (%v); want one row, pour over kettle, 20", norm, vol, err)
	}
}

// An import written row by row leaves no rows in the GIN indexes' pending lists: look-ups
// would scan them all until VACUUM merged them.
func TestImportMergesPendingIndexEntries(t *testing.T) {
	pool := testenv.Postgres(t)
	ctx := context.Background()
	var b strings.Builder
	b.WriteString("keyword,volume\n")
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&b, "pending keyword number %d,%d\n", i, i)
	}
	if _, err := importer.ImportKeywords(ctx, pool, strings.NewReader(b.String()), importer.Options{Country: "xp"}); err != nil {
		t.Fatal(err)
	}
	var pages, indexes int
	if err := pool.QueryRow(ctx, `SELECT coalesce(sum(gin_clean_pending_list(i.indexrelid)), 0), count(*)
		FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
		WHERE i.indrelid = 'keyword_metrics'::regclass AND a.amname = 'gin'`).Scan(&pages, &indexes); err != nil {
		t.Fatal(err)
	}
	if indexes == 0 || pages != 0 {
		t.Errorf("%d pending pages left in %d GIN indexes", pages, indexes)
	}
}

// An import that fails after writing its new table leaves the old table as it was and no
// new table behind, and the next import runs.
func TestNewTableAbandoned(t *testing.T) {
	pool := testenv.Postgres(t)
	ctx := context.Background()
	if _, err := importer.ImportKeywords(ctx, pool, strings.NewReader("keyword,volume\nkept as is,5\n"), importer.Options{Country: "xf"}); err != nil {
		t.Fatal(err)
	}
	failing, cancel := context.WithCancel(ctx)
	importer.AlwaysNewTable(t, cancel) // the import is cancelled before its switch
	_, err := importer.ImportKeywords(failing, pool, strings.NewReader("keyword,volume\nkept as is,6\nnever stored,1\n"), importer.Options{Country: "xf"})
	if err == nil {
		t.Fatal("the cancelled import succeeded")
	}
	checkMetrics(t, getMetrics(t, pool, "xf", "en", "kept as is"), "kept as is", i64(5), nil, nil, nil, nil)
	if getMetrics(t, pool, "xf", "en", "never stored") != nil {
		t.Error("a row of the cancelled import was stored")
	}
	var stray int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_class WHERE relname LIKE '%\_import%'`).Scan(&stray); err != nil || stray != 0 {
		t.Errorf("%d relations left named *_import* (%v)", stray, err)
	}
	importer.AlwaysNewTable(t, nil)
	if _, err := importer.ImportKeywords(ctx, pool, strings.NewReader("keyword,volume\nkept as is,7\n"), importer.Options{Country: "xf"}); err != nil {
		t.Fatal(err)
	}
	checkMetrics(t, getMetrics(t, pool, "xf", "en", "kept as is"), "kept as is", i64(7), nil, nil, nil, nil)
}

// The columns keyword_metrics and domain_rankings are joined on share a collation: a join
// compared under another than an index's cannot use that index (research read a whole
// market's key when domain_rankings.language alone was "C").
func TestJoinColumnsShareCollation(t *testing.T) {
	pool := testenv.Postgres(t)
	var differ []string
	rows, err := pool.Query(context.Background(), `SELECT k.attname FROM pg_attribute k JOIN pg_attribute r
		ON r.attrelid = 'domain_rankings'::regclass AND r.attname = k.attname
		WHERE k.attrelid = 'keyword_metrics'::regclass AND k.attname IN ('country', 'language', 'keyword_norm')
		  AND k.attcollation <> r.attcollation`)
	if err != nil {
		t.Fatal(err)
	}
	if differ, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil || len(differ) > 0 {
		t.Errorf("columns of different collations in the two tables: %v (%v)", differ, err)
	}
}
