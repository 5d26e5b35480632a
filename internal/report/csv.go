package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Tabular is an answer with rows, which CSV renders.
type Tabular interface {
	// CSVRows are the rows, the header first; unknown metrics are empty cells.
	CSVRows() [][]string
}

// CSV renders a stored result of a kind that has rows (its catalogue entry's Rows) as CSV
// with a header line. Cells that a spreadsheet would run as a formula (starting with = + -
// @, a tab or a carriage return) are prefixed with a quote.
func CSV(kind string, result []byte) ([]byte, error) {
	a, ok := Lookup(kind)
	if !ok || a.Rows == nil {
		return nil, fmt.Errorf("report: %s has no CSV form", kind)
	}
	res := a.Rows()
	if err := json.Unmarshal(result, res); err != nil {
		return nil, fmt.Errorf("report: csv: %w", err)
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	for _, row := range res.CSVRows() {
		for i, cell := range row {
			row[i] = defuse(cell)
		}
		if err := w.Write(row); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// pageIssues maps each URL an issue lists to the types listing it, in the issues' order
// (by impact, the greatest first). An issue lists at most its first 100 URLs, so a page of a larger issue
// may lack it here; the issue's count says how many pages it has.
func pageIssues(list []AuditIssue) map[string][]string {
	out := map[string][]string{}
	for _, is := range list {
		for _, u := range is.URLs {
			out[u] = append(out[u], is.Type)
		}
	}
	return out
}

func intCell[T int | int64](p *T) string {
	if p == nil {
		return ""
	}
	return strconv.FormatInt(int64(*p), 10)
}

func stringCell(p *string) string {
	if p == nil {
		return ""
	}
	return defuse(*p)
}

func floatCell(p *float64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatFloat(*p, 'f', -1, 64)
}

// defuse keeps a cell from being read as a formula by spreadsheet software.
func defuse(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		if _, err := strconv.ParseFloat(s, 64); err != nil {
			return "'" + s
		}
	}
	return s
}
