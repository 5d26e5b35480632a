package analysis

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/contentapi/contentapi/internal/keywords"
)

func cand(k keywords.Keyword, cluster ...keywords.Keyword) Candidate {
	return Candidate{Keyword: k, Cluster: append([]keywords.Keyword{k}, cluster...)}
}

func targets(recs []Recommendation) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.TargetKeyword.Keyword)
	}
	return out
}

func TestRecommendActions(t *testing.T) {
	cands := []Candidate{
		cand(kwvd("cold brew coffee", 40000, 40)),
		cand(kwvd("cold brew ratio", 3000, 20)),
		cand(kwvd("iced coffee recipe", 9000, 30)),
		cand(kwvd("french press", 12000, 35)),
		cand(kwvd("espresso tamper", 800, 10)),
		cand(kwvd("moka pot", 5000, 30)),
	}
	site := Site{
		Rankings: []keywords.Ranking{
			rank("Cold Brew Coffee", 40000, 2, "https://acme.com/cold-brew"), // top 3: dropped
			rank("french press", 12000, 9, "https://acme.com/fp-guide"),      // striking distance
			rank("french press", 12000, 7, "https://acme.com/fp"),            // its best URL
			rank("moka pot", 5000, 45, "https://acme.com/brewing"),           // ranks, far down
		},
		Pages: []SitePage{
			{URL: "https://acme.com/summer", Title: "Iced Coffee Recipes for Summer | Acme", // covers "iced coffee recipe"
				H2s: []string{"Iced coffee recipes explained simply", "Serving ideas"}},
			{URL: "https://acme.com/about", Title: "About Acme", H1: "Who we are"},
		},
	}
	got := Recommend(cands, site, "", nil, 0)
	type want struct {
		target, action, url string
		pos                 int
	}
	var gotRows []want
	for _, r := range got {
		gotRows = append(gotRows, want{r.TargetKeyword.Keyword, r.Action, r.URL, r.Position})
	}
	wantRows := []want{
		{"french press", ActionImprove, "https://acme.com/fp", 7},
		{"moka pot", ActionImprove, "https://acme.com/brewing", 45},
		{"iced coffee recipe", ActionImprove, "https://acme.com/summer", 0},
		{"cold brew ratio", ActionCreate, "", 0},
		{"espresso tamper", ActionCreate, "", 0},
	}
	if !reflect.DeepEqual(gotRows, wantRows) {
		t.Fatalf("got  %v\nwant %v", gotRows, wantRows)
	}
	if *got[0].OpportunityScore != mustScore(t, cands[3].Keyword, 7) {
		t.Errorf("french press: score %d; want the site's position 7 in the score", *got[0].OpportunityScore)
	}
	if p := got[0].Outline[0].TalkingPoints[0]; !strings.Contains(p, "/fp, which ranks #7") {
		t.Errorf("an improvement's first point names the page and its position: %q", p)
	}
	// The summer page was crawled: the improvement's sections say which it has already.
	var marks []string
	for _, sec := range got[2].Outline {
		marks = append(marks, sec.H2+": "+sec.TalkingPoints[len(sec.TalkingPoints)-1])
	}
	if want := []string{
		"Iced Coffee Recipe Explained: The page has a section on this already: deepen it rather than adding another.",
		"Common Mistakes to Avoid: The page has no section on this yet: add it.",
		"Key Takeaways: The page has no section on this yet: add it.",
	}; !slices.Equal(marks, want) {
		t.Errorf("marks %q, want %q", marks, want)
	}
	for _, sec := range got[0].Outline {
		if strings.Contains(strings.Join(sec.TalkingPoints, " "), "The page has") {
			t.Errorf("/fp was not crawled, yet %q is marked", sec.H2)
		}
	}
	if p := got[3].Outline[0].TalkingPoints[0]; strings.Contains(p, "Improve") {
		t.Errorf("a new article is not an improvement: %q", p)
	}
	for i, r := range got {
		if r.Priority != i+1 {
			t.Errorf("priority %d at index %d", r.Priority, i)
		}
	}
}

// A new article never targets, lists or outlines a keyword the site ranks for with a page
// of its own; an improvement keeps the keywords of its own page.
func TestRecommendNoCannibalization(t *testing.T) {
	cluster := []keywords.Keyword{
		kwv("cold brew", 9000), kwv("how long to steep cold brew", 2000), kwv("cold brew ratio", 1500),
		kwv("cold brew concentrate", 800), kwv("is cold brew stronger than coffee", 500),
	}
	rankings := []keywords.Ranking{
		rank("cold brew", 9000, 1, "https://acme.com/cold-brew"),
		rank("how long to steep cold brew", 2000, 12, "https://acme.com/summer"),
		rank("cold brew concentrate", 800, 30, "https://acme.com/summer"),
	}
	clusters := []Cluster{{Name: "cold brew", Keywords: cluster}}
	cands := CandidatesFromClusters(clusters, nil, rankings, "en")
	if want := []string{"how long to steep cold brew", "cold brew ratio", "cold brew concentrate"}; !slices.Equal(candTargets(cands), want) {
		t.Fatalf("candidates %q, want %q (#1 left out, one new article: the strongest unranked)", candTargets(cands), want)
	}
	got := Recommend(cands, Site{Rankings: rankings}, "", nil, 0)
	for _, r := range got {
		ranked := slices.ContainsFunc(rankings, func(rk keywords.Ranking) bool { return rk.Keyword.Keyword == r.TargetKeyword.Keyword })
		if r.Action == ActionCreate && ranked {
			t.Errorf("new article for %q, which the site ranks for", r.TargetKeyword.Keyword)
		}
		if r.Action == ActionCreate {
			for _, rel := range r.Related {
				if slices.ContainsFunc(rankings, func(rk keywords.Ranking) bool { return rk.Keyword.Keyword == rel }) {
					t.Errorf("new article for %q lists %q, which another page ranks for", r.TargetKeyword.Keyword, rel)
				}
			}
			for _, s := range r.Outline {
				if strings.Contains(strings.ToLower(s.H2), "steep") || strings.Contains(strings.ToLower(s.H2), "concentrate") {
					t.Errorf("new article for %q has a section for another page's keyword: %q", r.TargetKeyword.Keyword, s.H2)
				}
			}
		}
		if r.TargetKeyword.Keyword == "how long to steep cold brew" && !slices.Contains(r.Related, "cold brew concentrate") {
			t.Errorf("the improvement of /summer should list the page's other keyword: %q", r.Related)
		}
	}
	var rows []string
	for _, r := range got {
		rows = append(rows, r.TargetKeyword.Keyword+" → "+r.Action+" "+r.URL)
	}
	// The topic is covered: the keyword no page ranks for goes to the page ranking #1 for
	// the cluster, not to a new article. One page gets one improvement, carrying all its
	// keywords (cold brew concentrate is /summer's too).
	want := []string{
		"how long to steep cold brew → improve https://acme.com/summer",
		"cold brew ratio → improve https://acme.com/cold-brew",
	}
	if !slices.Equal(rows, want) {
		t.Errorf("got  %q\nwant %q", rows, want)
	}
	if i := slices.IndexFunc(got, func(r Recommendation) bool { return r.TargetKeyword.Keyword == "cold brew ratio" }); i >= 0 {
		if p := got[i].Outline[0].TalkingPoints[0]; !strings.Contains(p, "/cold-brew, which ranks #1 for “cold brew”, a keyword of the same topic") {
			t.Errorf("first point %q", p)
		}
	}
	// A topic no page covers is a new article.
	other := CandidatesFromClusters([]Cluster{{Name: "moka pot", Keywords: []keywords.Keyword{kwv("moka pot", 900)}}}, nil, rankings, "en")
	if got := Recommend(other, Site{Rankings: rankings}, "", nil, 0); len(got) != 1 || got[0].Action != ActionCreate || got[0].URL != "" {
		t.Errorf("uncovered topic: %+v", got)
	}
}

func candTargets(cs []Candidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Keyword.Keyword)
	}
	return out
}

func TestRecommendDedupeFocusLimit(t *testing.T) {
	cands := []Candidate{
		cand(kwvd("cold brew coffees", 300, 30)),
		cand(kwvd("coffee cold brew", 5000, 30)), // same phrase, higher volume: kept
		cand(kwvd("espresso machine", 20000, 30)),
		cand(kwvd("latte art", 4000, 30)),
		cand(kwvd("moka pot", 2000, 30)),
		cand(kwvd("moka pot coffee ratio", 1000, 30)),
	}
	got := Recommend(cands, Site{}, "", nil, 0)
	if want := []string{"espresso machine", "coffee cold brew", "latte art", "moka pot", "moka pot coffee ratio"}; !slices.Equal(targets(got), want) {
		t.Fatalf("no focus: %q, want %q", targets(got), want)
	}
	// Focus topics keep only their own keywords: fewer than the limit when there are no more.
	got = Recommend(cands, Site{}, "", []string{"Moka Pots"}, 5)
	if want := []string{"moka pot", "moka pot coffee ratio"}; !slices.Equal(targets(got), want) {
		t.Fatalf("focus: %q, want %q", targets(got), want)
	}
	if *got[0].OpportunityScore != mustScore(t, cands[4].Keyword, 0) {
		t.Errorf("reported score includes the boost: %d", *got[0].OpportunityScore)
	}
	if got[0].Priority != 1 || got[1].Priority != 2 {
		t.Errorf("priorities %d, %d", got[0].Priority, got[1].Priority)
	}
	// A multi-word topic matches by its head word too, after the keywords holding all its words.
	got = Recommend(cands, Site{}, "", []string{"espresso machine", "iced coffee"}, 0)
	if want := []string{"espresso machine", "coffee cold brew", "moka pot coffee ratio"}; !slices.Equal(targets(got), want) {
		t.Errorf("focus by words: %q, want %q", targets(got), want)
	}
	got = Recommend(cands, Site{}, "", []string{"espresso"}, 1)
	if want := []string{"espresso machine"}; !slices.Equal(targets(got), want) {
		t.Errorf("focus + limit: %q, want %q", targets(got), want)
	}
	if got := Recommend(nil, Site{}, "", nil, 5); len(got) != 0 {
		t.Errorf("no candidates: %+v", got)
	}
}

func TestRecommendFields(t *testing.T) {
	target := keywords.Keyword{Keyword: "best cold brew maker", SearchVolume: i64(8100), Difficulty: f64(40), CPC: f64(1.2)}
	c := Candidate{
		Keyword: target,
		Cluster: []keywords.Keyword{
			target, kwv("cold brew maker", 9000), kwv("best cold brew makers", 10), {Keyword: "cold brew maker glass"},
			kwv("is a cold brew maker worth it", 300),
		},
		CompetitorH2s:       []string{"Cleaning a Cold Brew Maker", "How to clean a cold brew maker"},
		CompetitorPositions: map[string]int{"b.com": 7, "a.com": 3},
	}
	got := Recommend([]Candidate{c}, Site{Year: 2026}, "Acme Coffee sells cold brew kits.", nil, 10)
	if len(got) != 1 {
		t.Fatalf("got %d recommendations", len(got))
	}
	r := got[0]
	if r.Title != "Best Cold Brew Maker in 2026: Tested and Compared (from the Acme Coffee team)" {
		t.Errorf("title %q", r.Title)
	}
	if r.Intent != Commercial || *r.OpportunityScore != mustScore(t, target, 0) || r.TargetKeyword.CPC == nil {
		t.Errorf("fields %+v", r)
	}
	if want := []string{"cold brew maker", "is a cold brew maker worth it", "cold brew maker glass"}; !slices.Equal(r.Related, want) {
		t.Errorf("related %q, want %q (target and its variants excluded, by volume)", r.Related, want)
	}
	if len(r.Outline) < 3 {
		t.Fatalf("outline %q", h2s(r.Outline))
	}
	if p := strings.Join(r.Outline[0].TalkingPoints, " "); !strings.Contains(p, "a.com (#3) and b.com (#7)") {
		t.Errorf("competitor positions not in the first section: %q", p)
	}
	// Non-English sites get the keyword as the title, not English templates.
	got = Recommend([]Candidate{cand(kwv("beste kaffeemaschine", 100))}, Site{Language: "de", Year: 2026}, "", nil, 0)
	if got[0].Title != "Beste kaffeemaschine" {
		t.Errorf("German title %q", got[0].Title)
	}
}

func TestRecommendRelatedLimit(t *testing.T) {
	target := kwv("cold brew", 1000)
	var cluster []keywords.Keyword
	for _, m := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"} {
		cluster = append(cluster, kwv("cold brew "+m+"x", 10))
	}
	if got := RelatedKeywords(target, cluster, "en", MaxRelated); len(got) != MaxRelated {
		t.Errorf("got %d related, want %d", len(got), MaxRelated)
	}
}

func TestRecommendDeterministic(t *testing.T) {
	cands := []Candidate{
		cand(kwvd("cold brew coffees", 300, 30)), cand(kwvd("coffee cold brew", 300, 30)),
		cand(kwvd("espresso machine", 2000, 30)), cand(kwvd("latte art", 2000, 30)),
		cand(kwvd("moka pot", 2000, 30)), cand(kwv("aeropress", 50)), cand(keywords.Keyword{Keyword: "chemex"}),
	}
	site := Site{Rankings: []keywords.Ranking{rank("latte art", 2000, 15, "https://x.com/l")}, Year: 2026}
	want := Recommend(cands, site, "Acme", []string{"espresso"}, 0)
	for seed := range uint64(20) {
		if got := Recommend(shuffled(cands, seed), site, "Acme", []string{"espresso"}, 0); !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d: %q, want %q", seed, targets(got), targets(want))
		}
	}
}

func TestRankGaps(t *testing.T) {
	gap := func(k keywords.Keyword, pos map[string]int) keywords.Gap {
		return keywords.Gap{Keyword: k, CompetitorPositions: pos}
	}
	gaps := []keywords.Gap{
		gap(kwvd("low volume hard", 10, 90), map[string]int{"a.com": 1}),
		gap(kwvd("high volume easy", 50000, 10), map[string]int{"a.com": 5}),
		gap(kwvd("twin b", 1000, 30), map[string]int{"a.com": 5}),
		gap(kwvd("twin a", 1000, 30), map[string]int{"a.com": 5}),
		gap(kwvd("twin c", 1000, 30), map[string]int{"a.com": 9, "b.com": 4}),
		gap(keywords.Keyword{Keyword: "unknown metrics"}, nil),
	}
	in := slices.Clone(gaps)
	got := RankGaps(gaps)
	var order []string
	for _, g := range got {
		order = append(order, g.Keyword.Keyword)
	}
	want := []string{"high volume easy", "twin c", "twin a", "twin b", "low volume hard", "unknown metrics"} // no metric: no score, last
	if !slices.Equal(order, want) {
		t.Errorf("order %q, want %q", order, want)
	}
	if !reflect.DeepEqual(gaps, in) {
		t.Error("RankGaps modified its input")
	}
	for seed := range uint64(10) {
		if again := RankGaps(shuffled(gaps, seed)); !reflect.DeepEqual(again, got) {
			t.Fatalf("seed %d: order depends on input", seed)
		}
	}
}

func TestMergeKeywords(t *testing.T) {
	ideas := []keywords.Keyword{kwv("cold brew", 1000), {Keyword: "Iced Coffee", Intent: "informational"}}
	gaps := []keywords.Keyword{
		{Keyword: "cold brews", SearchVolume: i64(900), Difficulty: f64(30), CPC: f64(1)},
		{Keyword: "iced coffee", SearchVolume: i64(500)},
		{Keyword: "moka pot"},
	}
	got := MergeKeywords("en", ideas, gaps)
	if len(got) != 3 {
		t.Fatalf("got %d keywords, want 3", len(got))
	}
	if got[0].Keyword != "cold brews" || *got[0].SearchVolume != 900 || got[0].Difficulty == nil {
		t.Errorf("the version with more metrics should win: %+v", got[0])
	}
	if got[1].Keyword != "iced coffee" || *got[1].SearchVolume != 500 || got[1].Intent != "informational" {
		t.Errorf("missing fields should be filled: %+v", got[1])
	}
	if got[2].SearchVolume != nil {
		t.Error("unknown volume must stay nil")
	}
}

func TestCandidatesFromClusters(t *testing.T) {
	clusters := ClusterKeywords([]keywords.Keyword{kwv("cold brew", 1000), kwv("cold brew ratio", 100), kwv("moka pot", 500)}, ClusterOptions{})
	gaps := []keywords.Gap{{Keyword: kwv("Cold Brew", 1000), CompetitorPositions: map[string]int{"a.com": 4}}}
	got := CandidatesFromClusters(clusters, gaps, nil, "en")
	if len(got) != 2 || got[0].Keyword.Keyword != "cold brew" || len(got[0].Cluster) != 2 || got[0].CompetitorPositions["a.com"] != 4 {
		t.Errorf("candidates %+v", got)
	}
	if got[1].CompetitorPositions != nil {
		t.Errorf("no gap, no positions: %+v", got[1])
	}
	if g := GapKeywords(gaps); len(g) != 1 || g[0].Keyword != "Cold Brew" {
		t.Errorf("GapKeywords = %+v", g)
	}
}

// TestRecommendOnePagePerImprovement: several candidates improving one page make one item,
// which lists every keyword of the page first among its related keywords; the limit then
// counts distinct items, and no section repeats across items (stock sections aside).
func TestRecommendOnePagePerImprovement(t *testing.T) {
	rankings := []keywords.Ranking{
		rank("summer coffee drinks", 4000, 8, "https://acme.com/blog/summer-coffee"),
		rank("iced coffee recipe", 3000, 9, "https://acme.com/blog/summer-coffee"),
		rank("cold brew coffee", 2500, 11, "https://acme.com/blog/summer-coffee"),
		rank("iced coffee drinks", 900, 15, "https://acme.com/blog/iced-drinks"),
	}
	shared := []keywords.Keyword{kwv("how to make iced coffee at home", 700), kwv("iced coffee vs cold brew", 600)}
	var cands []Candidate
	for _, r := range rankings {
		cands = append(cands, Candidate{Keyword: r.Keyword, Cluster: append([]keywords.Keyword{r.Keyword}, shared...)})
	}
	got := Recommend(cands, Site{Rankings: rankings}, "", nil, 3)
	urls := map[string]int{}
	for _, r := range got {
		urls[r.URL]++
	}
	if len(got) != 2 || urls["https://acme.com/blog/summer-coffee"] != 1 || urls["https://acme.com/blog/iced-drinks"] != 1 {
		t.Fatalf("got %d items over %v: want one per page", len(got), urls)
	}
	first := got[0]
	for _, k := range []string{"iced coffee recipe", "cold brew coffee"} {
		if first.URL == "https://acme.com/blog/summer-coffee" && !slices.Contains(first.Related, k) {
			t.Errorf("the page's item does not carry %q: %q", k, first.Related)
		}
	}
	seen := map[string]int{}
	for i, r := range got {
		for _, s := range r.Outline {
			if j, ok := seen[s.H2]; ok && j != i && !IsStockHeading(s.H2) {
				t.Errorf("section %q repeats in items %d and %d", s.H2, j+1, i+1)
			}
			seen[s.H2] = i
		}
		if len(r.Outline) < MinSections {
			t.Errorf("item %d has %d sections, want at least %d", i+1, len(r.Outline), MinSections)
		}
	}
}

// Every recommendation's outline has at least MinSections sections, each with talking
// points, however many of its own sections higher-priority items took: comparisons sharing
// a side ("Where Latte Wins") and stock-poor targets included.
func TestRecommendOutlinesReachMinSections(t *testing.T) {
	var cands []Candidate
	for i, k := range []string{"latte vs cappuccino", "latte vs flat white", "cappuccino vs flat white", "flat white vs latte",
		"cappuccino vs latte", "latte vs cortado", "cortado vs latte", "how often to descale espresso machine",
		"how often to descale coffee maker", "cold brew", "cold brew coffee", "what is cold brew", "best cold brew maker",
		"cold brew maker", "buy cold brew maker"} {
		cands = append(cands, cand(kwvd(k, int64(10000-100*i), 20)))
	}
	recs := Recommend(cands, Site{Language: "en", Year: 2026}, "", nil, 50)
	if len(recs) < 10 {
		t.Fatalf("%d recommendations, want at least 10: %v", len(recs), targets(recs))
	}
	for _, r := range recs {
		if len(r.Outline) < MinSections {
			t.Errorf("%q: %d sections %v, want at least %d", r.TargetKeyword.Keyword, len(r.Outline), r.Outline, MinSections)
		}
		for _, s := range r.Outline {
			if len(s.TalkingPoints) == 0 {
				t.Errorf("%q: section %q has no talking point", r.TargetKeyword.Keyword, s.H2)
			}
		}
	}
}
