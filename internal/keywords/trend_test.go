package keywords

import "testing"

func months(vols ...int64) []MonthlyVolume {
	out := make([]MonthlyVolume, len(vols))
	for i, v := range vols {
		m := 8 + i // Aug 2025 onwards, across the year's end
		out[i] = MonthlyVolume{Year: 2025 + (m-1)/12, Month: (m-1)%12 + 1, SearchVolume: v}
	}
	return out
}

func TestTrend(t *testing.T) {
	cases := []struct {
		name string
		ms   []MonthlyVolume
		want string
	}{
		{"none", nil, ""},
		{"five months", months(1, 2, 3, 4, 5), ""},
		{"up 11%", months(100, 100, 100, 111, 111, 111), TrendIncreasing},
		{"up 10% is stable", months(100, 100, 100, 110, 110, 110), TrendStable},
		{"down 10% is stable", months(100, 100, 100, 90, 90, 90), TrendStable},
		{"down 11%", months(100, 100, 100, 89, 89, 89), TrendDecreasing},
		{"only the last six count", months(1, 1, 1, 1000, 100, 100, 100, 50, 50, 50), TrendDecreasing},
		{"zeros", months(0, 0, 0, 0, 0, 0), TrendStable},
		{"from zero", months(0, 0, 0, 0, 0, 5), TrendIncreasing},
	}
	for _, c := range cases {
		if got := Trend(c.ms); got != c.want {
			t.Errorf("%s: Trend = %q, want %q", c.name, got, c.want)
		}
	}
	// Order does not matter; a missing month does.
	ms := months(100, 100, 100, 200, 200, 200)
	rev := []MonthlyVolume{ms[5], ms[4], ms[3], ms[2], ms[1], ms[0]}
	if got := Trend(rev); got != TrendIncreasing {
		t.Errorf("reversed: %q", got)
	}
	gap := append(months(100, 100, 100), MonthlyVolume{Year: 2026, Month: 3, SearchVolume: 200},
		MonthlyVolume{Year: 2026, Month: 4, SearchVolume: 200}, MonthlyVolume{Year: 2026, Month: 5, SearchVolume: 200})
	if got := Trend(gap); got != "" {
		t.Errorf("months with a gap: %q, want unknown", got)
	}
}

func TestSortMonths(t *testing.T) {
	got := SortMonths([]MonthlyVolume{{2026, 2, 5}, {2025, 12, 3}, {2026, 2, 9}, {2026, 13, 1}, {2026, 1, -1}})
	want := []MonthlyVolume{{2025, 12, 3}, {2026, 2, 5}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("SortMonths = %v, want %v", got, want)
	}
	if SortMonths(nil) != nil {
		t.Error("nil in, nil out")
	}
}
