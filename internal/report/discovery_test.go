package report

import (
	"context"
	"strings"
	"testing"
)

// Recommend and the content map, given no competitors, compare with the domains sharing the
// most ranked keywords with the domain (competitor discovery) and say so in the warnings.
func TestPlansDiscoverCompetitors(t *testing.T) {
	t.Parallel()
	b := newBuilder(t)
	addKeywords(t, "nl",
		kw{"chai latte recipe", 2400, 20, 0.5, ""},
		kw{"masala chai", 1900, 25, 0.6, ""},
		kw{"chai tea bags", 800, 30, 0.9, ""},
		kw{"iced chai", 600, 15, 0.4, ""},
		kw{"chai concentrate", 500, 12, 0.3, ""},
	)
	site := newTestSite(t)
	site.page("/", page{title: "Chai House", words: 400})
	site.sitemap("/")
	for _, k := range []string{"chai latte recipe", "masala chai"} {
		addRanking(t, site.key(), "nl", k, 8, site.abs("/chai"))
	}
	addRanking(t, "rival-one.example", "nl", "chai latte recipe", 2, "")
	addRanking(t, "rival-one.example", "nl", "masala chai", 3, "")
	addRanking(t, "rival-one.example", "nl", "iced chai", 1, "")
	addRanking(t, "rival-two.example", "nl", "masala chai", 5, "")
	addRanking(t, "rival-two.example", "nl", "chai concentrate", 4, "")
	addRanking(t, "unrelated.example", "nl", "chai tea bags", 1, "")

	rec, err := b.Recommend(context.Background(), recommendRequest(t, RecommendRequest{Domain: site.domain(), Country: "nl"}), "p")
	if err != nil {
		t.Fatal(err)
	}
	want := "rival-one.example, rival-two.example"
	if !hasWarning(rec.Warnings, "no competitors were given", want) || !hasWarning(rec.meta.Warnings, want) {
		t.Errorf("recommend warnings %q, meta %q: want the discovered competitors %s", rec.Warnings, rec.meta.Warnings, want)
	}
	if got := targets(rec.Recommendations); !containsAny(got, "iced chai") || !containsAny(got, "chai concentrate") || containsAny(got, "chai tea bags") {
		t.Errorf("recommendations %q: want the discovered competitors' gaps, not the unrelated domain's", got)
	}

	m, err := b.ContentMap(context.Background(), mapRequest(t, ContentMapRequest{Domain: site.domain(), Country: "nl"}))
	if err != nil {
		t.Fatal(err)
	}
	if m.CompetitorGaps.Count != 2 || !hasWarning(m.Warnings, want) {
		t.Errorf("content map gaps %d (want 2: iced chai, chai concentrate), warnings %q", m.CompetitorGaps.Count, m.Warnings)
	}

	// Named competitors are used as given, without discovery.
	rec, err = b.Recommend(context.Background(), recommendRequest(t, RecommendRequest{Domain: site.domain(), Country: "nl",
		Competitors: []string{"unrelated.example"}}), "p")
	if err != nil {
		t.Fatal(err)
	}
	if hasWarning(rec.Warnings, "no competitors were given") {
		t.Errorf("warnings %q with competitors named", rec.Warnings)
	}
}

func hasWarning(ws []string, parts ...string) bool {
	for _, w := range ws {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(w, p)
		}
		if ok {
			return true
		}
	}
	return false
}
