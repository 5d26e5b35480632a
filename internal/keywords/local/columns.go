package local

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/keywords"
)

// Keyword columns: a market's ranked keywords held in the process as columns, in the order
// of the keyword sets' ids (sets.go), so that a filtered, sorted or word-matched gaps or
// rankings question is one pass over a domain's keyword set in memory instead of a walk of
// its rows in PostgreSQL. A filtered first page has to count every row passing its filters
// exactly, which in SQL is a walk of the domain's rankings whatever the indexes, and over
// arrays one pass in memory (docs/decisions.md, "Keyword columns", has the figures).
//
// A market's columns are the keyword (its normalised text), search volume, difficulty, CPC
// and intent of every keyword some domain ranks for, read once in one statement and shared
// by every question in the market until the data changes. They are tagged with the version
// of the data they were read from: the keyword sets' build and the generation of
// domain_rankings and keyword_metrics (keyword_data_state, moved on by statement triggers
// on any write). A question reads the version in its own snapshot and uses the columns only
// when they are of that version and the keyword sets are fresh; otherwise it loads them
// (waiting for the load, shared with the questions asking meanwhile) or, when the data
// moved during the load, answers in SQL as before. So an answer from the columns is the
// answer SQL gives in the same snapshot: the same rows, order, totals and page tokens
// (TestColumnsAnswerAsSQL compares them).
//
// Memory: about 34 bytes per ranked keyword and its text (about 54 MB for a market of 1M). The columns of all
// markets share a budget (KEYWORD_COLUMNS_MB, DefaultColumnsBudget): past it the least
// recently used market is dropped, and a market larger than the whole budget is answered
// in SQL. Each market's decoded keyword sets, and again its word matches, may take an
// eighth of the budget more. With a directory for column files (WithColumnFiles,
// columnfile.go), the columns are a read-only mapping of a file the workers of a machine
// share, not a copy in each worker's heap; they are held (acquire, release) by each
// question using them, and unmapped when the store has dropped them and the last question
// is done.

// DefaultColumnsBudget is the columns' memory budget when none is configured.
const DefaultColumnsBudget = 640 << 20

// Option configures a Provider.
type Option func(*Provider)

// WithColumnsBudget sets the keyword columns' memory budget in bytes; 0 turns them off.
func WithColumnsBudget(bytes int64) Option {
	return func(p *Provider) { p.cols.budget = bytes }
}

// WithColumnFiles shares the keyword columns through files in dir (columnfile.go), and the
// word indexes through files beside them (wordfile.go); dir must exist. warn, if not nil,
// is told of the files that could not be written or read (the columns are then loaded, or
// kept, in the heap; research uses its SQL look-ups).
func WithColumnFiles(dir string, warn func(error)) Option {
	return func(p *Provider) {
		p.cols.files = columnFiles{dir: dir, warn: warn}
		if p.words != nil {
			p.words.dir, p.words.warn = dir, warn
		}
	}
}

// columnsLoadTimeout bounds a load, which runs detached from the question that started it
// (the others waiting for it must not fail with that question's cancellation).
const columnsLoadTimeout = 2 * time.Minute

// columnsOff turns the columns off (tests answering in SQL to compare); columnAnswers
// counts the answers the columns gave.
var (
	columnsOff      bool
	columnAnswers   atomic.Int64
	columnLoads     atomic.Int64 // from the database
	columnFileOpens atomic.Int64 // from a column file another load wrote
)

// ColumnLoadCounts is how many times this process has read a market's keyword columns from
// the database, and mapped them from a column file another load wrote.
func ColumnLoadCounts() (database, file int64) { return columnLoads.Load(), columnFileOpens.Load() }

// columnsVersion is the data a market's columns were read from.
type columnsVersion struct {
	sets  int64    // keyword_sets_state.built
	data  int64    // keyword_data_state.generation: any write to the rankings or keywords
	token [16]byte // keyword_data_state.token, drawn anew with each generation
}

type market struct{ country, language string }

// columnStore holds the markets' columns.
type columnStore struct {
	budget  int64 // bytes
	files   columnFiles
	mu      sync.Mutex
	markets map[market]*columnsEntry
	clock   int64 // use counter, for dropping the least recently used
}

type columnsEntry struct {
	version columnsVersion
	ready   chan struct{} // closed when cols or err is set
	cols    *marketColumns
	err     error
	used    int64
	dropped bool // the store's hold of cols let go
}

// cacheBytes bounds a market's decoded sets, and again its word matches.
func (s *columnStore) cacheBytes() uint64 { return uint64(max(s.budget/8, 4<<20)) }

// marketColumns is one market's ranked keywords, index = keyword-set id. Unknown metrics
// are NaN; intent 0 is unknown.
type marketColumns struct {
	bytes  int64        // the columns' size
	mapped []byte       // the column file the columns are views of, nil when they are in the heap
	refs   atomic.Int64 // the store's hold and the questions' (acquire); unmapped at 0
	norms  keyTexts
	volume []float64
	diff   []float64
	cpc    []float64
	intent []uint8
	// byVolume is every id in the gaps' default order: volume descending (unknown last),
	// then key; a page of gaps in that order walks it from the cursor (volumeWalk).
	byVolume []uint32

	sets  byteCache[*domainSet]      // decoded keyword sets, by domain
	words byteCache[*roaring.Bitmap] // the ids holding a word, by word
}

// newMarketColumns returns empty columns whose decoded sets and word matches may each take
// cacheBytes.
func newMarketColumns(cacheBytes uint64) *marketColumns {
	return &marketColumns{sets: newByteCache[*domainSet](cacheBytes), words: newByteCache[*roaring.Bitmap](cacheBytes)}
}

// byteCache is a map bounded by the bytes of its values: past the bound it is emptied.
type byteCache[V any] struct {
	mu           sync.Mutex
	m            map[string]V
	bytes, bound uint64
}

func newByteCache[V any](bound uint64) byteCache[V] {
	return byteCache[V]{m: map[string]V{}, bound: bound}
}

func (b *byteCache[V]) get(k string) (V, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.m[k]
	return v, ok
}

func (b *byteCache[V]) put(k string, v V, size uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bytes+size > b.bound {
		clear(b.m)
		b.bytes = 0
	}
	b.m[k] = v
	b.bytes += size
}

// domainSet is a domain's keyword set and its best position for each id, in id order.
type domainSet struct {
	ids       *roaring.Bitmap
	positions []uint16
}

// intents numbers the search intents (0: unknown).
var intents = []string{"", "informational", "navigational", "commercial", "transactional"}

func intentCode(s string) uint8 {
	for i, v := range intents {
		if v == s && i > 0 {
			return uint8(i)
		}
	}
	return 0
}

// columnsKeywordsSQL is a market's ranked keywords in keyword-set id order (the sets
// number the distinct keyword_norm of domain_rankings in this order, collation "C"), for
// sets built before keyword_set_keywords held them.
const columnsKeywordsSQL = `SELECT DISTINCT keyword_norm FROM domain_rankings WHERE country = $1 AND language = $2 ORDER BY 1`

// columnsMetricsSQL is a market's keyword metrics.
const columnsMetricsSQL = `SELECT keyword_norm, search_volume::float8, keyword_difficulty::float8, cpc::float8, search_intent
FROM keyword_metrics WHERE country = $1 AND language = $2`

// readMetricColumns fills c's metric columns from the rows of columnsMetricsSQL, read as
// the server sent them: nothing is allocated per row, so that a load's heap holds the
// columns and not ten million rows' garbage besides (at ten million keywords a load that
// scanned each row into strings and pointers peaked at twice the columns' size).
func readMetricColumns(c *marketColumns, rows pgx.Rows) error {
	defer rows.Close()
	fields := rows.FieldDescriptions()
	if len(fields) != 5 {
		return fmt.Errorf("local: keyword columns: %d columns, want 5", len(fields))
	}
	float := func(i int, raw []byte) (float64, error) {
		switch {
		case raw == nil:
			return math.NaN(), nil
		case fields[i].Format == pgx.BinaryFormatCode && len(raw) == 8:
			return math.Float64frombits(binary.BigEndian.Uint64(raw)), nil
		case fields[i].Format == pgx.TextFormatCode:
			return strconv.ParseFloat(unsafe.String(unsafe.SliceData(raw), len(raw)), 64)
		}
		return 0, fmt.Errorf("local: keyword columns: %s in format %d, %d bytes", fields[i].Name, fields[i].Format, len(raw))
	}
	for rows.Next() {
		raw := rows.RawValues()
		norm := raw[0]
		id, found := c.norms.find(unsafe.String(unsafe.SliceData(norm), len(norm)))
		if !found { // a keyword nobody ranks for
			continue
		}
		var err error
		if c.volume[id], err = float(1, raw[1]); err != nil {
			return err
		}
		if c.diff[id], err = float(2, raw[2]); err != nil {
			return err
		}
		if c.cpc[id], err = float(3, raw[3]); err != nil {
			return err
		}
		if raw[4] != nil {
			c.intent[id] = intentCode(unsafe.String(unsafe.SliceData(raw[4]), len(raw[4])))
		}
	}
	return rows.Err()
}

// columns returns the market's columns of the data tx sees, nil when the keyword sets are
// stale, the columns are off, or the data moved while they loaded (the caller answers in
// SQL).
func (p *Provider) columns(ctx context.Context, tx pgx.Tx, country, language string) (*marketColumns, error) {
	if columnsOff || p.cols.budget <= 0 {
		return nil, nil
	}
	var v columnsVersion
	var fresh bool
	err := tx.QueryRow(ctx, `SELECT s.built, s.generation = s.built, b.generation, b.token FROM keyword_sets_state s, keyword_data_state b`).
		Scan(&v.sets, &fresh, &v.data, &v.token)
	if err != nil || !fresh {
		return nil, err
	}
	c, err := p.cols.get(ctx, p.pool, market{country, language}, v)
	if c == nil || err != nil || !c.acquire() { // dropped since: SQL answers
		return nil, err
	}
	return c, nil
}

// acquire holds the columns for a question until it calls release: mapped columns are
// unmapped only when the store has dropped them and no question holds them. It is false
// for columns already let go.
func (c *marketColumns) acquire() bool {
	for {
		n := c.refs.Load()
		if n <= 0 {
			return false
		}
		if c.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release lets go of a hold (acquire's, or the store's when it drops the columns).
func (c *marketColumns) release() {
	if c.refs.Add(-1) == 0 && c.mapped != nil {
		_ = unmapFile(c.mapped)
	}
	boundMapped()
}

// WarmColumns loads the keyword columns of the data as it stands, the biggest markets first
// while their estimated sizes fit the budget, so that the first question after a worker
// starts, or after an import, does not wait for the load; it returns at once when the
// keyword sets are stale (no question would use the columns).
func (p *Provider) WarmColumns(ctx context.Context) error {
	if columnsOff || p.cols.budget <= 0 {
		return nil
	}
	type sized struct {
		m     market
		bytes int64
	}
	var v columnsVersion
	var fresh bool
	var markets []sized
	err := inSnapshot(ctx, p.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT s.built, s.generation = s.built, b.generation, b.token FROM keyword_sets_state s, keyword_data_state b`).
			Scan(&v.sets, &fresh, &v.data, &v.token); err != nil || !fresh {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT country, language, `+dictSizes+`
			FROM keyword_set_keywords GROUP BY country, language ORDER BY 3 DESC`)
		if err != nil {
			return err
		}
		var m market
		var n, text int
		_, err = pgx.ForEachRow(rows, []any{&m.country, &m.language, &n, &text}, func() error {
			markets = append(markets, sized{m, columnBytes(n, text)})
			return nil
		})
		return err
	})
	if err != nil || !fresh {
		return err
	}
	var used int64
	for _, s := range markets {
		if used+s.bytes > p.cols.budget {
			continue
		}
		used += s.bytes
		if _, err := p.cols.get(ctx, p.pool, s.m, v); err != nil {
			return err
		}
	}
	return nil
}

// KeepColumnsWarm runs WarmColumns now and every interval until ctx ends, logging failures
// to logf: after an import the columns of the new data load in the background.
func (p *Provider) KeepColumnsWarm(ctx context.Context, interval time.Duration, logf func(err error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := p.WarmColumns(ctx); err != nil && ctx.Err() == nil {
			logf(err)
		}
		if err := p.WarmWordIndexes(ctx); err != nil && ctx.Err() == nil {
			logf(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (s *columnStore) get(ctx context.Context, pool *pgxpool.Pool, m market, v columnsVersion) (*marketColumns, error) {
	s.mu.Lock()
	s.clock++
	e := s.markets[m]
	if e == nil || e.version != v {
		if e != nil {
			e.drop()
		}
		e = &columnsEntry{version: v, ready: make(chan struct{})}
		s.markets[m] = e
		go func() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), columnsLoadTimeout)
			defer cancel()
			cols, err := s.load(ctx, pool, m, v)
			s.mu.Lock()
			e.cols, e.err = cols, err
			switch {
			case s.markets[m] != e: // replaced while it loaded
				e.drop()
			case err == nil:
				s.evict(e)
			case errors.Is(err, errColumnsTooBig): // kept: SQL answers at this version
			default: // the next question tries again
				delete(s.markets, m)
			}
			s.mu.Unlock()
			close(e.ready)
		}()
	}
	e.used = s.clock
	s.mu.Unlock()
	select {
	case <-e.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if errors.Is(e.err, errColumnsMoved) || errors.Is(e.err, errColumnsTooBig) {
		return nil, nil
	}
	return e.cols, e.err
}

// evict drops the least recently used markets' columns, other than keep's, while all of
// them take more than the budget (s.mu held).
func (s *columnStore) evict(keep *columnsEntry) {
	for {
		var total int64
		var oldest market
		var lru *columnsEntry
		for m, e := range s.markets {
			if e.cols == nil {
				continue
			}
			total += e.cols.bytes
			if e != keep && (lru == nil || e.used < lru.used) {
				oldest, lru = m, e
			}
		}
		if total <= s.budget || lru == nil {
			return
		}
		delete(s.markets, oldest)
		lru.drop()
	}
}

// drop lets go of the store's hold of the entry's columns, once (s.mu held).
func (e *columnsEntry) drop() {
	if e.cols != nil && !e.dropped {
		e.dropped = true
		e.cols.release()
	}
}

// load reads market m's columns at version v: from its column file when there is one,
// else from the database, then written to the file (and mapped from it) when the store
// has a directory. Another worker loading the same version meanwhile is waited for.
func (s *columnStore) load(ctx context.Context, pool *pgxpool.Pool, m market, v columnsVersion) (*marketColumns, error) {
	path, ok := s.files.path(m, v)
	if !ok {
		return s.loadFromDatabase(ctx, pool, m, v)
	}
	lock, err := lockFile(ctx, path+".lock")
	if err != nil {
		s.files.report(fmt.Errorf("local: column file: lock: %w", err))
		return s.loadFromDatabase(ctx, pool, m, v)
	}
	defer lock.Close()
	c, err := openColumnFile(path, m, v, s.budget, s.cacheBytes(), true)
	switch {
	case err == nil:
		columnFileOpens.Add(1)
		return c, nil
	case errors.Is(err, errColumnsTooBig):
		return nil, err
	case !errors.Is(err, os.ErrNotExist):
		s.files.report(err)
	}
	c, err = buildColumnFile(ctx, pool, path, m, v, s.budget, s.cacheBytes())
	switch {
	case err == nil:
		columnLoads.Add(1)
		s.files.report(removeOlderColumnFiles(s.files.dir, m, path))
		return c, nil
	case !errors.Is(err, errNoWritableMapping):
		return nil, err
	}
	// Where a file cannot be written through a mapping, the columns are loaded into the
	// heap, written, and mapped from the file.
	c, err = s.loadFromDatabase(ctx, pool, m, v)
	if err != nil {
		return nil, err
	}
	if err := writeColumnFile(path, c, m, v); err != nil {
		s.files.report(fmt.Errorf("local: column file: write %s: %w", path, err))
		return c, nil
	}
	s.files.report(removeOlderColumnFiles(s.files.dir, m, path))
	mc, err := openColumnFile(path, m, v, s.budget, s.cacheBytes(), false)
	if err != nil {
		s.files.report(err)
		return c, nil
	}
	// The heap's copy (c, no longer used) goes now, and its memory back to the system,
	// before questions read the mapping's pages: the worker's peak holds one copy of the
	// columns, not two.
	debug.FreeOSMemory()
	return mc, nil
}

func (s *columnStore) loadFromDatabase(ctx context.Context, pool *pgxpool.Pool, m market, v columnsVersion) (*marketColumns, error) {
	c, err := loadColumns(ctx, pool, m, v, s.budget, s.cacheBytes(), heapColumns)
	if err == nil {
		columnLoads.Add(1)
		c.refs.Store(1)
	}
	return c, err
}

// errColumnsMoved is a load that found the data changed since the question's snapshot;
// errColumnsTooBig a market whose columns would take more than the whole budget.
var (
	errColumnsMoved  = errors.New("local: keyword data changed while its columns loaded")
	errColumnsTooBig = errors.New("local: the market's keyword columns exceed their memory budget")
)

// columnBytes is the size of the columns of n keywords whose texts take text bytes.
func columnBytes(n, text int) int64 { return int64(text) + int64(n)*(4+4+3*8+1) }

// placeColumns gives c its arrays for n keywords whose texts take text bytes: in the heap
// (heapColumns), or views of a column file being written (buildColumnFile).
type placeColumns func(c *marketColumns, n, text int) error

func heapColumns(c *marketColumns, n, text int) error {
	c.volume, c.diff, c.cpc, c.intent = make([]float64, n), make([]float64, n), make([]float64, n), make([]uint8, n)
	c.norms, c.byVolume = keyTexts{text: make([]byte, text), ends: make([]uint32, n)}, make([]uint32, n)
	return nil
}

// loadColumns reads market m's columns at version v from the database into the arrays
// place gives them, filled as the rows arrive: nothing of the market is held twice.
func loadColumns(ctx context.Context, pool *pgxpool.Pool, m market, v columnsVersion, budget int64, cacheBytes uint64, place placeColumns) (*marketColumns, error) {
	c := newMarketColumns(cacheBytes)
	err := inSnapshot(ctx, pool, func(tx pgx.Tx) error {
		var now columnsVersion
		if err := tx.QueryRow(ctx, `SELECT s.built, b.generation, b.token FROM keyword_sets_state s, keyword_data_state b`).
			Scan(&now.sets, &now.data, &now.token); err != nil {
			return err
		}
		if now != v {
			return errColumnsMoved
		}
		if _, err := tx.Exec(ctx, "SET LOCAL jit = off; SET LOCAL work_mem = '256MB'"); err != nil {
			return err
		}
		var n, joined int
		err := tx.QueryRow(ctx, `SELECT `+dictSizes+`
			FROM keyword_set_keywords WHERE country = $1 AND language = $2 HAVING count(*) > 0`,
			m.country, m.language).Scan(&n, &joined)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			// Sets built before migration 00038 (or 00043): the keywords are grouped from the rankings.
			keys, err := collectKeys(tx.Query(ctx, columnsKeywordsSQL, m.country, m.language))
			if err != nil {
				return err
			}
			text := 0
			for _, key := range keys {
				text += len(key)
			}
			if err := placeWithin(c, len(keys), text, budget, place); err != nil {
				return err
			}
			w := keyTextsWriter{k: &c.norms}
			for _, key := range keys {
				w.add(unsafe.Slice(unsafe.StringData(key), len(key)))
			}
			if err := w.done(); err != nil {
				return err
			}
		case err != nil:
			return err
		default:
			// The joined texts hold a NUL between each two keywords.
			if err := placeWithin(c, n, max(joined-max(n-1, 0), 0), budget, place); err != nil {
				return err
			}
			if err := readKeyTexts(ctx, tx, m, &c.norms); err != nil {
				return err
			}
		}
		nan := math.NaN()
		for i := range c.volume {
			c.volume[i], c.diff[i], c.cpc[i] = nan, nan, nan
		}
		rows, err := tx.Query(ctx, columnsMetricsSQL, m.country, m.language)
		if err != nil {
			return err
		}
		if err := readMetricColumns(c, rows); err != nil {
			return err
		}
		orderByVolume(c.byVolume, c.volume)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// placeWithin places c's arrays for n keywords of text bytes, errColumnsTooBig when they
// would take more than budget.
func placeWithin(c *marketColumns, n, text int, budget int64, place placeColumns) error {
	if c.bytes = columnBytes(n, text); c.bytes > budget {
		return errColumnsTooBig
	}
	return place(c, n, text)
}

// set returns the domain's keyword set, read in tx (whose snapshot holds the sets of the
// columns' version) the first time; an empty set when the domain has no rankings. ok is
// false for a set built without positions.
func (c *marketColumns) set(ctx context.Context, tx pgx.Tx, m market, domain string) (*domainSet, bool, error) {
	if s, ok := c.sets.get(domain); ok {
		return s, s.positions != nil || s.ids.IsEmpty(), nil
	}
	var ids, positions []byte
	err := tx.QueryRow(ctx, `SELECT ids, positions FROM domain_keyword_sets WHERE country = $1 AND language = $2 AND domain = $3`,
		m.country, m.language, domain).Scan(&ids, &positions)
	s := &domainSet{ids: roaring.New()}
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return nil, false, err
	default:
		if err := s.ids.UnmarshalBinary(ids); err != nil {
			return nil, false, err
		}
		if !s.ids.IsEmpty() && int(s.ids.Maximum()) >= c.norms.len() {
			return nil, false, fmt.Errorf("local: the keyword set of %s numbers keywords its columns do not hold", domain)
		}
		if positions != nil {
			s.positions = make([]uint16, len(positions)/2)
			for i := range s.positions {
				s.positions[i] = binary.LittleEndian.Uint16(positions[2*i:])
				if s.positions[i] == noPosition {
					// A position of 65,535 or more, capped by the build (positions go up to
					// 1,000,000): not exact here, so SQL answers for this domain.
					s.positions = nil
					break
				}
			}
		}
	}
	c.sets.put(domain, s, s.ids.GetSizeInBytes()+2*uint64(len(s.positions)))
	return s, s.positions != nil || s.ids.IsEmpty(), nil
}

// word returns the ids of the keywords holding the word (a whole word of the normalised
// keyword).
func (c *marketColumns) word(w string) *roaring.Bitmap {
	if b, ok := c.words.get(w); ok {
		return b
	}
	b := roaring.New()
	for id := range c.norms.len() {
		if hasWord(c.norms.at(id), w) {
			b.Add(uint32(id))
		}
	}
	b.RunOptimize()
	c.words.put(w, b, b.GetSizeInBytes())
	return b
}

// hasWord reports whether w is a whole word of the space-separated s.
func hasWord(s, w string) bool {
	for len(s) > 0 {
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			return s == w
		}
		if s[:i] == w {
			return true
		}
		s = s[i+1:]
	}
	return false
}

// matchWords narrows ids to the keywords holding every include word and none of the
// exclude words (ids is changed).
func (c *marketColumns) matchWords(ids *roaring.Bitmap, f keywords.Filters) {
	for _, w := range f.Include {
		ids.And(c.word(strings.ToLower(w)))
	}
	for _, w := range f.Exclude {
		ids.AndNot(c.word(strings.ToLower(w)))
	}
}

// noPosition marks an id without a position in a dense positions array.
const noPosition = math.MaxUint16

// densePositions spreads sets' positions over every id of the market, the best of the
// sets for each id (noPosition where none ranks).
func densePositions(n int, sets ...*domainSet) []uint16 {
	out := make([]uint16, n)
	for i := range out {
		out[i] = noPosition
	}
	buf := make([]uint32, 4096)
	for _, s := range sets {
		it := s.ids.ManyIterator()
		i := 0
		for n := it.NextMany(buf); n > 0; n = it.NextMany(buf) {
			for _, id := range buf[:n] {
				if p := s.positions[i]; p < out[id] {
					out[id] = p
				}
				i++
			}
		}
	}
	return out
}

// bounds is a range filter as closed float bounds; a NaN value never passes.
type bounds struct{ lo, hi float64 }

func boundsOf(r keywords.Range) bounds {
	b := bounds{math.Inf(-1), math.Inf(1)}
	if r.Min != nil {
		b.lo = *r.Min
	}
	if r.Max != nil {
		b.hi = *r.Max
	}
	return b
}

func (b bounds) pass(v float64) bool { return v >= b.lo && v <= b.hi } // false for NaN

// rowFilter is a query's range and intent filters over the columns, the values read by
// value (NaN: unknown).
type rowFilter struct {
	fields  []keywords.Field
	ranges  []bounds
	intents [5]bool // by intentCode
	anyOf   bool    // an intent list is given
}

func newRowFilter(f keywords.Filters) rowFilter {
	var r rowFilter
	for _, field := range sortedFields(f.Ranges) {
		r.fields = append(r.fields, field)
		r.ranges = append(r.ranges, boundsOf(f.Ranges[field]))
	}
	for _, in := range f.Intents {
		if code := intentCode(in); code > 0 {
			r.intents[code] = true
		}
		r.anyOf = true
	}
	return r
}

// valuer reads a row's value of a field (NaN: unknown).
type valuer interface {
	value(id uint32, f keywords.Field) float64
}

// passes reports whether the row id, of this intent, passes f's ranges and intents.
func passes[V valuer](v V, id uint32, intent uint8, f *rowFilter) bool {
	if f.anyOf && !f.intents[intent] {
		return false
	}
	for i, field := range f.fields {
		if !f.ranges[i].pass(v.value(id, field)) {
			return false
		}
	}
	return true
}

// topK keeps the k first rows of an order (cmp), in a max-heap whose root is the last
// kept; k 0 keeps every row.
type topK[R any] struct {
	k    int
	cmp  func(a, b *R) int
	rows []R
}

// full reports whether a row must beat the root to be kept.
func (t *topK[R]) full() bool { return t.k > 0 && len(t.rows) == t.k }

// last is the last row kept (the root), when full.
func (t *topK[R]) last() *R { return &t.rows[0] }

func (t *topK[R]) offer(r R) {
	if !t.full() {
		t.rows = append(t.rows, r)
		if t.k > 0 {
			t.up(len(t.rows) - 1)
		}
		return
	}
	if t.cmp(&r, &t.rows[0]) >= 0 {
		return
	}
	t.rows[0] = r
	t.down(0)
}

func (t *topK[R]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if t.cmp(&t.rows[p], &t.rows[i]) >= 0 {
			return
		}
		t.rows[p], t.rows[i] = t.rows[i], t.rows[p]
		i = p
	}
}

func (t *topK[R]) down(i int) {
	n := len(t.rows)
	for {
		l, big := 2*i+1, i
		if l < n && t.cmp(&t.rows[big], &t.rows[l]) < 0 {
			big = l
		}
		if r := l + 1; r < n && t.cmp(&t.rows[big], &t.rows[r]) < 0 {
			big = r
		}
		if big == i {
			return
		}
		t.rows[i], t.rows[big] = t.rows[big], t.rows[i]
		i = big
	}
}

// sorted returns the kept rows in order.
func (t *topK[R]) sorted() []R {
	slices.SortFunc(t.rows, func(a, b R) int { return t.cmp(&a, &b) })
	return t.rows
}

// eachID calls f with every id of b, in batches.
func eachID(b *roaring.Bitmap, f func(id uint32)) {
	it := b.ManyIterator()
	buf := make([]uint32, 4096)
	for n := it.NextMany(buf); n > 0; n = it.NextMany(buf) {
		for _, id := range buf[:n] {
			f(id)
		}
	}
}

// dictSizes are, over a market's rows of keyword_set_keywords, its keywords and the size
// of their texts joined by a NUL between each two (chunks hold them so).
const dictSizes = `sum(keywords)::int, sum(octet_length(norms) + 1)::int - 1`

// readKeyTexts reads market m's keyword texts from keyword_set_keywords (chunks of
// NUL-separated texts, in order) into k, whose storage is sized for them.
func readKeyTexts(ctx context.Context, tx pgx.Tx, m market, k *keyTexts) error {
	rows, err := tx.Query(ctx, `SELECT norms FROM keyword_set_keywords WHERE country = $1 AND language = $2 ORDER BY chunk`,
		m.country, m.language)
	if err != nil {
		return err
	}
	defer rows.Close()
	w := keyTextsWriter{k: k}
	for rows.Next() {
		w.addChunk(rows.RawValues()[0])
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return w.done()
}

// keyTexts are a market's normalised keywords in id order (which is their byte order): the
// texts back to back in one allocation and where each ends, so that the columns hold no
// pointer per keyword (10M string headers were 160 MB the collector had to scan).
type keyTexts struct {
	text []byte
	ends []uint32 // keyword i is text[ends[i-1]:ends[i]] (from 0 for the first)
}

// keyTextsWriter fills keyTexts whose storage was sized for them, a keyword at a time.
type keyTextsWriter struct {
	k    *keyTexts
	n, w int  // keywords and bytes written
	over bool // more keywords or bytes than the storage holds
}

func (kw *keyTextsWriter) add(key []byte) {
	if kw.n == len(kw.k.ends) || len(key) > len(kw.k.text)-kw.w {
		kw.over = true
		return
	}
	kw.w += copy(kw.k.text[kw.w:], key)
	kw.k.ends[kw.n] = uint32(kw.w)
	kw.n++
}

// addChunk adds the NUL-separated keywords of chunk.
func (kw *keyTextsWriter) addChunk(chunk []byte) {
	for {
		i := bytes.IndexByte(chunk, 0)
		if i < 0 {
			kw.add(chunk)
			return
		}
		kw.add(chunk[:i])
		chunk = chunk[i+1:]
	}
}

// done reports keywords that did not fill their storage exactly.
func (kw *keyTextsWriter) done() error {
	if kw.over || kw.n != len(kw.k.ends) || kw.w != len(kw.k.text) {
		return fmt.Errorf("local: keyword texts: %d keywords of %d bytes read (more: %v), %d of %d expected",
			kw.n, kw.w, kw.over, len(kw.k.ends), len(kw.k.text))
	}
	return nil
}

// keyTextsOf stores keys, which must be sorted, as keyTexts.
func keyTextsOf(keys []string) keyTexts {
	size := 0
	for _, key := range keys {
		size += len(key)
	}
	k := keyTexts{text: make([]byte, size), ends: make([]uint32, len(keys))}
	w := keyTextsWriter{k: &k}
	for _, key := range keys {
		w.add([]byte(key))
	}
	return k
}

func (k keyTexts) len() int { return len(k.ends) }

// at is keyword i's text: a view of the storage, which is never written after the load.
func (k keyTexts) at(i int) string {
	start := uint32(0)
	if i > 0 {
		start = k.ends[i-1]
	}
	if start == k.ends[i] {
		return ""
	}
	return unsafe.String(&k.text[start], int(k.ends[i]-start))
}

// rankOf is keyword id's place in key order, as colRow holds it: the ids are the keys'
// order, doubled to leave room between them for keys the columns do not hold.
func rankOf(id uint32) int64 { return 2 * int64(id) }

// idAt is the id of the key at rank r, a rank of one of the columns' keys.
func idAt(r int64) uint32 { return uint32(r / 2) }

// keyRank is the place of norm in key order among the columns' keys (rankOf of its id when
// they hold it, else between the ids of the keys before and after it), so that a cursor's
// key compares with the rows' as their texts would.
func (c *marketColumns) keyRank(norm string) int64 {
	i, ok := c.norms.find(norm)
	if ok {
		return rankOf(uint32(i))
	}
	return rankOf(uint32(i)) - 1
}

// keyAt is the text of the key at rank r, a rank of one of the columns' keys.
func (c *marketColumns) keyAt(r int64) string { return c.norms.at(int(idAt(r))) }

// find is the id of the keyword norm, by binary search.
func (k keyTexts) find(norm string) (int, bool) {
	i := sort.Search(k.len(), func(i int) bool { return k.at(i) >= norm })
	return i, i < k.len() && k.at(i) == norm
}
