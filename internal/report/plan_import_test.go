package report

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/contentapi/contentapi/internal/analysis"
	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/keywords/importer"
)

// The "in" market belongs to these tests: a keyword tool's export loaded through the
// importer, as a user would with ctl import, with a coffee site's case (focus topics
// cold brew and french press among matcha, decaf and espresso gaps; a site ranking #8 for
// best french press and #10 for latte vs cappuccino) and the gardening topics.
const inKeywordsCSV = `Keyword,Search Volume,Keyword Difficulty,CPC,Intent
cold brew coffee,40500,45,1.1,informational
how to make cold brew,9900,30,0.6,informational
cold brew ratio,4400,22,0.4,informational
how long to steep cold brew,2900,18,0.3,informational
cold brew concentrate,3600,28,0.7,informational
cold brew coffee maker,6600,40,1.5,commercial
french press,33100,50,0.9,informational
best french press,8100,42,1.4,commercial
how to use a french press,12100,25,0.4,informational
french press coffee ratio,5400,20,0.3,informational
latte vs cappuccino,14800,20,0.2,commercial
how to make iced coffee,18100,30,0.3,informational
matcha latte,49500,40,0.9,informational
decaf coffee,22200,35,0.8,informational
espresso machine price,3600,30,2.1,transactional
espresso machine,90500,70,1.8,commercial
best espresso machine,40500,65,2.4,commercial
vegetable garden layout,6600,25,0.5,informational
gardening tips for beginners,8100,20,0.4,informational
raised garden bed ideas,9900,22,0.6,informational
container gardening,5400,18,0.5,informational
how to start a vegetable garden,12100,30,0.4,informational
indoor herb garden,4400,26,0.9,informational
home office ideas,14800,35,1.2,informational
work from home setup,5400,30,1.0,informational
`

var inOnce sync.Once

// inMarket imports the keyword file, and each test imports its own site's rankings.
func inMarket(t *testing.T) {
	t.Helper()
	inOnce.Do(func() {
		rep, err := importer.ImportKeywords(context.Background(), db(t), strings.NewReader(inKeywordsCSV),
			importer.Options{Country: "in", Language: "en", Source: "semrush"})
		if err != nil || rep.Loaded != strings.Count(inKeywordsCSV, "\n")-1 {
			t.Fatalf("import keywords: %+v %v", rep, err)
		}
	})
}

// importRankings loads "keyword,domain,position,path" rows (path made absolute on the
// domain's site when it starts with "/").
func importRankings(t *testing.T, rows ...string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("Keyword,Domain,Position,URL\n")
	for _, r := range rows {
		b.WriteString(r + "\n")
	}
	rep, err := importer.ImportRankings(context.Background(), db(t), strings.NewReader(b.String()),
		importer.Options{Country: "in", Language: "en", Source: "semrush"})
	if err != nil || rep.Loaded != len(rows) {
		t.Fatalf("import rankings: %+v %v", rep, err)
	}
}

// coffeeSite is the coffee site: an espresso guide ranking #1–2, a brewing methods
// page in striking distance, a summer page far down for cold brew; its competitor (which
// does not answer) ranks for matcha, decaf, the espresso machine price and cold brew.
func coffeeSite(t *testing.T) (site *testSite, competitor string) {
	t.Helper()
	inMarket(t)
	site = newTestSite(t)
	site.page("/", page{title: "Bean Lab", h1: "Coffee at home", words: 300})
	site.page("/espresso-machines", page{title: "Espresso Machines | Bean Lab", h1: "Espresso machines", words: 1500})
	site.page("/blog/brewing-methods", page{title: "Brewing Methods | Bean Lab", h1: "Brewing methods", words: 1800,
		h2s: []string{"Latte vs cappuccino at a glance", "French press basics"}})
	site.page("/blog/summer-coffee", page{title: "Summer Coffee | Bean Lab", h1: "Summer coffee", words: 900})
	site.sitemap("/", "/espresso-machines", "/blog/brewing-methods", "/blog/summer-coffee")
	competitor, competitorKey := deadDomain(t)
	d := site.key()
	importRankings(t,
		"espresso machine,"+d+",1,"+site.abs("/espresso-machines"),
		"best espresso machine,"+d+",2,"+site.abs("/espresso-machines"),
		"how to use a french press,"+d+",6,"+site.abs("/blog/brewing-methods"),
		"best french press,"+d+",8,"+site.abs("/blog/brewing-methods"),
		"latte vs cappuccino,"+d+",10,"+site.abs("/blog/brewing-methods"),
		"how to make iced coffee,"+d+",12,"+site.abs("/blog/brewing-methods"),
		"cold brew coffee,"+d+",20,"+site.abs("/blog/summer-coffee"),
		"how long to steep cold brew,"+d+",43,"+site.abs("/blog/summer-coffee"),
		"matcha latte,"+competitorKey+",3,",
		"decaf coffee,"+competitorKey+",5,",
		"espresso machine price,"+competitorKey+",4,",
		"cold brew ratio,"+competitorKey+",6,",
		"cold brew coffee maker,"+competitorKey+",7,",
		"french press coffee ratio,"+competitorKey+",5,",
	)
	return site, competitor
}

func inRecommend(t *testing.T, r RecommendRequest) RecommendResult {
	t.Helper()
	r.Country = "in"
	res, err := newBuilder(t).Recommend(context.Background(), recommendRequest(t, r), "plan")
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func limit(n int) *int { return &n }

// Focus topics are honoured: every recommendation is on one of them; asked for more than
// the data has, the plan is shorter and a warning says so.
func TestPlanFocusTopicsHonoured(t *testing.T) {
	t.Parallel()
	site, competitor := coffeeSite(t)
	focus := []string{"cold brew", "french press"}
	for _, n := range []int{5, 20} {
		res := inRecommend(t, RecommendRequest{Domain: site.domain(), FocusTopics: focus, Competitors: []string{competitor}, Limit: limit(n)})
		got := targets(res.Recommendations)
		t.Logf("limit %d: %q", n, got)
		for _, k := range got {
			if analysis.MatchTopics(k, focus, "en") == analysis.OffTopic {
				t.Errorf("limit %d: %q is on neither focus topic", n, k)
			}
		}
		if containsAny(got, "matcha") || containsAny(got, "decaf") || containsAny(got, "espresso") {
			t.Errorf("limit %d: off-topic gaps recommended: %q", n, got)
		}
		short := slices.ContainsFunc(res.Warnings, func(w string) bool {
			return strings.HasPrefix(w, fmt.Sprintf("only %d of the %d recommendations asked for are on the focus topics (cold brew, french press)", len(got), n))
		})
		switch {
		case len(got) == n && short:
			t.Errorf("limit %d: a full plan warns %q", n, res.Warnings)
		case len(got) < n && !short:
			t.Errorf("limit %d: %d recommendations without the focus warning: %q", n, len(got), res.Warnings)
		}
	}
	// Limit 5 is filled: the market has more on-topic candidates (cold brew: 6 keywords,
	// french press: 4); limit 20 is not.
	if res := inRecommend(t, RecommendRequest{Domain: site.domain(), FocusTopics: focus, Limit: limit(5)}); len(res.Recommendations) != 5 {
		t.Errorf("limit 5: %q", targets(res.Recommendations))
	}
}

// Without focus topics the plan starts from the striking-distance keywords, with the page
// to improve; no new article is proposed for a keyword the site ranks for. One page gets one
// improvement, carrying every keyword it is to be improved for.
func TestPlanStrikingDistance(t *testing.T) {
	t.Parallel()
	site, competitor := coffeeSite(t)
	res := inRecommend(t, RecommendRequest{Domain: site.domain(), Competitors: []string{competitor}, Limit: limit(10)})
	got := targets(res.Recommendations)
	for _, r := range res.Recommendations {
		t.Logf("%d %s %q %v #%v %q", r.Priority, r.Action, r.TargetKeyword, deref(r.URL), deref(r.CurrentPosition), r.RelatedKeywords)
	}
	if len(got) < 5 || len(got) > 10 {
		t.Errorf("got %d recommendations for limit 10", len(got))
	}
	brewing := site.abs("/blog/brewing-methods")
	want := map[string]int{"latte vs cappuccino": 10, "best french press": 8, "how to use a french press": 6, "how to make iced coffee": 12}
	ranked := map[string]bool{"espresso machine": true, "best espresso machine": true, "cold brew coffee": true, "how long to steep cold brew": true}
	for k := range want {
		ranked[k] = true
	}
	pages := map[string]int{}
	for _, r := range res.Recommendations {
		if r.Action == "improve" && r.URL != nil {
			pages[*r.URL]++
		}
		if r.URL != nil && *r.URL == brewing {
			pos, ok := want[r.TargetKeyword]
			if !ok || r.Action != "improve" || r.CurrentPosition == nil || *r.CurrentPosition != pos {
				t.Errorf("%q: action %q position %v, want the improvement of %s for a striking-distance keyword", r.TargetKeyword, r.Action, deref(r.CurrentPosition), brewing)
			}
			for k := range want {
				if k == r.TargetKeyword || slices.Contains(r.RelatedKeywords, k) {
					delete(want, k)
				}
			}
		}
		if r.TargetKeyword == "espresso machine" || r.TargetKeyword == "best espresso machine" {
			t.Errorf("recommended %q, which the site ranks #1–2 for", r.TargetKeyword)
		}
		if r.Action == "create" {
			if ranked[r.TargetKeyword] || r.URL != nil {
				t.Errorf("new article for %q (url %v): the site ranks for it", r.TargetKeyword, r.URL)
			}
			for _, rel := range r.RelatedKeywords {
				if ranked[rel] {
					t.Errorf("new article for %q lists %q, which a page of the site ranks for", r.TargetKeyword, rel)
				}
			}
		}
		if r.Action == "improve" && (r.URL == nil || !strings.HasPrefix(*r.URL, site.URL)) {
			t.Errorf("improvement of %q names no page of the site: %v", r.TargetKeyword, r.URL)
		}
	}
	for url, n := range pages {
		if n > 1 {
			t.Errorf("%s has %d improvements, want one", url, n)
		}
	}
	if len(want) > 0 {
		t.Errorf("striking-distance keywords not carried by the improvement of %s: %v", brewing, want)
	}
	// The improvement names the page's standing and which of its sections exist already.
	if i := slices.Index(got, "latte vs cappuccino"); i >= 0 {
		o := res.Recommendations[i].Outline
		first := strings.Join(o[0].TalkingPoints, " ")
		if o[0].H2 != "Latte vs Cappuccino at a Glance" || !strings.Contains(first, "Improve /blog/brewing-methods, which ranks #10") ||
			!strings.Contains(first, "has a section on this already") {
			t.Errorf("latte vs cappuccino: first section %+v", o[0])
		}
		if last := o[len(o)-1]; !strings.Contains(strings.Join(last.TalkingPoints, " "), "no section on this yet") {
			t.Errorf("latte vs cappuccino: last section %+v", last)
		}
	}

	// The content map's plan follows the same rules.
	m, err := newBuilder(t).ContentMap(context.Background(), mapRequest(t, ContentMapRequest{Domain: site.domain(), Country: "in",
		Competitors: []string{competitor}, Limit: limit(10)}))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range m.Recommendations {
		if r.TargetKeyword == "latte vs cappuccino" {
			found = r.Action == "improve" && r.URL != nil && *r.URL == brewing
		}
		if r.Action == "create" && ranked[r.TargetKeyword] {
			t.Errorf("content map: new article for %q, which the site ranks for", r.TargetKeyword)
		}
	}
	if !found {
		t.Errorf("content map: no improvement of %s for latte vs cappuccino: %+v", brewing, m.Recommendations)
	}
}

// A topic of several words is matched by its words: "home gardening", which no keyword
// holds whole, finds the gardening keywords in research and as a focus topic, and never
// "home office ideas".
func TestPlanMultiWordTopic(t *testing.T) {
	t.Parallel()
	inMarket(t)
	b := newBuilder(t)
	research := func(topic string) []string {
		r := ResearchRequest{Domain: "example.com", Topic: topic, Country: "in"}
		if err := r.Normalize(Options{}); err != nil {
			t.Fatal(err)
		}
		res, err := b.Research(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range res.Clusters {
			for _, k := range c.Keywords {
				out = append(out, k.Keyword)
			}
		}
		return out
	}
	phrase, word := research("home gardening"), research("gardening")
	if len(word) != 6 || len(phrase) < len(word) {
		t.Errorf("home gardening %q, gardening %q", phrase, word)
	}
	if containsAny(phrase, "office") || containsAny(phrase, "work from home") {
		t.Errorf("home gardening: %q holds keywords of the modifier alone", phrase)
	}
	// As a focus topic: the six gardening keywords, less the two the site already ranks #1–2
	// for; the warning says why the plan is short.
	site := newTestSite(t)
	site.page("/", page{title: "Green Patch", words: 300})
	site.sitemap("/")
	importRankings(t, "raised garden bed ideas,"+site.key()+",1,"+site.abs("/raised-beds"),
		"container gardening,"+site.key()+",2,"+site.abs("/containers"))
	res := inRecommend(t, RecommendRequest{Domain: site.domain(), FocusTopics: []string{"home gardening"}, Limit: limit(10)})
	got := targets(res.Recommendations)
	if len(got) != 4 || containsAny(got, "office") || containsAny(got, "raised garden bed ideas") {
		t.Errorf("focus home gardening: %q", got)
	}
	want := "only 4 of the 10 recommendations asked for are on the focus topics (home gardening): the keyword data for market in/en has 6 keywords on them, 2 of which the domain already ranks #1–3 for"
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.HasPrefix(w, want) }) {
		t.Errorf("warnings %q, want %q", res.Warnings, want)
	}
}

// A site that already ranks #1–3 for every keyword of its focus topic, with no
// cannibalization, gets no recommendation: that is NO_DATA (refunded by the job path),
// saying why and which focus_topics to try, not a charged empty plan.
func TestPlanOwnedTopicIsNoData(t *testing.T) {
	t.Parallel()
	inMarket(t)
	site := newTestSite(t)
	site.page("/", page{title: "Garden Owners", words: 300})
	site.sitemap("/")
	var rows []string
	for i, k := range []string{"vegetable garden layout", "gardening tips for beginners", "raised garden bed ideas",
		"container gardening", "how to start a vegetable garden", "indoor herb garden"} {
		rows = append(rows, fmt.Sprintf("%s,%s,%d,%s", k, site.key(), 1+i%3, site.abs(fmt.Sprintf("/p%d", i))))
	}
	importRankings(t, rows...)
	r := RecommendRequest{Domain: site.domain(), FocusTopics: []string{"home gardening"}, Limit: limit(10), Country: "in"}
	res, err := newBuilder(t).Recommend(context.Background(), recommendRequest(t, r), "plan")
	e, ok := apperr.As(err)
	if !ok || e.Code != apperr.NoData {
		t.Fatalf("owned topic: %v, %+v", err, res.Recommendations)
	}
	for _, want := range []string{"No recommendation is on the focus topics (home gardening)", "6 of which the domain already ranks #1–3 for",
		"Try focus_topics", "Nothing was charged."} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("message %q lacks %q", e.Message, want)
		}
	}
}
