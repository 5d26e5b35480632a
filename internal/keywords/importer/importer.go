// Package importer loads CSV exports of keyword tools (Semrush, Ahrefs, Google Keyword
// Planner, Google Search Console, or any file with the documented headers) into the local
// provider's tables keyword_metrics and domain_rankings. cmd/ctl's `import keywords` and
// `import rankings` call it.
//
// Columns are found by header, case-insensitively, through the aliases in parse.go. A cell
// that is empty, "-" or "n/a" is unknown and stored as NULL, never as 0. A row that cannot
// be read is rejected with its line number and the reason; the other rows load. A whole
// file loads in one transaction: COPY into a temporary table, then statements that
// update the changed rows and insert the new ones (load.go), or, for a file larger than
// the table, a new table that replaces it (swap.go); re-importing a file writes nothing.
package importer

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/local"
)

// DefaultSource is the source recorded when Options.Source is empty.
const DefaultSource = "import"

// maxKeywordLength bounds a keyword; longer cells are not keywords.
const maxKeywordLength = 500

// Options are the settings of one import.
type Options struct {
	// Country and Language apply to rows without their own country/language cell;
	// defaults us and en.
	Country, Language string
	// Source names where the rows came from ("semrush", "gsc", …); default "import".
	Source string
	// Synthetic marks made-up rows (the sample set); imported tool data is not synthetic.
	Synthetic bool
	// Domain is the ranking domain of rows that name none, neither in a domain column nor
	// through the host of a page URL (a Search Console export of one property).
	Domain string
	// Progress, when set, is called with the number of rows read so far every
	// ProgressEvery rows and once when the file is read. It runs on the goroutine that
	// feeds COPY.
	Progress func(read int)
	// Stage, when set, is called as the import enters each stage after the file is read:
	// StageWriting, StageIndexes (again as each index is built, with how many of how many
	// are; a large load builds its tables' indexes anew) and StageAnalysing. Calls do not
	// overlap, though they may come from several goroutines.
	Stage func(stage string, done, total int)
}

// The stages of an import after its file is read (Options.Stage).
const (
	StageWriting   = "writing rows"
	StageIndexes   = "building indexes"
	StageAnalysing = "analysing"
)

// ProgressEvery is how many rows pass between two Options.Progress calls.
const ProgressEvery = 10_000

// MaxRejectionDetails bounds the rejected rows a Report lists with their reason, so a
// file of millions of bad rows still imports in bounded memory; RejectedRows counts all.
const MaxRejectionDetails = 1000

// Rejection is a row that was not loaded.
type Rejection struct {
	Line   int    // 1-based line number in the file, the header counted
	Reason string // names the column and the value at fault
}

// Report says what an import did: Read = Loaded + Merged + RejectedRows.
//
// Rows of one file with the same key are stored once and counted once in Loaded; the
// others are Merged into it: for keywords the last row wins, for rankings (keyed by domain,
// keyword and URL) the best position. Loaded counts the distinct rows of the file now
// stored, Unchanged those of them that were already stored with the same values (all of
// them when a file is imported again).
type Report struct {
	Read, Loaded, Unchanged, Merged int
	// RejectedRows counts every rejected row; Rejected lists the first
	// MaxRejectionDetails of them.
	RejectedRows int
	Rejected     []Rejection
}

// reject records a rejected row.
func (r *Report) reject(line int, reason string) {
	r.RejectedRows++
	if len(r.Rejected) < MaxRejectionDetails {
		r.Rejected = append(r.Rejected, Rejection{Line: line, Reason: reason})
	}
}

// metricsRow is one keyword_metrics row read from a file.
type metricsRow struct {
	keyword, country, language   string
	volume                       *int64
	difficulty, cpc, competition *float64
	intent                       *string
	serp                         []string
	// monthlyFrom and monthlyVolumes are the monthly volumes (monthly.go), trend their
	// trend or Semrush's; nil when the file has none.
	monthlyFrom    *time.Time
	monthlyVolumes []*int64
	trend          *string
}

// rankingRow is one domain_rankings row read from a file.
type rankingRow struct {
	domain, keyword, country, language string
	position                           int
	url                                *string
}

// ImportKeywords loads keyword metrics from a CSV file (gzip-compressed or not). It needs
// a keyword column; every other column is optional. The file is streamed: memory does not
// grow with its size.
func ImportKeywords(ctx context.Context, pool *pgxpool.Pool, r io.Reader, opts Options) (Report, error) {
	var rep Report
	t, err := open(r)
	if err != nil {
		return rep, fmt.Errorf("import keywords: %w", err)
	}
	cols := mapColumns(t.header, t.raw)
	err = importFile(ctx, pool, &rep, opts.Stage, func(ctx context.Context, l *loader) (counts, error) {
		k, err := newKeyerFor(ctx, l.tx)
		if err != nil {
			return counts{}, err
		}
		return l.loadKeywords(ctx, keywordSource(t, cols, &rep, opts, k), cols, opts)
	}, "keyword_metrics")
	if err != nil {
		return rep, fmt.Errorf("import keywords: %w", err)
	}
	return rep, nil
}

// ImportRankings loads the positions of domains for keywords from a CSV file (gzip-
// compressed or not), streamed like ImportKeywords. It needs a keyword and a position
// column; the domain comes from a domain column, else the host of the url/page column,
// else Options.Domain. Keyword metrics in the same file (a Semrush or Ahrefs
// organic-keywords export has volume, KD, CPC) are loaded into keyword_metrics too.
//
// A domain may rank for one keyword with several URLs; each is kept. The file's rows for
// a domain and keyword replace the URLs stored for them, so a page that no longer ranks
// does not linger as a false cannibalization.
func ImportRankings(ctx context.Context, pool *pgxpool.Pool, r io.Reader, opts Options) (Report, error) {
	var rep Report
	t, err := open(r)
	if err != nil {
		return rep, fmt.Errorf("import rankings: %w", err)
	}
	cols := mapColumns(t.header, t.raw)
	if cols.position < 0 {
		return rep, fmt.Errorf("import rankings: no position column (one of %s)", strings.Join(positionAliases, ", "))
	}
	tables := []string{"domain_rankings"}
	if cols.hasMetrics() {
		tables = append(tables, "keyword_metrics")
	}
	err = importFile(ctx, pool, &rep, opts.Stage, func(ctx context.Context, l *loader) (counts, error) {
		k, err := newKeyerFor(ctx, l.tx)
		if err != nil {
			return counts{}, err
		}
		return l.loadRankings(ctx, rankingSource(t, cols, &rep, opts, k), cols, opts)
	}, tables...)
	if err != nil {
		return rep, fmt.Errorf("import rankings: %w", err)
	}
	return rep, nil
}

// importFile runs load in one transaction, holding the keyword data writers' lock
// (LockKeywordData) from before the file is read until its new tables, if any, are
// switched in; then it analyses the tables and completes rep.
func importFile(ctx context.Context, pool *pgxpool.Pool, rep *Report, stage func(string, int, int), load func(context.Context, *loader) (counts, error), tables ...string) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, writersLock); err != nil {
		return fmt.Errorf("wait for other imports: %w", err)
	}
	defer func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, writersLock); err != nil {
			_ = conn.Conn().Close(context.WithoutCancel(ctx)) // the session's lock goes with it
		}
	}()
	l := &loader{pool: pool, stage: stage}
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		l.tx = tx
		c, err := load(ctx, l)
		rep.Loaded, rep.Unchanged = c.distinct, c.distinct-c.written
		return err
	})
	if err == nil {
		err = l.switchTables(ctx)
	}
	if err != nil {
		l.abandon(ctx)
		return err
	}
	rep.Merged = rep.Read - rep.RejectedRows - rep.Loaded
	l.enter(StageAnalysing, 0, 0)
	if slices.Contains(tables, "keyword_metrics") {
		tables = append(tables, "keyword_words") // the words of the keywords written (migration 00021)
	}
	if err := analyze(ctx, pool, tables...); err != nil {
		return err
	}
	if slices.Contains(tables, "domain_rankings") && !l.setsWritten {
		// Gaps count their totals on each domain's keyword set (package local, sets.go).
		if err := local.BuildKeywordSets(ctx, pool); err != nil {
			return err
		}
	}
	return nil
}

// writersLock is the advisory lock of the writers of keyword data.
const writersLock int64 = 0x6b6579776f726473 // "keywords"

// LockKeywordData waits, in tx, for the imports running to end and keeps others from
// starting until tx ends. A writer of keyword_metrics or domain_rankings other than the
// importer (the sample set) takes it first: an import may hold the tables over several
// transactions.
func LockKeywordData(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, writersLock); err != nil {
		return fmt.Errorf("wait for keyword imports: %w", err)
	}
	return nil
}

// stagedRow is a valid row of a file as it is copied into the staging table.
type stagedRow struct {
	line int
	metricsRow
	domain   string // rankings only
	position int
	url      *string
	// norm is keyword_normalize(keyword), "" when PostgreSQL is to compute it; seen says
	// that the row's key may repeat an earlier row's (see keyer).
	norm string
	seen bool
	// ntrgm is the keyword's trigram count (an int16), nil when PostgreSQL is to count
	// them or the row has no keyword metrics.
	ntrgm any
}

// keywordSource streams a keyword file's valid rows as staging rows, recording the others
// in rep.
func keywordSource(t *table, cols columns, rep *Report, opts Options, k *keyer) *rowSource {
	return &rowSource{t: t, rep: rep, keys: k, progress: opts.Progress, metrics: true,
		row: func(line int, rec []string, s *stagedRow) []string {
			m, problems := readMetrics(rec, cols, opts, t.comma == ';')
			if len(problems) > 0 {
				return problems
			}
			*s = stagedRow{line: line, metricsRow: m, ntrgm: k.trigrams(m.keyword)}
			s.norm, s.seen = k.key(m.keyword, m.country, m.language, "")
			return nil
		}}
}

// rankingSource streams a ranking file's valid rows (with the keyword metrics the file also
// has) as staging rows, recording the others in rep. A row's key for repeats is its domain
// and keyword: rows of one domain and keyword with different URLs are looked at together.
func rankingSource(t *table, cols columns, rep *Report, opts Options, k *keyer) *rowSource {
	withMetrics := cols.hasMetrics()
	var last lastCells
	return &rowSource{t: t, rep: rep, keys: k, progress: opts.Progress, metrics: withMetrics, rankings: true,
		row: func(line int, rec []string, s *stagedRow) []string {
			rk, problems := readRanking(rec, cols, opts, t.comma == ';', &last)
			m := metricsRow{keyword: rk.keyword, country: rk.country, language: rk.language}
			if withMetrics {
				var mp []string
				m, mp = readMetrics(rec, cols, opts, t.comma == ';')
				problems = appendNew(problems, mp)
			}
			if len(problems) > 0 {
				return problems
			}
			*s = stagedRow{line: line, metricsRow: m, domain: rk.domain, position: rk.position, url: rk.url}
			if withMetrics {
				s.ntrgm = k.trigrams(m.keyword)
			}
			s.norm, s.seen = k.key(m.keyword, m.country, m.language, rk.domain)
			return nil
		}}
}

// analyze vacuums the tables an import changed and refreshes their planner statistics.
// Without the statistics the first queries after a large import plan as if the tables were
// still small. Without the VACUUM, rows written by statements (a file whose rows repeat
// keys goes through the merge path, not COPY FREEZE; an import into a stored table updates
// and deletes rows) leave their pages out of the visibility map: index-only scans of a
// competitor's rankings read the heap for every entry and the first reads write hint bits
// (gaps against a domain holding 43% of the rankings took 2.2 s instead of 0.6 s). Pages
// COPY FREEZE wrote are all-visible already, and VACUUM skips them.
func analyze(ctx context.Context, pool *pgxpool.Pool, tables ...string) error {
	for _, t := range tables {
		if _, err := pool.Exec(ctx, "VACUUM (ANALYZE) "+pgx.Identifier{t}.Sanitize()); err != nil {
			return fmt.Errorf("vacuum and analyze %s: %w", t, err)
		}
	}
	return nil
}

// rowSource feeds COPY from the CSV reader one row at a time: each valid row becomes a
// staging row, each invalid one a rejection in rep.
type rowSource struct {
	t        *table
	rep      *Report
	keys     *keyer
	row      func(line int, rec []string, s *stagedRow) (problems []string)
	progress func(read int)
	// metrics and rankings say which groups of staging columns the rows fill.
	metrics, rankings bool

	cur     stagedRow
	pending []stagedRow // rows read ahead (peek), handed out first
	vals    []any
	copied  int // valid rows handed to COPY
	err     error
	// markets are the markets of the valid rows read, in the order first met; seen holds
	// them too.
	markets []keywords.Market
	seen    map[keywords.Market]bool
}

// columns are the staging columns the rows fill, in the order of Values.
func (s *rowSource) columns() []string {
	c := []string{"line", "keyword", "country", "language"}
	if s.metrics {
		c = append(append(c, metricColumns...), "ntrgm")
	}
	if s.rankings {
		c = append(c, "domain", "position", "url", "url_hash")
	}
	return append(c, "norm", "seen")
}

// Next advances to the next valid row, recording invalid ones.
func (s *rowSource) Next() bool {
	if len(s.pending) > 0 {
		s.cur = s.pending[0]
		s.pending[0] = stagedRow{}
		if s.pending = s.pending[1:]; len(s.pending) == 0 {
			s.pending = nil // the read-ahead's memory goes
		}
	} else if !s.read() {
		return false
	}
	s.copied++
	return true
}

// peek reads up to n valid rows ahead, which Next returns first, and reports whether the
// file has as many.
func (s *rowSource) peek(n int) bool {
	for len(s.pending) < n {
		if !s.read() {
			return false
		}
		s.pending = append(s.pending, s.cur)
	}
	return true
}

// fileRead reports the end of the file: Options.Progress's last call, and the writing
// stage.
func (s *rowSource) fileRead(l *loader) {
	if s.progress != nil {
		s.progress(s.rep.Read)
	}
	l.enter(StageWriting, 0, 0)
}

// read reads the file's next valid row into cur, recording invalid ones.
func (s *rowSource) read() bool {
	for s.err == nil {
		line, rec, ok := s.t.next(s.rep, &s.err)
		if !ok {
			return false
		}
		if s.progress != nil && s.rep.Read%ProgressEvery == 0 {
			s.progress(s.rep.Read)
		}
		if problems := s.row(line, rec, &s.cur); len(problems) > 0 {
			s.rep.reject(line, strings.Join(problems, "; "))
			continue
		}
		s.noteMarket()
		return true
	}
	return false
}

// noteMarket adds the current row's market to markets if it is new.
func (s *rowSource) noteMarket() {
	m := keywords.Market{Country: s.cur.country, Language: s.cur.language}
	if n := len(s.markets); n > 0 && s.markets[n-1] == m || s.seen[m] {
		return
	}
	if s.seen == nil {
		s.seen = map[keywords.Market]bool{}
	}
	s.seen[m] = true
	s.markets = append(s.markets, m)
}

// Values returns the current row's staging values; the slice is reused by the next call
// (COPY encodes a row before asking for the next).
func (s *rowSource) Values() ([]any, error) {
	r := &s.cur
	v := append(s.vals[:0], r.line, r.keyword, r.country, r.language)
	if s.metrics {
		v = append(v, r.volume, r.difficulty, r.cpc, r.competition, r.intent, r.serp, r.monthlyFrom, monthlyVolumes(r.monthlyVolumes), r.trend, r.ntrgm)
	}
	if s.rankings {
		v = append(v, r.domain, r.position, r.url, urlHash(r.url))
	}
	v = append(v, textOrNull(r.norm), r.seen)
	s.vals = v
	return v, nil
}

// Err reports a read error that ended the file early.
func (s *rowSource) Err() error { return s.err }

// next returns the next data record and its line, counting it as read; a malformed record
// is recorded as a rejection and skipped. ok is false at the end of the file or on a read
// error, stored in *errp.
func (t *table) next(rep *Report, errp *error) (line int, rec []string, ok bool) {
	for {
		rec, err := t.r.Read()
		t.limit.reset()
		if errors.Is(err, io.EOF) {
			return 0, nil, false
		}
		var perr *csv.ParseError
		if errors.As(err, &perr) {
			rep.Read++
			rep.reject(perr.StartLine, "malformed CSV: "+perr.Err.Error())
			continue
		}
		if err != nil {
			*errp = fmt.Errorf("read: %w", err)
			return 0, nil, false
		}
		if blank(rec) {
			continue
		}
		rep.Read++
		line, _ := t.r.FieldPos(0)
		return line, rec, true
	}
}

// blank reports whether a record has only empty cells (a spreadsheet's trailing ",,,").
func blank(rec []string) bool {
	for _, f := range rec {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}

// readMetrics reads the keyword and metric cells of a record; problems are the reasons
// to reject it.
func readMetrics(rec []string, cols columns, opts Options, decimalComma bool) (metricsRow, []string) {
	var m metricsRow
	var problems []string
	note := func(err error) {
		if err != nil {
			problems = append(problems, err.Error())
		}
	}
	kw, err := readKeyword(rec, cols)
	note(err)
	m.keyword = kw
	m.country, m.language, err = readMarket(rec, cols, opts)
	note(err)
	m.volume, err = parseVolume(cols.name(cols.volume, volumeAliases), cell(rec, cols.volume), decimalComma)
	note(err)
	m.difficulty, err = parseDifficulty(cols.name(cols.difficulty, difficultyAliases), cell(rec, cols.difficulty), decimalComma)
	note(err)
	m.cpc, err = parseNumber(cols.name(cols.cpc, cpcAliases), cell(rec, cols.cpc), decimalComma)
	note(err)
	m.competition, err = parseCompetition(cols.name(cols.competition, competitionAliases), cell(rec, cols.competition), decimalComma)
	note(err)
	if s := cell(rec, cols.intent); !isUnknown(s) {
		m.intent = parseIntent(s)
	}
	if s := cell(rec, cols.serp); !isUnknown(s) {
		m.serp = parseSERP(s)
		for _, u := range m.serp {
			if !cleanText(u) {
				problems = append(problems, "serp_urls: contains invalid characters")
				break
			}
		}
	}
	if cols.monthly.any() {
		problems = append(problems, readMonthly(rec, cols.monthly, cols, decimalComma, &m)...)
	}
	return m, problems
}

// readRanking reads the domain, keyword, position and URL of a record. hosts remembers the
// last domain cell read (a ranking file lists a domain's rows together).
func readRanking(rec []string, cols columns, opts Options, decimalComma bool, last *lastCells) (rankingRow, []string) {
	var rk rankingRow
	var problems []string
	note := func(err error) {
		if err != nil {
			problems = append(problems, err.Error())
		}
	}
	kw, err := readKeyword(rec, cols)
	note(err)
	rk.keyword = kw
	rk.country, rk.language, err = last.market(rec, cols, opts)
	note(err)
	rk.position, err = parsePosition(cols.name(cols.position, positionAliases), cell(rec, cols.position), decimalComma)
	note(err)
	if u := cell(rec, cols.url); !isUnknown(u) {
		if !cleanText(u) {
			problems = append(problems, cols.name(cols.url, urlAliases)+": contains invalid characters")
		}
		rk.url = &u
	}
	switch d := cell(rec, cols.domain); {
	case !isUnknown(d):
		var ok bool
		if rk.domain, ok = last.domain(d); !ok {
			problems = append(problems, fmt.Sprintf("domain: %q is not a host name", d))
		}
	case rk.url != nil && validHost(hostOf(*rk.url)):
		rk.domain = hostOf(*rk.url)
	case opts.Domain != "":
		rk.domain = local.NormalizeDomain(opts.Domain)
		if !validHost(rk.domain) {
			problems = append(problems, fmt.Sprintf("domain option %q is not a host name", opts.Domain))
		}
	default:
		problems = append(problems, "no domain: the file has no domain column, the row no page URL with a host, and no domain was given")
	}
	return rk, problems
}

// lastCells remembers a ranking file's last domain cell and last country and language
// cells, and what they came to: a file lists one domain's rows, of one market, together.
type lastCells struct {
	raw, host string
	ok        bool

	marketRead              bool
	rawCountry, rawLanguage string
	country, language       string
	marketErr               error
}

// domain returns the normalised host of a domain cell and whether it is a host name.
func (c *lastCells) domain(raw string) (string, bool) {
	if raw != c.raw {
		c.raw, c.host = raw, local.NormalizeDomain(raw)
		c.ok = validHost(c.host)
	}
	return c.host, c.ok
}

// market is readMarket, read again only when the row's market cells differ from the last
// row's.
func (c *lastCells) market(rec []string, cols columns, opts Options) (country, language string, err error) {
	rawC, rawL := cell(rec, cols.country), cell(rec, cols.language)
	if !c.marketRead || rawC != c.rawCountry || rawL != c.rawLanguage {
		c.marketRead, c.rawCountry, c.rawLanguage = true, rawC, rawL
		c.country, c.language, c.marketErr = readMarket(rec, cols, opts)
	}
	return c.country, c.language, c.marketErr
}

// hostOf returns the normalised host of an absolute URL ("https://…" or "www.…"), or "".
func hostOf(u string) string {
	if !strings.Contains(u, "://") && !strings.HasPrefix(strings.ToLower(u), "www.") {
		return "" // a path such as "/blog/post" has no host
	}
	return local.NormalizeDomain(u)
}

var hostPattern = regexp.MustCompile(`^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$`)

func validHost(h string) bool { return h != "" && len(h) <= 253 && hostPattern.MatchString(h) }

func readKeyword(rec []string, cols columns) (string, error) {
	kw, plain := cleanKeyword(cell(rec, cols.keyword))
	switch {
	case plain && kw != "" && len(kw) <= maxKeywordLength:
		return kw, nil // printable ASCII: valid text, a character a byte
	case kw == "":
		return "", errors.New("keyword is empty")
	case !cleanText(kw):
		return "", errors.New("keyword: contains invalid characters")
	case utf8.RuneCountInString(kw) > maxKeywordLength:
		return "", fmt.Errorf("keyword: longer than %d characters", maxKeywordLength)
	}
	return kw, nil
}

// cleanKeyword is local.CleanKeyword, without its allocations for the usual keyword:
// printable ASCII words separated by single spaces, returned as it is, and reported
// (plain) as such.
func cleanKeyword(s string) (kw string, plain bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < ' ' || c >= 0x7f || c == ' ' && (i == 0 || i == len(s)-1 || s[i-1] == ' ') {
			return local.CleanKeyword(s), false
		}
	}
	return s, true
}

func readMarket(rec []string, cols columns, opts Options) (country, language string, err error) {
	defCountry, defLanguage := local.Market(opts.Country, opts.Language)
	country, errC := parseCode(cols.name(cols.country, countryAliases), cell(rec, cols.country), defCountry)
	language, errL := parseCode(cols.name(cols.language, languageAliases), cell(rec, cols.language), defLanguage)
	return country, language, errors.Join(errC, errL)
}

// cleanText reports whether s can be stored as PostgreSQL text: valid UTF-8 without NUL.
func cleanText(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// appendNew appends the problems of b not already in a (keyword and market problems are
// found by both readers).
func appendNew(a, b []string) []string {
	for _, p := range b {
		if !slices.Contains(a, p) {
			a = append(a, p)
		}
	}
	return a
}

// metricColumns are the keyword_metrics columns an import may set.
var metricColumns = []string{"search_volume", "keyword_difficulty", "cpc", "competition", "search_intent", "serp_urls",
	"monthly_from", "monthly_volumes", "trend"}

// monthlyVolumes is a row's monthly volumes as COPY takes them: nil (SQL NULL) when none.
func monthlyVolumes(v []*int64) any {
	if v == nil {
		return nil
	}
	return v
}

func source(opts Options) string {
	if s := strings.TrimSpace(opts.Source); s != "" {
		return s
	}
	return DefaultSource
}
