package importer_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/keywords/importer"
)

// A large file loaded into an empty table is copied straight into a new table, the rows
// whose key may repeat an earlier one's merged afterwards (direct.go). It stores what the
// row-by-row load stores and reports the same: the last row of a keyword wins, for rankings
// the best position and then the last row, several URLs per keyword are kept, and rows
// whose key PostgreSQL computes (not ASCII) are merged in the file's order too — "K" (the
// Kelvin sign) before and after "kelvin", "café" twice.
func TestDirectCopyWritesWhatRowsWrite(t *testing.T) {
	keywords := "keyword,volume,kd,intent\n" +
		"budget app,100,30,informational\n" +
		"savings goal,50,20,\n" +
		"Budget  App,120,31,commercial\n" + // repeats line 2: wins
		"caf\u00e9 near me,10,,\n" +
		"\u212aelvin scale,7,,\n" + // may be "kelvin scale": every row after it is staged
		"kelvin scale,8,,\n" + // wins over line 6
		"CAF\u00c9 near me,11,,\n" + // wins over line 5
		"later keyword,1,,\n" +
		"savings goal,55,21,\n" // wins over line 3
	rankings := "domain,keyword,position,url\n" +
		"brew.example,budget app,7,https://brew.example/b\n" +
		"brew.example,budget app,5,https://brew.example/a\n" + // second URL
		"brew.example,Budget App,9,https://brew.example/a\n" + // worse: line 3 stays
		"brew.example,Budget app,7,https://brew.example/b\n" + // tie with line 2: the later wins
		"brew.example,grind size,3,https://brew.example/g\n" +
		"brew.example,grind size,2,https://brew.example/g\n" + // better: wins
		"www.other.example,savings goal,1,\n" +
		"brew.example,caf\u00e9 near me,4,https://brew.example/c\n" +
		"brew.example,CAF\u00c9 near me,4,https://brew.example/c\n" + // tie: the later wins
		"brew.example,\u212aelvin scale,6,https://brew.example/k\n" +
		"brew.example,kelvin scale,6,https://brew.example/k\n" // tie: the later wins
	load := func(pool *pgxpool.Pool) (log []string) {
		t.Helper()
		ctx := context.Background()
		opts := importer.Options{Country: "xd", Source: "direct"}
		rep, err := importer.ImportKeywords(ctx, pool, strings.NewReader(keywords), opts)
		if err != nil {
			t.Fatal(err)
		}
		log = append(log, fmt.Sprintf("%+v", rep))
		if rep, err = importer.ImportRankings(ctx, pool, strings.NewReader(rankings), opts); err != nil {
			t.Fatal(err)
		}
		return append(log, fmt.Sprintf("%+v", rep))
	}
	tableOIDs := func(pool *pgxpool.Pool) string {
		t.Helper()
		var s string
		if err := pool.QueryRow(context.Background(),
			`SELECT 'keyword_metrics'::regclass::oid || ' ' || 'domain_rankings'::regclass::oid`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	rowsPool, directPool := schemaPool(t, "by_rows_d"), schemaPool(t, "by_copy")
	rowsLog := load(rowsPool)
	importer.AlwaysDirect(t, 2, 150) // several COPYs into the new table and the staging table; several sorted runs
	before := tableOIDs(directPool)
	directLog := load(directPool)
	if after := tableOIDs(directPool); after == before {
		t.Fatalf("the tables were not replaced (%s): the file was not copied into a new table", after)
	}
	// The rows COPY writes are frozen, their pages all-visible at once (index-only scans
	// need no VACUUM first): a file without repeats leaves every page so.
	vmPool := schemaPool(t, "by_copy_vm")
	var b strings.Builder
	b.WriteString("domain,keyword,position\n")
	for i := 1999; i >= 0; i-- { // in descending order
		fmt.Fprintf(&b, "vm.example,keyword number %04d,%d\n", i, 1+i%50)
	}
	if _, err := importer.ImportRankings(context.Background(), vmPool, strings.NewReader(b.String()), importer.Options{Country: "xv"}); err != nil {
		t.Fatal(err)
	}
	var pages, visible int
	if err := vmPool.QueryRow(context.Background(), `SELECT relpages, relallvisible FROM pg_class
		WHERE oid = 'domain_rankings'::regclass`).Scan(&pages, &visible); err != nil || pages < 2 || visible != pages {
		t.Errorf("%d of %d pages all-visible (%v), want all", visible, pages, err)
	}
	// The rows were sorted before COPY (sorted.go): they are stored in the primary key's
	// order, the file's reversed.
	var inversions int
	if err := vmPool.QueryRow(context.Background(), `SELECT count(*) FILTER (WHERE k < lag) FROM (
		SELECT k, lag(k) OVER (ORDER BY ctid) FROM (
			SELECT ROW(domain, country, language, keyword_norm, url_hash) AS k, ctid FROM domain_rankings) r) x`).Scan(&inversions); err != nil || inversions != 0 {
		t.Errorf("%d rows stored before a row of a lower key (%v), want none", inversions, err)
	}
	rowsState, directState := tableState(t, rowsPool, "xd"), tableState(t, directPool, "xd")
	if directState != rowsState {
		t.Errorf("rows stored differ:\nrow by row:\n%s\ncopied:\n%s", rowsState, directState)
	}
	if strings.Join(directLog, "\n") != strings.Join(rowsLog, "\n") {
		t.Errorf("reports differ:\nrow by row:\n%s\ncopied:\n%s", strings.Join(rowsLog, "\n"), strings.Join(directLog, "\n"))
	}
	for _, w := range []string{
		"Budget App|budget app|en|120|31|commercial|direct|f", "CAFÉ near me|café near me|en|11|direct|f",
		"kelvin scale|kelvin scale|en|8|direct|f", "savings goal|savings goal|en|55|21|direct|f",
		"brew.example|NULL|budget app|en|5|https://brew.example/a|",
		"brew.example|Budget app|budget app|en|7|https://brew.example/b|",
		"brew.example|NULL|grind size|en|2|", "brew.example|CAFÉ near me|café near me|en|4|",
		"brew.example|NULL|kelvin scale|en|6|", "other.example|NULL|savings goal|en|1|",
	} {
		if !strings.Contains(directState, "\n"+w) && !strings.HasPrefix(directState, w) {
			t.Errorf("stored rows lack %q:\n%s", w, directState)
		}
	}
	if !strings.Contains(directLog[0], "Read:9 Loaded:5 ") || !strings.Contains(directLog[1], "Read:11 Loaded:6 ") {
		t.Errorf("reports %v", directLog)
	}
}

// A new table's CHECK constraints are added NOT VALID after its COPY (swap.go, addChecks):
// the importer has checked the copied rows by the same rules. A corpus of hostile cells,
// loaded through the direct path, must leave every row meeting every constraint, which
// VALIDATE CONSTRAINT then reads them all to confirm; a rule the importer let through
// (a NaN competition, a domain still starting with "www.", an upper-case language) fails it.
func TestDirectLoadMeetsChecks(t *testing.T) {
	var kw, rk strings.Builder
	kw.WriteString("keyword,country,language,volume,kd,cpc,competition,intent,trend\n")
	rk.WriteString("domain,keyword,country,language,position,url\n")
	keywords := []string{"plain keyword", " ", "\u00a0", "\t", "\u3000", "\u200b", " padded ", "\u212a", "CAF\u00c9", "a\x00b", "\xff\xfe", `"quoted, comma"`}
	markets := [][2]string{{"us", "en"}, {"US", "EN"}, {"gb", "en"}, {"u", "en"}, {"usa", "en"}, {"\u00fcs", "en"}, {"1a", "en"}, {"us", "e\u0301"}, {"", ""}, {"d\u212a", "de"}}
	numbers := []string{"", "0", "-0", "-1", "1e400", "NaN", "nan", "Inf", "-Inf", "101", "100", "0.5", "1.0000001", "1,5", "12%"}
	intents := []string{"", "informational", "INFORMATIONAL", "foo", "commercial, transactional"}
	trends := []string{"", "increasing", "Stable", "up"}
	domains := []string{"example.com", "WWW.WWW.Example.COM", "www.", "www.www.", "", "EXAMPLE.com.", "ex ample.com", "\u00fcnicode.example",
		"\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45.com", "\u212aelvin.example", "https://www.Shop.example/path", "xn--nxasmq6b.example", "-bad-.example", "a..b"}
	positions := []string{"1", "0", "-1", "1.5", "1,0", "100", "", "NaN", "2147483648"}
	n := 0
	for i, k := range keywords {
		for j, m := range markets {
			x := i*len(markets) + j
			fmt.Fprintf(&kw, "%s %d,%s,%s,%s,%s,%s,%s,%s,%s\n", k, x, m[0], m[1], numbers[x%len(numbers)], numbers[(x+3)%len(numbers)],
				numbers[(x+5)%len(numbers)], numbers[(x+7)%len(numbers)], intents[x%len(intents)], trends[x%len(trends)])
			for d, dom := range domains {
				fmt.Fprintf(&rk, "%s,%s %d,%s,%s,%s,https://x.example/%d\n", dom, k, x, m[0], m[1], positions[(x+d)%len(positions)], n)
				n++
			}
		}
	}
	constraints := func(pool *pgxpool.Pool) map[string]bool {
		t.Helper()
		rows, err := pool.Query(context.Background(), `SELECT conrelid::regclass::text || '.' || conname, convalidated FROM pg_constraint
			WHERE conrelid IN ('keyword_metrics'::regclass, 'domain_rankings'::regclass) AND contype = 'c'`)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		var name string
		var valid bool
		if _, err := pgx.ForEachRow(rows, []any{&name, &valid}, func() error { got[name] = valid; return nil }); err != nil {
			t.Fatal(err)
		}
		return got
	}
	ctx := context.Background()
	load := func(pool *pgxpool.Pool) {
		t.Helper()
		opts := importer.Options{Country: "xc", Source: "checks"}
		if _, err := importer.ImportKeywords(ctx, pool, strings.NewReader(kw.String()), opts); err != nil {
			t.Fatal(err)
		}
		if _, err := importer.ImportRankings(ctx, pool, strings.NewReader(rk.String()), opts); err != nil {
			t.Fatal(err)
		}
	}
	validate := func(pool *pgxpool.Pool) {
		t.Helper()
		got := constraints(pool)
		if len(got) < 10 {
			t.Fatalf("constraints after the direct load: %v", got)
		}
		for name, valid := range got {
			if valid {
				t.Errorf("%s is validated: the direct load should have added it NOT VALID", name)
			}
			table, con, _ := strings.Cut(name, ".")
			if _, err := pool.Exec(ctx, `ALTER TABLE `+table+` VALIDATE CONSTRAINT `+pgx.Identifier{con}.Sanitize()); err != nil {
				t.Errorf("a stored row breaks %s: %v", name, err)
			}
		}
	}
	rowsPool, directPool := schemaPool(t, "checks_rows"), schemaPool(t, "checks_direct")
	importer.AlwaysDirect(t, 3, 2000)
	load(directPool)
	importer.DefaultPaths()
	validate(directPool)
	load(rowsPool) // every row checked by PostgreSQL as it is written
	var countries []string
	if err := rowsPool.QueryRow(ctx, `SELECT array_agg(DISTINCT country) FROM (SELECT country FROM keyword_metrics
		UNION ALL SELECT country FROM domain_rankings) c`).Scan(&countries); err != nil || len(countries) < 2 {
		t.Fatalf("markets stored: %v (%v)", countries, err)
	}
	for _, c := range countries {
		if a, b := tableState(t, rowsPool, c), tableState(t, directPool, c); a != b {
			t.Errorf("rows stored in %s differ:\nrow by row:\n%s\ncopied:\n%s", c, a, b)
		}
	}
	var stored int
	if err := directPool.QueryRow(ctx, `SELECT (SELECT count(*) FROM keyword_metrics) + (SELECT count(*) FROM domain_rankings)`).Scan(&stored); err != nil || stored < 100 {
		t.Fatalf("%d rows stored (%v): the corpus should leave many", stored, err)
	}
	for name, valid := range constraints(rowsPool) {
		if !valid {
			t.Errorf("%s is NOT VALID after the row-by-row load", name)
		}
	}
}
