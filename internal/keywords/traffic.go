package keywords

import "math"

// The estimated monthly traffic of a ranking is its keyword's monthly search volume times
// the share of searchers who click the result at its position (the click-through rate, CTR).
// The curve below is a documented assumption, not a measurement of the domain: positions
// 1–10 follow Backlinko's 2023 study of 4 million Google results (organic CTR by position:
// 27.6%, 15.8%, 11.0%, 8.4%, 6.3%, 4.9%, 3.9%, 3.3%, 2.7%, 2.4%); the second page (11–20)
// gets 1%, positions 21–50 0.2% and 51–100 0.05%; beyond 100, nothing. Traffic is rounded to
// a whole number of visits (halves up); unknown (null) when the volume is.

// ctrTop10 is the CTR of positions 1–10.
var ctrTop10 = [10]float64{0.276, 0.158, 0.110, 0.084, 0.063, 0.049, 0.039, 0.033, 0.027, 0.024}

// CTR is the click-through rate the traffic estimate assumes at a position (1 is the top).
func CTR(position int) float64 {
	switch {
	case position < 1:
		return 0
	case position <= 10:
		return ctrTop10[position-1]
	case position <= 20:
		return 0.01
	case position <= 50:
		return 0.002
	case position <= 100:
		return 0.0005
	default:
		return 0
	}
}

// CTRCurve is CTR for positions 1 to 100, index 0 for position 1 (for SQL, where a query
// computes the estimate over many rows).
func CTRCurve() []float64 {
	out := make([]float64, 100)
	for i := range out {
		out[i] = CTR(i + 1)
	}
	return out
}

// EstimatedTraffic is the monthly visits a ranking at position earns from a keyword of this
// volume by the CTR curve; nil when the volume is unknown.
func EstimatedTraffic(volume *int64, position int) *int64 {
	if volume == nil {
		return nil
	}
	t := int64(math.Floor(float64(*volume)*CTR(position) + 0.5))
	return &t
}

// Bands are the position bands of a domain's rankings, as RankingList.Bands counts them.
var Bands = []struct {
	Name     string
	From, To int
}{{"1-3", 1, 3}, {"4-10", 4, 10}, {"11-20", 11, 20}, {"21-50", 21, 50}, {"51-100", 51, 100}}
