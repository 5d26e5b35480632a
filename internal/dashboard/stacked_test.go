package dashboard

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/contentapi/contentapi/internal/credits"
)

func TestNewStackedChart(t *testing.T) {
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	byEndpoint := func(x credits.Spend) string { return x.Endpoint }
	spend := func(day, endpoint string, n int) credits.Spend {
		return credits.Spend{Day: day, Endpoint: endpoint, Credits: n, Calls: 1}
	}

	t.Run("stacked by series, largest first", func(t *testing.T) {
		ch := NewStackedChart([]credits.Spend{
			spend("2026-03-02", "/a", 10), spend("2026-03-02", "/b", 30), spend("2026-03-01", "/b", 5),
			spend("2026-03-01", "/c", 0),  // refunded calls only: no series
			spend("2025-01-01", "/a", 99), // before the span: counted in no bar
		}, byEndpoint, 30, now)
		if len(ch.Days) != 30 || ch.First != "2026-02-01" || ch.Last != "2026-03-02" || ch.Max != 40 || ch.Total != 45 {
			t.Fatalf("%d days %s to %s, max %d, total %d", len(ch.Days), ch.First, ch.Last, ch.Max, ch.Total)
		}
		if len(ch.Series) != 2 || ch.Series[0].Name != "/b" || ch.Series[0].Credits != 35 || ch.Series[1].Name != "/a" {
			t.Fatalf("series %+v", ch.Series)
		}
		today := ch.Days[29]
		if today.Credits != 40 || len(today.Segments) != 2 {
			t.Fatalf("today %+v", today)
		}
		// Bottom up: /b from the axis, /a on top of it, together the full height.
		b, a := today.Segments[0], today.Segments[1]
		if b.Series != "/b" || b.Y != coord(chartHeight-0.75*(chartHeight-chartTop)) || a.Series != "/a" || a.Y != coord(chartTop) {
			t.Fatalf("segments %+v", today.Segments)
		}
	})

	t.Run("beyond seven series, the rest is Other", func(t *testing.T) {
		var rows []credits.Spend
		for i := range 10 {
			rows = append(rows, spend("2026-03-02", fmt.Sprintf("/e%d", i), 100-i))
		}
		ch := NewStackedChart(rows, byEndpoint, 90, now)
		if len(ch.Days) != 90 || len(ch.Series) != maxSeries+1 || ch.Series[maxSeries].Name != "Other" ||
			ch.Series[maxSeries].Credits != 93+92+91 || ch.Series[0].Name != "/e0" {
			t.Fatalf("series %+v", ch.Series)
		}
		segs := ch.Days[89].Segments
		if len(segs) != maxSeries+1 || segs[maxSeries].Series != "Other" || segs[maxSeries].Credits != 276 {
			t.Fatalf("segments %+v", segs)
		}
		for i, s := range ch.Series {
			if s.Color != seriesColors[i] {
				t.Errorf("series %d colour %s", i, s.Color)
			}
		}
	})

	t.Run("eight series are all drawn apart", func(t *testing.T) {
		var rows []credits.Spend
		for i := range maxSeries + 1 {
			rows = append(rows, spend("2026-03-02", "/e"+strconv.Itoa(i), 10+i))
		}
		ch := NewStackedChart(rows, byEndpoint, 30, now)
		if len(ch.Series) != maxSeries+1 || ch.Series[maxSeries].Name != "/e0" {
			t.Fatalf("series %+v", ch.Series)
		}
	})
}
