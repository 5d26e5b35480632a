package dashboard

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/contentapi/contentapi/internal/report"
)

// reportView is a result laid out for a report page; exactly one of the kind's fields is set.
type reportView struct {
	Kind       string // research, gaps, rankings, competitors, audit, recommend, contentmap or generic
	Title      string // "Keyword research", …
	Subject    string // what the analysis was about (domain, topic, competitors)
	DataSource string
	Warnings   []string

	Research    *researchView
	Gaps        *gapsView
	Rankings    *rankingsView
	Competitors *competitorsView
	Audit       *auditView
	Recommend   *report.RecommendResult
	Map         *mapView
	Generic     *node

	// Page is where a paged keyword answer stands (research, gaps, rankings, competitors).
	Page *pageInfo
}

// pageInfo is one page of a paged answer: how many rows it shows of how many, and the
// cursor of the next page (empty on the last). Next is the address that continues it, set
// by the job's page (a shared link's page offers none).
type pageInfo struct {
	Shown, Total int
	Cursor       string
	Next         string
}

func newPageInfo(shown, total int, next *string) *pageInfo {
	p := &pageInfo{Shown: shown, Total: total}
	if next != nil {
		p.Cursor = *next
	}
	return p
}

// newReportView lays out a job's result. meta is the job's stored meta (data source and
// warnings), possibly empty.
func newReportView(kind string, request, result, meta json.RawMessage) (*reportView, error) {
	v := &reportView{Subject: subjectOf(request)}
	if m, ok := report.StoredMeta(meta); ok {
		v.DataSource, v.Warnings = m.DataSource, m.Warnings
	}
	var err error
	switch report.Kind(kind) {
	case report.KindResearch:
		v.Kind, v.Title = "research", kindName(kind)
		err = decodeInto(result, func(r report.ResearchResult) {
			v.Research = newResearchView(r)
			v.Page = newPageInfo(r.TotalKeywords, r.Total, r.NextCursor)
		})
	case report.KindGaps:
		v.Kind, v.Title = "gaps", kindName(kind)
		err = decodeInto(result, func(r report.GapsResult) {
			v.Gaps = newGapsView(r.Domain, r.Competitors, r.Gaps)
			v.Page = newPageInfo(len(r.Gaps), r.Total, r.NextCursor)
		})
	case report.KindRankings:
		v.Kind, v.Title = "rankings", kindName(kind)
		err = decodeInto(result, func(r report.RankingsResult) {
			v.Rankings = newRankingsView(r)
			v.Page = newPageInfo(len(r.Rankings), r.Total, r.NextCursor)
		})
	case report.KindCompetitors:
		v.Kind, v.Title = "competitors", kindName(kind)
		err = decodeInto(result, func(r report.CompetitorsResult) {
			v.Competitors = newCompetitorsView(r)
			v.Page = newPageInfo(len(r.Competitors), r.Total, r.NextCursor)
		})
	case report.KindAudit:
		v.Kind, v.Title = "audit", kindName(kind)
		err = decodeInto(result, func(r report.AuditResult) {
			v.Audit = newAuditView(r)
			v.Warnings = mergeWarnings(v.Warnings, r.Warnings)
		})
	case report.KindRecommend:
		v.Kind, v.Title = "recommend", kindName(kind)
		err = decodeInto(result, func(r report.RecommendResult) {
			slices.SortStableFunc(r.Recommendations, func(a, b report.RecommendationRecord) int { return cmp.Compare(a.Priority, b.Priority) })
			v.Recommend = &r
			v.Warnings = mergeWarnings(v.Warnings, r.Warnings)
		})
	case report.KindContentMap:
		v.Kind, v.Title = "contentmap", kindName(kind)
		err = decodeInto(result, func(r report.ContentMapResult) {
			v.Map = newMapView(r)
			v.Warnings = mergeWarnings(v.Warnings, r.Warnings)
		})
	default:
		v.Kind, v.Title = "generic", kindName(kind)
		var x any
		if err = json.Unmarshal(result, &x); err == nil {
			v.Generic = newNode("", x, 0)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("dashboard: read the result of a %s job: %w", kind, err)
	}
	return v, nil
}

// decodeInto decodes a stored result into a T and, when it reads, lays it out with view.
func decodeInto[T any](result json.RawMessage, view func(T)) error {
	var r T
	if err := json.Unmarshal(result, &r); err != nil {
		return err
	}
	view(r)
	return nil
}

// mergeWarnings adds the result's own warnings to the meta's, each once.
func mergeWarnings(meta, own []string) []string {
	for _, w := range own {
		if !slices.Contains(meta, w) {
			meta = append(meta, w)
		}
	}
	return meta
}

// kindNames name the analyses as people know them, for report headings and job lists.
var kindNames = map[report.Kind]string{
	report.KindResearch:    "Keyword research",
	report.KindGaps:        "Keyword gaps",
	report.KindRankings:    "Rankings",
	report.KindCompetitors: "Competitors",
	report.KindAudit:       "Site audit",
	report.KindRecommend:   "Content recommendations",
	report.KindContentMap:  "Content map",
}

// kindName names a job's kind: "Site audit", or for a kind this build does not know,
// its name made readable.
func kindName(kind string) string {
	if n, ok := kindNames[report.Kind(kind)]; ok {
		return n
	}
	return titleOfKind(kind)
}

// titleOfKind names a kind this build has no view for: "rankings:competitors" reads
// "Rankings: competitors".
func titleOfKind(kind string) string {
	if kind == "" {
		return "Report"
	}
	s := strings.NewReplacer(":", ": ", "_", " ", "-", " ").Replace(kind)
	return strings.ToUpper(s[:1]) + s[1:]
}

// subjectOf says what a request was about, for job lists and report headings: its domain,
// then its topic, keywords, focus topics or competitors, whichever it has.
func subjectOf(request json.RawMessage) string {
	var r struct {
		Domain      string   `json:"domain"`
		Topic       string   `json:"topic"`
		Keywords    []string `json:"keywords"`
		FocusTopics []string `json:"focus_topics"`
		Competitors []string `json:"competitors"`
	}
	if len(request) == 0 || json.Unmarshal(request, &r) != nil {
		return ""
	}
	parts := []string{}
	if r.Domain != "" {
		parts = append(parts, r.Domain)
	}
	switch {
	case r.Topic != "":
		parts = append(parts, "“"+r.Topic+"”")
	case len(r.Keywords) > 0:
		parts = append(parts, shortList(r.Keywords))
	case len(r.FocusTopics) > 0:
		parts = append(parts, shortList(r.FocusTopics))
	}
	if len(r.Competitors) > 0 {
		parts = append(parts, "vs "+shortList(r.Competitors))
	}
	s := strings.Join(parts, " · ")
	if len([]rune(s)) > 120 {
		s = string([]rune(s)[:119]) + "…"
	}
	return s
}

func shortList(xs []string) string {
	if len(xs) <= 3 {
		return strings.Join(xs, ", ")
	}
	return strings.Join(xs[:3], ", ") + fmt.Sprintf(" and %d more", len(xs)-3)
}

// writeReport renders a result as a shared link's page shows it (the report without the
// account), for tests and benchmarks of the report alone.
func (d *Dashboard) writeReport(w io.Writer, kind string, request, result, meta json.RawMessage) error {
	rv, err := newReportView(kind, request, result, meta)
	if err != nil {
		return err
	}
	if rv.Audit != nil {
		rv.Audit.IssueBase, rv.Audit.IssueToken = Path+SharePath+"/issues/", "x"
	}
	return d.pages["shared"].Execute(w, view{Title: rv.Title, Public: true, Data: sharedView{Report: rv, Token: "x"}})
}
