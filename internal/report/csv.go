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

// CSV renders a stored result of a kind that has rows (research, gaps, rankings, competitors, audit) as CSV with a
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
	case KindRankings:
		var r RankingsResult
		if err := json.Unmarshal(result, &r); err != nil {
			return nil, fmt.Errorf("report: csv: %w", err)
		}
		rows = append(rows, []string{"keyword", "position", "url", "search_volume", "keyword_difficulty", "cpc", "search_intent", "estimated_traffic",
			"search_intent_inferred"})
		for _, k := range r.Rankings {
			u := ""
			if k.URL != nil {
				u = *k.URL
			}
			rows = append(rows, []string{k.Keyword, strconv.Itoa(k.Position), u, intCell(k.SearchVolume), floatCell(k.Difficulty),
				floatCell(k.CPC), k.SearchIntent, intCell(k.EstimatedTraffic), strconv.FormatBool(k.SearchIntentInferred)})
		}
	case KindCompetitors:
		var r CompetitorsResult
		if err := json.Unmarshal(result, &r); err != nil {
			return nil, fmt.Errorf("report: csv: %w", err)
		}
		rows = append(rows, []string{"domain", "shared_keywords", "avg_position", "domain_avg_position", "total_keywords"})
		for _, c := range r.Competitors {
			rows = append(rows, []string{c.Domain, intCell(c.SharedKeywords), floatCell(c.AvgPosition),
				floatCell(c.DomainAvgPosition), intCell(c.TotalKeywords)})
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
		issues := pageIssues(r.Issues)
		rows = append(rows, []string{"url", "status", "title", "word_count", "meta_description", "thin", "noindex",
			"cannibalization_keywords", "depth", "source", "rendered_title", "rendered_word_count", "render_error", "issues"})
		for _, p := range r.Pages {
			row := []string{p.URL, strconv.Itoa(p.Status), p.Title, strconv.Itoa(p.WordCount), p.MetaDescription,
				strconv.FormatBool(thin[p.URL]), strconv.FormatBool(p.Noindex), strings.Join(cannibal[p.URL], "; "),
				intCell(p.Depth), p.Source, "", "", ""}
			if rd := p.Rendered; rd != nil && rd.Error != "" {
				row[12] = rd.Error
			} else if rd != nil {
				row[10], row[11] = rd.Title, strconv.Itoa(rd.WordCount)
			}
			rows = append(rows, append(row, strings.Join(issues[p.URL], "; ")))
		}
		for _, e := range r.Errors {
			status := ""
			if e.Status != nil {
				status = strconv.Itoa(*e.Status)
			}
			row := make([]string, 14)
			row[0], row[1], row[13] = e.URL, status, strings.Join(issues[e.URL], "; ")
			rows = append(rows, row)
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
