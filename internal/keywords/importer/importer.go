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
}

// Rejection is a row that was not loaded.
type Rejection struct {
	Line   int    // 1-based line number in the file, the header counted
	Reason string // names the column and the value at fault
}

// Report says what an import did. Read = Loaded + len(Rejected). Rows of one file with
// the same key are loaded once: the last one for keywords, the best position for rankings.
type Report struct {
	Read     int
	Loaded   int
	Rejected []Rejection
}

// metricsRow is one keyword_metrics row read from a file.
type metricsRow struct {
	line                         int
	keyword, country, language   string
	volume                       *int64
	difficulty, cpc, competition *float64
	intent                       *string
	serp                         []string
}

// rankingRow is one domain_rankings row read from a file.
type rankingRow struct {
	line                               int
	domain, keyword, country, language string
	position                           int
	url                                *string
}

// ImportKeywords loads keyword metrics from a CSV file. It needs a keyword column; every
// other column is optional.
func ImportKeywords(ctx context.Context, pool *pgxpool.Pool, r io.Reader, opts Options) (Report, error) {
	var rep Report
	t, err := open(r)
	if err != nil {
		return rep, fmt.Errorf("import keywords: %w", err)
	}
	cols := mapColumns(t.header, t.raw)
	var rows []metricsRow
	err = t.each(&rep, func(line int, rec []string) []string {
		m, problems := readMetrics(rec, cols, opts, t.comma == ';')
		if len(problems) > 0 {
			return problems
		}
		m.line = line
		rows = append(rows, m)
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("import keywords: %w", err)
	}
	err = postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
		return loadMetrics(ctx, tx, rows, cols, opts)
	})
	if err != nil {
		return rep, fmt.Errorf("import keywords: %w", err)
	}
	rep.Loaded = len(rows)
	return rep, nil
}

// ImportRankings loads the positions of domains for keywords from a CSV file. It needs a
// keyword and a position column; the domain comes from a domain column, else the host of
// the url/page column, else Options.Domain. Keyword metrics in the same file (a Semrush or
// Ahrefs organic-keywords export has volume, KD, CPC) are loaded into keyword_metrics too.
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
	var rankings []rankingRow
	var metrics []metricsRow
	withMetrics := cols.hasMetrics()
	err = t.each(&rep, func(line int, rec []string) []string {
		rk, problems := readRanking(rec, cols, opts, t.comma == ';')
		var m metricsRow
		if withMetrics {
			var mp []string
			m, mp = readMetrics(rec, cols, opts, t.comma == ';')
			problems = appendNew(problems, mp)
		}
		if len(problems) > 0 {
			return problems
		}
		rk.line, m.line = line, line
		rankings = append(rankings, rk)
		if withMetrics {
			metrics = append(metrics, m)
		}
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("import rankings: %w", err)
	}
	err = postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
		if err := loadRankings(ctx, tx, rankings, cols, opts); err != nil {
			return err
		}
		if withMetrics {
			return loadMetrics(ctx, tx, metrics, cols, opts)
		}
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("import rankings: %w", err)
	}
	rep.Loaded = len(rankings)
	return rep, nil
}

// each calls row for every data record, counting it as read and recording the problems
// row returns, or a malformed record, as a rejection.
func (t *table) each(rep *Report, row func(line int, rec []string) []string) error {
	for {
		rec, err := t.r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		var perr *csv.ParseError
		if errors.As(err, &perr) {
			rep.Read++
			rep.Rejected = append(rep.Rejected, Rejection{Line: perr.StartLine, Reason: "malformed CSV: " + perr.Err.Error()})
			continue
		}
		if err != nil {
			return fmt.Errorf("read: %w", err)
		}
		if blank(rec) {
			continue
		}
		rep.Read++
		line, _ := t.r.FieldPos(0)
		if problems := row(line, rec); len(problems) > 0 {
			rep.Rejected = append(rep.Rejected, Rejection{Line: line, Reason: strings.Join(problems, "; ")})
		}
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

// loadMetrics upserts rows into keyword_metrics. Columns the file has overwrite the stored
// values (a blank cell stores NULL: the newest source says it does not know); columns it
// lacks keep theirs, unless the row changes between synthetic and real, when every column
// is replaced so sample values never mix with real ones.
func loadMetrics(ctx context.Context, tx pgx.Tx, rows []metricsRow, cols columns, opts Options) error {
	if len(rows) == 0 {
		return nil
	}
	// The trigram and full-text GIN indexes merge their pending lists in work_mem; the
	// default 4MB makes a 100,000-row import spend most of its time there.
	if _, err := tx.Exec(ctx, `SET LOCAL work_mem = '64MB'`); err != nil {
		return fmt.Errorf("set work_mem: %w", err)
	}
	if _, err := tx.Exec(ctx, `CREATE TEMP TABLE import_keyword_metrics (
		line int, keyword text, country text, language text, search_volume bigint,
		keyword_difficulty double precision, cpc double precision, competition double precision,
		search_intent text, serp_urls text[]) ON COMMIT DROP`); err != nil {
		return fmt.Errorf("create staging table: %w", err)
	}
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"import_keyword_metrics"},
		[]string{"line", "keyword", "country", "language", "search_volume", "keyword_difficulty", "cpc", "competition", "search_intent", "serp_urls"},
		pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
			m := rows[i]
			return []any{m.line, m.keyword, m.country, m.language, m.volume, m.difficulty, m.cpc, m.competition, m.intent, m.serp}, nil
		}))
	if err != nil {
		return fmt.Errorf("copy keywords: %w", err)
	}
	present := map[string]bool{
		"search_volume":      cols.volume >= 0,
		"keyword_difficulty": cols.difficulty >= 0,
		"cpc":                cols.cpc >= 0,
		"competition":        cols.competition >= 0,
		"search_intent":      cols.intent >= 0,
		"serp_urls":          cols.serp >= 0,
	}
	sql := `INSERT INTO keyword_metrics (keyword, country, language, search_volume, keyword_difficulty,
		cpc, competition, search_intent, serp_urls, source, synthetic, updated_at)
	SELECT DISTINCT ON (country, language, keyword_normalize(keyword))
		keyword, country, language, search_volume, keyword_difficulty, cpc, competition,
		search_intent, serp_urls, $1, $2, now()
	FROM import_keyword_metrics
	ORDER BY country, language, keyword_normalize(keyword), line DESC
	ON CONFLICT (country, language, keyword_norm) DO UPDATE SET ` + upsertSet("keyword_metrics", append([]string{"keyword"}, metricColumns...), present)
	if _, err := tx.Exec(ctx, sql, source(opts), opts.Synthetic); err != nil {
		return fmt.Errorf("upsert keywords: %w", err)
	}
	return nil
}

// loadRankings upserts rows into domain_rankings; of a file's rows for the same domain
// and keyword, the best position is kept.
func loadRankings(ctx context.Context, tx pgx.Tx, rows []rankingRow, cols columns, opts Options) error {
	if len(rows) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, `CREATE TEMP TABLE import_domain_rankings (
		line int, domain text, keyword text, country text, language text, position int, url text)
		ON COMMIT DROP`); err != nil {
		return fmt.Errorf("create staging table: %w", err)
	}
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"import_domain_rankings"},
		[]string{"line", "domain", "keyword", "country", "language", "position", "url"},
		pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
			r := rows[i]
			return []any{r.line, r.domain, r.keyword, r.country, r.language, r.position, r.url}, nil
		}))
	if err != nil {
		return fmt.Errorf("copy rankings: %w", err)
	}
	present := map[string]bool{"position": true, "url": cols.url >= 0}
	sql := `INSERT INTO domain_rankings (domain, keyword, country, language, position, url, source, synthetic, updated_at)
	SELECT DISTINCT ON (domain, country, language, keyword_normalize(keyword))
		domain, keyword, country, language, position, url, $1, $2, now()
	FROM import_domain_rankings
	ORDER BY domain, country, language, keyword_normalize(keyword), position, line DESC
	ON CONFLICT (domain, country, language, keyword_norm) DO UPDATE SET ` + upsertSet("domain_rankings", []string{"keyword", "position", "url"}, present)
	if _, err := tx.Exec(ctx, sql, source(opts), opts.Synthetic); err != nil {
		return fmt.Errorf("upsert rankings: %w", err)
	}
	return nil
}

// upsertSet builds the SET list of an ON CONFLICT DO UPDATE from fixed column names (no
// input reaches the SQL text): present columns and "keyword" take the new value; absent
// ones keep the stored value unless the row switches between synthetic and real.
func upsertSet(table string, columns []string, present map[string]bool) string {
	var b strings.Builder
	for _, c := range columns {
		if c == "keyword" || present[c] {
			fmt.Fprintf(&b, "%[1]s = EXCLUDED.%[1]s, ", c)
		} else {
			fmt.Fprintf(&b, "%[1]s = CASE WHEN %[2]s.synthetic <> EXCLUDED.synthetic THEN EXCLUDED.%[1]s ELSE %[2]s.%[1]s END, ", c, table)
		}
	}
	b.WriteString("source = EXCLUDED.source, synthetic = EXCLUDED.synthetic, updated_at = EXCLUDED.updated_at")
	return b.String()
}

func source(opts Options) string {
	if s := strings.TrimSpace(opts.Source); s != "" {
		return s
	}
	return DefaultSource
}
