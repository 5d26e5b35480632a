package local

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/keywords"
)

// Best rankings (migration 00031): every domain's best ranking per keyword with the keyword's
// metrics and estimated traffic, one row per (market, domain, keyword), so that a domain's
// rankings filter, sort, page and count on one table and its indexes instead of joining all
// of the domain's rankings to the keyword table on every page.
//
// BuildBestRankings rebuilds the table from domain_rankings and keyword_metrics (the importer
// calls it after each import of either), and each domain's unfiltered counts
// (domain_best_counts): it fills a new table, builds the live table's
// indexes on it (read from the catalogue, so the migration stays their one definition) and
// swaps it in, in one transaction; readers wait only for the swap. The table records the
// generation of its sources it was built at; any later write to them moves the generation
// on (statement triggers), so a stale table is never read: answers join the sources until
// the next build.

// bestRankingsFill is the table's rows: each domain's best ranking per keyword (position,
// then URL, no URL first), with the keyword's metrics and the estimated traffic (%[1]s: the
// table's schema, %[2]s: the CTR curve as an SQL array).
const bestRankingsFill = `
INSERT INTO %[1]sdomain_best_rankings_next
SELECT DISTINCT ON (r.domain, r.country, r.language, r.keyword_norm)
       r.domain, r.country, r.language, r.keyword_norm, r.keyword, r.position, r.url, r.synthetic,
       k.search_volume, k.keyword_difficulty, k.cpc, k.competition, k.search_intent, k.synthetic,
       floor(k.search_volume * coalesce((%[2]s)[r.position], 0) + 0.5)
FROM domain_rankings r
LEFT JOIN keyword_metrics k ON k.keyword_norm = r.keyword_norm AND k.country = r.country AND k.language = r.language
ORDER BY r.domain, r.country, r.language, r.keyword_norm, r.position, r.url NULLS FIRST`

// BuildBestRankings rebuilds domain_best_rankings from its sources; builds run one at a
// time.
func BuildBestRankings(ctx context.Context, pool *pgxpool.Pool) error {
	return oneAtATime(ctx, pool, bestLock, func(conn *pgx.Conn) error { return buildBestRankings(ctx, conn) })
}

func buildBestRankings(ctx context.Context, conn *pgx.Conn) error {
	// Read committed, the generation read first: a write committed after that read moves the
	// generation past the one recorded (the table then reads as stale, never as fresh with
	// older rows), and recording it waits for a concurrent writer instead of failing as a
	// repeatable-read update of the state row would.
	err := pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{}, func(tx pgx.Tx) error {
		var generation int64
		if err := tx.QueryRow(ctx, `SELECT generation FROM best_rankings_state`).Scan(&generation); err != nil {
			return err
		}
		// The new table goes into the live one's schema (the first on the search path
		// holding it), named in full.
		var schema string
		if err := tx.QueryRow(ctx, `SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE c.oid = 'domain_best_rankings'::regclass`).Scan(&schema); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT indexname, indexdef FROM pg_indexes
			WHERE schemaname = $1 AND tablename = 'domain_best_rankings' ORDER BY indexname`, schema)
		if err != nil {
			return err
		}
		ns := pgx.Identifier{schema}.Sanitize() + "."
		var names, defs []string
		var name, def string
		if _, err := pgx.ForEachRow(rows, []any{&name, &def}, func() error {
			names, defs = append(names, name), append(defs, def)
			return nil
		}); err != nil {
			return err
		}
		stmts := []string{
			`SET LOCAL jit = off`,
			`SET LOCAL work_mem = '256MB'`,
			`SET LOCAL maintenance_work_mem = '256MB'`,
			`CREATE TABLE ` + ns + `domain_best_rankings_next (LIKE ` + ns + `domain_best_rankings INCLUDING DEFAULTS)`,
			fmt.Sprintf(bestRankingsFill, ns, ctrArray),
		}
		for i, def := range defs {
			// "CREATE [UNIQUE] INDEX name ON schema.domain_best_rankings USING …"
			def = strings.Replace(def, " INDEX "+names[i]+" ON ", " INDEX "+names[i]+"_next ON ", 1)
			def = strings.Replace(def, ".domain_best_rankings USING ", ".domain_best_rankings_next USING ", 1)
			stmts = append(stmts, def)
		}
		stmts = append(stmts, `ANALYZE `+ns+`domain_best_rankings_next`, `DROP TABLE `+ns+`domain_best_rankings`,
			`ALTER TABLE `+ns+`domain_best_rankings_next RENAME TO domain_best_rankings`)
		for _, n := range names {
			stmts = append(stmts, `ALTER INDEX `+ns+pgx.Identifier{n + "_next"}.Sanitize()+` RENAME TO `+pgx.Identifier{n}.Sanitize())
		}
		for _, s := range stmts {
			if _, err := tx.Exec(ctx, s); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `DELETE FROM `+ns+`domain_best_counts`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO `+ns+`domain_best_counts SELECT domain, country, language, ARRAY[`+
			countsSQL()+`] FROM `+ns+`domain_best_rankings GROUP BY domain, country, language`); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE best_rankings_state SET built = $1`, generation)
		return err
	})
	if err != nil {
		return fmt.Errorf("best rankings: %w", err)
	}
	return nil
}

// countsSQL is the select list of a rankings count: every row, then each position band's.
func countsSQL() string {
	out := `count(*)`
	for _, b := range keywords.Bands {
		out += fmt.Sprintf(", count(*) FILTER (WHERE position BETWEEN %d AND %d)", b.From, b.To)
	}
	return out
}

// bestFresh reports whether domain_best_rankings is as new as its sources.
func bestFresh(ctx context.Context, tx pgx.Tx) (bool, error) {
	var fresh bool
	err := tx.QueryRow(ctx, `SELECT generation = built FROM best_rankings_state`).Scan(&fresh)
	return fresh, err
}
