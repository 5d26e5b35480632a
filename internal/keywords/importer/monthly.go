package importer

// Monthly search volumes and trends in exports: Keyword Planner's monthly
// columns ("Searches: Jan 2026", one per month), DataForSEO's monthly_searches (a JSON list
// of {year, month, search_volume} in one cell) and Semrush's "Trend" (12 comma-separated
// values of relative interest, oldest first, the highest 1: no volumes, so it gives the
// trend alone). A file without any of these columns reads none of it: the common path pays
// one index test per row.

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/contentapi/contentapi/internal/keywords"
)

// monthColumnPattern matches a normalised Keyword Planner monthly header: "searches: jan
// 2026" (some exports write the month in full or without the colon).
var monthColumnPattern = regexp.MustCompile(`^searches:?\s+([a-z]{3})[a-z]*\.?\s+(\d{4})$`)

var monthNames = map[string]int{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
	"jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12}

// Header aliases of the other two.
var (
	monthlyJSONAliases = []string{"monthly_searches", "keyword_info.monthly_searches"}
	trendAliases       = []string{"trend", "trends"}
)

// monthColumn is a Keyword Planner monthly column.
type monthColumn struct {
	index int
	month int // year*12 + month-1
}

// monthlyColumns are the monthly columns of a file.
type monthlyColumns struct {
	months []monthColumn // Keyword Planner's, oldest first
	json   int           // DataForSEO's monthly_searches, -1 when absent
	trend  int           // Semrush's Trend, -1 when absent
}

func mapMonthly(header []string) monthlyColumns {
	m := monthlyColumns{json: findColumn(header, monthlyJSONAliases), trend: findColumn(header, trendAliases)}
	for i, h := range header {
		sub := monthColumnPattern.FindStringSubmatch(h)
		if sub == nil {
			continue
		}
		mon, ok := monthNames[sub[1]]
		year, err := strconv.Atoi(sub[2])
		if !ok || err != nil {
			continue
		}
		m.months = append(m.months, monthColumn{index: i, month: year*12 + mon - 1})
	}
	// Planner lists the months oldest first; sort anyway (few columns).
	for i := 1; i < len(m.months); i++ {
		for j := i; j > 0 && m.months[j].month < m.months[j-1].month; j-- {
			m.months[j], m.months[j-1] = m.months[j-1], m.months[j]
		}
	}
	return m
}

// volumes reports whether the file gives monthly volumes; any whether it gives a trend.
func (m monthlyColumns) volumes() bool { return len(m.months) > 0 || m.json >= 0 }
func (m monthlyColumns) any() bool     { return m.volumes() || m.trend >= 0 }

// readMonthly reads a record's monthly volumes and trend into m.
func readMonthly(rec []string, mc monthlyColumns, cols columns, decimalComma bool, m *metricsRow) []string {
	var problems []string
	var series []keywords.MonthlyVolume
	for _, c := range mc.months {
		v, err := parseVolume(cols.name(c.index, []string{"searches"}), cell(rec, c.index), decimalComma)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if v != nil {
			series = append(series, keywords.MonthlyVolume{Year: c.month / 12, Month: c.month%12 + 1, SearchVolume: *v})
		}
	}
	if s := cell(rec, mc.json); mc.json >= 0 && !isUnknown(s) && s != "[]" {
		var items []struct {
			Year         int      `json:"year"`
			Month        int      `json:"month"`
			SearchVolume *float64 `json:"search_volume"`
		}
		if err := json.Unmarshal([]byte(s), &items); err != nil {
			problems = append(problems, cols.name(mc.json, monthlyJSONAliases)+": not a JSON list of {year, month, search_volume}")
		}
		for _, it := range items {
			if it.SearchVolume != nil && *it.SearchVolume >= 0 {
				series = append(series, keywords.MonthlyVolume{Year: it.Year, Month: it.Month, SearchVolume: int64(*it.SearchVolume + 0.5)})
			}
		}
	}
	if series = keywords.SortMonths(series); len(series) > 0 {
		first := series[0]
		from := time.Date(first.Year, time.Month(first.Month), 1, 0, 0, 0, 0, time.UTC)
		last := series[len(series)-1]
		n := (last.Year*12 + last.Month) - (first.Year*12 + first.Month) + 1
		if n > 240 {
			problems = append(problems, "monthly searches span more than 20 years")
		} else {
			vols := make([]*int64, n)
			for _, s := range series {
				v := s.SearchVolume
				vols[(s.Year*12+s.Month)-(first.Year*12+first.Month)] = &v
			}
			m.monthlyFrom, m.monthlyVolumes = &from, vols
			if t := keywords.Trend(series); t != "" {
				m.trend = &t
			}
		}
	}
	if m.trend == nil && mc.trend >= 0 {
		t, err := relativeTrend(cell(rec, mc.trend))
		if err != nil {
			problems = append(problems, cols.name(mc.trend, trendAliases)+": "+err.Error())
		}
		m.trend = t
	}
	return problems
}

// relativeTrend reads Semrush's Trend cell, relative interest per month oldest first, and
// applies keywords.Trend to it (a rule on ratios, so relative values do as well as volumes;
// months are consecutive by construction).
func relativeTrend(s string) (*string, error) {
	if isUnknown(s) {
		return nil, nil
	}
	sep, decimalComma := ",", false
	if strings.Contains(s, ";") { // "0,54;0,66;…" in a decimal-comma export
		sep, decimalComma = ";", true
	}
	parts := strings.Split(s, sep)
	series := make([]keywords.MonthlyVolume, 0, len(parts))
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if decimalComma {
			p = strings.Replace(p, ",", ".", 1)
		}
		f, err := strconv.ParseFloat(p, 64)
		if err != nil || f < 0 || f > 1e9 {
			return nil, fmt.Errorf("%q is not a list of numbers", s)
		}
		// Scaled to whole numbers so the rule compares the same ratios.
		series = append(series, keywords.MonthlyVolume{Year: 2000 + i/12, Month: i%12 + 1, SearchVolume: int64(f*1e6 + 0.5)})
	}
	t := keywords.Trend(series)
	if t == "" {
		return nil, nil
	}
	return &t, nil
}
