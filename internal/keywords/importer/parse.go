package importer

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Header aliases, matched after lower-casing and collapsing white space; when a file has
// several columns for one field, the alias listed first wins (Keyword Planner has both
// "Competition" (Low/Medium/High) and "Competition (indexed value)").
var (
	keywordAliases     = []string{"keyword", "keywords", "query", "top queries", "queries", "search query", "search term"}
	volumeAliases      = []string{"search_volume", "search volume", "volume", "avg. monthly searches", "avg monthly searches", "monthly searches"}
	difficultyAliases  = []string{"keyword_difficulty", "keyword difficulty", "kd", "kd %", "kd%", "difficulty"}
	cpcAliases         = []string{"cpc", "cpc (usd)", "top of page bid (high range)"}
	competitionAliases = []string{"competition (indexed value)", "competition"}
	intentAliases      = []string{"search_intent", "search intent", "intent", "intents"}
	serpAliases        = []string{"serp_urls", "serp urls"}
	countryAliases     = []string{"country", "database"}
	languageAliases    = []string{"language"}
	domainAliases      = []string{"domain"}
	positionAliases    = []string{"position", "current position", "rank", "avg. position", "average position"}
	urlAliases         = []string{"url", "page", "landing page", "current url", "top pages"}
)

// columns are the indexes of the recognised columns of a file, -1 when absent.
type columns struct {
	keyword, volume, difficulty, cpc, competition, intent, serp, country, language int
	domain, position, url                                                          int
	names                                                                          []string // as written in the file
	monthly                                                                        monthlyColumns
}

func mapColumns(header, raw []string) columns {
	return columns{
		names:       raw,
		keyword:     findColumn(header, keywordAliases),
		volume:      findColumn(header, volumeAliases),
		difficulty:  findColumn(header, difficultyAliases),
		cpc:         findColumn(header, cpcAliases),
		competition: findColumn(header, competitionAliases),
		intent:      findColumn(header, intentAliases),
		serp:        findColumn(header, serpAliases),
		country:     findColumn(header, countryAliases),
		language:    findColumn(header, languageAliases),
		domain:      findColumn(header, domainAliases),
		position:    findColumn(header, positionAliases),
		url:         findColumn(header, urlAliases),
		monthly:     mapMonthly(header),
	}
}

// name returns the file's header of column i, for messages; the first alias when absent.
func (c columns) name(i int, aliases []string) string {
	if i >= 0 && i < len(c.names) && c.names[i] != "" {
		return c.names[i]
	}
	return aliases[0]
}

// hasMetrics reports whether the file carries any keyword metric.
func (c columns) hasMetrics() bool {
	return c.volume >= 0 || c.difficulty >= 0 || c.cpc >= 0 || c.competition >= 0 || c.intent >= 0 || c.serp >= 0 ||
		c.monthly.any()
}

// cell returns the trimmed value of column i of rec, "" when the column is absent or the
// row is short.
func cell(rec []string, i int) string {
	if i < 0 || i >= len(rec) {
		return ""
	}
	return strings.TrimSpace(rec[i])
}

// isUnknown reports whether a cell means "no value": empty, a dash or n/a.
func isUnknown(s string) bool {
	// No word below is over 4 bytes, and no longer text lower-cases to one (of the letters
	// whose lower case is ASCII, only the Kelvin sign changes length, to "k"): a page URL or
	// a keyword is answered without being lower-cased (6% of a large ranking import's
	// reading, where every row's URL and domain were).
	if len(s) > 4 {
		return false
	}
	switch strings.ToLower(s) {
	case "", "-", "–", "—", "--", "n/a", "na", "null", "none":
		return true
	}
	return false
}

// rangePattern matches bucketed values such as "1K-10K", "10K – 100K" or "100 - 1,000"
// that Keyword Planner exports for accounts without spend; they are no single number.
var rangePattern = regexp.MustCompile(`^[\d.,\s]+[kKmMbB]?\s*[-–—~]\s*[\d.,\s]+[kKmMbB]?$`)

// groupedInt matches an integer written with thousands separators: "1,300", "1 300",
// "1.300", "12'500".
var groupedInt = regexp.MustCompile("^\\d{1,3}([,.'\u00a0\u202f\u2009 ]\\d{3})+$")

// numberError is the reason a cell is rejected.
type numberError struct{ column, value, why string }

func (e *numberError) Error() string { return fmt.Sprintf("%s: %q %s", e.column, e.value, e.why) }

// parseNumber reads a number cell. It returns nil for an unknown value. Thousands
// separators are accepted; a lone comma is a decimal comma when decimalComma is set (a
// semicolon-separated file) or when it cannot be a thousands separator ("0,75").
// Currency signs and a trailing % are ignored. Ranges, suffixes like "K", negative and
// non-finite values are rejected.
func parseNumber(column, raw string, decimalComma bool) (*float64, error) {
	s := strings.TrimSpace(raw)
	if isUnknown(s) {
		return nil, nil
	}
	if plainNumber(s) && !(decimalComma && strings.Contains(s, ".")) { // the common case
		v, err := strconv.ParseFloat(s, 64)
		if err == nil {
			return &v, nil
		}
	}
	if rangePattern.MatchString(s) && strings.ContainsAny(s, "-–—~") && !strings.HasPrefix(s, "-") {
		return nil, &numberError{column, raw, "is a range, not a number"}
	}
	s = strings.TrimSuffix(s, "%")
	s = strings.NewReplacer("USD", "", "$", "", "€", "", "£", "").Replace(s)
	s = strings.TrimSpace(s)
	if groupedInt.MatchString(s) && !(decimalComma && strings.Count(s, ",") == 1 && !strings.Contains(s, ".")) {
		s = strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, s)
	} else {
		s = strings.Map(func(r rune) rune {
			switch r {
			case ' ', '\u00a0', '\u202f', '\u2009', '\'':
				return -1
			}
			return r
		}, s)
		lastDot, lastComma := strings.LastIndex(s, "."), strings.LastIndex(s, ",")
		switch {
		case lastDot >= 0 && lastComma >= 0 && lastComma > lastDot: // 1.234,56
			s = strings.ReplaceAll(s, ".", "")
			s = strings.Replace(s, ",", ".", 1)
		case lastDot >= 0 && lastComma >= 0: // 1,234.56
			s = strings.ReplaceAll(s, ",", "")
		case lastComma >= 0 && strings.Count(s, ",") == 1: // 0,75
			s = strings.Replace(s, ",", ".", 1)
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, &numberError{column, raw, "is not a number"}
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, &numberError{column, raw, "is not a number"}
	}
	if v < 0 {
		return nil, &numberError{column, raw, "is negative"}
	}
	return &v, nil
}

// plainNumber reports whether s is digits with at most one decimal point.
func plainNumber(s string) bool {
	dots := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.':
			dots++
		case c < '0' || c > '9':
			return false
		}
	}
	return dots <= 1 && s != "."
}

// parseVolume reads a monthly search volume: a whole number ≥ 0 (a fraction is rounded).
func parseVolume(column, raw string, decimalComma bool) (*int64, error) {
	v, err := parseNumber(column, raw, decimalComma)
	if v == nil || err != nil {
		return nil, err
	}
	if *v > math.MaxInt64/2 {
		return nil, &numberError{column, raw, "is too large"}
	}
	n := int64(math.Round(*v))
	return &n, nil
}

// parseDifficulty reads a keyword difficulty in [0,100].
func parseDifficulty(column, raw string, decimalComma bool) (*float64, error) {
	v, err := parseNumber(column, raw, decimalComma)
	if v == nil || err != nil {
		return nil, err
	}
	if *v > 100 {
		return nil, &numberError{column, raw, "is not between 0 and 100"}
	}
	return v, nil
}

// parseCompetition reads a competition index: [0,1] as is, (1,100] as an indexed value
// scaled to [0,1]. A word (Low, Medium, High) is unknown: no number is made up for it.
func parseCompetition(column, raw string, decimalComma bool) (*float64, error) {
	switch strings.ToLower(strings.TrimSpace(raw)) {
	case "low", "medium", "high", "unknown":
		return nil, nil
	}
	v, err := parseNumber(column, raw, decimalComma)
	if v == nil || err != nil {
		return nil, err
	}
	if *v > 100 {
		return nil, &numberError{column, raw, "is not between 0 and 1 (or an index 0–100)"}
	}
	if *v > 1 {
		scaled := *v / 100
		return &scaled, nil
	}
	return v, nil
}

// parsePosition reads a ranking position ≥ 1; Search Console's averages are rounded.
func parsePosition(column, raw string, decimalComma bool) (int, error) {
	if n, ok := smallInt(raw); ok && n >= 1 { // the common case: 1 to 999999, digits only
		return n, nil
	}
	return parsePositionNumber(column, raw, decimalComma)
}

// parsePositionNumber is parsePosition for any number a cell may hold.
func parsePositionNumber(column, raw string, decimalComma bool) (int, error) {
	v, err := parseNumber(column, raw, decimalComma)
	if err != nil {
		return 0, err
	}
	if v == nil {
		return 0, fmt.Errorf("%s is empty", column)
	}
	if *v < 1 {
		return 0, &numberError{column, raw, "is below 1"}
	}
	if *v > 1e6 {
		return 0, &numberError{column, raw, "is too large"}
	}
	return int(math.Round(*v)), nil
}

// parseIntent maps a tool's intent label to one of the four intents, or nil when the
// label is none of them. Semrush writes several ("Commercial, Transactional" or "C, T");
// the first is kept.
func parseIntent(raw string) *string {
	labels := strings.FieldsFunc(raw, func(r rune) bool {
		return r == ',' || r == ';' || r == '/' || r == '|'
	})
	if len(labels) == 0 {
		return nil
	}
	var intent string
	switch strings.ToLower(strings.TrimSpace(labels[0])) {
	case "i", "informational", "info":
		intent = "informational"
	case "n", "navigational":
		intent = "navigational"
	case "c", "commercial", "commercial investigation":
		intent = "commercial"
	case "t", "transactional":
		intent = "transactional"
	default:
		return nil
	}
	return &intent
}

// parseSERP splits a |-separated list of result URLs, best first.
func parseSERP(raw string) []string {
	var urls []string
	for _, u := range strings.Split(raw, "|") {
		if u = strings.TrimSpace(u); u != "" {
			urls = append(urls, u)
		}
	}
	return urls
}

// parseCode reads a two-letter country or language code; "gb" is stored as "uk".
func parseCode(column, raw, def string) (string, error) {
	s := strings.ToLower(strings.TrimSpace(raw))
	if isUnknown(s) {
		s = def
	}
	if len(s) != 2 || s[0] < 'a' || s[0] > 'z' || s[1] < 'a' || s[1] > 'z' {
		return "", fmt.Errorf("%s: %q is not a two-letter code", column, raw)
	}
	if s == "gb" {
		s = "uk"
	}
	return s, nil
}

// smallInt reads s when it is one to six ASCII digits and nothing else.
func smallInt(s string) (int, bool) {
	if len(s) == 0 || len(s) > 6 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
