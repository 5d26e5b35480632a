package importer

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// A file loads in one transaction, with the keyword data writers' advisory lock held
// (importFile):
//
//  1. COPY streams its valid rows, with their keys computed in Go (keys.go), into the
//     temporary table import_rows.
//  2. Rows of the file that share a key are merged there. Only the keys of rows marked
//     "seen" are looked at, not the whole file sorted.
//  3. With the target table locked against other writers (SHARE ROW EXCLUSIVE: readers
//     go on reading the committed rows), one join of the file with the stored rows of its
//     groups finds the rows to insert, update or (rankings) delete, and statements by
//     ctid or key write only those. A stored row equal to the file's is only read, never
//     written, so importing a file again writes nothing. Or, for a file larger than the
//     table, the rows are written into a new table that replaces the old one after the
//     commit (swap.go).
//
// The tables are analysed at the end (importFile).

// counts are what a load found: distinct rows in the file, and rows it inserted or
// changed.
type counts struct{ distinct, written int }

// stagingTable is the temporary table a file's rows are copied into; the columns a file
// lacks stay NULL.
const stagingTable = `CREATE TEMP TABLE import_rows (
	line int, keyword text, country text, language text, search_volume bigint,
	keyword_difficulty double precision, cpc double precision, competition double precision,
	search_intent text, serp_urls text[], monthly_from date, monthly_volumes bigint[], trend text, ntrgm smallint, domain text, position int, url text,
	url_hash uuid, norm text, seen boolean) ON COMMIT DROP`

// stageRows copies the file's valid rows into import_rows and completes the norms Go left
// to PostgreSQL.
func (l *loader) stageRows(ctx context.Context, src *rowSource) error {
	if err := createStaging(ctx, l.tx); err != nil {
		return err
	}
	if _, err := l.tx.CopyFrom(ctx, pgx.Identifier{"import_rows"}, src.columns(), src); err != nil {
		return fmt.Errorf("copy rows: %w", err)
	}
	src.fileRead(l)
	return completeKeys(ctx, l.tx, src)
}

// completeKeys computes the staged rows' keys and trigram counts that Go left to
// PostgreSQL: a new table has no triggers to.
func completeKeys(ctx context.Context, tx pgx.Tx, src *rowSource) error {
	if src.keys.unnormalized > 0 {
		if _, err := tx.Exec(ctx, `UPDATE import_rows SET norm = keyword_normalize(keyword) WHERE norm IS NULL`); err != nil {
			return fmt.Errorf("normalise keywords: %w", err)
		}
	}
	if src.metrics && src.keys.uncounted > 0 {
		if _, err := tx.Exec(ctx, `UPDATE import_rows SET ntrgm = least(coalesce(array_length(show_trgm(keyword), 1), 0), 32767)
			WHERE ntrgm IS NULL`); err != nil {
			return fmt.Errorf("count trigrams: %w", err)
		}
	}
	return nil
}

// createStaging creates the staging table import_rows for the transaction.
func createStaging(ctx context.Context, tx pgx.Tx) error {
	// The staging table lives in temp_buffers (default 8MB: a large file would go through
	// the disk page by page); merging repeated keys and the joins of the load run in
	// work_mem, and a larger GIN pending list merges less often. These hold for this
	// transaction only; temp_buffers can be set before the session's first temporary
	// table, which the staging table is.
	for _, set := range []string{`SET LOCAL temp_buffers = '256MB'`, `SET LOCAL work_mem = '256MB'`,
		`SET LOCAL gin_pending_list_limit = '64MB'`} {
		if _, err := tx.Exec(ctx, set); err != nil {
			return fmt.Errorf("%s: %w", set, err)
		}
	}
	if _, err := tx.Exec(ctx, stagingTable); err != nil {
		return fmt.Errorf("create staging table: %w", err)
	}
	return nil
}

// loadKeywords stages a keyword file and writes it into keyword_metrics; of a file's rows
// for the same keyword the last one wins.
func (l *loader) loadKeywords(ctx context.Context, src *rowSource, cols columns, opts Options) (counts, error) {
	c, direct, err := l.loadDirect(ctx, src, metricsTarget(cols), opts)
	if direct || err != nil {
		return c, err
	}
	key := []string{"country", "language", "norm"}
	if c.distinct, err = l.prepare(ctx, src, key, key, "line DESC"); err != nil {
		return c, err
	}
	c.written, err = metricsTarget(cols).write(ctx, l, "import_rows", c.distinct, false, opts)
	return c, err
}

// loadRankings stages a ranking file and writes it into domain_rankings (and the metrics
// it carries into keyword_metrics): one row per domain, keyword and URL, the best position
// of the file's rows for it. The stored URLs of the file's domains and keywords that the
// file no longer lists are deleted.
func (l *loader) loadRankings(ctx context.Context, src *rowSource, cols columns, opts Options) (counts, error) {
	c, direct, err := l.loadDirect(ctx, src, rankingsTarget(cols), opts)
	if direct || err != nil {
		return c, err
	}
	tx := l.tx
	group := []string{"domain", "country", "language", "norm"}
	if c.distinct, err = l.prepare(ctx, src, group, append(group, "url_hash"), "position, line DESC"); err != nil {
		return c, err
	}
	if c.written, err = rankingsTarget(cols).write(ctx, l, "import_rows", c.distinct, src.keys.repeats > 0, opts); err != nil {
		return c, err
	}
	if src.metrics {
		// A keyword appears once per domain and URL: the last row of the file wins.
		if _, err := tx.Exec(ctx, `CREATE TEMP TABLE import_metrics ON COMMIT DROP AS
			SELECT DISTINCT ON (country, language, norm) *
			FROM import_rows ORDER BY country, language, norm, line DESC`); err != nil {
			return c, fmt.Errorf("merge keyword metrics: %w", err)
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM import_metrics`).Scan(&n); err != nil {
			return c, fmt.Errorf("count keyword metrics: %w", err)
		}
		if _, err := metricsTarget(cols).write(ctx, l, "import_metrics", n, false, opts); err != nil {
			return c, err
		}
	}
	return c, nil
}

// prepare stages the file and merges its rows of the same key (the first of them in
// order is kept). It returns the distinct rows staged.
//
// Only the groups (rows of the same group columns) of rows marked seen are looked at: they
// go into import_groups, and the rows that lose the merge are deleted from it and from
// import_rows. A ranking file's group is its domain and keyword, so import_groups also
// holds every keyword with several URLs.
func (l *loader) prepare(ctx context.Context, src *rowSource, group, key []string, order string) (int, error) {
	tx := l.tx
	if err := l.stageRows(ctx, src); err != nil {
		return 0, err
	}
	merged := 0
	if src.keys.repeats > 0 {
		g, k := strings.Join(group, ", "), strings.Join(key, ", ")
		if _, err := tx.Exec(ctx, `CREATE TEMP TABLE import_groups ON COMMIT DROP AS
			SELECT * FROM import_rows WHERE (`+g+`) IN (SELECT `+g+` FROM import_rows WHERE seen)`); err != nil {
			return 0, fmt.Errorf("find repeated keys: %w", err)
		}
		tag, err := tx.Exec(ctx, `CREATE TEMP TABLE import_losers ON COMMIT DROP AS
			SELECT line FROM (SELECT line, row_number() OVER (PARTITION BY `+k+` ORDER BY `+order+`) AS n
			                  FROM import_groups) d
			WHERE n > 1`)
		if err != nil {
			return 0, fmt.Errorf("merge repeated keys: %w", err)
		}
		if merged = int(tag.RowsAffected()); merged > 0 {
			for _, t := range []string{"import_groups", "import_rows"} {
				if _, err := tx.Exec(ctx, `DELETE FROM `+t+` WHERE line IN (SELECT line FROM import_losers)`); err != nil {
					return 0, fmt.Errorf("merge repeated keys: %w", err)
				}
			}
		}
	}
	if _, err := tx.Exec(ctx, `ANALYZE import_rows`); err != nil {
		return 0, fmt.Errorf("analyze staging table: %w", err)
	}
	return src.copied - merged, nil
}

// target is a table an import writes.
type target struct {
	table string
	// columns are the columns the import writes but source, synthetic and updated_at:
	// every column of the table that is not generated.
	columns []string
	// group are the columns of a key the file's rows replace together (a domain's rankings
	// for a keyword); withURL says that url_hash tells a group's rows apart.
	group   []string
	withURL bool
	// set are the columns an update may change, present those of them the file has.
	set     []string
	present map[string]bool
	// keywordAsNorm: the keyword is stored as NULL where it equals keyword_norm.
	keywordAsNorm bool
}

// rankingsTarget is domain_rankings, for a file with the columns cols.
func rankingsTarget(cols columns) target {
	return target{table: "domain_rankings",
		columns: []string{"domain", "keyword", "keyword_norm", "country", "language", "position", "url", "url_hash"},
		group:   []string{"domain", "country", "language", "keyword_norm"}, withURL: true, keywordAsNorm: true,
		set:     []string{"keyword", "position", "url"},
		present: map[string]bool{"position": true, "url": cols.url >= 0}}
}

// metricsTarget is keyword_metrics, for a file with the columns cols.
func metricsTarget(cols columns) target {
	return target{table: "keyword_metrics",
		columns: append(append([]string{"keyword", "keyword_norm", "country", "language"}, metricColumns...), "ntrgm"),
		group:   []string{"country", "language", "keyword_norm"},
		set:     append([]string{"keyword"}, metricColumns...),
		present: map[string]bool{
			"search_volume":      cols.volume >= 0,
			"keyword_difficulty": cols.difficulty >= 0,
			"cpc":                cols.cpc >= 0,
			"competition":        cols.competition >= 0,
			"search_intent":      cols.intent >= 0,
			"serp_urls":          cols.serp >= 0,
			"monthly_from":       cols.monthly.volumes(),
			"monthly_volumes":    cols.monthly.volumes(),
			"trend":              cols.monthly.any(),
		}}
}

// staged names the staging column of a table column.
func staged(c string) string {
	if c == "keyword_norm" {
		return "norm"
	}
	return c
}

// groupJoin is the condition that the stored row t is of the staged row s's group; key
// that it has s's key.
func (tg target) groupJoin() string {
	var c []string
	for _, g := range tg.group {
		c = append(c, "t."+g+" = s."+staged(g))
	}
	return strings.Join(c, " AND ")
}

func (tg target) key() string {
	if tg.withURL {
		return tg.groupJoin() + " AND t.url_hash = s.url_hash"
	}
	return tg.groupJoin()
}

// sameURL is true for a stored row t with the URL of the staged row s of its group.
func (tg target) sameURL() string {
	if tg.withURL {
		return "t.url_hash = s.url_hash"
	}
	return "true"
}

// allColumns are the columns a row is written with.
func (tg target) allColumns() []string {
	return append(slices.Clone(tg.columns), "source", "synthetic", "updated_at")
}

// write writes the staged rows of the table from (distinct rows, one per key) into the
// target and returns the rows inserted or changed. The columns the file has overwrite the
// stored values (a blank cell stores NULL: the newest source says it does not know);
// columns it lacks keep theirs, unless the row changes between synthetic and real, when
// every column is replaced so sample values never mix with real ones. A row equal to the
// stored one is not written. With withURL, the stored rows of a group whose URL the file
// does not list are deleted; repeats says whether import_groups holds the groups with
// several rows in the file.
func (tg target) write(ctx context.Context, l *loader, from string, distinct int, repeats bool, opts Options) (int, error) {
	tx := l.tx
	bulk, err := bulkLoad(ctx, tx, tg.table, tg.allColumns(), distinct)
	if err != nil {
		return 0, err
	}
	if bulk {
		return tg.writeNewTable(ctx, l, from, opts)
	}
	// Other writers wait; readers go on reading the committed rows.
	if _, err := tx.Exec(ctx, `LOCK TABLE `+tg.table+` IN SHARE ROW EXCLUSIVE MODE`); err != nil {
		return 0, fmt.Errorf("lock %s: %w", tg.table, err)
	}
	// One join of the file with the stored rows of its groups finds every row to write:
	// the staged rows with no stored row (new), the stored rows with the staged row's URL
	// and other values (changed), and the stored rows with another URL (maybe stale). The
	// pairs table holds them with the staged row's values: a row stored as the file has it
	// is not among them.
	pairs := tg.table + "_pairs"
	storedURL := "NULL::uuid"
	if tg.withURL {
		storedURL = "t.url_hash"
	}
	if _, err := exec(ctx, tx, "match "+tg.table, `CREATE TEMP TABLE `+pairs+` ON COMMIT DROP AS
		SELECT s.*, t.ctid AS tid, `+tg.sameURL()+` AS same, `+storedURL+` AS stored_url_hash
		FROM `+from+` s LEFT JOIN `+tg.table+` t ON `+tg.groupJoin()+`
		WHERE t.ctid IS NULL OR NOT `+tg.sameURL()+` OR `+tg.changed(),
		source(opts), opts.Synthetic); err != nil {
		return 0, err
	}
	if _, err := exec(ctx, tx, "analyze "+pairs, `ANALYZE `+pairs); err != nil {
		return 0, err
	}
	// The statements below touch the rows found, by their ctid or their key: with costs
	// made for disks, the planner would rather read and hash the whole table.
	if tg.withURL {
		// Each group not in import_groups has one row in the file: a stored row with
		// another URL is stale. The others are stale when no row of the group has it.
		stale := `SELECT tid FROM ` + pairs + ` p WHERE NOT p.same`
		if repeats {
			stale += ` AND NOT EXISTS (SELECT 1 FROM import_groups g
				WHERE g.domain = p.domain AND g.country = p.country AND g.language = p.language
				  AND g.norm = p.norm AND g.url_hash = p.stored_url_hash)`
		}
		if _, err := exec(ctx, tx, "delete stale rankings",
			`DELETE FROM `+tg.table+` WHERE ctid = ANY (ARRAY(`+stale+`))`); err != nil {
			return 0, err
		}
	}
	updated, err := exec(ctx, tx, "update "+tg.table, `UPDATE `+tg.table+` t SET `+tg.updateSet()+`
		FROM `+pairs+` s WHERE t.ctid = s.tid AND s.same`, source(opts), opts.Synthetic)
	if err != nil {
		return 0, err
	}
	// A staged row is new when its group has no stored row, or (withURL) none with its URL.
	insert := `INSERT INTO ` + tg.table + ` (` + strings.Join(tg.allColumns(), ", ") + `) `
	inserted, err := exec(ctx, tx, "insert "+tg.table, insert+`SELECT `+tg.values(false)+`, $1, $2, now()
		FROM `+pairs+` s WHERE s.tid IS NULL`, source(opts), opts.Synthetic)
	if err != nil {
		return 0, err
	}
	if !tg.withURL {
		return updated + inserted, mergePending(ctx, tx, tg.table, updated+inserted)
	}
	// A staged row with a pair of another URL is not new when a pair of its group shows its
	// URL stored (in a group of several rows, the others' pairs); else the table is asked.
	more, err := exec(ctx, tx, "insert "+tg.table, insert+`SELECT DISTINCT ON (s.line) `+tg.values(false)+`, $1, $2, now()
		FROM (SELECT * FROM `+pairs+` s WHERE NOT s.same AND NOT EXISTS (
			SELECT 1 FROM `+pairs+` p WHERE p.domain = s.domain AND p.country = s.country
			  AND p.language = s.language AND p.norm = s.norm AND p.stored_url_hash = s.url_hash)
			OFFSET 0) s
		LEFT JOIN LATERAL (SELECT true AS stored FROM `+tg.table+` t WHERE `+tg.key()+` LIMIT 1) x ON true
		WHERE x.stored IS NULL
		ORDER BY s.line`, source(opts), opts.Synthetic)
	return updated + inserted + more, err
}

// mergePending merges the pending lists of table's GIN indexes (with fastupdate, rows
// written go to a list that every look-up scans until VACUUM or a full list merges it: a
// large import left research several times slower until then), when rows were written
// and the importer owns the indexes.
func mergePending(ctx context.Context, tx pgx.Tx, table string, written int) error {
	if written == 0 {
		return nil
	}
	_, err := exec(ctx, tx, "merge pending index entries", `SELECT gin_clean_pending_list(i.indexrelid)
		FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
		WHERE i.indrelid = $1::regclass AND a.amname = 'gin' AND pg_has_role(c.relowner, 'USAGE')`, table)
	return err
}

// values are the staged values (alias s) of the target's columns. merged takes the stored
// row t's value of a column the file lacks, as updateSet does.
func (tg target) values(merged bool) string {
	v := make([]string, len(tg.columns))
	for i, c := range tg.columns {
		if merged && slices.Contains(tg.set, c) && c != "keyword" && !tg.present[c] {
			v[i] = "CASE WHEN t.synthetic = $2 THEN t." + c + " END"
		} else {
			v[i] = tg.incoming(c)
		}
	}
	return strings.Join(v, ", ")
}

// writeNewTable writes the target as a new table (swap.go), switched in after the commit:
// the stored rows of the groups the file does not have, then the file's rows merged with
// the stored ones (a stored row of a group that the file does not list is left behind). A
// row equal to the stored one keeps its updated_at; the others are written now, and
// counted.
func (tg target) writeNewTable(ctx context.Context, l *loader, from string, opts Options) (int, error) {
	tx := l.tx
	nt, err := l.createNewTable(ctx, tg.table)
	if err != nil {
		return 0, err
	}
	if err := l.addChecks(ctx, nt, true); err != nil { // checked on an empty table: at once
		return 0, err
	}
	newTable := nt.name
	list := strings.Join(tg.allColumns(), ", ")
	var stored bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+tg.table+`)`).Scan(&stored); err != nil {
		return 0, fmt.Errorf("read %s: %w", tg.table, err)
	}
	if !stored { // the first load: nothing to copy or compare
		return exec(ctx, tx, "write "+newTable, `INSERT INTO `+newTable+` (`+list+`)
			SELECT `+tg.values(false)+`, $1, $2, now() FROM `+from+` s`, source(opts), opts.Synthetic)
	}
	if _, err := exec(ctx, tx, "copy "+tg.table, `INSERT INTO `+newTable+` (`+list+`)
		SELECT `+list+` FROM `+tg.table+` t
		WHERE NOT EXISTS (SELECT 1 FROM `+from+` s WHERE `+tg.groupJoin()+`)`); err != nil {
		return 0, err
	}
	var written int
	err = tx.QueryRow(ctx, `WITH w AS (
		INSERT INTO `+newTable+` (`+list+`)
		SELECT `+tg.values(true)+`, $1, $2,
			CASE WHEN t.ctid IS NOT NULL AND NOT `+tg.changed()+` THEN t.updated_at ELSE now() END
		FROM `+from+` s LEFT JOIN `+tg.table+` t ON `+tg.key()+`
		RETURNING updated_at
	) SELECT count(*) FROM w WHERE updated_at = now()`, source(opts), opts.Synthetic).Scan(&written)
	if err != nil {
		return 0, fmt.Errorf("write %s: %w", newTable, err)
	}
	return written, nil
}

// exec runs a statement of the load and returns the rows it wrote.
func exec(ctx context.Context, tx pgx.Tx, what, sql string, args ...any) (int, error) {
	tag, err := tx.Exec(ctx, sql, args...)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	return int(tag.RowsAffected()), nil
}

// updateSet builds the SET list of an UPDATE of the table aliased t from the staged row s,
// with $1 the source and $2 the synthetic flag, from fixed column names (no input reaches
// the SQL text): present columns and "keyword" take the file's value; absent ones keep
// the stored value unless the row switches between synthetic and real.
func (tg target) updateSet() string {
	var b strings.Builder
	for _, c := range tg.set {
		if c == "keyword" || tg.present[c] {
			fmt.Fprintf(&b, "%s = %s, ", c, tg.incoming(c))
		} else {
			fmt.Fprintf(&b, "%[1]s = CASE WHEN t.synthetic <> $2 THEN NULL ELSE t.%[1]s END, ", c)
		}
	}
	b.WriteString("source = $1, synthetic = $2, updated_at = now()")
	return b.String()
}

// changed is the condition under which updateSet changes a value, so that importing a
// file again rewrites nothing. A ranking's keyword is compared as it reads, so a row
// stored in either form (see incoming) is not rewritten for that alone.
func (tg target) changed() string {
	stored := []string{"t.source", "t.synthetic"}
	incoming := []string{"$1::text", "$2::boolean"}
	for _, c := range tg.set {
		if c == "keyword" || tg.present[c] {
			t, s := "t."+c, "s."+c
			if c == "keyword" && tg.keywordAsNorm {
				t = `coalesce(t.keyword, t.keyword_norm COLLATE "default")`
			}
			stored, incoming = append(stored, t), append(incoming, s)
		}
	}
	return "(" + strings.Join(stored, ", ") + ") IS DISTINCT FROM (" + strings.Join(incoming, ", ") + ")"
}

// incoming is the value the staged row s writes to column c: its own, but a ranking's
// keyword equal to its norm, which is stored as NULL (migration 00048: keyword_norm reads
// in its place, and the row is 16 bytes shorter, the null bitmap paid).
func (tg target) incoming(c string) string {
	if c == "keyword" && tg.keywordAsNorm {
		return "nullif(s.keyword, s.norm)"
	}
	return "s." + staged(c)
}
