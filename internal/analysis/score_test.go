package analysis

import (
	"testing"

	"github.com/contentapi/contentapi/internal/keywords"
)

func TestOpportunityScoreValues(t *testing.T) {
	tests := []struct {
		name string
		k    keywords.Keyword
		pos  int
		want int
	}{
		{"all unknown is neutral", keywords.Keyword{Keyword: "widgets"}, 0, 50},
		{"documented example", keywords.Keyword{Keyword: "widgets", SearchVolume: i64(1000), Difficulty: f64(30), CPC: f64(1)}, 0, 55},
		{"best case", keywords.Keyword{Keyword: "buy widgets", SearchVolume: i64(1_000_000), Difficulty: f64(0), CPC: f64(50)}, 5, 100},
		{"worst case", keywords.Keyword{Keyword: "acme login", SearchVolume: i64(0), Difficulty: f64(100), CPC: f64(0)}, 1, 5},
		{"out-of-range metrics are clamped", keywords.Keyword{Keyword: "buy widgets", SearchVolume: i64(-5), Difficulty: f64(250), CPC: f64(-3)}, 1, 14},
		{"provider intent used", keywords.Keyword{Keyword: "widgets", Intent: "transactional"}, 0, 55},
	}
	for _, tt := range tests {
		if got := OpportunityScore(tt.k, tt.pos); got != tt.want {
			t.Errorf("%s: OpportunityScore = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestOpportunityScoreMonotonic(t *testing.T) {
	base := func() keywords.Keyword {
		return keywords.Keyword{Keyword: "cold brew", SearchVolume: i64(1000), Difficulty: f64(40), CPC: f64(1.5)}
	}
	prev := 0
	for _, v := range []int64{0, 10, 100, 1000, 10_000, 100_000, 1_000_000} {
		k := base()
		k.SearchVolume = i64(v)
		s := OpportunityScore(k, 0)
		if s < prev {
			t.Errorf("volume %d: score %d < %d for lower volume", v, s, prev)
		}
		prev = s
	}
	prev = 101
	for _, d := range []float64{0, 10, 30, 50, 70, 90, 100} {
		k := base()
		k.Difficulty = f64(d)
		s := OpportunityScore(k, 0)
		if s > prev {
			t.Errorf("difficulty %v: score %d > %d for easier keyword", d, s, prev)
		}
		prev = s
	}
	prev = 0
	for _, c := range []float64{0, 0.5, 1, 5, 20, 100} {
		k := base()
		k.CPC = f64(c)
		s := OpportunityScore(k, 0)
		if s < prev {
			t.Errorf("cpc %v: score %d < %d for lower cpc", c, s, prev)
		}
		prev = s
	}
	k := base()
	low, high := base(), base()
	low.SearchVolume, high.SearchVolume = i64(10), i64(100_000)
	if OpportunityScore(low, 0) >= OpportunityScore(high, 0) {
		t.Error("volume 100,000 should score strictly above volume 10")
	}
	easy, hard := base(), base()
	easy.Difficulty, hard.Difficulty = f64(5), f64(95)
	if OpportunityScore(easy, 0) <= OpportunityScore(hard, 0) {
		t.Error("difficulty 5 should score strictly above difficulty 95")
	}
	// Position: striking distance > not ranking > top 3.
	striking, notRanking, top := OpportunityScore(k, 7), OpportunityScore(k, 0), OpportunityScore(k, 2)
	if !(striking > notRanking && notRanking > top) {
		t.Errorf("positions: #7=%d, none=%d, #2=%d; want #7 > none > #2", striking, notRanking, top)
	}
	if OpportunityScore(k, 15) <= notRanking || OpportunityScore(k, 15) >= striking {
		t.Error("#15 should score between not ranking and #7")
	}
	if OpportunityScore(k, -3) != notRanking {
		t.Error("a negative position should count as not ranking")
	}
	// Intent: transactional > commercial > informational > navigational.
	intents := []string{Transactional, Commercial, Informational, Navigational}
	for i := 1; i < len(intents); i++ {
		a, b := base(), base()
		a.Intent, b.Intent = intents[i-1], intents[i]
		if OpportunityScore(a, 0) <= OpportunityScore(b, 0) {
			t.Errorf("%s should score above %s", intents[i-1], intents[i])
		}
	}
}

func TestOpportunityScoreClamped(t *testing.T) {
	vols := []*int64{nil, i64(0), i64(50), i64(1 << 40)}
	diffs := []*float64{nil, f64(-10), f64(0), f64(100), f64(1000)}
	cpcs := []*float64{nil, f64(-1), f64(0), f64(1e6)}
	for _, v := range vols {
		for _, d := range diffs {
			for _, c := range cpcs {
				for _, p := range []int{-1, 0, 1, 3, 4, 10, 11, 20, 21, 50, 51, 1000} {
					for _, phrase := range []string{"acme login", "buy x", "best x", "x"} {
						s := OpportunityScore(keywords.Keyword{Keyword: phrase, SearchVolume: v, Difficulty: d, CPC: c}, p)
						if s < 1 || s > 100 {
							t.Fatalf("score %d out of 1..100", s)
						}
					}
				}
			}
		}
	}
}
