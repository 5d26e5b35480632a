package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/crawler"
	"github.com/contentapi/contentapi/internal/keywords"
)

// The "uk" market belongs to the recommend tests: coffee keywords about pour over, moka
// pots, espresso machines and chemex.
var ukOnce sync.Once

func ukMarket(t *testing.T) {
	t.Helper()
	ukOnce.Do(func() {
		addKeywords(t, "uk",
			kw{"pour over coffee", 2400, 22, 0.8, "informational"},
			kw{"pour over coffee ratio", 590, 15, 0.4, ""},
			kw{"how to make pour over coffee", 880, 18, 0.5, ""},
			kw{"best pour over kettle", 720, 30, 1.2, "commercial"},
			kw{"moka pot", 2900, 25, 0.6, ""},
			kw{"how to use a moka pot", 1000, 12, 0.3, ""},
			kw{"espresso machine", 6600, 60, 1.9, "commercial"},
			kw{"best espresso machine", 3000, 65, 2.4, "commercial"},
			kw{"chemex recipe", 1300, 20, 0, ""},
		)
	})
}

var ukPlanTopics = []string{"pour over", "moka pot", "espresso machine"}

const brand = "Acme Coffee is a small-batch roaster in Portland."

// recommendSites are the domain (an espresso-machine guide, two cold brew pages with one
// title; it ranks #2 for "moka pot") and a competitor whose pour over pages have headings.
func recommendSites(t *testing.T) (site, competitor *testSite) {
	site = newTestSite(t)
	site.page("/", page{title: "Acme Coffee", h1: "Small-batch coffee", words: 300})
	site.page("/espresso-machines", page{title: "Espresso Machine Buying Guide | Acme", h1: "Choosing an espresso machine", words: 1500})
	site.page("/guides/cold-brew", page{title: "Cold Brew Coffee Guide | Acme", h1: "Cold brew coffee", words: 1200})
	site.page("/blog/cold-brew", page{title: "Cold Brew Coffee Guide | Acme", h1: "Cold brew at home", words: 500})
	site.sitemap("/", "/espresso-machines", "/guides/cold-brew", "/blog/cold-brew")
	addRanking(t, site.key(), "uk", "moka pot", 2, site.abs("/moka"))
	addRanking(t, site.key(), "uk", "cold brew coffee", 4, site.abs("/guides/cold-brew"))

	competitor = newTestSite(t)
	competitor.page("/pour-over-coffee-guide", page{title: "Pour Over Coffee Guide", h1: "Pour over coffee",
		words: 900, h2s: []string{"Choosing a Gooseneck Kettle", "Grind Size for Pour Over", "Leave a comment"}})
	competitor.page("/blog/pour-over-tips", page{title: "Pour over tips", h1: "Better pour over coffee",
		words: 700, h2s: []string{"Choosing a Gooseneck Kettle", "Water Temperature"}})
	competitor.page("/about", page{title: "About us", h1: "Who we are", words: 200, h2s: []string{"Choosing a Gooseneck Kettle"}})
	competitor.sitemap("/pour-over-coffee-guide", "/blog/pour-over-tips", "/about")
	addRanking(t, competitor.key(), "uk", "pour over coffee", 3, competitor.abs("/pour-over-coffee-guide"))
	addRanking(t, competitor.key(), "uk", "chemex recipe", 6, competitor.abs("/chemex"))
	return site, competitor
}

func recommendRequest(t *testing.T, r RecommendRequest) RecommendRequest {
	t.Helper()
	if r.Country == "" {
		r.Country = "uk"
	}
	return *normalized(t, &r)
}

func targets(recs []RecommendationRecord) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.TargetKeyword
	}
	return out
}

func TestRecommendPlan(t *testing.T) {
	t.Parallel()
	ukMarket(t)
	b := newBuilder(t)
	site, competitor := recommendSites(t)
	res, err := b.Recommend(context.Background(), recommendRequest(t, RecommendRequest{Domain: site.domain(),
		FocusTopics: ukPlanTopics, BrandContext: brand, Competitors: []string{competitor.domain()}}), "plan-42")
	if err != nil {
		t.Fatal(err)
	}
	got := targets(res.Recommendations)
	t.Logf("recommendations: %q", got)

	if res.PlanID != "plan-42" || res.Domain != site.domain() || res.ExistingKeywords != 2 || res.SitemapPages != 4 {
		t.Errorf("plan_id %q, domain %q, existing_keywords %d, sitemap_pages %d; want plan-42, %s, 2, 4",
			res.PlanID, res.Domain, res.ExistingKeywords, res.SitemapPages, site.domain())
	}
	if res.TotalRecommendations != len(res.Recommendations) || len(res.Recommendations) == 0 {
		t.Fatalf("total_recommendations = %d for %d recommendations", res.TotalRecommendations, len(res.Recommendations))
	}
	for i, r := range res.Recommendations {
		if r.Priority != i+1 {
			t.Errorf("recommendation %d has priority %d", i, r.Priority)
		}
		if r.Title == "" || r.SearchIntent == "" || r.OpportunityScore == nil || *r.OpportunityScore < 1 || len(r.Outline) < 3 || r.SearchVolume == nil {
			t.Errorf("recommendation %q is incomplete: %+v", r.TargetKeyword, r)
		}
	}

	// Ranked #2 for "moka pot": never a new moka article, the /moka page covers the topic. An
	// existing page covers espresso machines: improve it.
	for _, r := range res.Recommendations {
		switch {
		case r.TargetKeyword == "moka pot":
			t.Errorf("recommended %q: the domain ranks #2 for it", r.TargetKeyword)
		case strings.Contains(r.TargetKeyword, "moka") && (r.Action != "improve" || r.URL == nil || *r.URL != site.abs("/moka")):
			t.Errorf("%q: action %s url %v, want improve %s", r.TargetKeyword, r.Action, r.URL, site.abs("/moka"))
		case strings.Contains(r.TargetKeyword, "espresso machine") && (r.Action != "improve" || r.URL == nil || *r.URL != site.abs("/espresso-machines")):
			t.Errorf("%q: action %s url %v, want improve %s", r.TargetKeyword, r.Action, r.URL, site.abs("/espresso-machines"))
		case strings.Contains(r.TargetKeyword, "pour over") && (r.Action != "create" || r.URL != nil):
			t.Errorf("%q: action %s url %v, want create: no page covers pour over", r.TargetKeyword, r.Action, r.URL)
		}
	}
	// Focus topics steer: the boosted pour over keyword leads.
	if got[0] != "pour over coffee" {
		t.Errorf("first recommendation = %q, want pour over coffee", got[0])
	}
	// Focus topics are honoured: the competitor gap chemex recipe is on none of them.
	if slices.Contains(got, "chemex recipe") {
		t.Errorf("recommendations %q hold the off-topic gap chemex recipe", got)
	}

	po := res.Recommendations[0]
	var h2s []string
	var points []string
	for _, s := range po.Outline {
		h2s = append(h2s, s.H2)
		points = append(points, s.TalkingPoints...)
	}
	// Competitor headings flow into the outline: the kettle heading on both matching pages
	// (not the unrelated /about page), the grind heading sharing a word with the target.
	i := slices.Index(h2s, "Choosing a Gooseneck Kettle")
	if i < 0 {
		t.Fatalf("outline %q lacks the competitors' recurring heading", h2s)
	}
	if !containsAny(po.Outline[i].TalkingPoints, "Covered by 2 competing pages") {
		t.Errorf("talking points %q, want the two competing pages noted", po.Outline[i].TalkingPoints)
	}
	if containsAny(h2s, "comment") {
		t.Errorf("outline %q adopted boilerplate", h2s)
	}
	if po.CompetitorPositions[competitor.key()] != 3 {
		t.Errorf("competitor_positions = %v, want %s at 3", po.CompetitorPositions, competitor.key())
	}
	if !containsAny(points, competitor.key()+" (#3)") {
		t.Errorf("talking points %q do not name the competitor's position", points)
	}
	if !slices.Contains(po.RelatedKeywords, "how to make pour over coffee") || !slices.Contains(po.RelatedKeywords, "pour over coffee ratio") {
		t.Errorf("related_keywords = %q", po.RelatedKeywords)
	}

	// brand_context: in a talking point of every outline, and in the "best" title.
	for _, r := range res.Recommendations {
		var pts []string
		for _, s := range r.Outline {
			pts = append(pts, s.TalkingPoints...)
		}
		if !containsAny(pts, "Acme Coffee") {
			t.Errorf("outline of %q never mentions the brand", r.TargetKeyword)
		}
	}
	k := slices.IndexFunc(res.Recommendations, func(r RecommendationRecord) bool { return r.TargetKeyword == "best pour over kettle" })
	if k < 0 {
		t.Fatalf("no recommendation for best pour over kettle in %q", got)
	}
	if title := res.Recommendations[k].Title; title != "Best Pour Over Kettle in 2026: Tested and Compared (from the Acme Coffee team)" {
		t.Errorf("title = %q", title)
	}

	// Cannibalization: site-relative paths with concrete advice.
	if len(res.Cannibalization) != 1 {
		t.Fatalf("cannibalization = %+v, want the two cold brew pages", res.Cannibalization)
	}
	c := res.Cannibalization[0]
	if c.Keyword != "cold brew coffee guide" || !slices.Equal(c.URLs, []string{"/blog/cold-brew", "/guides/cold-brew"}) ||
		!strings.HasPrefix(c.Recommendation, "Keep /guides/cold-brew (ranks #4 for “cold brew coffee”") ||
		!strings.Contains(c.Recommendation, "301-redirect /blog/cold-brew to /guides/cold-brew") {
		t.Errorf("cannibalization = %+v", c)
	}
	// The market holds fewer on-topic topics than the limit (10): the answer says so, and
	// that the charge follows the items delivered.
	if len(res.Warnings) != 1 || !strings.HasPrefix(res.Warnings[0], fmt.Sprintf("only %d of the 10 recommendations asked for are on the focus topics (pour over, moka pot, espresso machine)", len(got))) ||
		!strings.HasSuffix(res.Warnings[0], fmt.Sprintf("the plan is charged for the %d delivered (3 credits per started 2)", len(got))) {
		t.Errorf("warnings = %q, want the focus topics' shortfall", res.Warnings)
	}
}

// TestRecommendSparseDomain: a domain with no rankings whose site does not answer still gets
// a plan from its focus topics, and the topics the first test's domain owns are
// recommended here (the exclusions there came from that domain's data).
func TestRecommendSparseDomain(t *testing.T) {
	t.Parallel()
	ukMarket(t)
	b := newBuilder(t)
	domain, _ := deadDomain(t)
	res, err := b.Recommend(context.Background(), recommendRequest(t, RecommendRequest{Domain: domain,
		FocusTopics: ukPlanTopics, BrandContext: brand}), "plan-sparse")
	if err != nil {
		t.Fatal(err)
	}
	got := targets(res.Recommendations)
	for _, want := range []string{"moka pot", "espresso machine", "pour over coffee"} {
		if !slices.Contains(got, want) {
			t.Errorf("recommendations %q lack %q", got, want)
		}
	}
	if res.ExistingKeywords != 0 || res.SitemapPages != 0 || len(res.Cannibalization) != 0 {
		t.Errorf("existing_keywords %d, sitemap_pages %d, cannibalization %v; want 0, 0, []", res.ExistingKeywords, res.SitemapPages, res.Cannibalization)
	}
	if !containsAny(res.Warnings, "could not be reached") {
		t.Errorf("warnings = %q, want the unreachable site noted", res.Warnings)
	}
	if slices.Contains(got, "chemex recipe") {
		t.Errorf("chemex recipe recommended without competitors or a topic for it")
	}
}

func TestRecommendFocusTopicsSteer(t *testing.T) {
	t.Parallel()
	ukMarket(t)
	b := newBuilder(t)
	domain, _ := deadDomain(t)
	for _, c := range []struct {
		topic, about, never string
	}{
		{"moka pot", "moka", "pour over"},
		{"pour over", "pour over", "moka"},
	} {
		res, err := b.Recommend(context.Background(), recommendRequest(t, RecommendRequest{Domain: domain, FocusTopics: []string{c.topic}}), "p")
		if err != nil {
			t.Fatal(err)
		}
		got := targets(res.Recommendations)
		if len(got) == 0 || !strings.Contains(got[0], c.about) || containsAny(got, c.never) {
			t.Errorf("focus %q: recommendations %q", c.topic, got)
		}
	}
}

func TestRecommendFromRankingsWithoutTopics(t *testing.T) {
	t.Parallel()
	b := newBuilder(t)
	addKeywords(t, "ca",
		kw{"aeropress recipe", 1600, 20, 0.5, ""},
		kw{"aeropress coffee", 1200, 25, 0.6, ""},
		kw{"inverted aeropress method", 300, 10, 0, ""},
		kw{"aeropress vs french press", 700, 15, 0.4, ""},
	)
	site := newTestSite(t)
	site.page("/", page{title: "Brew Lab", words: 400})
	site.sitemap("/")
	addRanking(t, site.key(), "ca", "aeropress recipe", 9, site.abs("/aeropress"))
	res, err := b.Recommend(context.Background(), recommendRequest(t, RecommendRequest{Domain: site.domain(), Country: "ca"}), "p")
	if err != nil {
		t.Fatal(err)
	}
	got := targets(res.Recommendations)
	if len(got) == 0 || !containsAny(got, "aeropress vs french press") {
		t.Errorf("recommendations %q, want ideas seeded from the domain's rankings", got)
	}
	i := slices.Index(got, "aeropress recipe")
	if i >= 0 {
		if p := res.Recommendations[i].CurrentPosition; p == nil || *p != 9 {
			t.Errorf("current_position of aeropress recipe = %v, want 9", deref(p))
		}
	}
	if res.ExistingKeywords != 1 {
		t.Errorf("existing_keywords = %d, want 1", res.ExistingKeywords)
	}

	// Nothing to start from: no topic, no ranking, no competitor.
	domain, _ := deadDomain(t)
	_, err = b.Recommend(context.Background(), recommendRequest(t, RecommendRequest{Domain: domain, Country: "ca"}), "p")
	if e, ok := apperr.As(err); !ok || e.Code != apperr.NoData || !strings.Contains(e.Message, "focus_topics") {
		t.Errorf("err = %v, want NO_DATA advising focus_topics", err)
	}
}

func TestRecommendDegradesAndFails(t *testing.T) {
	t.Parallel()
	ukMarket(t)
	b := newBuilder(t)
	site, competitor := recommendSites(t)
	dead, _ := deadDomain(t)

	// A competitor that does not answer: its headings are missing, the plan is made.
	res, err := b.Recommend(context.Background(), recommendRequest(t, RecommendRequest{Domain: site.domain(),
		FocusTopics: []string{"pour over"}, Competitors: []string{dead, competitor.domain()}}), "p")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Recommendations) == 0 || !containsAny(res.Warnings, "competitor "+dead+" could not be reached") {
		t.Errorf("recommendations %q, warnings %q", targets(res.Recommendations), res.Warnings)
	}

	// Gap data failing: a warning.
	b2 := *b
	b2.Keywords = failingProvider{Provider: b.Keywords, gaps: errOutage}
	res, err = b2.Recommend(context.Background(), recommendRequest(t, RecommendRequest{Domain: site.domain(),
		FocusTopics: []string{"pour over"}, Competitors: []string{competitor.domain()}}), "p")
	if err != nil || len(res.Recommendations) == 0 || !containsAny(res.Warnings, "gap data is unavailable") {
		t.Errorf("err %v, warnings %q", err, res.Warnings)
	}

	// Ranking data failing: the call fails (owned keywords could be recommended), with the
	// provider's error kept for the job runner.
	b2.Keywords = failingProvider{Provider: b.Keywords, ranked: errRefused}
	_, err = b2.Recommend(context.Background(), recommendRequest(t, RecommendRequest{Domain: site.domain(), FocusTopics: []string{"pour over"}}), "p")
	if !errors.Is(err, keywords.ErrPermanent) {
		t.Errorf("err = %v, want the provider's permanent error", err)
	}
	// Ideas failing for every topic fails too.
	b2.Keywords = failingProvider{Provider: b.Keywords, ideas: errOutage}
	_, err = b2.Recommend(context.Background(), recommendRequest(t, RecommendRequest{Domain: site.domain(), FocusTopics: []string{"pour over"}}), "p")
	if !errors.Is(err, errOutage) {
		t.Errorf("err = %v, want the ideas outage", err)
	}
}

func TestRecommendJSONShape(t *testing.T) {
	t.Parallel()
	ukMarket(t)
	b := newBuilder(t)
	site, _ := recommendSites(t)
	out, err := b.Run(context.Background(), string(KindRecommend), "job-7", []byte(`{"domain":"`+site.domain()+`","country":"uk","focus_topics":["pour over"],"limit":2}`))
	if err != nil {
		t.Fatal(err)
	}
	m := toJSON(t, out)
	for _, k := range []string{"plan_id", "domain", "existing_keywords", "sitemap_pages", "recommendations", "cannibalization", "total_recommendations"} {
		if _, ok := m[k]; !ok {
			t.Errorf("key %q missing", k)
		}
	}
	if string(m["plan_id"]) != `"job-7"` {
		t.Errorf("plan_id = %s, want the job id", m["plan_id"])
	}
	var recs []json.RawMessage
	_ = json.Unmarshal(m["recommendations"], &recs)
	if len(recs) != 2 || string(m["total_recommendations"]) != "2" {
		t.Fatalf("recommendations = %d, total %s; want limit 2", len(recs), m["total_recommendations"])
	}
	hasKeys(t, "recommendation", recs[0], "priority", "title", "target_keyword", "search_volume", "keyword_difficulty",
		"opportunity_score", "search_intent", "outline", "related_keywords")
	var rec struct {
		Outline []json.RawMessage `json:"outline"`
	}
	_ = json.Unmarshal(recs[0], &rec)
	if got := jsonKeys(t, rec.Outline[0]); !slices.Equal(got, []string{"h2", "talking_points"}) {
		t.Errorf("outline item keys = %v", got)
	}
	var cann []json.RawMessage
	_ = json.Unmarshal(m["cannibalization"], &cann)
	if len(cann) != 1 {
		t.Fatalf("cannibalization = %s", m["cannibalization"])
	}
	if got := jsonKeys(t, cann[0]); !slices.Equal(got, []string{"keyword", "recommendation", "urls"}) {
		t.Errorf("cannibalization keys = %v", got)
	}
}

func TestHeadingIndex(t *testing.T) {
	pages := []crawler.Page{
		{FinalURL: "https://c.com/guides/cold-brew-coffee", Title: "Guide", H2s: []string{"A"}},
		{FinalURL: "https://c.com/p/1", Title: "Cold brew ratio explained", H1: "Ratio", H2s: []string{"B"}},
		{FinalURL: "https://c.com/p/2", Title: "Coffee", H1: "Brewing cold", H2s: []string{"C"}},
		{FinalURL: "https://c.com/about", Title: "About", H2s: []string{"D"}},
	}
	x := newHeadingIndex(pages, "en")
	for _, c := range []struct {
		keyword string
		want    []string
	}{
		{"cold brew coffee", []string{"A", "C"}},            // URL words; title + H1
		{"cold brew", []string{"A", "B", "C"}},              // both stems everywhere but /about
		{"cold brew coffee ratio", []string{"A", "B", "C"}}, // 3 of 4 stems suffice
		{"french press", nil},
		{"the", nil}, // a stopword alone still has a stem: no page carries it
	} {
		if got := x.h2sFor(c.keyword); !slices.Equal(got, c.want) {
			t.Errorf("h2sFor(%q) = %q, want %q", c.keyword, got, c.want)
		}
	}
	if got := pathWords("https://x.com/blog/cold-brew_ratio.html?x=1"); strings.Join(strings.Fields(got), " ") != "blog cold brew ratio html" {
		t.Errorf("pathWords = %q", got)
	}
}
