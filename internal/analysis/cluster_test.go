package analysis

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/contentapi/contentapi/internal/keywords"
)

func serpKW(s string, vol int64, urls ...string) keywords.Keyword {
	return keywords.Keyword{Keyword: s, SearchVolume: i64(vol), SERPURLs: urls}
}

func TestClusterSERPOverlap(t *testing.T) {
	tests := []struct {
		name string
		kws  []keywords.Keyword
		opt  ClusterOptions
		want [][]string
	}{
		{
			name: "3 shared URLs join",
			kws: []keywords.Keyword{
				serpKW("cold brew", 1000, "https://a.com/1", "https://b.com/2", "https://c.com/3", "https://d.com/4"),
				serpKW("cold brew coffee", 500, "https://a.com/1", "https://b.com/2", "https://c.com/3", "https://e.com/5"),
			},
			want: [][]string{{"cold brew", "cold brew coffee"}},
		},
		{
			name: "2 shared URLs do not join",
			kws: []keywords.Keyword{
				serpKW("cold brew", 1000, "https://a.com/1", "https://b.com/2", "https://c.com/3"),
				serpKW("cold brew coffee", 500, "https://a.com/1", "https://b.com/2", "https://x.com/3"),
			},
			want: [][]string{{"cold brew"}, {"cold brew coffee"}},
		},
		{
			name: "URLs compared normalised",
			kws: []keywords.Keyword{
				serpKW("a", 10, "https://www.A.com/x/", "http://b.com/y", "https://c.com/z#frag"),
				serpKW("b", 20, "a.com/x", "https://www.b.com/y/", "https://C.com/z"),
			},
			want: [][]string{{"b", "a"}},
		},
		{
			name: "single link chains",
			kws: []keywords.Keyword{
				serpKW("k1", 30, "u1", "u2", "u3"),
				serpKW("k2", 20, "u1", "u2", "u3", "u4", "u5", "u6"),
				serpKW("k3", 10, "u4", "u5", "u6"),
			},
			want: [][]string{{"k1", "k2", "k3"}},
		},
		{
			name: "custom threshold",
			kws: []keywords.Keyword{
				serpKW("k1", 30, "u1", "u2"),
				serpKW("k2", 20, "u1", "u2"),
			},
			opt:  ClusterOptions{MinSharedURLs: 2},
			want: [][]string{{"k1", "k2"}},
		},
		{
			name: "SERP evidence beats lexical similarity",
			kws: []keywords.Keyword{
				serpKW("cold brew maker", 300, "u1", "u2", "u3"),
				serpKW("cold brew maker glass", 200, "v1", "v2", "v3"),
			},
			want: [][]string{{"cold brew maker"}, {"cold brew maker glass"}},
		},
	}
	for _, tt := range tests {
		if got := names(ClusterKeywords(tt.kws, tt.opt)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestClusterLexical(t *testing.T) {
	tests := []struct {
		name string
		kws  []keywords.Keyword
		want [][]string
	}{
		{
			name: "head term gathers its modifiers",
			kws: []keywords.Keyword{
				kwv("cold brew", 5000), kwv("cold brew ratio", 900), kwv("best cold brew maker", 1200),
				kwv("how to make cold brew", 2000), kwv("french press", 3000), kwv("french press coffee ratio", 400),
			},
			want: [][]string{
				{"cold brew", "how to make cold brew", "best cold brew maker", "cold brew ratio"},
				{"french press", "french press coffee ratio"},
			},
		},
		{
			name: "one shared word is not enough",
			kws:  []keywords.Keyword{kwv("coffee", 100), kwv("coffee beans", 90), kwv("coffee grinder", 80), kwv("iced coffee recipe", 70), kwv("cold brew vs iced coffee", 60)},
			want: [][]string{{"coffee"}, {"coffee beans"}, {"coffee grinder"}, {"iced coffee recipe"}, {"cold brew vs iced coffee"}},
		},
		{
			name: "containment",
			kws:  []keywords.Keyword{kwv("cold brew concentrate recipe", 50), kwv("cold brew recipe", 40)},
			want: [][]string{{"cold brew concentrate recipe", "cold brew recipe"}},
		},
		{
			name: "Jaccard 0.6 joins, 0.5 does not",
			kws: []keywords.Keyword{
				kwv("how to make cold brew coffee", 50), kwv("make cold brew at home", 40),
				kwv("cold brew maker", 30), kwv("cold brew ratio", 20),
			},
			want: [][]string{{"how to make cold brew coffee", "make cold brew at home"}, {"cold brew maker"}, {"cold brew ratio"}},
		},
		{
			name: "inflections and word order",
			kws:  []keywords.Keyword{kwv("running shoes", 50), kwv("shoe for running", 40), kwv("best running shoe", 30)},
			want: [][]string{{"running shoes", "shoe for running", "best running shoe"}},
		},
		{
			name: "keywords without SERP URLs fall back to lexical and join SERP clusters",
			kws: []keywords.Keyword{
				serpKW("cold brew", 1000, "u1", "u2", "u3"),
				serpKW("cold brew coffee", 800, "u1", "u2", "u3"),
				serpKW("iced coffee", 700, "v1", "v2", "v3"),
				kwv("cold brew coffee ratio", 100),
				kwv("iced coffee recipe easy", 50),
				kwv("espresso", 10),
			},
			want: [][]string{{"cold brew", "cold brew coffee", "cold brew coffee ratio"}, {"iced coffee", "iced coffee recipe easy"}, {"espresso"}},
		},
	}
	for _, tt := range tests {
		if got := names(ClusterKeywords(tt.kws, ClusterOptions{})); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestClusterTotalsAndOrder(t *testing.T) {
	kws := []keywords.Keyword{
		kwvd("cold brew", 1000, 40),
		{Keyword: "cold brew ratio"}, // no metrics
		kwvd("cold brew maker", 300, 21),
		{Keyword: "cold brew recipe", Difficulty: f64(10)},
		{Keyword: "espresso tamper"},
		{Keyword: "espresso tamper size", Relevance: 1},
	}
	got := ClusterKeywords(kws, ClusterOptions{})
	if len(got) != 2 {
		t.Fatalf("got %d clusters (%q), want 2", len(got), names(got))
	}
	c := got[0]
	if c.Name != "cold brew" || c.TotalVolume != 1300 {
		t.Errorf("cluster = %q total %d, want cold brew 1300", c.Name, c.TotalVolume)
	}
	if c.AvgDifficulty == nil || *c.AvgDifficulty != 23.7 { // (40+21+10)/3 rounded to 1 decimal
		t.Errorf("AvgDifficulty = %v, want 23.7", c.AvgDifficulty)
	}
	wantOrder := []string{"cold brew", "cold brew maker", "cold brew ratio", "cold brew recipe"}
	if !reflect.DeepEqual(names(got[:1])[0], wantOrder) {
		t.Errorf("order %q, want %q (volume desc, unknown last, then alphabetical)", names(got[:1])[0], wantOrder)
	}
	e := got[1]
	if e.AvgDifficulty != nil || e.TotalVolume != 0 {
		t.Errorf("espresso cluster: avg %v total %d, want nil and 0", e.AvgDifficulty, e.TotalVolume)
	}
	if e.Name != "espresso tamper size" {
		t.Errorf("tie on volume should go to relevance: name %q", e.Name)
	}
	if e.Keywords[1].SearchVolume != nil {
		t.Error("an unknown volume must stay nil")
	}
	var n int
	for _, c := range got {
		n += len(c.Keywords)
	}
	if n != len(kws) {
		t.Errorf("%d keywords in clusters, want %d", n, len(kws))
	}
	if ClusterKeywords(nil, ClusterOptions{}) != nil {
		t.Error("no keywords should give no clusters")
	}
}

func TestClusterEveryKeywordOnce(t *testing.T) {
	var kws []keywords.Keyword
	for i := range 60 {
		k := kwv(fmt.Sprintf("topic %d word%d extra%d", i%7, i%5, i%3), int64(i*10))
		if i%4 == 0 {
			k.SERPURLs = []string{fmt.Sprintf("https://s%d.com/a", i%3), fmt.Sprintf("https://s%d.com/b", i%3), fmt.Sprintf("https://s%d.com/c", i%2)}
		}
		kws = append(kws, k)
	}
	kws = append(kws, kws[0]) // a duplicate keeps its place too
	got := ClusterKeywords(kws, ClusterOptions{})
	var seen []string
	var total int64
	for _, c := range got {
		for _, k := range c.Keywords {
			seen = append(seen, k.Keyword)
		}
		total += c.TotalVolume
	}
	var want []string
	var wantTotal int64
	for _, k := range kws {
		want = append(want, k.Keyword)
		wantTotal += *k.SearchVolume
	}
	slices.Sort(seen)
	slices.Sort(want)
	if !slices.Equal(seen, want) || total != wantTotal {
		t.Errorf("keywords or totals lost: %d vs %d keywords, total %d vs %d", len(seen), len(want), total, wantTotal)
	}
	for i := 1; i < len(got); i++ {
		if got[i-1].TotalVolume < got[i].TotalVolume {
			t.Fatalf("clusters not sorted by total volume: %d then %d", got[i-1].TotalVolume, got[i].TotalVolume)
		}
	}
}

func TestClusterDeterministic(t *testing.T) {
	kws := []keywords.Keyword{
		serpKW("cold brew", 1000, "u1", "u2", "u3"),
		serpKW("cold brew coffee", 1000, "u1", "u2", "u3"),
		serpKW("iced coffee", 700, "v1", "v2", "v3"),
		serpKW("iced coffee at home", 700, "v1", "v2", "w3"),
		kwv("cold brew coffee ratio", 100),
		kwv("cold brew ratio", 100),
		kwv("iced coffee recipe easy", 50),
		kwv("espresso", 10),
		kwv("espresso beans", 10),
		kwv("espresso beans dark roast", 10),
		{Keyword: "espresso machine"},
		{Keyword: "espresso machine"},
	}
	want := ClusterKeywords(kws, ClusterOptions{})
	for seed := range uint64(20) {
		if got := ClusterKeywords(shuffled(kws, seed), ClusterOptions{}); !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d: output depends on input order:\n got %q\nwant %q", seed, names(got), names(want))
		}
	}
}
