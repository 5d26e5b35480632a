package importer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/local"
)

// A file larger than the table it loads into is written as a new table rather than row by
// row into the old one: the rows the file does not replace are copied, the file's rows
// added and committed, the indexes built once over the whole, on two connections at a
// time (a GIN index built in one pass costs a fraction of a million inserts into it), and
// the new table takes the old one's name in a moment at the end. Until then the API reads
// the old table as before: from before the copy to the switch, a transaction of the
// import's holds it against other writers only, and the writers' advisory lock keeps other
// imports out. The switch needs the table to itself (ACCESS EXCLUSIVE) for milliseconds; it
// waits at most swapLockTimeout for running queries at a time, letting the queries queued
// behind it through before it tries again. An import that fails or is killed before the
// switch leaves the old table as it was.
//
// Nothing is lost in the switch: the new table is made LIKE the old one (columns,
// defaults, generated columns, CHECK constraints, storage, comments), with its storage
// parameters, triggers and each index of the old table under the old names. Tables that
// something else depends on (a view, a foreign key, grants, row security) are never
// switched: their files load row by row.

// bulkMinRows is the smallest file loaded as a new table.
var bulkMinRows = 50_000

// Test hooks: alwaysNewTable loads every file as a new table when the table can be
// switched; beforeSwap runs when the new table is built, before the switch.
var (
	alwaysNewTable bool
	beforeSwap     func()
)

// swapLockTimeout bounds one wait for the old table's readers before the switch.
const swapLockTimeout = "2s"

// bulkLoad reports whether the staged file (distinct rows) is to replace table as a new
// table: it is large, larger than the table, and the table can be switched — its columns
// (generated ones aside) are the columns the importer writes, which it knows how to carry
// over, and nothing else depends on it.
func bulkLoad(ctx context.Context, tx pgx.Tx, table string, columns []string, distinct int) (bool, error) {
	if distinct < bulkMinRows && !alwaysNewTable {
		return false, nil
	}
	smaller, switchable, err := sizeUp(ctx, tx, table, columns, distinct)
	return (smaller || alwaysNewTable) && switchable, err
}

// sizeUp reports whether table has fewer rows than n and whether it can be switched for a
// new table (see bulkLoad).
func sizeUp(ctx context.Context, tx pgx.Tx, table string, columns []string, n int) (smaller, switchable bool, err error) {
	// Counting stops after n rows.
	err = tx.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM (SELECT 1 FROM `+table+` LIMIT $2) x) < $2,
		c.relacl IS NULL AND NOT c.relrowsecurity AND NOT c.relhasrules
		AND NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = c.oid AND tgisinternal)
		AND pg_has_role(c.relowner, 'USAGE') AND has_schema_privilege(c.relnamespace, 'CREATE')
		AND (SELECT array_agg(attname::text ORDER BY attname) FROM pg_attribute
		     WHERE attrelid = c.oid AND attnum > 0 AND NOT attisdropped AND attgenerated = '')
		    = (SELECT array_agg(x ORDER BY x) FROM unnest($3::text[]) x)
		AND NOT EXISTS (SELECT 1 FROM pg_depend d   -- views, rules, foreign keys, statistics, owned sequences
		                WHERE d.refclassid = 'pg_class'::regclass AND d.refobjid = c.oid
		                  AND (d.classid IN ('pg_rewrite'::regclass, 'pg_constraint'::regclass, 'pg_statistic_ext'::regclass)
		                       OR d.classid = 'pg_class'::regclass AND d.objid IN (SELECT oid FROM pg_class WHERE relkind = 'S'))
		                  AND d.objid NOT IN (SELECT oid FROM pg_constraint WHERE conrelid = c.oid AND contype IN ('c', 'p', 'u')))
		AND NOT EXISTS (SELECT 1 FROM pg_depend WHERE refobjid = c.reltype AND deptype = 'n')
		AND NOT EXISTS (SELECT 1 FROM pg_constraint WHERE confrelid = c.oid OR conrelid = c.oid AND contype NOT IN ('c', 'p', 'u'))
		AND NOT EXISTS (SELECT 1 FROM pg_publication_rel WHERE prrelid = c.oid)
		FROM pg_class c WHERE c.oid = $1::regclass`, table, n, columns).Scan(&smaller, &switchable)
	if err != nil {
		return false, false, fmt.Errorf("size up %s: %w", table, err)
	}
	return smaller, switchable, nil
}

// newTableSuffix names the table an import builds before it takes the old one's name.
const newTableSuffix = "_import"

// indexBuilders is how many connections build a new table's indexes at a time: a GIN
// index is built by one process, and keyword_metrics has 14 tier indexes (migration 00021).
const indexBuilders = 2

// newTable is a table an import wrote to take the place of table once its indexes are
// built. guard, a transaction of its own, holds table against other writers from before
// the rows were copied until the switch, which it makes.
type newTable struct {
	table, name string
	indexes     []index
	checks      []check
	conn        *pgxpool.Conn
	guard       pgx.Tx
	// setsWritten says that guard wrote the keyword sets of a new domain_rankings, read
	// beside its index builds (else they are rebuilt after the switch, BuildKeywordSets).
	setsWritten bool
	// markets, when not nil, are every market of the table's rows, which number rows: a
	// table filled by one file alone (loadDirect). Its keyword sets are then read one
	// market at a time, and must come to that many rows.
	markets []keywords.Market
	rows    int
}

// check is a CHECK constraint of the old table, which the new one takes once its rows are
// in (addChecks).
type check struct {
	name, def string // def as pg_get_constraintdef prints it, without NOT VALID
}

// index is an index of the old table to build on the new one.
type index struct {
	name       string // the old index's name, which the new one takes
	constraint string // "p" or "u" when it backs a primary key or unique constraint
	conName    string
	def        string // pg_get_indexdef from " USING " on
	unique     bool
	tmp        string // its name until the switch
}

// primaryKey returns the new table's index for the old one's primary key, or nil.
func (nt *newTable) primaryKey() *index {
	for i := range nt.indexes {
		if nt.indexes[i].constraint == "p" {
			return &nt.indexes[i]
		}
	}
	return nil
}

// dropNewTable gives up nt before anything was written to it.
func (l *loader) dropNewTable(ctx context.Context, nt *newTable) error {
	l.news = slices.DeleteFunc(l.news, func(x *newTable) bool { return x == nt })
	err := nt.guard.Rollback(ctx)
	nt.conn.Release()
	if err != nil {
		return fmt.Errorf("release %s: %w", nt.table, err)
	}
	if _, err := l.tx.Exec(ctx, `DROP TABLE `+nt.name); err != nil {
		return fmt.Errorf("drop %s: %w", nt.name, err)
	}
	return nil
}

// loader is the state of one import: its transaction and the new tables to switch in
// after it commits.
type loader struct {
	pool *pgxpool.Pool
	tx   pgx.Tx
	news []*newTable

	stage   func(stage string, done, total int) // Options.Stage
	stageMu sync.Mutex
	built   int // indexes built of the table being built
	// setsWritten says that the keyword sets were written with a new domain_rankings.
	setsWritten bool
}

// enter reports a stage to Options.Stage, one call at a time.
func (l *loader) enter(stage string, done, total int) {
	if l.stage == nil {
		return
	}
	l.stageMu.Lock()
	defer l.stageMu.Unlock()
	l.stage(stage, done, total)
}

// indexBuilt reports one more of total indexes built.
func (l *loader) indexBuilt(total int) {
	l.stageMu.Lock()
	defer l.stageMu.Unlock()
	l.built++
	if l.stage != nil {
		l.stage(StageIndexes, l.built, total)
	}
}

// createNewTable locks table against other writers in a transaction of its own, then,
// in the import's, creates table+newTableSuffix like table, without indexes.
func (l *loader) createNewTable(ctx context.Context, table string) (*newTable, error) {
	nt := &newTable{table: table, name: table + newTableSuffix}
	var err error
	if nt.conn, err = l.pool.Acquire(ctx); err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	l.news = append(l.news, nt) // abandon releases it
	if nt.guard, err = nt.conn.Begin(ctx); err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	if _, err := nt.guard.Exec(ctx, `LOCK TABLE `+table+` IN SHARE ROW EXCLUSIVE MODE`); err != nil {
		return nil, fmt.Errorf("lock %s: %w", table, err)
	}
	// A table of that name is left by an import that was killed: under the writers' lock
	// no other import is using it.
	if _, err := l.tx.Exec(ctx, `DROP TABLE IF EXISTS `+nt.name); err != nil {
		return nil, fmt.Errorf("drop %s: %w", nt.name, err)
	}
	if _, err := l.tx.Exec(ctx, `CREATE TABLE `+nt.name+` (LIKE `+table+` INCLUDING ALL EXCLUDING INDEXES EXCLUDING CONSTRAINTS)`); err != nil {
		return nil, fmt.Errorf("create %s: %w", nt.name, err)
	}
	checks, err := l.tx.Query(ctx, `SELECT conname, pg_get_constraintdef(oid), convalidated
		FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'c' ORDER BY conname`, table)
	if err != nil {
		return nil, fmt.Errorf("read constraints of %s: %w", table, err)
	}
	nt.checks, err = pgx.CollectRows(checks, func(r pgx.CollectableRow) (check, error) {
		var c check
		var valid bool
		err := r.Scan(&c.name, &c.def, &valid)
		if !valid {
			c.def = strings.TrimSuffix(c.def, " NOT VALID")
		}
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("read constraints of %s: %w", table, err)
	}
	var opts []string
	if err := l.tx.QueryRow(ctx, `SELECT coalesce(reloptions, '{}') FROM pg_class WHERE oid = $1::regclass`, table).Scan(&opts); err != nil {
		return nil, fmt.Errorf("read storage parameters of %s: %w", table, err)
	}
	if len(opts) > 0 {
		// reloptions are name=value pairs as PostgreSQL prints them back.
		if _, err := l.tx.Exec(ctx, `ALTER TABLE `+nt.name+` SET (`+strings.Join(opts, ", ")+`)`); err != nil {
			return nil, fmt.Errorf("copy storage parameters of %s: %w", table, err)
		}
	}
	rows, err := l.tx.Query(ctx, `SELECT ic.relname, coalesce(con.contype::text, ''), coalesce(con.conname, ''),
			substr(pg_get_indexdef(i.indexrelid), strpos(pg_get_indexdef(i.indexrelid), ' USING ')),
			i.indisunique
		FROM pg_index i
		JOIN pg_class ic ON ic.oid = i.indexrelid
		LEFT JOIN pg_constraint con ON con.conindid = i.indexrelid AND con.conrelid = i.indrelid
		WHERE i.indrelid = $1::regclass
		ORDER BY ic.relam = (SELECT oid FROM pg_am WHERE amname = 'btree') DESC, ic.relname`, table)
	if err != nil {
		return nil, fmt.Errorf("read indexes of %s: %w", table, err)
	}
	nt.indexes, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (index, error) {
		var x index
		return x, r.Scan(&x.name, &x.constraint, &x.conName, &x.def, &x.unique)
	})
	if err != nil {
		return nil, fmt.Errorf("read indexes of %s: %w", table, err)
	}
	for i := range nt.indexes {
		nt.indexes[i].tmp = fmt.Sprintf("%s_%d", nt.name, i)
	}
	return nt, nil
}

// addChecks gives nt the old table's CHECK constraints. The new table is created without
// them: evaluated for every row of a COPY they were 40% of its time (5M rankings), and the
// COPY holds the import's only connection that can write the new table. Rows the importer
// copied it has already checked by the same rules (a row that breaks one is rejected with
// its line, before it is copied), so those constraints are added NOT VALID, without reading
// the rows again; they hold for every row written after (the merge of staged rows, later
// imports, other writers). valid adds them checked, for a table still empty or small.
// TestDirectLoadMeetsChecks loads a corpus of hostile rows through both paths and then
// validates every constraint.
func (l *loader) addChecks(ctx context.Context, nt *newTable, valid bool) error {
	if len(nt.checks) == 0 {
		return nil
	}
	adds := make([]string, len(nt.checks))
	for i, c := range nt.checks {
		adds[i] = "ADD CONSTRAINT " + pgx.Identifier{c.name}.Sanitize() + " " + c.def
		if !valid {
			adds[i] += " NOT VALID"
		}
	}
	if _, err := l.tx.Exec(ctx, `ALTER TABLE `+nt.name+` `+strings.Join(adds, ", ")); err != nil {
		return fmt.Errorf("constraints of %s: %w", nt.name, err)
	}
	return nil
}

// switchTables builds the indexes of the new tables, indexBuilders at a time, then
// switches each in for its old table: the old table is dropped, the new one takes its
// name, its indexes' and constraints' names and its triggers. The import's transaction
// has committed the new tables' rows.
func (l *loader) switchTables(ctx context.Context) error {
	for len(l.news) > 0 {
		nt := l.news[0]
		if err := l.buildIndexes(ctx, nt); err != nil {
			return err
		}
		if err := nt.switchIn(ctx); err != nil {
			return err
		}
		l.setsWritten = l.setsWritten || nt.setsWritten
		nt.conn.Release()
		l.news = l.news[1:]
	}
	return nil
}

// buildIndexes builds the indexes of nt, each in a transaction of its own on one of
// indexBuilders connections: the B-trees first (the longest builds, over every row), then
// the others as the builders come free. The table's statement of besideIndexes, if any,
// runs among them, after the B-trees.
//
// A table whose keyword sets are read before the switch (setsIndex) has the index they
// are read through queued first, with the server's parallel workers, and the builder that
// built it then reads the sets and writes them in nt's guard while the other builds go
// on. Those run without parallel workers: beside another build and then the sets' read,
// more sorting processes cost CPU that they do not win back in time (on two cores the
// indexes and the sets took 84 s so against 104 s with workers for both B-trees, where the
// by-keyword index finished last and the read overlapped nothing).
func (l *loader) buildIndexes(ctx context.Context, nt *newTable) error {
	first := -1
	if def := setsIndex[nt.table]; def != "" {
		first = slices.IndexFunc(nt.indexes, func(x index) bool { return strings.HasPrefix(x.def, def) })
	}
	btrees := 0
	for i := range nt.indexes {
		if strings.HasPrefix(nt.indexes[i].def, " USING btree ") {
			btrees++
		}
	}
	var todo []buildTask
	for i := range btrees { // listed first (createNewTable)
		if i != first {
			todo = append(todo, buildTask{x: &nt.indexes[i], serial: first >= 0})
		}
	}
	if sql := besideIndexes[nt.table]; sql != "" {
		todo = append(todo, buildTask{sql: fmt.Sprintf(sql, nt.name)})
	}
	for i := btrees; i < len(nt.indexes); i++ {
		if i != first {
			todo = append(todo, buildTask{x: &nt.indexes[i], serial: first >= 0})
		}
	}
	l.built = 0
	l.enter(StageIndexes, 0, len(nt.indexes))
	if first >= 0 {
		todo = append([]buildTask{{x: &nt.indexes[first], thenSets: true}}, todo...)
	}
	return l.runBuilds(ctx, nt, todo)
}

// buildTask is one of buildIndexes' tasks: an index (serial: without parallel workers;
// thenSets: followed by the keyword sets' read on the same connection), or the statement
// of besideIndexes.
type buildTask struct {
	x        *index
	serial   bool
	thenSets bool
	sql      string
}

// runBuilds runs the tasks in their order on indexBuilders connections.
func (l *loader) runBuilds(ctx context.Context, nt *newTable, tasks []buildTask) error {
	todo := make(chan buildTask, len(tasks))
	for _, t := range tasks {
		todo <- t
	}
	close(todo)
	g, ctx := errgroup.WithContext(ctx)
	for range min(indexBuilders, len(tasks)) {
		g.Go(func() error {
			for t := range todo {
				err := pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
					if t.x == nil {
						_, err := tx.Exec(ctx, t.sql)
						return err
					}
					return l.buildIndex(ctx, tx, nt, t.x, t.serial)
				})
				if err != nil {
					return err
				}
				if t.x != nil {
					l.indexBuilt(len(nt.indexes))
				}
				if t.thenSets {
					if err := l.readSets(ctx, nt); err != nil {
						return err
					}
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// setsIndex is, for a table whose keyword sets an import reads before the switch, the
// definition (pg_get_indexdef from " USING ") the index the read goes through starts with:
// domain_rankings_by_keyword_idx (migration 00030), in the order the sets are numbered.
// A table without it has its sets rebuilt after the switch.
var setsIndex = map[string]string{"domain_rankings": " USING btree (keyword_norm, country, language, domain)"}

// setsMarkets, a test hook, sees and may change the markets a new table's keyword sets are
// read by (nil: all at once).
var setsMarkets func([]keywords.Market) []keywords.Market

// readSets reads the keyword sets of nt's rows and writes them in nt's guard, the
// transaction that switches nt in, while the other indexes are being built. When nt's
// markets are known, the sets are read one market at a time, and the rows read must be
// the table's.
func (l *loader) readSets(ctx context.Context, nt *newTable) error {
	markets := nt.markets
	if setsMarkets != nil {
		markets = setsMarkets(markets)
	}
	var sets *local.KeywordSets
	err := pgx.BeginTxFunc(ctx, l.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var err error
		sets, err = local.ReadKeywordSets(ctx, tx, nt.name, markets)
		return err
	})
	if err != nil {
		return err
	}
	defer sets.Close()
	if markets != nil && sets.Rows() != nt.rows {
		// A market missing from the list: its sets would be missing, and read as fresh.
		return fmt.Errorf("keyword sets of %s: read %d rankings of %d markets, the table holds %d", nt.table, sets.Rows(), len(markets), nt.rows)
	}
	if err := sets.Write(ctx, nt.guard); err != nil {
		return fmt.Errorf("keyword sets of %s: %w", nt.table, err)
	}
	nt.setsWritten = true
	return nil
}

// besideIndexes are statements run beside the index builds of a new table (%s its name):
// what the old table's triggers do for the rows written to it, which the new table,
// without triggers until the switch, did not do (keyword_words, migration 00021).
var besideIndexes = map[string]string{
	"keyword_metrics": `INSERT INTO keyword_words (word, country, language)
		SELECT w, country, language
		FROM (SELECT unnest(string_to_array(keyword_norm, ' ')) AS w, country, language FROM %s) k
		WHERE w <> '' GROUP BY 1, 2, 3 ON CONFLICT DO NOTHING`,
}

// buildIndex builds the index x of nt in tx.
func (l *loader) buildIndex(ctx context.Context, tx pgx.Tx, nt *newTable, x *index, serial bool) error {
	unique := ""
	if x.unique {
		unique = "UNIQUE "
	}
	// maintenance_work_mem holds a build's sort or a GIN build's entries.
	if _, err := tx.Exec(ctx, `SET LOCAL maintenance_work_mem = '256MB'`); err != nil {
		return err
	}
	if serial {
		if _, err := tx.Exec(ctx, `SET LOCAL max_parallel_maintenance_workers = 0`); err != nil {
			return err
		}
	}
	if _, err := tx.Exec(ctx, `CREATE `+unique+`INDEX `+x.tmp+` ON `+nt.name+x.def); err != nil {
		return fmt.Errorf("build index %s: %w", x.name, err)
	}
	return nil
}

// switchIn replaces the old table by the new one in the guard's transaction.
func (nt *newTable) switchIn(ctx context.Context) error {
	tx := nt.guard
	if err := copyTriggers(ctx, tx, nt.table, nt.name); err != nil {
		return err
	}
	if beforeSwap != nil {
		beforeSwap()
	}
	if err := lockForSwap(ctx, tx, nt.table); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DROP TABLE `+nt.table); err != nil {
		return fmt.Errorf("drop old %s: %w", nt.table, err)
	}
	if _, err := tx.Exec(ctx, `ALTER TABLE `+nt.name+` RENAME TO `+nt.table); err != nil {
		return fmt.Errorf("rename %s: %w", nt.name, err)
	}
	for _, x := range nt.indexes {
		tmp := pgx.Identifier{x.tmp}.Sanitize()
		var sql string
		switch x.constraint {
		case "p":
			sql = `ALTER TABLE ` + nt.table + ` ADD CONSTRAINT ` + pgx.Identifier{x.conName}.Sanitize() + ` PRIMARY KEY USING INDEX ` + tmp
		case "u":
			sql = `ALTER TABLE ` + nt.table + ` ADD CONSTRAINT ` + pgx.Identifier{x.conName}.Sanitize() + ` UNIQUE USING INDEX ` + tmp
		default:
			sql = `ALTER INDEX ` + tmp + ` RENAME TO ` + pgx.Identifier{x.name}.Sanitize()
		}
		if _, err := tx.Exec(ctx, sql); err != nil {
			return fmt.Errorf("name index %s: %w", x.name, err)
		}
	}
	// The new table's rows were written before it had triggers: the versions they keep are
	// moved on here, committed with the switch (migration 00041).
	if _, err := tx.Exec(ctx, `SELECT keyword_table_replaced($1)`, nt.table); err != nil {
		return fmt.Errorf("switch in %s: move the data version: %w", nt.table, err)
	}
	if nt.setsWritten {
		if err := local.MarkKeywordSetsBuilt(ctx, tx); err != nil {
			return fmt.Errorf("switch in %s: %w", nt.table, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("switch in %s: %w", nt.table, err)
	}
	return nil
}

// abandon gives up the new tables not switched in: their guards roll back and the tables
// (committed when the import's transaction was) are dropped.
func (l *loader) abandon(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	for _, nt := range l.news {
		if nt.guard != nil {
			_ = nt.guard.Rollback(ctx)
		}
		nt.conn.Release()
		_, _ = l.pool.Exec(ctx, `DROP TABLE IF EXISTS `+nt.name)
	}
	l.news = nil
}

// lockForSwap takes table for the switch, waiting at most swapLockTimeout at a time for
// the queries reading it, until ctx ends.
func lockForSwap(ctx context.Context, tx pgx.Tx, table string) error {
	if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '`+swapLockTimeout+`'`); err != nil {
		return fmt.Errorf("set lock_timeout: %w", err)
	}
	for {
		if _, err := tx.Exec(ctx, `SAVEPOINT swap_lock`); err != nil {
			return fmt.Errorf("savepoint: %w", err)
		}
		_, err := tx.Exec(ctx, `LOCK TABLE `+table+` IN ACCESS EXCLUSIVE MODE`)
		if err == nil {
			break
		}
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "55P03" { // lock_not_available
			return fmt.Errorf("lock %s: %w", table, err)
		}
		if _, err := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT swap_lock`); err != nil {
			return fmt.Errorf("rollback to savepoint: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout TO DEFAULT`); err != nil {
		return fmt.Errorf("reset lock_timeout: %w", err)
	}
	return nil
}

// copyTriggers creates the triggers of table on newTable, under the same names.
func copyTriggers(ctx context.Context, tx pgx.Tx, table, newTable string) error {
	rows, err := tx.Query(ctx, `SELECT pg_get_triggerdef(t.oid), format('%I.%I', n.nspname, c.relname)
		FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE t.tgrelid = $1::regclass AND NOT t.tgisinternal ORDER BY t.tgname`, table)
	if err != nil {
		return fmt.Errorf("read triggers of %s: %w", table, err)
	}
	defs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var def, printed string
		if err := r.Scan(&def, &printed); err != nil {
			return "", err
		}
		// "CREATE TRIGGER name BEFORE INSERT ON schema.table FOR EACH ROW ...".
		on := " ON " + printed + " "
		if !strings.Contains(def, on) {
			return "", fmt.Errorf("trigger definition %q does not name %s", def, printed)
		}
		return strings.Replace(def, on, " ON "+newTable+" ", 1), nil
	})
	if err != nil {
		return fmt.Errorf("read triggers of %s: %w", table, err)
	}
	for _, def := range defs {
		if _, err := tx.Exec(ctx, def); err != nil {
			return fmt.Errorf("copy trigger: %w", err)
		}
	}
	return nil
}
