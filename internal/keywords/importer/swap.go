package importer

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A file larger than the table it loads into is written as a new table rather than row by
// row into the old one: the rows the file does not replace are copied, the file's rows
// added, the indexes built once over the whole (a GIN index built in one pass costs a
// fraction of a million inserts into it), and the new table takes the old one's name in a
// moment at the end. Until then the API reads the old table as before: the import holds
// only a lock against other writers. The switch needs the table to itself
// (ACCESS EXCLUSIVE) for milliseconds; it waits at most swapLockTimeout for running
// queries at a time, letting the queries queued behind it through before it tries again.
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
	var smaller, switchable bool
	// Counting stops after as many rows as the file has.
	err := tx.QueryRow(ctx, `SELECT
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
		FROM pg_class c WHERE c.oid = $1::regclass`, table, distinct, columns).Scan(&smaller, &switchable)
	if err != nil {
		return false, fmt.Errorf("size up %s: %w", table, err)
	}
	return (smaller || alwaysNewTable) && switchable, nil
}

// newTableSuffix names the table an import builds before it takes the old one's name.
const newTableSuffix = "_import"

// createNewTable creates table+newTableSuffix like table, without indexes, and returns its
// name.
func createNewTable(ctx context.Context, tx pgx.Tx, table string) (string, error) {
	name := table + newTableSuffix
	if _, err := tx.Exec(ctx, `CREATE TABLE `+name+` (LIKE `+table+` INCLUDING ALL EXCLUDING INDEXES)`); err != nil {
		return "", fmt.Errorf("create %s: %w", name, err)
	}
	var opts []string
	if err := tx.QueryRow(ctx, `SELECT coalesce(reloptions, '{}') FROM pg_class WHERE oid = $1::regclass`, table).Scan(&opts); err != nil {
		return "", fmt.Errorf("read storage parameters of %s: %w", table, err)
	}
	if len(opts) > 0 {
		// reloptions are name=value pairs as PostgreSQL prints them back.
		if _, err := tx.Exec(ctx, `ALTER TABLE `+name+` SET (`+strings.Join(opts, ", ")+`)`); err != nil {
			return "", fmt.Errorf("copy storage parameters of %s: %w", table, err)
		}
	}
	return name, nil
}

// index is an index of the old table to build on the new one.
type index struct {
	name       string // the old index's name, which the new one takes
	constraint string // "p" or "u" when it backs a primary key or unique constraint
	conName    string
	def        string // pg_get_indexdef from " USING " on
	unique     bool
}

// swapIn builds the indexes of table on its new table, then switches the two: the old
// table is dropped and the new one takes its name and its indexes' names.
func swapIn(ctx context.Context, tx pgx.Tx, table, newTable string) error {
	rows, err := tx.Query(ctx, `SELECT ic.relname, coalesce(con.contype::text, ''), coalesce(con.conname, ''),
			substr(pg_get_indexdef(i.indexrelid), strpos(pg_get_indexdef(i.indexrelid), ' USING ')),
			i.indisunique
		FROM pg_index i
		JOIN pg_class ic ON ic.oid = i.indexrelid
		LEFT JOIN pg_constraint con ON con.conindid = i.indexrelid AND con.conrelid = i.indrelid
		WHERE i.indrelid = $1::regclass
		ORDER BY ic.relname`, table)
	if err != nil {
		return fmt.Errorf("read indexes of %s: %w", table, err)
	}
	idx, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (index, error) {
		var x index
		return x, r.Scan(&x.name, &x.constraint, &x.conName, &x.def, &x.unique)
	})
	if err != nil {
		return fmt.Errorf("read indexes of %s: %w", table, err)
	}
	// maintenance_work_mem holds an index build's sort and a GIN build's entries.
	if _, err := tx.Exec(ctx, `SET LOCAL maintenance_work_mem = '512MB'`); err != nil {
		return fmt.Errorf("set maintenance_work_mem: %w", err)
	}
	for i, x := range idx {
		unique := ""
		if x.unique {
			unique = "UNIQUE "
		}
		tmp := fmt.Sprintf("%s_%d", newTable, i)
		if _, err := tx.Exec(ctx, `CREATE `+unique+`INDEX `+tmp+` ON `+newTable+x.def); err != nil {
			return fmt.Errorf("build index %s: %w", x.name, err)
		}
	}
	if err := copyTriggers(ctx, tx, table, newTable); err != nil {
		return err
	}
	if beforeSwap != nil {
		beforeSwap()
	}
	if err := lockForSwap(ctx, tx, table); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DROP TABLE `+table); err != nil {
		return fmt.Errorf("drop old %s: %w", table, err)
	}
	if _, err := tx.Exec(ctx, `ALTER TABLE `+newTable+` RENAME TO `+table); err != nil {
		return fmt.Errorf("rename %s: %w", newTable, err)
	}
	for i, x := range idx {
		tmp := pgx.Identifier{fmt.Sprintf("%s_%d", newTable, i)}.Sanitize()
		var sql string
		switch x.constraint {
		case "p":
			sql = `ALTER TABLE ` + table + ` ADD CONSTRAINT ` + pgx.Identifier{x.conName}.Sanitize() + ` PRIMARY KEY USING INDEX ` + tmp
		case "u":
			sql = `ALTER TABLE ` + table + ` ADD CONSTRAINT ` + pgx.Identifier{x.conName}.Sanitize() + ` UNIQUE USING INDEX ` + tmp
		default:
			sql = `ALTER INDEX ` + tmp + ` RENAME TO ` + pgx.Identifier{x.name}.Sanitize()
		}
		if _, err := tx.Exec(ctx, sql); err != nil {
			return fmt.Errorf("name index %s: %w", x.name, err)
		}
	}
	return nil
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
