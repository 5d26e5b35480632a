package dashboard

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/contentapi/contentapi/internal/numfmt"
	"github.com/contentapi/contentapi/internal/report"
)

// The views of a domain's rankings and of competitor discovery.

// sourceLabels name the keyword providers a result's "source" field names.
var sourceLabels = map[string]string{
	"local":      "your imported keyword data",
	"dataforseo": "DataForSEO",
}

// sourceLabel names a result's keyword provider for people; "" when it is unknown.
func sourceLabel(s string) string {
	return sourceLabels[s]
}

// positionBands are the rankings' position bands in numeric order, with their labels.
var positionBands = []struct {
	Key, Label string
	count      func(report.PositionBands) int
}{
	{"1-3", "Positions 1–3", func(b report.PositionBands) int { return b.Top3 }},
	{"4-10", "Positions 4–10", func(b report.PositionBands) int { return b.Top10 }},
	{"11-20", "Positions 11–20", func(b report.PositionBands) int { return b.Page2 }},
	{"21-50", "Positions 21–50", func(b report.PositionBands) int { return b.To50 }},
	{"51-100", "Positions 51–100", func(b report.PositionBands) int { return b.To100 }},
}

// rankingsView is a domain's rankings: how many keywords in each position band (a chart),
// the estimated traffic, then one row per keyword.
type rankingsView struct {
	report.RankingsResult
	Chart   barChart
	Traffic int64 // the listed keywords' estimated monthly traffic
	Top10   int   // keywords in positions 1 to 10
	Rows    []rankingRow
	Source  string // the provider, for people
}

type rankingRow struct {
	report.RankingRecord
	Path string // the ranking URL without its scheme and host, for narrow screens
}

func newRankingsView(r report.RankingsResult) *rankingsView {
	v := &rankingsView{RankingsResult: r, Source: sourceLabel(r.Source)}
	labels := make([]string, len(positionBands))
	values := make([]int64, len(positionBands))
	for i, b := range positionBands {
		labels[i], values[i] = b.Label, int64(b.count(r.PositionBands))
	}
	v.Top10 = r.PositionBands.Top3 + r.PositionBands.Top10
	v.Chart = newBarChart("Keywords per position band", "Positions", "Keywords", labels, values)
	for _, k := range r.Rankings {
		if k.EstimatedTraffic != nil {
			v.Traffic += *k.EstimatedTraffic
		}
		row := rankingRow{RankingRecord: k}
		if k.URL != nil {
			row.Path = pathOf(*k.URL)
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}

// pathOf is a URL's path and query ("/" for the home page), or the URL itself when it does
// not parse.
func pathOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	return u.RequestURI()
}

// competitorsView is competitor discovery: the domains sharing the most keywords with the
// asked one, as a chart of shared keywords, and each one's overlap and positions.
type competitorsView struct {
	report.CompetitorsResult
	Chart  barChart
	Rows   []competitorRow
	Source string
}

type competitorRow struct {
	report.CompetitorRecord
	// Overlap is the shared keywords' share of the competitor's keywords ("" when unknown).
	Overlap string
}

func newCompetitorsView(r report.CompetitorsResult) *competitorsView {
	v := &competitorsView{CompetitorsResult: r, Source: sourceLabel(r.Source)}
	var labels []string
	var values []int64
	for _, c := range r.Competitors {
		row := competitorRow{CompetitorRecord: c}
		if c.SharedKeywords != nil && c.TotalKeywords != nil && *c.TotalKeywords > 0 {
			row.Overlap = strconv.FormatFloat(float64(*c.SharedKeywords)*100/float64(*c.TotalKeywords), 'f', 0, 64) + "%"
		}
		v.Rows = append(v.Rows, row)
		if c.SharedKeywords != nil {
			labels, values = append(labels, c.Domain), append(values, int64(*c.SharedKeywords))
		}
	}
	v.Chart = newBarChart("Keywords shared with "+r.Domain, "Competitor", "Shared keywords", labels, values)
	return v
}

// plural writes n and the noun, in the plural unless n is 1: "1 cluster", "13 keywords".
func plural(n int, noun string) string {
	s := numfmt.Count(int64(n)) + " " + noun
	if n == 1 {
		return s
	}
	switch {
	case strings.HasSuffix(noun, "y") && !strings.HasSuffix(noun, "ey"):
		return s[:len(s)-1] + "ies"
	case strings.HasSuffix(noun, "s"):
		return s + "es"
	}
	return s + "s"
}
