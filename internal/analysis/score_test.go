package analysis

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/contentapi/contentapi/internal/keywords"
)

func TestOpportunityScoreValues(t *testing.T) {
	tests := []struct {
		name string
		k    keywords.Keyword
		pos  int
		want int // 0: no score (nil)
	}{
		{"all unknown has no score", keywords.Keyword{Keyword: "widgets"}, 0, 0},
		{"all unknown has no score in striking distance either", keywords.Keyword{Keyword: "buy widgets", Intent: "transactional"}, 7, 0},
		{"one known metric is scored, the others neutral", keywords.Keyword{Keyword: "widgets", CPC: f64(0)}, 0, 45},
		{"documented example", keywords.Keyword{Keyword: "widgets", SearchVolume: i64(1000), Difficulty: f64(30), CPC: f64(1)}, 0, 55},
		{"best case", keywords.Keyword{Keyword: "buy widgets", SearchVolume: i64(1_000_000), Difficulty: f64(0), CPC: f64(50)}, 5, 100},
		{"worst case", keywords.Keyword{Keyword: "acme login", SearchVolume: i64(0), Difficulty: f64(100), CPC: f64(0)}, 1, 5},
		{"out-of-range metrics are clamped", keywords.Keyword{Keyword: "buy widgets", SearchVolume: i64(-5), Difficulty: f64(250), CPC: f64(-3)}, 1, 14},
		{"provider intent used", keywords.Keyword{Keyword: "widgets", Difficulty: f64(50), Intent: "transactional"}, 0, 55},
	}
	for _, tt := range tests {
		got := OpportunityScore(tt.k, tt.pos)
		switch {
		case tt.want == 0 && got != nil:
			t.Errorf("%s: OpportunityScore = %d, want nil", tt.name, *got)
		case tt.want != 0 && got == nil:
			t.Errorf("%s: OpportunityScore = nil, want %d", tt.name, tt.want)
		case got != nil && *got != tt.want:
			t.Errorf("%s: OpportunityScore = %d, want %d", tt.name, *got, tt.want)
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
		s := mustScore(t, k, 0)
		if s < prev {
			t.Errorf("volume %d: score %d < %d for lower volume", v, s, prev)
		}
		prev = s
	}
	prev = 101
	for _, d := range []float64{0, 10, 30, 50, 70, 90, 100} {
		k := base()
		k.Difficulty = f64(d)
		s := mustScore(t, k, 0)
		if s > prev {
			t.Errorf("difficulty %v: score %d > %d for easier keyword", d, s, prev)
		}
		prev = s
	}
	prev = 0
	for _, c := range []float64{0, 0.5, 1, 5, 20, 100} {
		k := base()
		k.CPC = f64(c)
		s := mustScore(t, k, 0)
		if s < prev {
			t.Errorf("cpc %v: score %d < %d for lower cpc", c, s, prev)
		}
		prev = s
	}
	k := base()
	low, high := base(), base()
	low.SearchVolume, high.SearchVolume = i64(10), i64(100_000)
	if mustScore(t, low, 0) >= mustScore(t, high, 0) {
		t.Error("volume 100,000 should score strictly above volume 10")
	}
	easy, hard := base(), base()
	easy.Difficulty, hard.Difficulty = f64(5), f64(95)
	if mustScore(t, easy, 0) <= mustScore(t, hard, 0) {
		t.Error("difficulty 5 should score strictly above difficulty 95")
	}
	// Position: striking distance > not ranking > top 3.
	striking, notRanking, top := mustScore(t, k, 7), mustScore(t, k, 0), mustScore(t, k, 2)
	if !(striking > notRanking && notRanking > top) {
		t.Errorf("positions: #7=%d, none=%d, #2=%d; want #7 > none > #2", striking, notRanking, top)
	}
	if mustScore(t, k, 15) <= notRanking || mustScore(t, k, 15) >= striking {
		t.Error("#15 should score between not ranking and #7")
	}
	if mustScore(t, k, -3) != notRanking {
		t.Error("a negative position should count as not ranking")
	}
	// Intent: transactional > commercial > informational > navigational.
	intents := []string{Transactional, Commercial, Informational, Navigational}
	for i := 1; i < len(intents); i++ {
		a, b := base(), base()
		a.Intent, b.Intent = intents[i-1], intents[i]
		if mustScore(t, a, 0) <= mustScore(t, b, 0) {
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
						if (s == nil) != (v == nil && d == nil && c == nil) {
							t.Fatalf("score %v for volume %v, difficulty %v, cpc %v: nil exactly when all are unknown", s, v, d, c)
						}
						if s != nil && (*s < 1 || *s > 100) {
							t.Fatalf("score %d out of 1..100", *s)
						}
					}
				}
			}
		}
	}
}

func TestCompareScoresUnknownLast(t *testing.T) {
	n := func(v int) *int { return &v }
	list := []*int{nil, n(40), nil, n(90), n(1)}
	slices.SortStableFunc(list, CompareScores)
	var got []string
	for _, s := range list {
		if s == nil {
			got = append(got, "null")
		} else {
			got = append(got, strconv.Itoa(*s))
		}
	}
	if want := "90 40 1 null null"; strings.Join(got, " ") != want {
		t.Errorf("sorted scores = %v, want %s", got, want)
	}
}

// mustScore is OpportunityScore for a keyword known to have a metric.
func mustScore(t *testing.T, k keywords.Keyword, position int) int {
	t.Helper()
	s := OpportunityScore(k, position)
	if s == nil {
		t.Fatalf("%q has no score", k.Keyword)
	}
	return *s
}

// A candidate without any metric has no score and comes after every scored one, focus
// boost or not.
func TestRecommendUnscoredLast(t *testing.T) {
	cands := []Candidate{
		{Keyword: keywords.Keyword{Keyword: "espresso tamper guide"}},
		{Keyword: kwvd("espresso grinder settings", 10, 90)},
		{Keyword: kwvd("espresso milk frothing tips", 5000, 20)},
	}
	got := Recommend(cands, Site{Language: "en"}, "", []string{"espresso"}, 0)
	if len(got) != 3 || got[2].TargetKeyword.Keyword != "espresso tamper guide" || got[2].OpportunityScore != nil {
		t.Fatalf("recommendations %q, want the unscored espresso tamper guide last with a nil score", targets(got))
	}
	for _, r := range got[:2] {
		if r.OpportunityScore == nil {
			t.Errorf("%s has metrics but no score", r.TargetKeyword.Keyword)
		}
	}
}
