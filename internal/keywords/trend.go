package keywords

import (
	"cmp"
	"slices"
)

// Trends a keyword's monthly searches show (see Trend).
const (
	TrendIncreasing = "increasing"
	TrendStable     = "stable"
	TrendDecreasing = "decreasing"
)

// TrendMonths is how many of the latest months Trend compares with as many before them.
const TrendMonths = 3

// TrendThreshold is the relative change beyond which a trend is not stable.
const TrendThreshold = 0.10

// Trend is the direction of a keyword's monthly search volumes: the sum of the latest
// TrendMonths months against the sum of the TrendMonths months before them; more than
// TrendThreshold (10%) higher is "increasing", more than 10% lower "decreasing", else
// "stable". Both sums zero is "stable"; growth from zero is "increasing". "" (unknown)
// when fewer than 2×TrendMonths consecutive months end the series: a trend is never made
// up from a gap. ms may be in any order.
func Trend(ms []MonthlyVolume) string {
	if len(ms) < 2*TrendMonths {
		return ""
	}
	sorted := slices.Clone(ms)
	slices.SortFunc(sorted, func(a, b MonthlyVolume) int { return cmp.Compare(monthIndex(a), monthIndex(b)) })
	tail := sorted[len(sorted)-2*TrendMonths:]
	for i := 1; i < len(tail); i++ {
		if monthIndex(tail[i]) != monthIndex(tail[i-1])+1 {
			return ""
		}
	}
	var before, recent int64
	for i, m := range tail {
		if i < TrendMonths {
			before += m.SearchVolume
		} else {
			recent += m.SearchVolume
		}
	}
	switch {
	case before == 0 && recent == 0:
		return TrendStable
	case before == 0:
		return TrendIncreasing
	}
	change := float64(recent-before) / float64(before)
	switch {
	case change > TrendThreshold:
		return TrendIncreasing
	case change < -TrendThreshold:
		return TrendDecreasing
	}
	return TrendStable
}

func monthIndex(m MonthlyVolume) int { return m.Year*12 + m.Month - 1 }

// SortMonths orders monthly volumes oldest first and drops repeated months (the first
// kept) and impossible ones (month outside 1–12, negative volume).
func SortMonths(ms []MonthlyVolume) []MonthlyVolume {
	if len(ms) == 0 {
		return nil
	}
	out := make([]MonthlyVolume, 0, len(ms))
	for _, m := range ms {
		if m.Month >= 1 && m.Month <= 12 && m.Year > 0 && m.SearchVolume >= 0 {
			out = append(out, m)
		}
	}
	slices.SortStableFunc(out, func(a, b MonthlyVolume) int { return cmp.Compare(monthIndex(a), monthIndex(b)) })
	out = slices.CompactFunc(out, func(a, b MonthlyVolume) bool { return monthIndex(a) == monthIndex(b) })
	if len(out) == 0 {
		return nil
	}
	return out
}
