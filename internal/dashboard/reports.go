package dashboard

import (
	"cmp"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/contentapi/contentapi/internal/audit"
	"github.com/contentapi/contentapi/internal/numfmt"
	"github.com/contentapi/contentapi/internal/report"
)

// A report is a job's stored result laid out for people: one view per kind of analysis of
// the report catalogue, and for a kind this build does not know, a generic view of its JSON.
// The same report is shown on the job's page and on a shared link's page.

// issueItemsShown bounds the URLs listed per audit issue on the page (the answer lists up to
// audit.MaxItems): with about a hundred issue types, all of them would make the page of a
// large audit several MB. The downloads hold them all.
const issueItemsShown = 20

// easyDifficulty is the keyword difficulty under which a gap counts as an easy win (when
// its volume is also at least the list's median): the "easy" bands of the common SEO tools
// end around 30.
const easyDifficulty = 30

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

// barChart is a horizontal bar chart drawn as SVG by the template: one labelled row per bar.
type barChart struct {
	Width, Height int
	LabelWidth    int
	Bars          []hbar
	Max           int64
	Title         string
	// LabelHead and ValueHead head the table of the numbers ("Cluster", "Total volume").
	LabelHead, ValueHead string
}

type hbar struct {
	Label   string // as drawn, shortened
	Full    string
	Value   int64
	Y, W    float64
	TextY   float64
	ValueX  float64
	Percent string
}

const (
	barRow      = 26
	barChartW   = 600
	barLabelW   = 230
	barValueRom = 90 // room right of the longest bar for its value
)

func newBarChart(title, labelHead, valueHead string, labels []string, values []int64) barChart {
	ch := barChart{Width: barChartW, LabelWidth: barLabelW, Height: max(1, len(values)) * barRow, Title: title,
		LabelHead: labelHead, ValueHead: valueHead}
	for _, v := range values {
		ch.Max = max(ch.Max, v)
	}
	var total int64
	for _, v := range values {
		total += v
	}
	span := float64(barChartW - barLabelW - barValueRom)
	for i, v := range values {
		b := hbar{Label: truncate(labels[i], 20), Full: labels[i], Value: v, Y: float64(i*barRow) + 4, TextY: float64(i*barRow) + 17}
		if ch.Max > 0 && v > 0 {
			b.W = max(1, float64(v)/float64(ch.Max)*span)
		}
		if total > 0 {
			b.Percent = strconv.FormatFloat(float64(v)*100/float64(total), 'f', 0, 64) + "%"
		}
		b.ValueX = float64(barLabelW) + b.W + 6
		ch.Bars = append(ch.Bars, b)
	}
	return ch
}

// researchView is a keyword research: its clusters' volumes as a chart, then each cluster.
type researchView struct {
	report.ResearchResult
	Chart barChart
	// Topics name the clusters by what their keywords share (clusterTopic), in Clusters'
	// order; the answer's cluster_name is its strongest keyword.
	Topics []string
}

func newResearchView(r report.ResearchResult) *researchView {
	labels := make([]string, len(r.Clusters))
	values := make([]int64, len(r.Clusters))
	for i, c := range r.Clusters {
		kws := make([]string, len(c.Keywords))
		for j, k := range c.Keywords {
			kws[j] = k.Keyword
		}
		labels[i], values[i] = clusterTopic(c.ClusterName, kws), c.TotalVolume
	}
	return &researchView{ResearchResult: r, Topics: labels,
		Chart: newBarChart("Total search volume per cluster", "Cluster", "Total volume", labels, values)}
}

// topicStopWords may not begin or end a cluster's topic: question words, articles,
// prepositions and buying words say how a keyword asks, not what it is about.
var topicStopWords = map[string]bool{
	"a": true, "an": true, "and": true, "at": true, "best": true, "buy": true, "can": true, "cheap": true, "do": true, "does": true,
	"for": true, "from": true, "how": true, "in": true, "is": true, "it": true, "my": true, "near": true, "of": true, "on": true,
	"or": true, "should": true, "the": true, "to": true, "top": true, "vs": true, "what": true, "when": true, "where": true,
	"which": true, "who": true, "why": true, "with": true, "your": true,
}

// clusterTopic names a cluster by the longest run of up to three words that at least half
// of its keywords (and two or more) hold, not beginning or ending with a stop word: the
// keywords "cold brew coffee", "how to make cold brew" and "cold brew ratio" are about
// "cold brew". A cluster whose keywords share nothing keeps its name.
func clusterTopic(name string, keywords []string) string {
	if len(keywords) < 2 {
		return name
	}
	count := map[string]int{}
	for _, k := range keywords {
		words := strings.Fields(strings.ToLower(k))
		seen := map[string]bool{}
		for n := 1; n <= 3; n++ {
			for i := 0; i+n <= len(words); i++ {
				if topicStopWords[words[i]] || topicStopWords[words[i+n-1]] {
					continue
				}
				if g := strings.Join(words[i:i+n], " "); !seen[g] {
					seen[g] = true
					count[g]++
				}
			}
		}
	}
	best, bestN, bestLen := "", 0, 0
	for g, n := range count {
		if n < 2 || 2*n < len(keywords) {
			continue
		}
		l := strings.Count(g, " ") + 1
		if l > bestLen || l == bestLen && (n > bestN || n == bestN && g < best) {
			best, bestN, bestLen = g, n, l
		}
	}
	if best == "" {
		return name
	}
	return best
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// gapsView is a gap list with one position column per competitor and its scatter plot.
type gapsView struct {
	Domain      string
	Competitors []string
	Rows        []gapRow
	Plot        scatter
	EasyWins    int
	MedianVol   int64
}

type gapRow struct {
	report.GapRecord
	Positions []string // per competitor, in Competitors order ("—" where it does not rank)
	Easy      bool
}

// scatter is a volume (log scale) against difficulty plot.
type scatter struct {
	Width, Height    int
	Left, Bottom     int // the plot area's margins, for axis labels
	Points           []point
	YTicks, XTicks   []tick
	EasyX, EasyWidth float64 // the easy band
	PlotTop          int
	// XTickY is the baseline of the difficulty ticks; XTitleX and XTitleY place the axis's
	// title, centred under the plot, below the ticks.
	XTickY, XTitleX, XTitleY int
}

type point struct {
	X, Y    float64
	Easy    bool
	Keyword string
	Volume  int64
	Diff    float64
}

type tick struct {
	Pos   float64
	Label string
}

const (
	plotW, plotH         = 600, 320
	plotLeft, plotBottom = 60, 56
	plotTop, plotRight   = 34, 24
)

func newGapsView(domain string, competitors []string, gaps []report.GapRecord) *gapsView {
	comps := slices.Clone(competitors)
	sort.Strings(comps)
	v := &gapsView{Domain: domain, Competitors: comps}
	var vols []int64
	for _, g := range gaps {
		if g.SearchVolume != nil {
			vols = append(vols, *g.SearchVolume)
		}
	}
	slices.Sort(vols)
	if len(vols) > 0 {
		v.MedianVol = vols[len(vols)/2]
	}
	var maxVol int64 = 10
	for _, x := range vols {
		maxVol = max(maxVol, x)
	}
	top := math.Ceil(math.Log10(float64(maxVol)))
	p := scatter{Width: plotW, Height: plotH, Left: plotLeft, Bottom: plotBottom, PlotTop: plotTop,
		XTickY: plotH - plotBottom + 22, XTitleX: (plotLeft + plotW - plotRight) / 2, XTitleY: plotH - 6}
	innerW, innerH := float64(plotW-plotLeft-plotRight), float64(plotH-plotBottom-plotTop)
	xOf := func(d float64) float64 { return plotLeft + d/100*innerW }
	yOf := func(vol int64) float64 {
		return plotTop + innerH - math.Log10(float64(max(vol, 1)))/top*innerH
	}
	p.EasyX, p.EasyWidth = xOf(0), xOf(easyDifficulty)-xOf(0)
	for d := 0; d <= 100; d += 20 {
		p.XTicks = append(p.XTicks, tick{Pos: xOf(float64(d)), Label: strconv.Itoa(d)})
	}
	for e := 0; e <= int(top); e++ {
		vol := int64(math.Pow10(e))
		p.YTicks = append(p.YTicks, tick{Pos: yOf(vol), Label: compactNumber(vol)})
	}
	for _, g := range gaps {
		row := gapRow{GapRecord: g}
		for _, c := range comps {
			if pos, ok := g.CompetitorPositions[c]; ok {
				row.Positions = append(row.Positions, strconv.Itoa(pos))
			} else {
				row.Positions = append(row.Positions, "—")
			}
		}
		if g.SearchVolume != nil && g.Difficulty != nil {
			row.Easy = *g.Difficulty < easyDifficulty && *g.SearchVolume >= v.MedianVol
			p.Points = append(p.Points, point{X: xOf(*g.Difficulty), Y: yOf(*g.SearchVolume), Easy: row.Easy,
				Keyword: g.Keyword, Volume: *g.SearchVolume, Diff: *g.Difficulty})
		}
		if row.Easy {
			v.EasyWins++
		}
		v.Rows = append(v.Rows, row)
	}
	// Easy wins drawn last, on top.
	slices.SortStableFunc(p.Points, func(a, b point) int {
		if a.Easy == b.Easy {
			return 0
		}
		if a.Easy {
			return 1
		}
		return -1
	})
	v.Plot = p
	return v
}

func compactNumber(n int64) string {
	switch {
	case n >= 1_000_000:
		return strconv.FormatInt(n/1_000_000, 10) + "M"
	case n >= 1_000:
		return strconv.FormatInt(n/1_000, 10) + "k"
	}
	return strconv.FormatInt(n, 10)
}

// auditView is an audit: its scores, its issues by severity and category, and its lists.
type auditView struct {
	report.AuditResult
	Severities []severityCount
	Categories []categoryCount
	Issues     []issueView
	Changes    *changesView
	Health     string // the health score's band: good, fair or poor
	// IssueBase is the address an issue type is appended to for its page of every URL the
	// answer lists (set by the page showing the report).
	IssueBase string
	// IssueToken is a share link's token, which those pages carry in their query.
	IssueToken string
}

type severityCount struct {
	Severity    string
	Types, URLs int
}

type categoryCount struct {
	Category                 string
	Errors, Warnings, Notice int
}

type issueView struct {
	report.AuditIssue
	Threshold string // the rule the check applies
	Shown     []audit.Item
	// TextHead names the page text the issue is about ("Title", "Meta description") and
	// Texts holds it for each shown item, read from the audit's pages: the duplicated title,
	// the description that is too long.
	TextHead string
	Texts    []string
	More     int // items listed in the answer but not on the page
	Unlisted int // URLs with the issue the answer does not list
}

type changesView struct {
	*report.AuditChanges
	Appeared, Disappeared []typeURLs
}

type typeURLs struct {
	Type string
	URLs []string
}

// issuePage is one audit issue type with every URL the answer lists.
type issuePage struct {
	Subject string
	Issue   issueView
	Back    string
}

// newIssuePage finds an issue type in an audit's result; ok is false when the job is no
// audit or the audit did not find that type.
func newIssuePage(kind string, request, result json.RawMessage, typ string) (issuePage, bool, error) {
	if report.Kind(kind) != report.KindAudit {
		return issuePage{}, false, nil
	}
	var r report.AuditResult
	if err := json.Unmarshal(result, &r); err != nil {
		return issuePage{}, false, fmt.Errorf("dashboard: read an audit: %w", err)
	}
	for _, is := range r.Issues {
		if is.Type == typ {
			iv := newIssueView(is, thresholdOf(is.Type), len(is.Items)+len(is.URLs))
			iv.addTexts(pagesByURL(r.Pages))
			return issuePage{Subject: subjectOf(request), Issue: iv}, true, nil
		}
	}
	return issuePage{}, false, nil
}

func thresholdOf(typ string) string {
	for _, c := range audit.Checks() {
		if c.Type == typ {
			return c.Threshold
		}
	}
	return ""
}

// newIssueView shows up to shown of an issue's listed items (its URLs where it has none).
func newIssueView(is report.AuditIssue, threshold string, shown int) issueView {
	iv := issueView{AuditIssue: is, Threshold: threshold}
	items := is.Items
	if len(items) == 0 {
		for _, u := range is.URLs {
			items = append(items, audit.Item{URL: u})
		}
	}
	iv.Items = items
	listed := len(items)
	if len(items) > shown {
		items = items[:shown]
	}
	iv.Shown, iv.More, iv.Unlisted = items, listed-len(items), max(0, is.Count-listed)
	return iv
}

func pagesByURL(pages []report.AuditPage) map[string]*report.AuditPage {
	m := make(map[string]*report.AuditPage, len(pages))
	for i := range pages {
		m[pages[i].URL] = &pages[i]
	}
	return m
}

// offendingText names the page text an issue type is about and reads it from a page: a
// title issue shows the page's title, a meta description issue its description.
func offendingText(typ string) (head string, text func(*report.AuditPage) string) {
	switch {
	case strings.Contains(typ, "meta_description"):
		return "Meta description", func(p *report.AuditPage) string { return p.MetaDescription }
	case strings.Contains(typ, "title"):
		return "Title", func(p *report.AuditPage) string { return p.Title }
	}
	return "", nil
}

// addTexts sets the page text each shown item is about, where the audit has it (none for
// a missing title, say).
func (iv *issueView) addTexts(pages map[string]*report.AuditPage) {
	head, text := offendingText(iv.Type)
	if text == nil {
		return
	}
	texts, found := make([]string, len(iv.Shown)), false
	for i, it := range iv.Shown {
		if p, ok := pages[it.URL]; ok {
			texts[i] = text(p)
			found = found || texts[i] != ""
		}
	}
	if found {
		iv.TextHead, iv.Texts = head, texts
	}
}

func newAuditView(r report.AuditResult) *auditView {
	v := &auditView{AuditResult: r}
	thresholds := map[string]string{}
	for _, c := range audit.Checks() {
		thresholds[c.Type] = c.Threshold
	}
	sev := map[string]*severityCount{}
	for _, s := range []string{audit.SeverityError, audit.SeverityWarning, audit.SeverityNotice} {
		v.Severities = append(v.Severities, severityCount{Severity: s})
	}
	for i := range v.Severities {
		sev[v.Severities[i].Severity] = &v.Severities[i]
	}
	idx := map[string]int{}
	for _, is := range r.Issues {
		if s, ok := sev[is.Severity]; ok {
			s.Types++
			s.URLs += is.Count
		}
		i, ok := idx[is.Category]
		if !ok {
			i = len(v.Categories)
			idx[is.Category] = i
			v.Categories = append(v.Categories, categoryCount{Category: is.Category})
		}
		switch c := &v.Categories[i]; is.Severity {
		case audit.SeverityError:
			c.Errors += is.Count
		case audit.SeverityWarning:
			c.Warnings += is.Count
		default:
			c.Notice += is.Count
		}
	}
	pages := pagesByURL(r.Pages)
	for _, is := range r.Issues {
		iv := newIssueView(is, thresholds[is.Type], issueItemsShown)
		iv.addTexts(pages)
		v.Issues = append(v.Issues, iv)
	}
	if r.Summary.HealthScore != nil {
		switch h := *r.Summary.HealthScore; {
		case h >= 80:
			v.Health = "good"
		case h >= 50:
			v.Health = "fair"
		default:
			v.Health = "poor"
		}
	}
	if r.Changes != nil {
		cv := &changesView{AuditChanges: r.Changes}
		cv.Appeared, cv.Disappeared = sortedTypeURLs(r.Changes.URLsAppeared), sortedTypeURLs(r.Changes.URLsDisappeared)
		v.Changes = cv
	}
	return v
}

func sortedTypeURLs(m map[string][]string) []typeURLs {
	var out []typeURLs
	for t, urls := range m {
		out = append(out, typeURLs{Type: t, URLs: urls})
	}
	slices.SortFunc(out, func(a, b typeURLs) int { return cmp.Compare(a.Type, b.Type) })
	return out
}

// mapView is a content map: its summary tiles, plan, rankings, gaps and pages.
type mapView struct {
	report.ContentMapResult
	Gaps *gapsView
}

func newMapView(r report.ContentMapResult) *mapView {
	slices.SortStableFunc(r.Recommendations, func(a, b report.MapRecommendation) int { return cmp.Compare(a.Priority, b.Priority) })
	comps := map[string]bool{}
	for _, g := range r.CompetitorGaps.Gaps {
		for c := range g.CompetitorPositions {
			comps[c] = true
		}
	}
	return &mapView{ContentMapResult: r, Gaps: newGapsView(r.Domain, slices.Collect(maps.Keys(comps)), r.CompetitorGaps.Gaps)}
}

// node is a JSON value laid out for the generic view: an object as a list of named values,
// an array of objects as a table when they share scalar fields, else as a list.
type node struct {
	Label  string
	Scalar string  // set for a string, number, boolean or null
	Fields []*node // an object's fields, in key order
	Items  []*node // an array's elements
	Table  *table  // an array of objects with scalar fields only
	More   int     // elements left out
}

type table struct {
	Columns []string
	Rows    [][]string
}

// genericMaxItems and genericMaxDepth bound the generic view of an unknown result.
const (
	genericMaxItems = 500
	genericMaxDepth = 8
)

func newNode(label string, x any, depth int) *node {
	n := &node{Label: humanize(label)}
	if depth > genericMaxDepth {
		b, _ := json.Marshal(x)
		n.Scalar = truncate(string(b), 200)
		return n
	}
	switch x := x.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			n.Fields = append(n.Fields, newNode(k, x[k], depth+1))
		}
	case []any:
		if t := asTable(x); t != nil {
			n.Table = t
			return n
		}
		for i, e := range x {
			if i == genericMaxItems {
				n.More = len(x) - i
				break
			}
			n.Items = append(n.Items, newNode("", e, depth+1))
		}
	default:
		n.Scalar = scalarText(x)
	}
	return n
}

func scalarText(x any) string {
	switch x := x.(type) {
	case nil:
		return "—"
	case string:
		return x
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(x)
}

// asTable lays out an array of objects whose fields are all scalars (or lists of scalars)
// as a table, or returns nil.
func asTable(xs []any) *table {
	if len(xs) == 0 {
		return nil
	}
	cols := map[string]bool{}
	for _, x := range xs {
		m, ok := x.(map[string]any)
		if !ok {
			return nil
		}
		for k, v := range m {
			switch v := v.(type) {
			case map[string]any:
				return nil
			case []any:
				for _, e := range v {
					switch e.(type) {
					case map[string]any, []any:
						return nil
					}
				}
			}
			cols[k] = true
		}
	}
	t := &table{}
	for k := range cols {
		t.Columns = append(t.Columns, k)
	}
	sort.Strings(t.Columns)
	for i, x := range xs {
		if i == genericMaxItems {
			break
		}
		m := x.(map[string]any)
		row := make([]string, len(t.Columns))
		for j, k := range t.Columns {
			if v, ok := m[k]; ok {
				if list, ok := v.([]any); ok {
					parts := make([]string, len(list))
					for i, e := range list {
						parts[i] = scalarText(e)
					}
					row[j] = strings.Join(parts, ", ")
				} else {
					row[j] = scalarText(v)
				}
			}
		}
		t.Rows = append(t.Rows, row)
	}
	for i, c := range t.Columns {
		t.Columns[i] = humanize(c)
	}
	return t
}

// humanize turns a JSON field name into a heading: "search_volume" → "Search volume".
func humanize(s string) string {
	if s == "" {
		return ""
	}
	s = strings.ReplaceAll(s, "_", " ")
	return strings.ToUpper(s[:1]) + s[1:]
}

func init() {
	maps.Copy(funcs, template.FuncMap{
		"sub":       func(a, b int) int { return a - b },
		"thousands": numfmt.Count,
		"fmtv":      fmtValue,
		"sortv":     sortValue,
		"money": func(x *float64) string {
			if x == nil {
				return "—"
			}
			return strconv.FormatFloat(*x, 'f', 2, 64)
		},
		"human":     humanize,
		"hasPrefix": strings.HasPrefix,
		"plural":    plural,
		"initial": func(s string) string {
			if s == "" {
				return ""
			}
			return strings.ToUpper(s[:1])
		},
		"has":      func(xs []string, x string) bool { return slices.Contains(xs, x) },
		"upper":    strings.ToUpper,
		"int64":    func(n int) int64 { return int64(n) },
		"kindname": kindName,
		"subject":  func(raw json.RawMessage) string { return subjectOf(raw) },
		"title":    humanize,
	})
}

// fmtValue writes an optional metric: "—" when unknown, integers with separators, other
// numbers with at most one decimal.
func fmtValue(x any) string {
	switch x := x.(type) {
	case *int64:
		if x != nil {
			return numfmt.Count(*x)
		}
	case *int:
		if x != nil {
			return numfmt.Count(int64(*x))
		}
	case *float64:
		if x != nil {
			return strconv.FormatFloat(math.Round(*x*10)/10, 'f', -1, 64)
		}
	case int:
		return numfmt.Count(int64(x))
	case int64:
		return numfmt.Count(x)
	case float64:
		return strconv.FormatFloat(math.Round(x*10)/10, 'f', -1, 64)
	}
	return "—"
}

// sortValue is a metric's raw value for the sortable tables' script ("" when unknown).
func sortValue(x any) string {
	switch x := x.(type) {
	case *int64:
		if x != nil {
			return strconv.FormatInt(*x, 10)
		}
	case *int:
		if x != nil {
			return strconv.Itoa(*x)
		}
	case *float64:
		if x != nil {
			return strconv.FormatFloat(*x, 'f', -1, 64)
		}
	}
	return ""
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
