package importer

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/jackc/pgx/v5"

	"github.com/contentapi/contentapi/internal/keywords"
)

// A large file loaded into an empty table (the first load of a data set) is copied
// straight into the new table that replaces it (swap.go), without the temporary table and
// the INSERT … SELECT from it that a load otherwise goes through: that second copy of every
// row cost as much as the first. Only the rows whose key may repeat an earlier row's (marked
// seen by the keyer) go through the temporary table, where they are merged with each other
// and then with the new table's row of their key:
//
//   - a row COPY puts into the new table is the first of its key in the file: a later row
//     with the key is marked seen, since the keyer's Bloom filter has no false negatives;
//   - a row the keyer cannot normalise (not ASCII) is staged. Its key, which PostgreSQL
//     computes, holds a character that is not ASCII, so it cannot be a copied row's key —
//     unless each of its other characters may lower-case to ASCII (the Kelvin sign, a
//     non-ASCII space). Such a row could share its key with a later copied row, so from it
//     on every row of the file is staged.
//
// So a staged row comes after the copied row of its key, if there is one, and the merge
// follows the file's order (the last row wins, or for rankings the best position, then
// the last row). The merge finds the copied row of each staged key by one hash join of the
// staged rows with the new table, which has no index yet (0.15 s per million rows): the
// key index is built after the commit beside the others, rather than first, in the
// import's transaction, where everything after it waited for it.

// directMinRows is the smallest file copied straight into a new table; the rows up to it
// are read ahead (a few megabytes) to tell.
var directMinRows = 50_000

// alwaysDirect, a test hook, copies every file into an empty table straight into a new one.
var alwaysDirect bool

// heldRows bounds the staged rows held in memory while COPY feeds the new table; when as
// many are held, that COPY ends, they are copied into the staging table, and a new COPY
// goes on with the file.
var heldRows = defaultHeldRows

const defaultHeldRows = 20_000

// loadDirect loads the file into a new table for tg when the table is empty, the file
// large and the table switchable; ok is false, with nothing done, otherwise. The caller
// then loads it the usual way: the rows read ahead are still to come from src.
func (l *loader) loadDirect(ctx context.Context, src *rowSource, tg target, opts Options) (c counts, ok bool, err error) {
	if !src.keys.goNorm || src.metrics && (src.rankings || !src.keys.goTrgm) {
		return c, false, nil // every row staged anyway; or two tables to write
	}
	if !src.peek(directMinRows) && !alwaysDirect {
		return c, false, nil
	}
	if _, switchable, err := sizeUp(ctx, l.tx, tg.table, tg.allColumns(), 1); err != nil || !switchable {
		return c, false, err
	}
	nt, err := l.createNewTable(ctx, tg.table)
	if err != nil {
		return c, false, err
	}
	var stored bool // now that other writers wait
	if err := l.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+tg.table+`)`).Scan(&stored); err != nil {
		return c, false, fmt.Errorf("read %s: %w", tg.table, err)
	}
	if stored || nt.primaryKey() == nil {
		return c, false, l.dropNewTable(ctx, nt)
	}
	if err := createStaging(ctx, l.tx); err != nil {
		return c, true, err
	}
	copied, staged := 0, 0
	if tg.withURL {
		src.keys.unseen = true // the sort brings repeats together
		if copied, staged, err = l.copySorted(ctx, src, tg, opts, nt.name); err != nil {
			return c, true, err
		}
	} else if copied, staged, err = l.copyDirect(ctx, src, tg, opts, nt.name); err != nil {
		return c, true, err
	}
	// The copied rows passed the importer's checks; the merged ones are checked as written.
	if err := l.addChecks(ctx, nt, false); err != nil {
		return c, true, err
	}
	c = counts{distinct: copied, written: copied}
	if staged > 0 {
		merged, err := l.mergeStaged(ctx, src, tg, nt.name, opts)
		if err != nil {
			return c, true, err
		}
		c.distinct += merged
		c.written = c.distinct
	}
	// Every row of the new table is one of the file's.
	nt.markets, nt.rows = src.markets, c.distinct
	if nt.markets == nil {
		nt.markets = []keywords.Market{}
	}
	return c, true, nil
}

// copyDirect copies the rest of src into table in the file's order, staging the rows whose
// key may repeat an earlier row's (see directSource). It returns how many rows each got.
func (l *loader) copyDirect(ctx context.Context, src *rowSource, tg target, opts Options, table string) (copied, staged int, err error) {
	ds := &directSource{src: src, tg: tg, opts: opts}
	for {
		n, err := copyFreeze(ctx, l.tx, table, tg.copyColumns(), ds)
		if err != nil {
			return copied, staged, fmt.Errorf("copy rows: %w", err)
		}
		copied += int(n)
		if err := l.stageHeld(ctx, src, ds.held); err != nil {
			return copied, staged, err
		}
		staged += len(ds.held)
		clear(ds.held)
		ds.held = ds.held[:0]
		if ds.done {
			break
		}
	}
	src.fileRead(l)
	return copied, staged, nil
}

// stageHeld copies held rows of src into the staging table.
func (l *loader) stageHeld(ctx context.Context, src *rowSource, held []stagedRow) error {
	if len(held) == 0 {
		return nil
	}
	if _, err := l.tx.CopyFrom(ctx, pgx.Identifier{"import_rows"}, src.columns(), &heldSource{src: src, rows: held}); err != nil {
		return fmt.Errorf("copy rows: %w", err)
	}
	return nil
}

// mergeStaged merges the staged rows with each other and into the new table, and returns
// how many rows the table gained.
func (l *loader) mergeStaged(ctx context.Context, src *rowSource, tg target, newTable string, opts Options) (int, error) {
	tx := l.tx
	if err := completeKeys(ctx, tx, src); err != nil {
		return 0, err
	}
	var key []string
	for _, g := range tg.group {
		key = append(key, staged(g))
	}
	order := "line DESC"
	if tg.withURL {
		key, order = append(key, "url_hash"), "position, line DESC"
	}
	k := strings.Join(key, ", ")
	if _, err := exec(ctx, tx, "merge repeated keys", `DELETE FROM import_rows WHERE line IN (
		SELECT line FROM (SELECT line, row_number() OVER (PARTITION BY `+k+` ORDER BY `+order+`) AS n FROM import_rows) d
		WHERE n > 1)`); err != nil {
		return 0, err
	}
	// The copied row of a staged row's key came first: the staged row wins, unless (rankings)
	// the copied row has a better position. The copied rows' keys are distinct (each is the
	// first of its key), so a staged row meets at most one. The new table has no statistics
	// yet: the join is set to hash the staged rows and read the new table once.
	stagedWins := "true"
	if tg.withURL {
		stagedWins = "s.position <= t.position"
	}
	if _, err := tx.Exec(ctx, `SET LOCAL enable_nestloop = off; SET LOCAL enable_mergejoin = off`); err != nil {
		return 0, err
	}
	if _, err := exec(ctx, tx, "match staged rows", `CREATE TEMP TABLE import_clashes ON COMMIT DROP AS
		SELECT s.line, t.ctid AS tid, `+stagedWins+` AS staged_wins
		FROM import_rows s JOIN `+newTable+` t ON `+tg.key()); err != nil {
		return 0, err
	}
	if _, err := tx.Exec(ctx, `RESET enable_nestloop; RESET enable_mergejoin`); err != nil {
		return 0, err
	}
	deleted, err := exec(ctx, tx, "merge repeated keys",
		`DELETE FROM `+newTable+` WHERE ctid = ANY (ARRAY(SELECT tid FROM import_clashes WHERE staged_wins))`)
	if err != nil {
		return 0, err
	}
	inserted, err := exec(ctx, tx, "write "+newTable, `INSERT INTO `+newTable+` (`+strings.Join(tg.copyColumns(), ", ")+`)
		SELECT `+tg.values(false)+`, $1, $2 FROM import_rows s
		WHERE s.line NOT IN (SELECT line FROM import_clashes WHERE NOT staged_wins)`, source(opts), opts.Synthetic)
	return inserted - deleted, err
}

// copyColumns are the columns COPY fills in a new table: updated_at takes its default,
// the transaction's time, like the rows an import writes otherwise.
func (tg target) copyColumns() []string {
	c := tg.allColumns()
	return c[:len(c)-1]
}

// directSource feeds COPY into a new table the rows of src that go there, holding the
// others for the staging table. Next ends a COPY when heldRows rows are held.
type directSource struct {
	src  *rowSource
	tg   target
	opts Options
	held []stagedRow
	// stageAll is set from the first row whose key may be ASCII though Go could not
	// compute it; done at the end of the file.
	stageAll, done bool
	vals           []any
}

func (d *directSource) Next() bool {
	for len(d.held) < heldRows {
		if !d.src.Next() {
			d.done = true
			return false
		}
		r := &d.src.cur
		if r.norm == "" && mayNormalizeToASCII(r.keyword) {
			d.stageAll = true
		}
		if !d.stageAll && !r.seen {
			return true
		}
		d.held = append(d.held, *r)
	}
	return false
}

// Values are the new table's columns (copyColumns) of the current row.
func (d *directSource) Values() ([]any, error) {
	r := &d.src.cur
	v := d.vals[:0]
	if d.tg.withURL {
		v = append(v, r.domain, r.keyword, r.norm, r.country, r.language, r.position, r.url, urlHash(r.url))
	} else {
		v = append(v, r.keyword, r.norm, r.country, r.language, r.volume, r.difficulty, r.cpc, r.competition, r.intent, r.serp,
			r.monthlyFrom, monthlyVolumes(r.monthlyVolumes), r.trend, r.ntrgm)
	}
	v = append(v, source(d.opts), d.opts.Synthetic)
	d.vals = v
	return v, nil
}

func (d *directSource) Err() error { return d.src.Err() }

// heldSource feeds COPY into the staging table the rows a directSource held.
type heldSource struct {
	src  *rowSource
	rows []stagedRow
	i    int
}

func (h *heldSource) Next() bool {
	if h.i >= len(h.rows) {
		return false
	}
	h.src.cur = h.rows[h.i]
	h.i++
	return true
}

func (h *heldSource) Values() ([]any, error) { return h.src.Values() }

func (h *heldSource) Err() error { return nil }

// mayNormalizeToASCII reports whether keyword_normalize(s), for s not all ASCII, may be
// ASCII: whether each character of s that is not ASCII is white space or has an ASCII
// letter among its case variants.
func mayNormalizeToASCII(s string) bool {
	for _, r := range s {
		if r < 0x80 || unicode.IsSpace(r) || unicode.Is(unicode.Zs, r) {
			continue
		}
		ascii := false
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < 0x80 {
				ascii = true
				break
			}
		}
		if !ascii {
			return false
		}
	}
	return true
}
