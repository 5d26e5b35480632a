package dashboard

import (
	"testing"
	"time"
)

func TestNewChart(t *testing.T) {
	now := time.Date(2026, 3, 2, 23, 59, 0, 0, time.FixedZone("CET", 3600)) // 22:59 UTC, 2 March
	tests := []struct {
		name        string
		daily       map[string]int
		max, total  int
		heights     map[string]float64 // bar heights expected, by day
		first, last string
	}{
		{name: "no use", daily: nil, first: "2026-02-01", last: "2026-03-02",
			heights: map[string]float64{"2026-03-02": 0}},
		{name: "today and the first day", daily: map[string]int{"2026-03-02": 10, "2026-02-01": 5, "2026-01-31": 99},
			max: 10, total: 15, first: "2026-02-01", last: "2026-03-02",
			heights: map[string]float64{"2026-03-02": chartHeight - chartTop, "2026-02-01": (chartHeight - chartTop) / 2.0, "2026-02-15": 0}},
		{name: "a small day still shows", daily: map[string]int{"2026-02-20": 1000, "2026-02-21": 1},
			max: 1000, total: 1001, first: "2026-02-01", last: "2026-03-02",
			heights: map[string]float64{"2026-02-20": chartHeight - chartTop, "2026-02-21": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := NewChart(tt.daily, now)
			if len(ch.Bars) != ChartDays || ch.Max != tt.max || ch.Total != tt.total || ch.First != tt.first || ch.Last != tt.last {
				t.Fatalf("chart %d bars, max %d, total %d, %s to %s", len(ch.Bars), ch.Max, ch.Total, ch.First, ch.Last)
			}
			for i, b := range ch.Bars {
				if b.X+b.W > float64(ch.Width) || b.Y+b.H != float64(ch.Height) || b.Y < 0 {
					t.Errorf("bar %d (%s) outside the chart: %+v", i, b.Day, b)
				}
				if want, ok := tt.heights[b.Day]; ok && b.H != want {
					t.Errorf("bar %s height %v, want %v", b.Day, b.H, want)
				}
				if b.Credits != tt.daily[b.Day] {
					t.Errorf("bar %s credits %d, want %d", b.Day, b.Credits, tt.daily[b.Day])
				}
			}
		})
	}
}

func TestSMTPURL(t *testing.T) {
	for _, ok := range []string{"smtp://mail.example.com", "smtp://u:p@mail.example.com:2525?tls=opportunistic",
		"smtp://127.0.0.1:25?tls=none", "smtps://u:p@mail.example.com"} {
		if _, err := NewSMTPMailer(ok, "a@example.com"); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"http://mail.example.com", "smtp://mail.example.com?tls=maybe", "smtp://mail.example.com:smtp", "smtp:///"} {
		if _, err := NewSMTPMailer(bad, "a@example.com"); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
