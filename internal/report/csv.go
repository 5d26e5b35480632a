package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// CSV renders a stored result of a kind that has rows (research, gaps, audit) as CSV with a
// header line. Unknown metrics are empty cells. Cells that a spreadsheet would run as a
// formula (starting with = + - @) are prefixed with a quote.
func CSV(kind string, result []byte) ([]byte, error) {
	var rows [][]string
	switch Kind(kind) {
	case KindResearch:
		var r ResearchResult
		if err := json.Unmarshal(result, &r); err != nil {
			return nil, fmt.Errorf("report: csv: %w", err)
		}
		rows = append(rows, []string{"cluster_name", "keyword", "search_volume", "keyword_difficulty", "cpc", "search_intent", "opportunity_score",
			"search_intent_inferred", "trend"})
		for _, c := range r.Clusters {
			for _, k := range c.Keywords {
				rows = append(rows, []string{c.ClusterName, k.Keyword, intCell(k.SearchVolume), floatCell(k.Difficulty),
					floatCell(k.CPC), k.SearchIntent, intCell(k.OpportunityScore), strconv.FormatBool(k.SearchIntentInferred),
					stringCell(k.Trend)})
			}
		}
	case KindGaps:
		var r GapsResult
		if err := json.Unmarshal(result, &r); err != nil {
			return nil, fmt.Errorf("report: csv: %w", err)
		}
		head := []string{"keyword", "search_volume", "keyword_difficulty"}
		comps := append([]string(nil), r.Competitors...)
		sort.Strings(comps)
		for _, c := range comps {
			head = append(head, "position_"+c)
		}
		head = append(head, "trend")
		rows = append(rows, head)
		for _, g := range r.Gaps {
			row := []string{g.Keyword, intCell(g.SearchVolume), floatCell(g.Difficulty)}
			for _, c := range comps {
				if p, ok := g.CompetitorPositions[c]; ok {
					row = append(row, strconv.Itoa(p))
				} else {
					row = append(row, "")
				}
			}
			row = append(row, stringCell(g.Trend))
			rows = append(rows, row)
		}
	case KindAudit:
		var r AuditResult
		if err := json.Unmarshal(result, &r); err != nil {
			return nil, fmt.Errorf("report: csv: %w", err)
		}
		thin := map[string]bool{}
		for _, t := range r.ThinContent {
			thin[t.URL] = true
		}
		cannibal := map[string][]string{}
		for _, c := range r.CannibalizationRisks {
			for _, u := range c.URLs {
				cannibal[u] = append(cannibal[u], c.Keyword)
			}
		}
		rows = append(rows, []string{"url", "status", "title", "word_count", "meta_description", "thin", "noindex", "cannibalization_keywords"})
		for _, p := range r.Pages {
			rows = append(rows, []string{p.URL, strconv.Itoa(p.Status), p.Title, strconv.Itoa(p.WordCount), p.MetaDescription,
				strconv.FormatBool(thin[p.URL]), strconv.FormatBool(p.Noindex), strings.Join(cannibal[p.URL], "; ")})
		}
		for _, e := range r.Errors {
			status := ""
			if e.Status != nil {
				status = strconv.Itoa(*e.Status)
			}
			rows = append(rows, []string{e.URL, status, "", "", "", "", "", ""})
		}
	default:
		return nil, fmt.Errorf("report: %s has no CSV form", kind)
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	for _, row := range rows {
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
