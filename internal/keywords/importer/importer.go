// Package importer loads CSV exports of keyword tools (Semrush, Ahrefs, Google Keyword
// Planner, Google Search Console, or any file with the documented headers) into the local
// provider's tables keyword_metrics and domain_rankings. cmd/ctl's `import keywords` and
// `import rankings` call it.
//
// Columns are found by header, case-insensitively, through the aliases in parse.go. A cell
// that is empty, "-" or "n/a" is unknown and stored as NULL, never as 0. A row that cannot
// be read is rejected with its line number and the reason; the other rows load. A whole
// file loads in one transaction: COPY into a temporary table, then one
// INSERT … ON CONFLICT DO UPDATE, so re-importing a file updates its rows.
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
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/keywords/local"
	"github.com/contentapi/contentapi/internal/postgres"
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
}

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
	src, cols := keywordSource(t, &rep, opts)
	err = postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
		if err := stage(ctx, tx, src); err != nil {
			return err
		}
		c, err := upsertMetrics(ctx, tx, cols, opts)
		rep.Loaded, rep.Unchanged = c.distinct, c.distinct-c.written
		return err
	})
	if err != nil {
		return rep, fmt.Errorf("import keywords: %w", err)
	}
	rep.Merged = rep.Read - rep.RejectedRows - rep.Loaded
	return rep, analyze(ctx, pool, "keyword_metrics")
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
	src, cols, err := rankingSource(t, &rep, opts)
	if err != nil {
		return rep, fmt.Errorf("import rankings: %w", err)
	}
	withMetrics := cols.hasMetrics()
	err = postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
		if err := stage(ctx, tx, src); err != nil {
			return err
		}
		c, err := upsertRankings(ctx, tx, cols, opts)
		if err != nil {
			return err
		}
		rep.Loaded, rep.Unchanged = c.distinct, c.distinct-c.written
		if withMetrics {
			_, err = upsertMetrics(ctx, tx, cols, opts)
		}
		return err
	})
	if err != nil {
		return rep, fmt.Errorf("import rankings: %w", err)
	}
	rep.Merged = rep.Read - rep.RejectedRows - rep.Loaded
	tables := []string{"domain_rankings"}
	if withMetrics {
		tables = append(tables, "keyword_metrics")
	}
	return rep, analyze(ctx, pool, tables...)
}

// keywordSource streams a keyword file's valid rows as staging values, recording the
// others in rep.
func keywordSource(t *table, rep *Report, opts Options) (*rowSource, columns) {
	cols := mapColumns(t.header, t.raw)
	return &rowSource{t: t, rep: rep, progress: opts.Progress, row: func(line int, rec []string) ([]any, []string) {
		m, problems := readMetrics(rec, cols, opts, t.comma == ';')
		if len(problems) > 0 {
			return nil, problems
		}
		return append([]any{line}, m.values()...), nil
	}}, cols
}

// rankingSource streams a ranking file's valid rows (with the keyword metrics the file also
// has) as staging values, recording the others in rep.
func rankingSource(t *table, rep *Report, opts Options) (*rowSource, columns, error) {
	cols := mapColumns(t.header, t.raw)
	if cols.position < 0 {
		return nil, cols, fmt.Errorf("no position column (one of %s)", strings.Join(positionAliases, ", "))
	}
	withMetrics := cols.hasMetrics()
	return &rowSource{t: t, rep: rep, progress: opts.Progress, row: func(line int, rec []string) ([]any, []string) {
		rk, problems := readRanking(rec, cols, opts, t.comma == ';')
		m := metricsRow{keyword: rk.keyword, country: rk.country, language: rk.language}
		if withMetrics {
			var mp []string
			m, mp = readMetrics(rec, cols, opts, t.comma == ';')
			problems = appendNew(problems, mp)
		}
		if len(problems) > 0 {
			return nil, problems
		}
		return append([]any{line}, append(m.values(), rk.domain, rk.position, rk.url)...), nil
	}}, cols, nil
}

// values are a metrics row's staging columns after line, in stagingColumns order.
func (m metricsRow) values() []any {
	return []any{m.keyword, m.country, m.language, m.volume, m.difficulty, m.cpc, m.competition, m.intent, m.serp}
}

// stagingColumns are the columns of the staging table a file's valid rows are copied into;
// a keyword file leaves the ranking columns (domain, position, url) out.
var stagingColumns = []string{"line", "keyword", "country", "language", "search_volume", "keyword_difficulty",
	"cpc", "competition", "search_intent", "serp_urls", "domain", "position", "url"}

// stage copies the file's valid rows into the temporary table import_rows (dropped at
// commit) and gathers its statistics for the upserts' plans.
func stage(ctx context.Context, tx pgx.Tx, src *rowSource) error {
	// The staging table lives in temp_buffers (default 8MB: a large file would go through
	// the disk page by page); the upserts sort the staged rows and the GIN indexes merge
	// their pending lists in work_mem, and a larger pending list merges less often. These
	// hold for this transaction only; temp_buffers can be set before the session's first
	// temporary table, which the staging table is.
	for _, set := range []string{`SET LOCAL temp_buffers = '256MB'`, `SET LOCAL work_mem = '256MB'`,
		`SET LOCAL gin_pending_list_limit = '64MB'`} {
		if _, err := tx.Exec(ctx, set); err != nil {
			return fmt.Errorf("%s: %w", set, err)
		}
	}
	if _, err := tx.Exec(ctx, `CREATE TEMP TABLE import_rows (
		line int, keyword text, country text, language text, search_volume bigint,
		keyword_difficulty double precision, cpc double precision, competition double precision,
		search_intent text, serp_urls text[], domain text, position int, url text,
		norm text GENERATED ALWAYS AS (keyword_normalize(keyword)) STORED,
		url_hash uuid GENERATED ALWAYS AS (md5(coalesce(url, ''))::uuid) STORED) ON COMMIT DROP`); err != nil {
		return fmt.Errorf("create staging table: %w", err)
	}
	n, err := src.columns()
	if err != nil {
		return err
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"import_rows"}, stagingColumns[:n], src); err != nil {
		return fmt.Errorf("copy rows: %w", err)
	}
	if src.progress != nil {
		src.progress(src.rep.Read)
	}
	if _, err := tx.Exec(ctx, `ANALYZE import_rows`); err != nil {
		return fmt.Errorf("analyze staging table: %w", err)
	}
	return nil
}

// analyze refreshes the planner's statistics of the tables an import changed: without
// them the first queries after a large import plan as if the tables were still small.
func analyze(ctx context.Context, pool *pgxpool.Pool, tables ...string) error {
	for _, t := range tables {
		if _, err := pool.Exec(ctx, "ANALYZE "+pgx.Identifier{t}.Sanitize()); err != nil {
			return fmt.Errorf("analyze %s: %w", t, err)
		}
	}
	return nil
}

// rowSource feeds COPY from the CSV reader one row at a time: each valid row becomes the
// staging values row returns, each invalid one a rejection in rep.
type rowSource struct {
	t        *table
	rep      *Report
	row      func(line int, rec []string) ([]any, []string)
	progress func(read int)

	first []any // a row read ahead by columns
	vals  []any
	err   error
}

// columns reads up to the first valid row to learn how many staging columns the rows
// have (0 when the file has none).
func (s *rowSource) columns() (int, error) {
	if !s.Next() {
		return len(stagingColumns), s.err
	}
	s.first = s.vals
	return len(s.vals), nil
}

// Next advances to the next valid row, recording invalid ones.
func (s *rowSource) Next() bool {
	if s.first != nil {
		s.vals, s.first = s.first, nil
		return true
	}
	for {
		line, rec, ok := s.t.next(s.rep, &s.err)
		if !ok {
			return false
		}
		if s.progress != nil && s.rep.Read%ProgressEvery == 0 {
			s.progress(s.rep.Read)
		}
		vals, problems := s.row(line, rec)
		if len(problems) > 0 {
			s.rep.reject(line, strings.Join(problems, "; "))
			continue
		}
		s.vals = vals
		return true
	}
}

// Values returns the current row's staging values.
func (s *rowSource) Values() ([]any, error) { return s.vals, nil }

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
	return m, problems
}

// readRanking reads the domain, keyword, position and URL of a record.
func readRanking(rec []string, cols columns, opts Options, decimalComma bool) (rankingRow, []string) {
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
	rk.country, rk.language, err = readMarket(rec, cols, opts)
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
		rk.domain = local.NormalizeDomain(d)
		if !validHost(rk.domain) {
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
	kw := local.CleanKeyword(cell(rec, cols.keyword))
	switch {
	case kw == "":
		return "", errors.New("keyword is empty")
	case !cleanText(kw):
		return "", errors.New("keyword: contains invalid characters")
	case utf8.RuneCountInString(kw) > maxKeywordLength:
		return "", fmt.Errorf("keyword: longer than %d characters", maxKeywordLength)
	}
	return kw, nil
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
var metricColumns = []string{"search_volume", "keyword_difficulty", "cpc", "competition", "search_intent", "serp_urls"}

// counts are what an upsert found: distinct rows in the file, and rows it inserted or
// changed.
type counts struct{ distinct, written int }

// upsertMetrics upserts the staged rows into keyword_metrics; of a file's rows for the
// same keyword the last one wins. Columns the file has overwrite the stored values (a
// blank cell stores NULL: the newest source says it does not know); columns it lacks keep
// theirs, unless the row changes between synthetic and real, when every column is replaced
// so sample values never mix with real ones. A row equal to the stored one is not
// rewritten.
func upsertMetrics(ctx context.Context, tx pgx.Tx, cols columns, opts Options) (counts, error) {
	present := map[string]bool{
		"search_volume":      cols.volume >= 0,
		"keyword_difficulty": cols.difficulty >= 0,
		"cpc":                cols.cpc >= 0,
		"competition":        cols.competition >= 0,
		"search_intent":      cols.intent >= 0,
		"serp_urls":          cols.serp >= 0,
	}
	set := append([]string{"keyword"}, metricColumns...)
	sql := `WITH src AS (
		SELECT DISTINCT ON (country, language, norm)
			keyword, country, language, search_volume, keyword_difficulty, cpc, competition,
			search_intent, serp_urls
		FROM import_rows
		ORDER BY country, language, norm, line DESC
	), written AS (
		INSERT INTO keyword_metrics AS t (keyword, country, language, search_volume, keyword_difficulty,
			cpc, competition, search_intent, serp_urls, source, synthetic, updated_at)
		SELECT keyword, country, language, search_volume, keyword_difficulty, cpc, competition,
			search_intent, serp_urls, $1, $2, now()
		FROM src
		ON CONFLICT (country, language, keyword_norm) DO UPDATE SET ` + upsertSet(set, present) + `
		WHERE ` + changed(set, present) + `
		RETURNING 1
	)
	SELECT (SELECT count(*) FROM src), (SELECT count(*) FROM written)`
	var c counts
	if err := tx.QueryRow(ctx, sql, source(opts), opts.Synthetic).Scan(&c.distinct, &c.written); err != nil {
		return c, fmt.Errorf("upsert keywords: %w", err)
	}
	return c, nil
}

// upsertRankings upserts the staged rows into domain_rankings, one row per domain,
// keyword and URL (the best position of the file's rows for it), after deleting the
// stored URLs of the file's domains and keywords that the file no longer lists.
func upsertRankings(ctx context.Context, tx pgx.Tx, cols columns, opts Options) (counts, error) {
	var c counts
	// Only a stored row can be stale; an import into keys the table does not hold yet (the
	// first load) costs one probe per staged key.
	if _, err := tx.Exec(ctx, `DELETE FROM domain_rankings d
		WHERE EXISTS (SELECT 1 FROM import_rows s
		              WHERE s.domain = d.domain AND s.country = d.country AND s.language = d.language
		                AND s.norm = d.keyword_norm)
		  AND NOT EXISTS (SELECT 1 FROM import_rows s
		                  WHERE s.domain = d.domain AND s.country = d.country AND s.language = d.language
		                    AND s.norm = d.keyword_norm AND s.url_hash = d.url_hash)`); err != nil {
		return c, fmt.Errorf("delete stale rankings: %w", err)
	}
	set := []string{"keyword", "position", "url"}
	present := map[string]bool{"position": true, "url": cols.url >= 0}
	sql := `WITH src AS (
		SELECT DISTINCT ON (domain, country, language, norm, url_hash)
			domain, keyword, country, language, position, url
		FROM import_rows
		ORDER BY domain, country, language, norm, url_hash, position, line DESC
	), written AS (
		INSERT INTO domain_rankings AS t (domain, keyword, country, language, position, url, source, synthetic, updated_at)
		SELECT domain, keyword, country, language, position, url, $1, $2, now()
		FROM src
		ON CONFLICT (domain, country, language, keyword_norm, url_hash) DO UPDATE SET ` + upsertSet(set, present) + `
		WHERE ` + changed(set, present) + `
		RETURNING 1
	)
	SELECT (SELECT count(*) FROM src), (SELECT count(*) FROM written)`
	if err := tx.QueryRow(ctx, sql, source(opts), opts.Synthetic).Scan(&c.distinct, &c.written); err != nil {
		return c, fmt.Errorf("upsert rankings: %w", err)
	}
	return c, nil
}

// upsertSet builds the SET list of an ON CONFLICT DO UPDATE on the table aliased t from
// fixed column names (no input reaches the SQL text): present columns and "keyword" take
// the new value; absent ones keep the stored value unless the row switches between
// synthetic and real.
func upsertSet(columns []string, present map[string]bool) string {
	var b strings.Builder
	for _, c := range columns {
		if c == "keyword" || present[c] {
			fmt.Fprintf(&b, "%[1]s = EXCLUDED.%[1]s, ", c)
		} else {
			fmt.Fprintf(&b, "%[1]s = CASE WHEN t.synthetic <> EXCLUDED.synthetic THEN EXCLUDED.%[1]s ELSE t.%[1]s END, ", c)
		}
	}
	b.WriteString("source = EXCLUDED.source, synthetic = EXCLUDED.synthetic, updated_at = EXCLUDED.updated_at")
	return b.String()
}

// changed is the WHERE of the same upsert: true when upsertSet would change a value, so
// that importing a file again rewrites nothing.
func changed(columns []string, present map[string]bool) string {
	var stored, incoming []string
	for _, c := range append(slices.Clone(columns), "source", "synthetic") {
		if c == "keyword" || c == "source" || c == "synthetic" || present[c] {
			stored, incoming = append(stored, "t."+c), append(incoming, "EXCLUDED."+c)
		}
	}
	return "(" + strings.Join(stored, ", ") + ") IS DISTINCT FROM (" + strings.Join(incoming, ", ") + ")"
}

func source(opts Options) string {
	if s := strings.TrimSpace(opts.Source); s != "" {
		return s
	}
	return DefaultSource
}
