package analysis

import (
	"cmp"
	"math"

	"github.com/contentapi/contentapi/internal/keywords"
)

// Weights of the opportunity score's terms; they sum to 1.
const (
	weightVolume   = 0.30
	weightEase     = 0.25
	weightValue    = 0.10
	weightIntent   = 0.10
	weightPosition = 0.25
)

// neutral is the value of a term whose metric is unknown: the middle of its range, so an
// unknown metric neither rewards nor penalises a keyword.
const neutral = 0.5

// OpportunityScore rates how worthwhile it is to create or improve content for k, given the
// domain's current position for it (0 = not ranking), from 1 (worst) to 100 (best):
//
//	score = round(100 × (0.30·V + 0.25·E + 0.10·C + 0.10·I + 0.25·P)), clamped to 1..100
//	V = min(1, log10(volume+1) / 5)        100,000+ searches/month = 1; 1,000 ≈ 0.6
//	E = 1 − clamp(difficulty, 0, 100)/100  easier is better
//	C = min(1, log10(cpc+1) / log10(21))   $20+ = 1; $1 ≈ 0.23
//	I = transactional 1.0, commercial 0.8, informational 0.5, navigational 0.1
//	P = not ranking (0) 0.5; #1–3 0.15; #4–10 1.0; #11–20 0.85; #21–50 0.6; #51+ 0.55
//
// An unknown volume, difficulty or CPC (nil) counts as 0.5 for its term. When all three
// are unknown there is nothing to rate: the score is nil (null in answers, sorted last by
// CompareScores), never a number made of neutral terms. Intent is Intent(k). Positions
// 4–20 are "striking distance" and score highest; the top 3 score lowest, as there is
// little left to gain.
func OpportunityScore(k keywords.Keyword, position int) *int {
	if !Scorable(k) {
		return nil
	}
	v, e, c := neutral, neutral, neutral
	if k.SearchVolume != nil {
		v = math.Min(1, math.Log10(float64(max(*k.SearchVolume, 0))+1)/5)
	}
	if k.Difficulty != nil {
		e = 1 - math.Max(0, math.Min(100, *k.Difficulty))/100
	}
	if k.CPC != nil {
		c = math.Min(1, math.Log10(math.Max(0, *k.CPC)+1)/math.Log10(21))
	}
	total := weightVolume*v + weightEase*e + weightValue*c +
		weightIntent*intentValue(Intent(k)) + weightPosition*positionValue(position)
	score := max(1, min(100, int(math.Round(100*total))))
	return &score
}

// Scorable reports whether k has a metric to score: a known search volume, difficulty or
// CPC.
func Scorable(k keywords.Keyword) bool {
	return k.SearchVolume != nil || k.Difficulty != nil || k.CPC != nil
}

// CompareScores orders opportunity scores best first with unknown (nil) scores last: it is
// negative when a should come before b, as slices.SortFunc expects.
func CompareScores(a, b *int) int {
	if c := UnscoredLast(a, b); c != 0 || a == nil {
		return c
	}
	return cmp.Compare(*b, *a)
}

// intentValue is the intent term I of the opportunity score.
func intentValue(intent string) float64 {
	switch intent {
	case Transactional:
		return 1.0
	case Commercial:
		return 0.8
	case Navigational:
		return 0.1
	default:
		return 0.5
	}
}

// positionValue is the position term P of the opportunity score; a negative position is
// treated as not ranking.
func positionValue(position int) float64 {
	switch {
	case position <= 0:
		return 0.5
	case position <= 3:
		return 0.15
	case position <= 10:
		return 1.0
	case position <= 20:
		return 0.85
	case position <= 50:
		return 0.6
	default:
		return 0.55
	}
}

// UnscoredLast orders only by whether a score is known: negative when a is known and b is
// not, positive the other way round, 0 otherwise. A stable sort with it moves unknown
// scores last and keeps the order of the rest.
func UnscoredLast(a, b *int) int {
	return unscored(a) - unscored(b)
}

func unscored(score *int) int {
	if score == nil {
		return 1
	}
	return 0
}
