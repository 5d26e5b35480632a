package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/crawler"
	"github.com/contentapi/contentapi/internal/keywords"
)

// The "au" market belongs to the content map tests: matcha and other teas.
var auOnce sync.Once

func auMarket(t *testing.T) {
	t.Helper()
	auOnce.Do(func() {
		addKeywords(t, "au",
			kw{"matcha latte", 5000, 35, 1.1, ""},
			kw{"matcha powder", 3000, 40, 1.5, "transactional"},
			kw{"matcha benefits", 2000, 20, 0.3, ""},
			kw{"how to make matcha", 1500, 15, 0.2, ""},
			kw{"ceremonial matcha", 800, 30, 1.8, ""},
			kw{"hojicha", 600, 10, 0, ""},
			kw{"genmaicha", 0, 0, 0, ""}, // metrics unknown: null, never 0
		)
	})
}

// mapData gives a domain three rankings and a competitor four, two of them gaps.
func mapData(t *testing.T, domainKey, competitorKey string) {
	mapDomainData(t, domainKey)
	addRanking(t, competitorKey, "au", "matcha latte", 1, "")
	addRanking(t, competitorKey, "au", "matcha powder", 4, "")
	addRanking(t, competitorKey, "au", "hojicha", 2, "")
	addRanking(t, competitorKey, "au", "genmaicha", 5, "")
}

func mapDomainData(t *testing.T, domainKey string) {
	addRanking(t, domainKey, "au", "matcha powder", 3, "")
	addRanking(t, domainKey, "au", "matcha latte", 12, "")
	addRanking(t, domainKey, "au", "ceremonial matcha", 25, "")
}

func mapSite(t *testing.T) *testSite {
	s := newTestSite(t)
	s.page("/", page{title: "Leaf & Co", words: 300})
	s.page("/matcha-powder", page{title: "Matcha Powder Guide | Leaf & Co", words: 900})
	s.page("/teaware", page{title: "Teaware | Leaf & Co", words: 150})
	s.sitemap("/", "/matcha-powder", "/teaware", "/gone")
	return s
}

func mapRequest(t *testing.T, r ContentMapRequest) ContentMapRequest {
	t.Helper()
	if r.Country == "" {
		r.Country = "au"
	}
	return *normalized(t, &r)
}

// checkSummary fails unless the summary repeats the sections' counts.
func checkSummary(t *testing.T, res ContentMapResult) {
	t.Helper()
	want := MapSummary{PagesFound: res.Audit.PagesFound, CurrentRankings: res.CurrentRankings.Count,
		KeywordOpportunities: res.Summary.KeywordOpportunities, CompetitorGaps: res.CompetitorGaps.Count,
		Recommendations: len(res.Recommendations)}
	if res.Summary != want || res.Audit.PagesFound != len(res.Audit.Pages) {
		t.Errorf("summary = %+v, want %+v (audit lists %d pages)", res.Summary, want, len(res.Audit.Pages))
	}
}

func TestContentMap(t *testing.T) {
	t.Parallel()
	auMarket(t)
	b := newBuilder(t)
	s := mapSite(t)
	competitor, competitorKey := deadDomain(t) // the map does not crawl competitors
	mapData(t, s.key(), competitorKey)

	res, err := b.ContentMap(context.Background(), mapRequest(t, ContentMapRequest{Domain: s.domain(),
		FocusTopics: []string{"matcha"}, Competitors: []string{competitor}, BrandContext: "Leaf & Co sells loose-leaf tea."}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Domain != s.domain() || res.GeneratedAt != "2026-03-14T09:30:00Z" {
		t.Errorf("domain %q, generated_at %q", res.Domain, res.GeneratedAt)
	}
	var urls []string
	for _, p := range res.Audit.Pages {
		urls = append(urls, p.URL)
	}
	if want := []string{s.abs("/"), s.abs("/matcha-powder"), s.abs("/teaware")}; !slices.Equal(urls, want) {
		t.Errorf("audit pages = %v, want %v (the 404 is not a page)", urls, want)
	}

	var ranked []string
	for _, k := range res.CurrentRankings.Keywords {
		ranked = append(ranked, k.Keyword+"@"+itoaPtr(k.Position))
	}
	if want := []string{"matcha powder@3", "matcha latte@12", "ceremonial matcha@25"}; res.CurrentRankings.Count != 3 || !slices.Equal(ranked, want) {
		t.Errorf("current_rankings = %d %v, want 3 %v", res.CurrentRankings.Count, ranked, want)
	}

	if res.CompetitorGaps.Count != 2 || len(res.CompetitorGaps.Gaps) != 2 {
		t.Fatalf("competitor_gaps = %+v, want hojicha and genmaicha", res.CompetitorGaps)
	}
	for _, g := range res.CompetitorGaps.Gaps {
		switch g.Keyword {
		case "hojicha":
			if g.SearchVolume == nil || *g.SearchVolume != 600 || g.CompetitorPositions[competitorKey] != 2 {
				t.Errorf("gap %+v", g)
			}
		case "genmaicha":
			if g.SearchVolume != nil || g.Difficulty != nil {
				t.Errorf("gap %+v: unknown metrics must stay null", g)
			}
		default:
			t.Errorf("unexpected gap %q", g.Keyword)
		}
	}

	// Ideas for "matcha" (5) are the distinct keywords considered: the 2 gaps are not on
	// the focus topic.
	if res.Summary.KeywordOpportunities != 5 {
		t.Errorf("keyword_opportunities = %d, want 5", res.Summary.KeywordOpportunities)
	}
	var recs []string
	for i, r := range res.Recommendations {
		recs = append(recs, r.TargetKeyword)
		if r.Priority != i+1 || r.SearchIntent == "" || r.OpportunityScore != nil && *r.OpportunityScore < 1 {
			t.Errorf("recommendation %d = %+v", i, r)
		}
		// genmaicha has no metric: no score, and last.
		if (r.OpportunityScore == nil) != (r.TargetKeyword == "genmaicha") || r.OpportunityScore == nil && i != len(res.Recommendations)-1 {
			t.Errorf("recommendation %d = %+v: only the keyword without metrics has no score, and it comes last", i, r)
		}
	}
	if len(recs) == 0 || slices.Contains(recs, "matcha powder") {
		t.Errorf("recommendations %q: want some, never matcha powder (ranked #3, and a page covers it)", recs)
	}
	checkSummary(t, res)
	if len(res.Warnings) != 1 || !strings.HasPrefix(res.Warnings[0], fmt.Sprintf("only %d of the 20 recommendations asked for are on the focus topics (matcha)", len(recs))) {
		t.Errorf("warnings = %q, want the focus topic's shortfall", res.Warnings)
	}

	// JSON: exactly the documented fields (docs/api.md) plus warnings; the map's recommendation shape.
	m := toJSON(t, res)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"audit", "competitor_gaps", "current_rankings", "domain", "generated_at", "recommendations", "summary", "warnings"}; !slices.Equal(keys, want) {
		t.Errorf("keys = %v, want %v", keys, want)
	}
	if got := jsonKeys(t, m["summary"]); !slices.Equal(got, []string{"competitor_gaps", "current_rankings", "keyword_opportunities", "pages_found", "recommendations"}) {
		t.Errorf("summary keys = %v", got)
	}
	if got := jsonKeys(t, m["audit"]); !slices.Equal(got, []string{"pages", "pages_found"}) {
		t.Errorf("audit keys = %v", got)
	}
	var sections struct {
		Audit struct {
			Pages []json.RawMessage `json:"pages"`
		} `json:"audit"`
		Rankings struct {
			Keywords []json.RawMessage `json:"keywords"`
		} `json:"current_rankings"`
		Gaps struct {
			Gaps []json.RawMessage `json:"gaps"`
		} `json:"competitor_gaps"`
		Recs []json.RawMessage `json:"recommendations"`
	}
	raw, _ := json.Marshal(res)
	_ = json.Unmarshal(raw, &sections)
	if got := jsonKeys(t, sections.Audit.Pages[0]); !slices.Equal(got, []string{"url"}) {
		t.Errorf("audit page keys = %v", got)
	}
	hasKeys(t, "ranking", sections.Rankings.Keywords[0], "keyword", "search_volume", "keyword_difficulty", "position")
	hasKeys(t, "gap", sections.Gaps.Gaps[0], "keyword", "search_volume", "keyword_difficulty")
	if got := jsonKeys(t, sections.Recs[0]); !slices.Equal(got, []string{"action", "cpc", "keyword_difficulty", "opportunity_score", "priority", "search_intent", "search_volume", "target_keyword", "url"}) {
		t.Errorf("recommendation keys = %v", got)
	}
}

// TestContentMapSample builds a map from the synthetic sample set: a local site given the
// rankings of coffee-sample.example, against brewguide-sample.example, with no focus topic
// (ideas are seeded from the rankings).
func TestContentMapSample(t *testing.T) {
	t.Parallel()
	b := newBuilder(t)
	s := newTestSite(t)
	s.page("/", page{title: "Coffee Sample", words: 500})
	s.sitemap("/")
	ctx := context.Background()
	_, err := db(t).Exec(ctx, `
		INSERT INTO domain_rankings (domain, keyword, country, language, position, url, source)
		SELECT $1, keyword, country, language, position, url, 'test' FROM domain_rankings
		WHERE domain = 'coffee-sample.example'`, s.key())
	if err != nil {
		t.Fatal(err)
	}
	var ranked, gaps int
	_ = db(t).QueryRow(ctx, `SELECT count(*) FROM domain_rankings WHERE domain = $1`, s.key()).Scan(&ranked)
	g, err := b.Keywords.Gaps(ctx, keywords.GapsRequest{Domain: s.key(), Competitors: []string{"brewguide-sample.example"}, Country: "us", Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	gaps = g.Total
	if ranked == 0 || gaps == 0 {
		t.Fatalf("sample data: %d rankings, %d gaps", ranked, gaps)
	}

	b.Crawler = crawler.New(crawler.Config{AllowPrivate: true}) // competitors are never crawled by the map
	res, err := b.ContentMap(ctx, mapRequest(t, ContentMapRequest{Domain: s.domain(), Country: "us",
		Competitors: []string{"brewguide-sample.example"}}))
	if err != nil {
		t.Fatal(err)
	}
	if res.CurrentRankings.Count != ranked || len(res.CurrentRankings.Keywords) != min(ranked, mapRankings) {
		t.Errorf("current_rankings: count %d (%d listed), want %d", res.CurrentRankings.Count, len(res.CurrentRankings.Keywords), ranked)
	}
	if res.CompetitorGaps.Count != gaps || len(res.CompetitorGaps.Gaps) != min(gaps, mapGaps) {
		t.Errorf("competitor_gaps: count %d (%d listed), want %d", res.CompetitorGaps.Count, len(res.CompetitorGaps.Gaps), gaps)
	}
	if len(res.Recommendations) == 0 || len(res.Recommendations) > 20 {
		t.Errorf("%d recommendations, want 1 to 20 (default limit)", len(res.Recommendations))
	}
	if res.Summary.KeywordOpportunities < gaps {
		t.Errorf("keyword_opportunities = %d, want at least the %d gaps", res.Summary.KeywordOpportunities, gaps)
	}
	prev := 0
	for _, k := range res.CurrentRankings.Keywords {
		if k.Position == nil || *k.Position < prev {
			t.Fatalf("current rankings not by position: %v after %d", deref(k.Position), prev)
		}
		prev = *k.Position
	}
	checkSummary(t, res)
}

func TestContentMapCapsLists(t *testing.T) {
	t.Parallel()
	b := newBuilder(t)
	domain, key := deadDomain(t)
	_, err := db(t).Exec(context.Background(), `
		INSERT INTO domain_rankings (domain, keyword, country, language, position, url, source)
		SELECT $1, 'filler keyword ' || n, 'in', 'en', n, NULL, 'test' FROM generate_series(1, 130) AS n`, key)
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.ContentMap(context.Background(), mapRequest(t, ContentMapRequest{Domain: domain, Country: "in"}))
	if err != nil {
		t.Fatal(err)
	}
	if res.CurrentRankings.Count != 130 || len(res.CurrentRankings.Keywords) != 100 || *res.CurrentRankings.Keywords[99].Position != 100 {
		t.Errorf("current_rankings: count %d, %d listed; want 130 and the best 100", res.CurrentRankings.Count, len(res.CurrentRankings.Keywords))
	}
	// Unknown metrics of keywords the keyword table lacks stay null.
	if k := res.CurrentRankings.Keywords[0]; k.SearchVolume != nil || k.Difficulty != nil || k.CPC != nil {
		t.Errorf("ranking %+v: want null metrics", k)
	}
	checkSummary(t, res)
}

func TestContentMapDegrades(t *testing.T) {
	t.Parallel()
	auMarket(t)
	b := newBuilder(t)
	s := mapSite(t)
	dead, deadKey := deadDomain(t)
	competitor, competitorKey := deadDomain(t)
	mapData(t, s.key(), competitorKey)
	mapDomainData(t, deadKey)
	ctx := context.Background()

	t.Run("site unreachable", func(t *testing.T) {
		res, err := b.ContentMap(ctx, mapRequest(t, ContentMapRequest{Domain: dead, FocusTopics: []string{"matcha"}, Competitors: []string{competitor}}))
		if err != nil {
			t.Fatal(err)
		}
		if res.Audit.PagesFound != 0 || res.Audit.Pages == nil || !containsAny(res.Warnings, dead+" could not be reached") {
			t.Errorf("audit %+v, warnings %q", res.Audit, res.Warnings)
		}
		if res.CurrentRankings.Count != 3 || res.CompetitorGaps.Count != 2 || len(res.Recommendations) == 0 {
			t.Errorf("other sections missing: %+v", res.Summary)
		}
		checkSummary(t, res)
	})

	t.Run("refused domain", func(t *testing.T) {
		b2 := *b
		b2.Crawler = crawler.New(crawler.Config{})
		res, err := b2.ContentMap(ctx, mapRequest(t, ContentMapRequest{Domain: s.domain(), FocusTopics: []string{"matcha"}}))
		if err != nil {
			t.Fatal(err)
		}
		if res.Audit.PagesFound != 0 || !containsAny(res.Warnings, "private or reserved") || res.CurrentRankings.Count != 3 {
			t.Errorf("summary %+v, warnings %q", res.Summary, res.Warnings)
		}
	})

	t.Run("gaps fail", func(t *testing.T) {
		b2 := *b
		b2.Keywords = failingProvider{Provider: b.Keywords, gaps: errRefused}
		res, err := b2.ContentMap(ctx, mapRequest(t, ContentMapRequest{Domain: s.domain(), FocusTopics: []string{"matcha"}, Competitors: []string{competitor}}))
		if err != nil {
			t.Fatal(err)
		}
		if res.CompetitorGaps.Count != 0 || res.CompetitorGaps.Gaps == nil || !containsAny(res.Warnings, "gap data is unavailable") {
			t.Errorf("competitor_gaps %+v, warnings %q", res.CompetitorGaps, res.Warnings)
		}
		if res.Audit.PagesFound != 3 || res.CurrentRankings.Count != 3 || len(res.Recommendations) == 0 {
			t.Errorf("other sections missing: %+v", res.Summary)
		}
		checkSummary(t, res)
	})

	t.Run("rankings fail", func(t *testing.T) {
		b2 := *b
		b2.Keywords = failingProvider{Provider: b.Keywords, ranked: errOutage}
		res, err := b2.ContentMap(ctx, mapRequest(t, ContentMapRequest{Domain: s.domain(), FocusTopics: []string{"matcha"}}))
		if err != nil {
			t.Fatal(err)
		}
		if res.CurrentRankings.Count != 0 || res.CurrentRankings.Keywords == nil || !containsAny(res.Warnings, "ranking data is unavailable") {
			t.Errorf("current_rankings %+v, warnings %q", res.CurrentRankings, res.Warnings)
		}
		checkSummary(t, res)
	})

	t.Run("everything fails", func(t *testing.T) {
		b2 := *b
		b2.Keywords = failingProvider{Provider: b.Keywords, ranked: errOutage, gaps: errOutage, ideas: errRefused}
		_, err := b2.ContentMap(ctx, mapRequest(t, ContentMapRequest{Domain: dead, FocusTopics: []string{"matcha"}, Competitors: []string{competitor}}))
		if err == nil || errors.Is(err, keywords.ErrPermanent) || errors.Is(err, crawler.ErrSiteUnreachable) {
			t.Errorf("err = %v, want a temporary error (the outage may pass)", err)
		}
		if _, ok := apperr.As(err); ok {
			t.Errorf("err = %v, want no application error", err)
		}
	})

	t.Run("provider refuses everything", func(t *testing.T) {
		b2 := *b
		b2.Keywords = failingProvider{Provider: b.Keywords, ranked: errRefused, gaps: errRefused, ideas: errRefused}
		_, err := b2.ContentMap(ctx, mapRequest(t, ContentMapRequest{Domain: s.domain(), FocusTopics: []string{"matcha"}, Competitors: []string{competitor}}))
		if !errors.Is(err, keywords.ErrPermanent) {
			t.Errorf("err = %v, want the provider's permanent error although the crawl worked", err)
		}
	})
}

func TestMapFailure(t *testing.T) {
	crawlErr := &siteError{domain: "x.com", err: crawler.ErrSiteUnreachable}
	for _, c := range []struct {
		name      string
		g         gathered
		fails     bool
		permanent bool
	}{
		{"all well", gathered{gapsTried: true, ideasTried: true}, false, false},
		{"crawl only", gathered{siteErr: crawlErr}, false, false},
		{"rankings only, nothing else tried", gathered{rankedErr: errOutage}, false, false},
		{"crawl and rankings, nothing else tried", gathered{siteErr: crawlErr, rankedErr: errOutage}, true, false},
		{"all but ideas", gathered{siteErr: crawlErr, rankedErr: errOutage, gapsTried: true, gapsErr: errOutage, ideasTried: true}, false, false},
		{"all, mixed", gathered{siteErr: crawlErr, rankedErr: errRefused, gapsTried: true, gapsErr: errOutage}, true, false},
		{"all, permanent", gathered{siteErr: crawlErr, rankedErr: errRefused, gapsTried: true, gapsErr: errRefused}, true, true},
		{"provider permanent, crawl fine", gathered{rankedErr: errRefused, ideasTried: true, ideasErr: errRefused}, true, true},
		{"provider partly permanent", gathered{rankedErr: errRefused, ideasTried: true}, false, false},
	} {
		err := c.g.mapFailure("x.com")
		if (err != nil) != c.fails || errors.Is(err, keywords.ErrPermanent) != c.permanent {
			t.Errorf("%s: err = %v, want fails %v, permanent %v", c.name, err, c.fails, c.permanent)
		}
		if err != nil && !strings.Contains(err.Error(), "x.com") {
			t.Errorf("%s: err = %v does not name the domain", c.name, err)
		}
	}
}

func TestRunContentMap(t *testing.T) {
	t.Parallel()
	auMarket(t)
	b := newBuilder(t)
	s := mapSite(t)
	out, err := b.Run(context.Background(), string(KindContentMap), "job-9", []byte(`{"domain":"`+s.domain()+`","country":"au","focus_topics":["matcha"],"limit":2}`))
	if err != nil {
		t.Fatal(err)
	}
	res, ok := out.(ContentMapResult)
	if !ok || len(res.Recommendations) != 2 || res.Audit.PagesFound != 3 {
		t.Errorf("Run = %#v", out)
	}
	if _, err := b.Run(context.Background(), string(KindContentMap), "job-9", []byte(`{"domain":`)); !errors.Is(err, ErrBadJob) {
		t.Errorf("broken request: err = %v, want ErrBadJob", err)
	}
}

func itoaPtr(p *int) string {
	if p == nil {
		return "null"
	}
	return strconv.Itoa(*p)
}
