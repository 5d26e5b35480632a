package httpapi_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/contentapi/contentapi/internal/keywords/importer"
	"github.com/contentapi/contentapi/internal/testenv"
)

// The mixed market of these tests, ca/en (no other test uses it): one keyword and one
// site's rankings loaded as the sample set loads its rows (synthetic), the rest imported.
const mixedCountry = "ca"

func importMixed(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	pool := testenv.Postgres(t)
	made := importer.Options{Country: mixedCountry, Language: "en", Source: "sample", Synthetic: true}
	real := importer.Options{Country: mixedCountry, Language: "en", Source: "test-export"}
	for _, f := range []struct {
		opts     importer.Options
		keywords bool
		csv      string
	}{
		{made, true, "Keyword,Search Volume,KD,CPC (USD)\nmixed brew kettle,5000,30,1.20\n"},
		{real, true, "Keyword,Search Volume,KD,CPC (USD)\nmixed brew scale,4000,20,0.80\n"},
		{made, false, "domain,keyword,position,url\nmixed-made.example,mixed brew kettle,2,https://mixed-made.example/k\n" +
			"mixed-made.example,mixed brew scale,4,https://mixed-made.example/s\n"},
		{real, false, "domain,keyword,position,url\nmixed-real.example,mixed brew kettle,3,https://mixed-real.example/k\n" +
			"mixed-real.example,mixed brew scale,5,https://mixed-real.example/s\n" +
			"mixed-other.example,mixed brew kettle,6,https://mixed-other.example/k\n" +
			"mixed-other.example,mixed brew scale,7,https://mixed-other.example/s\n"},
	} {
		var err error
		if f.keywords {
			_, err = importer.ImportKeywords(ctx, pool, strings.NewReader(f.csv), f.opts)
		} else {
			_, err = importer.ImportRankings(ctx, pool, strings.NewReader(f.csv), f.opts)
		}
		if err != nil {
			t.Fatalf("import %q: %v", f.csv, err)
		}
	}
}

// Every keyword endpoint names its data source from the rows it was built on: the sample
// set (synthetic, with a warning), imported data (imported, no warning) and a market that
// holds both (mixed, with a warning) — competitor discovery included, which reads positions
// only.
func TestDataSourceOfEveryKeywordEndpoint(t *testing.T) {
	importData(t)
	importMixed(t)
	s := startStack(t, stackConfig{})
	key := registerBusy(t, s.testServer)
	grantCredits(t, s, key, 500)
	doms := sampleDomains(t)
	calls := []struct {
		what, path string
		body       map[string]any
		source     string
	}{
		{"sample competitors", "/v1/keywords/competitors", map[string]any{"domain": doms[0]}, "synthetic"},
		{"imported competitors", "/v1/keywords/competitors", map[string]any{"domain": "honesty-rival.example", "country": importedCountry}, "imported"},
		{"mixed competitors", "/v1/keywords/competitors", map[string]any{"domain": "mixed-real.example", "country": mixedCountry}, "mixed"},
		{"sample rankings", "/v1/keywords/rankings", map[string]any{"domain": doms[0]}, "synthetic"},
		{"imported rankings", "/v1/keywords/rankings", map[string]any{"domain": "honesty-rival.example", "country": importedCountry}, "imported"},
		{"mixed rankings", "/v1/keywords/rankings", map[string]any{"domain": "mixed-real.example", "country": mixedCountry}, "mixed"},
		{"mixed research", "/v1/keywords/research", map[string]any{"domain": "mixed-real.example", "topic": "mixed brew", "country": mixedCountry}, "mixed"},
		{"mixed gaps", "/v1/keywords/gaps", map[string]any{"domain": "mixed-none.example", "competitors": []string{"mixed-real.example"}, "country": mixedCountry}, "mixed"},
		{"mixed recommend", "/v1/content/recommend", map[string]any{"domain": "mixed-real.example", "focus_topics": []string{"mixed brew"},
			"competitors": []string{"mixed-other.example"}, "country": mixedCountry, "limit": 2}, "mixed"},
	}
	for _, c := range calls {
		w := expectSource(t, c.what, do(t, "POST", s.URL+c.path, key, c.body), c.source)
		if c.source == "imported" && len(w) != 0 {
			t.Errorf("%s: warnings %q, want none", c.what, w)
		}
	}
}

// blocksOf is the started blocks of size n that hold rows, at least one.
func blocksOf(rows, n int) int { return max(1, int(math.Ceil(float64(rows)/float64(n)))) }

// A keyword list reserves the price of its limit and is charged for the rows it returns
// (per started block, at least one), the rest given back: the balance, meta.credits_used,
// the job and its CSV's X-Credits-Used all say the settled amount. A later page that finds
// no row costs nothing. A plan is charged per started 2 recommendations delivered, says why
// it holds fewer than asked, and every item's outline has at least 3 sections with talking
// points.
func TestChargesFollowTheRowsReturned(t *testing.T) {
	importData(t)
	importMixed(t)
	s := startStack(t, stackConfig{})
	key := registerBusy(t, s.testServer)
	grantCredits(t, s, key, 500)
	doms := sampleDomains(t)
	// call makes the call and checks the charge against the balance and the answer's meta;
	// rows counts what the answer holds.
	call := func(what, path string, body map[string]any, price func(data map[string]any) int) response {
		t.Helper()
		before := balanceOf(t, s.testServer, key)
		r := do(t, "POST", s.URL+path, key, body)
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", what, r.Status, r.Raw)
		}
		want := price(r.data())
		meta := r.Body["meta"].(map[string]any)
		after := balanceOf(t, s.testServer, key)
		if meta["credits_used"] != float64(want) || before-after != float64(want) || meta["credits_remaining"] != after {
			t.Errorf("%s: credits_used %v, balance %v → %v (remaining %v); want a charge of %d", what, meta["credits_used"], before, after,
				meta["credits_remaining"], want)
		}
		id := meta["job_id"].(string)
		if c := do(t, "GET", s.URL+"/v1/jobs/"+id, key, nil, "Accept", "text/csv"); strings.HasPrefix(path, "/v1/keywords/") &&
			c.Header.Get("X-Credits-Used") != fmt.Sprint(want) {
			t.Errorf("%s: CSV X-Credits-Used %q, want %d", what, c.Header.Get("X-Credits-Used"), want)
		}
		return r
	}
	count := func(field string) func(map[string]any) int {
		return func(d map[string]any) int { return len(d[field].([]any)) }
	}

	// The dry run states what is reserved and how the charge follows the rows.
	dry := do(t, "POST", s.URL+"/v1/keywords/rankings?dry_run=true", key, map[string]any{"domain": "honesty-rival.example",
		"country": importedCountry, "limit": 1000})
	if d := dry.data(); dry.Status != 200 || d["credits_cost"] != float64(25) || !strings.Contains(fmt.Sprint(d["credits_rule"]), "per started 200 rows") {
		t.Fatalf("rankings dry run: %d %s", dry.Status, dry.Raw)
	}
	// Three rankings of the 1,000 asked: 5 credits, not 25.
	call("rankings 1000", "/v1/keywords/rankings", map[string]any{"domain": "honesty-rival.example", "country": importedCountry, "limit": 1000},
		func(d map[string]any) int {
			if n := count("rankings")(d); n != 3 {
				t.Errorf("rankings: %d rows, want 3", n)
			}
			return 5
		})
	call("research 1000", "/v1/keywords/research", map[string]any{"domain": doms[0], "topic": "coffee", "limit": 1000},
		func(d map[string]any) int { return 5 * blocksOf(int(d["total_keywords"].(float64)), 100) })
	call("gaps 1000", "/v1/keywords/gaps", map[string]any{"domain": doms[0], "competitors": []string{doms[1]}, "limit": 1000},
		func(d map[string]any) int { return 10 * blocksOf(count("gaps")(d), 200) })
	call("competitors", "/v1/keywords/competitors", map[string]any{"domain": doms[0], "limit": 100},
		func(map[string]any) int { return 10 })

	// The README's plan: 5 asked of the sample set.
	r := call("recommend", "/v1/content/recommend", map[string]any{"domain": "coffee-sample.example", "focus_topics": []string{"cold brew"},
		"competitors": []string{"beanbox-sample.example"}, "brand_context": "Home coffee gear", "limit": 5},
		func(d map[string]any) int { return 3 * blocksOf(count("recommendations")(d), 2) })
	recs := r.data()["recommendations"].([]any)
	t.Logf("the README's plan: %d of 5 recommendations, warnings %v", len(recs), r.data()["warnings"])
	warned := strings.Contains(fmt.Sprint(r.data()["warnings"]), "charged for the")
	if (len(recs) < 5) != warned {
		t.Errorf("recommend: %d of 5 items, warnings %v: a word on the charge exactly when fewer were made", len(recs), r.data()["warnings"])
	}
	for _, rec := range recs {
		item := rec.(map[string]any)
		outline := item["outline"].([]any)
		if len(outline) < 3 {
			t.Errorf("recommend %q: %d sections, want at least 3", item["target_keyword"], len(outline))
		}
		for _, sec := range outline {
			if points := sec.(map[string]any)["talking_points"].([]any); len(points) == 0 {
				t.Errorf("recommend %q: section %v without talking points", item["target_keyword"], sec)
			}
		}
	}

	// A later page that finds nothing (the rows went after the first page) costs nothing.
	first := call("rankings page 1", "/v1/keywords/rankings", map[string]any{"domain": "mixed-other.example", "country": mixedCountry, "limit": 1},
		func(map[string]any) int { return 5 })
	cursor, ok := first.data()["next_cursor"].(string)
	if !ok {
		t.Fatalf("rankings page 1: no next_cursor: %s", first.Raw)
	}
	if _, err := testenv.Postgres(t).Exec(context.Background(),
		`DELETE FROM domain_rankings WHERE domain = 'mixed-other.example' AND country = $1`, mixedCountry); err != nil {
		t.Fatal(err)
	}
	call("rankings empty page 2", "/v1/keywords/rankings", map[string]any{"domain": "mixed-other.example", "country": mixedCountry, "limit": 1,
		"cursor": cursor}, func(d map[string]any) int {
		if n := count("rankings")(d); n != 0 {
			t.Errorf("rankings page 2: %d rows, want none", n)
		}
		return 0
	})
}
