package sample

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/contentapi/contentapi/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestDeterministic(t *testing.T) {
	k1, r1, d1 := generate()
	k2, r2, d2 := generate()
	if !reflect.DeepEqual(k1, k2) || !reflect.DeepEqual(r1, r2) || !reflect.DeepEqual(d1, d2) {
		t.Fatal("two generations differ")
	}
}

func TestPlausible(t *testing.T) {
	perTopic := map[string]int{}
	seen := map[string]bool{}
	for _, k := range Keywords() {
		perTopic[k.Topic]++
		if seen[k.Keyword] {
			t.Errorf("duplicate keyword %q", k.Keyword)
		}
		seen[k.Keyword] = true
		if k.Volume < 10 || k.Difficulty < 0 || k.Difficulty > 100 || k.CPC <= 0 || k.Competition < 0 || k.Competition > 1 {
			t.Errorf("implausible metrics: %+v", k)
		}
		if !slices.Contains([]string{"informational", "navigational", "commercial", "transactional"}, k.Intent) {
			t.Errorf("%q intent %q", k.Keyword, k.Intent)
		}
		if len(k.SERPURLs) != 10 {
			t.Errorf("%q has %d SERP URLs, want 10", k.Keyword, len(k.SERPURLs))
		}
		urls := map[string]bool{}
		for _, u := range k.SERPURLs {
			if urls[u] || !strings.HasPrefix(u, "https://") || !strings.Contains(u, ".example/") {
				t.Errorf("%q: bad or repeated SERP URL %q", k.Keyword, u)
			}
			urls[u] = true
		}
	}
	if perTopic["coffee"] < 60 {
		t.Errorf("coffee has %d keywords, want 60+", perTopic["coffee"])
	}
	for _, topic := range []string{"running shoes", "home gardening", "personal finance", "dog training", "remote work"} {
		if perTopic[topic] < 15 {
			t.Errorf("%s has %d keywords", topic, perTopic[topic])
		}
	}
	for _, kw := range []string{"cold brew coffee", "how to make cold brew", "best espresso machine", "pour over coffee ratio", "coffee grinder burr vs blade"} {
		if !seen[kw] {
			t.Errorf("sample lacks %q", kw)
		}
	}
	if k := find("how to make cold brew"); k.Intent != "informational" {
		t.Errorf("question intent %q", k.Intent)
	}
	if k := find("buy espresso machine"); k.Intent != "transactional" {
		t.Errorf("buying intent %q", k.Intent)
	}
	if k := find("best espresso machine"); k.Intent != "commercial" {
		t.Errorf("best-of intent %q", k.Intent)
	}
}

func find(kw string) Keyword {
	for _, k := range Keywords() {
		if k.Keyword == kw {
			return k
		}
	}
	return Keyword{}
}

// TestSERPOverlap: keywords of one cluster share most of their results, other clusters few.
func TestSERPOverlap(t *testing.T) {
	shared := func(a, b Keyword) int {
		n := 0
		for _, u := range a.SERPURLs {
			if slices.Contains(b.SERPURLs, u) {
				n++
			}
		}
		return n
	}
	var coldBrew, grinders []Keyword
	for _, k := range Keywords() {
		switch k.Cluster {
		case "cold-brew":
			coldBrew = append(coldBrew, k)
		case "grinders":
			grinders = append(grinders, k)
		}
	}
	for i, a := range coldBrew {
		for _, b := range coldBrew[i+1:] {
			if n := shared(a, b); n < 4 {
				t.Errorf("%q and %q share %d URLs, want 4+", a.Keyword, b.Keyword, n)
			}
		}
		for _, b := range grinders {
			if n := shared(a, b); n > 1 {
				t.Errorf("%q and %q (other cluster) share %d URLs", a.Keyword, b.Keyword, n)
			}
		}
	}
}

func TestDomains(t *testing.T) {
	ds := Domains()
	if !slices.IsSorted(ds) {
		t.Error("Domains not sorted")
	}
	for _, d := range ds {
		if !strings.HasSuffix(d, ".example") {
			t.Errorf("%q is not a reserved .example domain", d)
		}
	}
	for _, d := range []string{"coffee-sample.example", "brewguide-sample.example", "beanbox-sample.example", "runlab-sample.example"} {
		if !slices.Contains(ds, d) {
			t.Errorf("Domains lacks %s", d)
		}
	}
	// Rankings agree with the SERPs: a top-10 position is the domain's first URL there.
	byKeyword := map[string]Keyword{}
	for _, k := range Keywords() {
		byKeyword[k.Keyword] = k
	}
	seen := map[[2]string]bool{}
	for _, r := range Rankings() {
		if seen[[2]string{r.Domain, r.Keyword}] {
			t.Errorf("%s ranks twice for %q", r.Domain, r.Keyword)
		}
		seen[[2]string{r.Domain, r.Keyword}] = true
		if r.Position <= 10 && byKeyword[r.Keyword].SERPURLs[r.Position-1] != r.URL {
			t.Errorf("%s at %d for %q, but the SERP has %s there", r.Domain, r.Position, r.Keyword, byKeyword[r.Keyword].SERPURLs[r.Position-1])
		}
		if r.Position < 1 || r.Position > 50 {
			t.Errorf("position %d", r.Position)
		}
	}
}

func TestSeed(t *testing.T) {
	pool := testenv.Postgres(t)
	ctx := context.Background()
	// Start from empty tables, whatever an earlier run of this test left.
	if _, err := pool.Exec(ctx, `TRUNCATE keyword_metrics, domain_rankings`); err != nil {
		t.Fatal(err)
	}
	empty, err := IsEmpty(ctx, pool)
	if err != nil || !empty {
		t.Fatalf("IsEmpty before seeding = %v, %v", empty, err)
	}
	// A real row for a sample keyword must survive seeding.
	if _, err := pool.Exec(ctx, `INSERT INTO keyword_metrics (keyword, country, language, search_volume, source)
		VALUES ('Cold Brew Coffee', 'us', 'en', 123, 'semrush')`); err != nil {
		t.Fatal(err)
	}
	kws, rks, err := Seed(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if kws != len(Keywords())-1 || rks != len(Rankings()) {
		t.Errorf("Seed wrote %d keywords and %d rankings, want %d and %d", kws, rks, len(Keywords())-1, len(Rankings()))
	}
	kws2, rks2, err := Seed(ctx, pool) // idempotent: updates the same rows
	if err != nil || kws2 != kws || rks2 != rks {
		t.Errorf("second Seed: %d %d %v", kws2, rks2, err)
	}
	var nk, nr, synthetic int
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM keyword_metrics), (SELECT count(*) FROM domain_rankings),
		(SELECT count(*) FROM keyword_metrics WHERE synthetic AND source = 'sample')`).Scan(&nk, &nr, &synthetic); err != nil {
		t.Fatal(err)
	}
	if nk != len(Keywords()) || nr != len(Rankings()) || synthetic != len(Keywords())-1 {
		t.Errorf("stored %d keywords (%d synthetic), %d rankings", nk, synthetic, nr)
	}
	var vol int64
	var src string
	if err := pool.QueryRow(ctx, `SELECT search_volume, source FROM keyword_metrics WHERE keyword_norm = 'cold brew coffee'`).Scan(&vol, &src); err != nil || vol != 123 || src != "semrush" {
		t.Errorf("real row overwritten: %d %s %v", vol, src, err)
	}
	if empty, err := IsEmpty(ctx, pool); err != nil || empty {
		t.Errorf("IsEmpty after seeding = %v, %v", empty, err)
	}
	// Gaps exist between the coffee sites.
	var gaps int
	if err := pool.QueryRow(ctx, `SELECT count(DISTINCT keyword_norm) FROM domain_rankings r
		WHERE domain IN ('brewguide-sample.example', 'beanbox-sample.example')
		  AND NOT EXISTS (SELECT 1 FROM domain_rankings o WHERE o.domain = 'coffee-sample.example' AND o.keyword_norm = r.keyword_norm)`).Scan(&gaps); err != nil {
		t.Fatal(err)
	}
	if gaps < 10 {
		t.Errorf("only %d gaps for coffee-sample.example", gaps)
	}
}
