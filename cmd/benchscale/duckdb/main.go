// Command duckdb asks the hardest keyword questions of `make bench-scale` of DuckDB instead
// of the service: it exports a kept bench database (bench-scale -keep) from PostgreSQL,
// builds a DuckDB file of the keywords and each domain's best position per keyword, and
// times gaps, rankings and competitor questions in SQL, printing each one's total (to check
// against bench-scale's answers) and the process's memory. docs/decisions.md compares the
// figures with PostgreSQL and the keyword columns. It is a module of its own, so the
// service does not link DuckDB:
//
//	cd cmd/benchscale/duckdb && go run . -pg postgres://.../contentapi_benchscale_... -build
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/jackc/pgx/v5"
)

func rssMB() string {
	b, _ := os.ReadFile("/proc/self/status")
	var rss, hwm string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			rss = strings.TrimSpace(strings.TrimPrefix(l, "VmRSS:"))
		}
		if strings.HasPrefix(l, "VmHWM:") {
			hwm = strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:"))
		}
	}
	return "rss " + rss + ", peak " + hwm
}

func main() {
	pg := flag.String("pg", "", "kept bench database URL")
	dir := flag.String("dir", "/tmp/ddbx", "export directory (the PostgreSQL server writes there)")
	file := flag.String("db", "/tmp/ddb/kw.duckdb", "DuckDB file")
	build := flag.Bool("build", false, "export and build")
	threads := flag.Int("threads", 2, "DuckDB threads")
	mem := flag.String("memory", "1GB", "DuckDB memory_limit")
	rounds := flag.Int("rounds", 5, "rounds")
	only := flag.String("only", "", "questions whose name holds this")
	flag.Parse()
	ctx := context.Background()
	if *build {
		os.RemoveAll(*file)
		os.MkdirAll(*dir, 0o777)
		os.Chmod(*dir, 0o777)
		conn, err := pgx.Connect(ctx, *pg)
		must(err)
		t := time.Now()
		_, err = conn.Exec(ctx, fmt.Sprintf(`COPY (SELECT keyword_norm, search_volume, keyword_difficulty, cpc, search_intent FROM keyword_metrics) TO '%s/kw.csv' CSV`, *dir))
		must(err)
		_, err = conn.Exec(ctx, fmt.Sprintf(`COPY (SELECT domain, keyword_norm, min(position) FROM domain_rankings GROUP BY domain, keyword_norm) TO '%s/rk.csv' CSV`, *dir))
		must(err)
		fmt.Println("export", time.Since(t))
	}
	db, err := sql.Open("duckdb", *file)
	must(err)
	db.SetMaxOpenConns(1)
	exec := func(q string) {
		if _, err := db.Exec(q); err != nil {
			panic(fmt.Sprint(q, ": ", err))
		}
	}
	exec(fmt.Sprintf("SET threads=%d; SET memory_limit='%s'; SET preserve_insertion_order=false", *threads, *mem))
	if *build {
		t := time.Now()
		exec(fmt.Sprintf(`CREATE TABLE kw AS SELECT row_number() OVER (ORDER BY norm)::INTEGER AS id, * FROM read_csv('%s/kw.csv', header=false,
			columns={'norm':'VARCHAR','volume':'BIGINT','kd':'DOUBLE','cpc':'DOUBLE','intent':'VARCHAR'})`, *dir))
		exec(fmt.Sprintf(`CREATE TABLE dom AS SELECT row_number() OVER (ORDER BY domain)::SMALLINT AS did, domain FROM (SELECT DISTINCT column0 AS domain FROM read_csv('%s/rk.csv', header=false))`, *dir))
		exec(fmt.Sprintf(`CREATE TABLE dk AS SELECT d.did, k.id AS kid, r.column2::SMALLINT AS pos FROM read_csv('%s/rk.csv', header=false) r
			JOIN dom d ON d.domain = r.column0 JOIN kw k ON k.norm = r.column1 ORDER BY d.did, k.id`, *dir))
		exec("CHECKPOINT")
		fmt.Println("build", time.Since(t), rssMB())
		st, _ := os.Stat(*file)
		fmt.Printf("file %d MB\n", st.Size()>>20)
	}
	did := func(d string) int {
		var id int
		must(db.QueryRow("SELECT did FROM dom WHERE domain = ?", d).Scan(&id))
		return id
	}
	site, big, d1, d2 := did("site0300.example"), did("bigpublisher.example"), did("site0001.example"), did("site0002.example")
	gaps := func(comps string, where, order string) string {
		return fmt.Sprintf(`WITH c AS (SELECT kid, min(pos) cp FROM dk WHERE did IN (%[1]s) GROUP BY kid),
g AS (SELECT k.norm, k.volume, k.kd, k.cpc, c.cp FROM c ANTI JOIN (SELECT kid FROM dk WHERE did = %[2]d) o ON o.kid = c.kid JOIN kw k ON k.id = c.kid WHERE %[3]s),
n AS (SELECT count(*) total FROM g),
p AS (SELECT * FROM g ORDER BY %[4]s LIMIT 1000)
SELECT n.total, p.* FROM p, n`, comps, site, where, order)
	}
	rankings := func(where, order string, limit int) string {
		return fmt.Sprintf(`WITH r AS (SELECT k.norm, k.volume, d.pos FROM dk d JOIN kw k ON k.id = d.kid WHERE d.did = %[1]d AND %[2]s),
n AS (SELECT count(*) total, count(*) FILTER (WHERE pos <= 3) b1, count(*) FILTER (WHERE pos BETWEEN 4 AND 10) b2 FROM r),
p AS (SELECT * FROM r ORDER BY %[3]s LIMIT %[4]d)
SELECT n.total, p.* FROM p, n`, big, where, order, limit)
	}
	qs := []struct{ name, sql string }{
		{"gaps vs biggest, unfiltered", gaps(fmt.Sprint(big), "true", "volume DESC NULLS LAST, norm")},
		{"gaps vs biggest, filtered (vol>=500, kd<=30, cp<=10)", gaps(fmt.Sprint(big), "k.volume >= 500 AND k.kd <= 30 AND c.cp <= 10", "volume DESC NULLS LAST, norm")},
		{"gaps vs biggest, filtered, by cp then volume", gaps(fmt.Sprint(big), "k.volume >= 500 AND k.kd <= 30 AND c.cp <= 10", "cp, volume DESC NULLS LAST, norm")},
		{"gaps three biggest, words", gaps(fmt.Sprintf("%d,%d,%d", big, d1, d2), "list_contains(string_split(k.norm, ' '), 'coffee') AND NOT list_contains(string_split(k.norm, ' '), 'cheap')", "volume DESC NULLS LAST, norm")},
		{"rankings biggest, default, 100", rankings("true", "pos, volume DESC NULLS LAST, norm", 100)},
		{"rankings biggest, vol>=500 kd<=30 by traffic", rankings("k.volume >= 500 AND k.kd <= 30", "volume DESC NULLS LAST, norm", 100)},
		{"competitors of biggest", fmt.Sprintf(`SELECT o.did, count(*) n, avg(o.pos) FROM dk b JOIN dk o ON o.kid = b.kid WHERE b.did = %d AND o.did <> %d GROUP BY o.did ORDER BY n DESC LIMIT 100`, big, big)},
	}
	for _, q := range qs {
		if !strings.Contains(q.name, *only) {
			continue
		}
		var ts []time.Duration
		var total int64
		for r := 0; r <= *rounds; r++ {
			t := time.Now()
			rows, err := db.Query(q.sql)
			must(err)
			n := 0
			for rows.Next() {
				if n == 0 {
					cols, _ := rows.Columns()
					vals := make([]any, len(cols))
					ptrs := make([]any, len(cols))
					for i := range vals {
						ptrs[i] = &vals[i]
					}
					must(rows.Scan(ptrs...))
					if v, ok := vals[0].(int64); ok {
						total = v
					}
				}
				n++
			}
			must(rows.Err())
			rows.Close()
			if r > 0 {
				ts = append(ts, time.Since(t))
			}
		}
		sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
		fmt.Printf("%-55s p50 %6d ms  max %6d ms  first col %d  (%s)\n", q.name, ts[len(ts)/2].Milliseconds(), ts[len(ts)-1].Milliseconds(), total, rssMB())
	}
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
