package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/contentapi/contentapi/internal/analysis"
	"github.com/contentapi/contentapi/internal/audit"
	"github.com/contentapi/contentapi/internal/report"
)

// hostile is crawled or imported text that would run as script if a page did not escape it.
const hostile = `<script>alert("x")</script><img src=x onerror=alert(1)>`

func ptr[T any](v T) *T { return &v }

// researchFixture is a research of n keywords in clusters of ten.
func researchFixture(n int) report.ResearchResult {
	r := report.ResearchResult{Domain: "example.com", Topic: "coffee", Country: "us", Source: "imported", TotalKeywords: n}
	for i := 0; i < n; i++ {
		if i%10 == 0 {
			r.Clusters = append(r.Clusters, report.ClusterRecord{ClusterName: fmt.Sprintf("cluster %d", i/10), AvgDifficulty: ptr(35.5)})
		}
		c := &r.Clusters[len(r.Clusters)-1]
		vol := int64(100 * (n - i))
		c.TotalVolume += vol
		c.Keywords = append(c.Keywords, report.KeywordRecord{Keyword: fmt.Sprintf("coffee keyword %d", i), SearchVolume: ptr(vol),
			Difficulty: ptr(float64(i % 100)), CPC: ptr(1.25), SearchIntent: "informational", OpportunityScore: ptr(50 + i%50)})
	}
	r.Clusters[0].ClusterName = hostile
	r.Clusters[0].Keywords[0].Keyword = hostile
	return r
}

// rankingsFixture is one page of n rankings of 1,234.
func rankingsFixture(n int) report.RankingsResult {
	r := report.RankingsResult{Domain: "example.com", Country: "us", Total: 1234, Source: "local", NextCursor: ptr("next"),
		PositionBands: report.PositionBands{Top3: 40, Top10: 300, Page2: 200, To50: 400, To100: 294}}
	for i := 0; i < n; i++ {
		r.Rankings = append(r.Rankings, report.RankingRecord{Keyword: fmt.Sprintf("best informational coffee keyword %d", i), Position: 1 + i%100,
			URL: ptr(fmt.Sprintf("https://www.example.com/blog/coffee-keyword-%d?x=1", i)), SearchVolume: ptr(int64(12345 - i)),
			Difficulty: ptr(float64(i % 100)), CPC: ptr(1.25), SearchIntent: "informational", EstimatedTraffic: ptr(int64(1000 - i))})
	}
	r.Rankings[0].Keyword, r.Rankings[1].URL = hostile, ptr(hostile)
	return r
}

func competitorsFixture() report.CompetitorsResult {
	return report.CompetitorsResult{Domain: "example.com", Country: "us", Total: 3, Source: "local", Competitors: []report.CompetitorRecord{
		{Domain: "a.example", SharedKeywords: ptr(25), AvgPosition: ptr(4.5), DomainAvgPosition: ptr(8.25), TotalKeywords: ptr(100)},
		{Domain: hostile, SharedKeywords: ptr(3), TotalKeywords: ptr(0)},
		{Domain: "c.example"},
	}}
}

func gapsFixture() report.GapsResult {
	r := report.GapsResult{Domain: "example.com", Competitors: []string{"b.example", "a.example"}, Source: "imported"}
	for i := 0; i < 40; i++ {
		g := report.GapRecord{Keyword: fmt.Sprintf("gap %d", i), SearchVolume: ptr(int64(50 * (40 - i))), Difficulty: ptr(float64(i * 2)),
			CompetitorPositions: map[string]int{"a.example": 1 + i%10}}
		if i%2 == 0 {
			g.CompetitorPositions["b.example"] = 3
		}
		r.Gaps = append(r.Gaps, g)
	}
	r.Gaps[0].Keyword = hostile
	r.Gaps[1].SearchVolume, r.Gaps[1].Difficulty = nil, nil
	r.TotalGaps = len(r.Gaps)
	return r
}

// auditFixture is an audit of pages pages that found every issue type on every page, with
// the longest lists an answer holds (audit.MaxItems per type), thin pages, cannibalization,
// errors and changes since a previous audit.
func auditFixture(pages int) report.AuditResult {
	url := func(i int) string {
		return fmt.Sprintf("https://www.example-coffee-shop.com/blog/2026/brewing-guides/article-%04d", i)
	}
	r := report.AuditResult{Domain: "www.example-coffee-shop.com", PagesCrawled: pages, ThinThreshold: 300, Render: "html",
		Warnings: []string{"robots.txt could not be read."}, Sitemaps: []string{"https://www.example-coffee-shop.com/sitemap.xml"}}
	for i := 0; i < pages; i++ {
		r.Pages = append(r.Pages, report.AuditPage{URL: url(i), Title: fmt.Sprintf("Brewing guide %d: how to brew better coffee at home", i),
			WordCount: 200 + i, MetaDescription: "A guide.", Status: 200, Depth: ptr(i % 5), Source: "sitemap"})
		if i < 50 {
			r.ThinContent = append(r.ThinContent, report.ThinPage{URL: url(i), WordCount: 200 + i, Title: r.Pages[i].Title})
		}
	}
	r.Pages[0].Title = hostile
	r.ThinContent[0].Title = hostile
	for i := 0; i < 20; i++ {
		r.CannibalizationRisks = append(r.CannibalizationRisks, report.CannibalRisk{Keyword: fmt.Sprintf("keyword %d", i),
			URLs: []string{url(i), url(i + 1)}, Recommendation: "Merge the two pages."})
	}
	for i := 0; i < 10; i++ {
		r.Errors = append(r.Errors, report.PageError{URL: url(pages + i), Status: ptr(500), Error: "HTTP 500"})
	}
	issues := map[string]int{}
	changes := &report.AuditChanges{PreviousJobID: "0190c1a2-0000-7000-8000-000000000000", PreviousAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		URLsAppeared: map[string][]string{}, URLsDisappeared: map[string][]string{}}
	for n, c := range audit.Checks() {
		is := report.AuditIssue{Type: c.Type, Severity: c.Severity, Category: c.Category, Count: pages}
		for i := 0; i < min(pages, audit.MaxItems); i++ {
			is.URLs = append(is.URLs, url(i))
			is.Items = append(is.Items, audit.Item{URL: url(i), Source: url(i + 1), Value: "712 ms"})
		}
		r.Issues = append(r.Issues, is)
		issues[c.Type] = pages
		if n%10 == 0 {
			changes.New = append(changes.New, c.Type)
			changes.URLsAppeared[c.Type] = is.URLs[:10]
		}
		if n%10 == 1 {
			changes.Grown = append(changes.Grown, report.IssueCountChange{Type: c.Type, From: 10, To: pages})
		}
	}
	r.Issues[0].Items[0].URL = hostile
	changes.Fixed = []string{"missing_title"}
	r.Changes = changes
	r.Summary = report.AuditSummary{Total: pages, Thin: len(r.ThinContent), CannibalizationIssues: len(r.CannibalizationRisks),
		Issues: issues, PagesFromSitemap: pages, HealthScore: ptr(42), Indexable: pages}
	return r
}

func recommendFixture() report.RecommendResult {
	r := report.RecommendResult{PlanID: "p", Domain: "example.com", ExistingKeywords: 12, SitemapPages: 30, Source: "imported"}
	for i := 3; i >= 1; i-- {
		r.Recommendations = append(r.Recommendations, report.RecommendationRecord{Priority: i, Action: "create",
			Title: fmt.Sprintf("Recommendation %d", i), TargetKeyword: "cold brew", SearchVolume: ptr(int64(1000)),
			Outline:         []analysis.Section{{H2: "What is cold brew", TalkingPoints: []string{"Define it"}}, {H2: hostile}},
			RelatedKeywords: []string{"cold brew ratio", hostile}, CompetitorPositions: map[string]int{"a.example": 2}})
	}
	r.Recommendations[0].Action, r.Recommendations[0].URL = "improve", ptr("https://example.com/"+hostile)
	r.TotalRecommendations = len(r.Recommendations)
	r.Cannibalization = []report.CannibalEntry{{Keyword: "espresso", URLs: []string{"/a", "/b"}, Recommendation: "Merge."}}
	return r
}

func contentMapFixture() report.ContentMapResult {
	g := gapsFixture()
	r := report.ContentMapResult{Domain: "example.com", GeneratedAt: "2026-11-26T00:00:00Z",
		Audit:           report.MapAudit{PagesFound: 2, Pages: []report.MapPage{{URL: "https://example.com/"}, {URL: "https://example.com/" + hostile}}},
		CurrentRankings: report.MapRankings{Count: 1, Keywords: []report.KeywordRecord{{Keyword: "coffee", Position: ptr(4), SearchVolume: ptr(int64(9000))}}},
		CompetitorGaps:  report.MapGaps{Count: len(g.Gaps), Gaps: g.Gaps},
		Recommendations: []report.MapRecommendation{{Priority: 2, Action: "create", TargetKeyword: "second"}, {Priority: 1, Action: "improve", TargetKeyword: "first", URL: ptr("https://example.com/")}},
		Warnings:        []string{hostile}}
	r.Summary = report.MapSummary{PagesFound: 2, CurrentRankings: 1, KeywordOpportunities: 7, CompetitorGaps: len(g.Gaps), Recommendations: 2}
	return r
}

// fixtures are a result of every kind of the catalogue and of a kind this build does not
// know, with their requests and meta.
func fixtures(t testing.TB) map[string][3]json.RawMessage {
	t.Helper()
	enc := func(v any) json.RawMessage {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	meta := enc(report.Meta{DataSource: "synthetic", Warnings: []string{"Made-up data: " + hostile}})
	return map[string][3]json.RawMessage{
		string(report.KindResearch):    {enc(map[string]any{"domain": "example.com", "topic": hostile}), enc(researchFixture(30)), meta},
		string(report.KindGaps):        {enc(map[string]any{"domain": "example.com", "competitors": []string{"a.example", "b.example"}}), enc(gapsFixture()), meta},
		string(report.KindAudit):       {enc(map[string]any{"domain": "www.example-coffee-shop.com"}), enc(auditFixture(30)), enc(report.Meta{DataSource: "crawl"})},
		string(report.KindRecommend):   {enc(map[string]any{"domain": "example.com", "focus_topics": []string{"coffee"}}), enc(recommendFixture()), meta},
		string(report.KindContentMap):  {enc(map[string]any{"domain": "example.com", "competitors": []string{"a.example"}}), enc(contentMapFixture()), meta},
		string(report.KindRankings):    {enc(map[string]any{"domain": "example.com"}), enc(rankingsFixture(100)), meta},
		string(report.KindCompetitors): {enc(map[string]any{"domain": "example.com"}), enc(competitorsFixture()), meta},
		"rankings:competitors": {enc(map[string]any{"domain": "example.com"}), json.RawMessage(`{"domain":"example.com","competitors":[{"domain":"a.example","shared_keywords":12,"tags":["x","y"]},{"domain":"` +
			strings.ReplaceAll(hostile, `"`, `\"`) + `","shared_keywords":3}],"summary":{"total":2,"nested":{"deep":[1,2,3]}},"empty":null}`), nil},
	}
}

func newTestDashboard(t testing.TB) *Dashboard {
	t.Helper()
	d, err := New(Deps{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Every kind renders as a report (the unknown one as a generic view, not raw JSON), with
// its data source and warnings, and every crawled or imported string escaped.
func TestReportsRenderEveryKindEscaped(t *testing.T) {
	d := newTestDashboard(t)
	want := map[string][]string{
		string(report.KindResearch): {`data-kind="research"`, "<svg", "coffee keyword 9", `class="sortable data"`, "Show the numbers"},
		string(report.KindGaps):     {`data-kind="gaps"`, `<circle`, `class="easy"`, `<th scope="col" data-type="num">a.example</th>`, `id="easy-wins"`},
		string(report.KindAudit): {`data-kind="audit"`, `id="health-score">42<`, `<details class="issue`, `id="pages-table"`, `id="changes"`, "Thin content (30)", "Cannibalization (20)",
			`<a href="/dashboard/shared/issues/` + audit.Checks()[0].Type + `?token=x">All 30 listed URLs</a>`,
			// The offending text beside each URL: the duplicated title, the description.
			`<th scope="col">Title</th>`, `<td class="offending">“Brewing guide 1: how to brew better coffee at home”</td>`,
			`<th scope="col">Meta description</th>`, `<td class="offending">“A guide.”</td>`, `<th scope="col">Broken URL</th>`},
		string(report.KindRecommend):  {`data-kind="recommend"`, "Outline (2 sections)", "cold brew ratio", `<span class="prio">3</span> <span class="action action-improve">`},
		string(report.KindContentMap): {`data-kind="contentmap"`, `id="map-summary"`, "Keyword opportunities", `<circle`},
		string(report.KindRankings): {`data-kind="rankings"`, `id="rankings-table"`, "Positions 1–3", "12,345", ">1.25<", "of 1,234 shown", "example.com ranks for 1,234 keywords in US",
			"your imported keyword data", `>/blog/coffee-keyword-7?x=1</td>`},
		string(report.KindCompetitors): {`data-kind="competitors"`, `id="competitors-table"`, "Keywords shared with example.com", ">25%<", "3 domains share ranked keywords"},
		"rankings:competitors":         {`data-kind="generic"`, "Shared keywords", "<dl class=\"facts\">", "Rankings: competitors"},
	}
	for kind, f := range fixtures(t) {
		t.Run(kind, func(t *testing.T) {
			var b bytes.Buffer
			if err := d.writeReport(&b, kind, f[0], f[1], f[2]); err != nil {
				t.Fatal(err)
			}
			html := b.String()
			for _, w := range append(want[kind], "&lt;script&gt;") {
				if !strings.Contains(html, w) {
					t.Errorf("no %q in the page", w)
				}
			}
			for _, bad := range []string{"<script>alert", "<img src=x", `"domain":`, "contentapi_session"} {
				if strings.Contains(html, bad) {
					t.Errorf("the page holds %q", bad)
				}
			}
			if f[2] != nil && !strings.Contains(html, `id="data-source"`) {
				t.Error("no data source")
			}
		})
	}
}

// The recommendations and the content map's plan are shown in priority order.
func TestReportsPlanInPriorityOrder(t *testing.T) {
	d := newTestDashboard(t)
	f := fixtures(t)
	for _, kind := range []string{string(report.KindRecommend), string(report.KindContentMap)} {
		var b bytes.Buffer
		if err := d.writeReport(&b, kind, f[kind][0], f[kind][1], f[kind][2]); err != nil {
			t.Fatal(err)
		}
		first, second := "Recommendation 1", "Recommendation 2"
		if kind == string(report.KindContentMap) {
			first, second = ">first<", ">second<"
		}
		if i, j := strings.Index(b.String(), first), strings.Index(b.String(), second); i < 0 || j < 0 || i > j {
			t.Errorf("%s: %q at %d, %q at %d", kind, first, i, second, j)
		}
	}
}

func TestSubjectOf(t *testing.T) {
	for req, want := range map[string]string{
		`{"domain":"a.com","topic":"coffee"}`:                               "a.com · “coffee”",
		`{"domain":"a.com","competitors":["b.com","c.com"]}`:                "a.com · vs b.com, c.com",
		`{"domain":"a.com","keywords":["k1","k2","k3","k4","k5"]}`:          "a.com · k1, k2, k3 and 2 more",
		`{"domain":"a.com","focus_topics":["tea"],"competitors":["b.com"]}`: "a.com · tea · vs b.com",
		`{}`:       "",
		`not json`: "",
	} {
		if got := subjectOf(json.RawMessage(req)); got != want {
			t.Errorf("%s: %q, want %q", req, got, want)
		}
	}
}

// An issue shows its first issueItemsShown URLs and says how many more are listed and how
// many are not.
func TestIssueViewBounds(t *testing.T) {
	r := auditFixture(500)
	iv := newIssueView(r.Issues[1], "", issueItemsShown)
	if len(iv.Shown) != issueItemsShown || iv.More != audit.MaxItems-issueItemsShown || iv.Unlisted != 500-audit.MaxItems {
		t.Fatalf("shown %d, more %d, unlisted %d", len(iv.Shown), iv.More, iv.Unlisted)
	}
	r.Issues[1].Items = nil // URLs only
	if iv := newIssueView(r.Issues[1], "", 1000); len(iv.Shown) != audit.MaxItems || iv.More != 0 || iv.Shown[0].URL != r.Issues[1].URLs[0] {
		t.Fatalf("from URLs: shown %d, more %d", len(iv.Shown), iv.More)
	}
}

// Position bands are drawn in numeric order; counts are written with their noun.
func TestRankingsBandsAndPlurals(t *testing.T) {
	v := newRankingsView(rankingsFixture(3))
	var got []string
	for _, b := range v.Chart.Bars {
		got = append(got, b.Label+"="+strconv.FormatInt(b.Value, 10))
	}
	if want := "Positions 1–3=40 Positions 4–10=300 Positions 11–20=200 Positions 21–50=400 Positions 51–100=294"; strings.Join(got, " ") != want {
		t.Errorf("bands %q, want %q", strings.Join(got, " "), want)
	}
	if v.Traffic != 1000+999+998 || v.Top10 != 340 || v.Rows[2].Path != "/blog/coffee-keyword-2?x=1" || v.Source != "your imported keyword data" {
		t.Errorf("traffic %d, top 10 %d, path %q, source %q", v.Traffic, v.Top10, v.Rows[2].Path, v.Source)
	}
	for n, want := range map[int]string{0: "0 clusters", 1: "1 cluster", 13: "13 clusters", 1200: "1,200 clusters"} {
		if got := plural(n, "cluster"); got != want {
			t.Errorf("plural(%d) = %q, want %q", n, got, want)
		}
	}
	if plural(1, "recommendation") != "1 recommendation" || plural(2, "body") != "2 bodies" || plural(2, "key") != "2 keys" {
		t.Error("plural of recommendation, body, key")
	}
	if kindName(string(report.KindGaps)) != "Keyword gaps" || kindName(string(report.KindAudit)) != "Site audit" || kindName("x:y_z") != "X: y z" {
		t.Error("kind names")
	}
}

// Bars and dots stay inside their charts; the tallest bar spans the bar area; easy wins are
// difficulty under 30 with volume at least the median, and unknown metrics draw no dot.
func TestReportCharts(t *testing.T) {
	ch := newBarChart("t", "Cluster", "Volume", []string{"a", "b", "a cluster with a very long name indeed"}, []int64{100, 0, 50})
	if ch.Height != 3*barRow || ch.Bars[0].W != barChartW-barLabelW-barValueRom || ch.Bars[1].W != 0 || ch.Bars[2].W != ch.Bars[0].W/2 {
		t.Fatalf("bars %+v", ch.Bars)
	}
	if ch.Bars[2].Full != "a cluster with a very long name indeed" || len([]rune(ch.Bars[2].Label)) != 20 || ch.Bars[0].Percent != "67%" {
		t.Fatalf("labels %+v", ch.Bars[2])
	}
	g := gapsFixture()
	v := newGapsView(g.Domain, g.Competitors, g.Gaps)
	if v.Competitors[0] != "a.example" || len(v.Rows) != len(g.Gaps) || len(v.Plot.Points) != len(g.Gaps)-1 {
		t.Fatalf("competitors %v, rows %d, points %d", v.Competitors, len(v.Rows), len(v.Plot.Points))
	}
	easy := 0
	for _, r := range v.Rows {
		want := r.Difficulty != nil && *r.Difficulty < easyDifficulty && *r.SearchVolume >= v.MedianVol
		if r.Easy != want {
			t.Errorf("%s: easy %v", r.Keyword, r.Easy)
		}
		if r.Easy {
			easy++
		}
	}
	if easy == 0 || easy != v.EasyWins {
		t.Fatalf("easy wins %d, counted %d", v.EasyWins, easy)
	}
	p := v.Plot
	for _, pt := range p.Points {
		if pt.X < float64(p.Left) || pt.X > float64(p.Width) || pt.Y < float64(p.PlotTop) || pt.Y > float64(p.Height-p.Bottom) {
			t.Errorf("%s outside the plot: %+v", pt.Keyword, pt)
		}
	}
	if last := p.Points[len(p.Points)-1]; !last.Easy {
		t.Error("easy wins are not drawn last (on top)")
	}
}

// An issue's own page shows what is wrong on each page where the audit has it: the
// duplicated title beside each URL of duplicate_title.
func TestIssuePageShowsTheOffendingText(t *testing.T) {
	r := auditFixture(30)
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	ip, ok, err := newIssuePage(string(report.KindAudit), nil, raw, audit.DuplicateTitle)
	if err != nil || !ok {
		t.Fatalf("%v %v", ok, err)
	}
	if ip.Issue.TextHead != "Title" || len(ip.Issue.Texts) != len(ip.Issue.Shown) || ip.Issue.Texts[2] != r.Pages[2].Title {
		t.Fatalf("head %q, texts %q", ip.Issue.TextHead, ip.Issue.Texts)
	}
	if ip, _, _ := newIssuePage(string(report.KindAudit), nil, raw, audit.BrokenInternalLink); ip.Issue.TextHead != "" {
		t.Fatalf("a broken link shows a page text: %q", ip.Issue.TextHead)
	}
}

// A research cluster is named by what its keywords share, not by its strongest keyword.
func TestClusterTopic(t *testing.T) {
	for _, c := range []struct {
		name     string
		keywords []string
		want     string
	}{
		{"cold brew coffee", []string{"cold brew coffee", "how to make cold brew", "cold brew ratio", "nitro cold brew", "cold brew vs iced coffee", "best coffee for cold brew"}, "cold brew"},
		{"espresso machine", []string{"espresso machine", "best espresso machine", "espresso machine deals", "how to clean an espresso machine"}, "espresso machine"},
		{"v60 recipe", []string{"v60 recipe", "chemex vs v60", "pour over ratio"}, "v60"},
		{"alpha", []string{"alpha", "beta", "gamma"}, "alpha"},
		{"how to", []string{"how to", "how to x"}, "how to"},
		{"single", []string{"single"}, "single"},
	} {
		if got := clusterTopic(c.name, c.keywords); got != c.want {
			t.Errorf("clusterTopic(%q) = %q, want %q", c.keywords, got, c.want)
		}
	}
}
