package dashboard

import (
	"strconv"
)

// The report pages' charts: horizontal bar charts and the gaps' scatter plot, drawn as SVG
// by the templates from these layouts.

// barChart is a horizontal bar chart drawn as SVG by the template: one labelled row per bar.
type barChart struct {
	Width, Height int
	LabelWidth    int
	Bars          []hbar
	Max           int64
	Title         string
	// LabelHead and ValueHead head the table of the numbers ("Cluster", "Total volume").
	LabelHead, ValueHead string
}

type hbar struct {
	Label   string // as drawn, shortened
	Full    string
	Value   int64
	Y, W    float64
	TextY   float64
	ValueX  float64
	Percent string
}

const (
	barRow      = 26
	barChartW   = 600
	barLabelW   = 230
	barValueRom = 90 // room right of the longest bar for its value
)

func newBarChart(title, labelHead, valueHead string, labels []string, values []int64) barChart {
	ch := barChart{Width: barChartW, LabelWidth: barLabelW, Height: max(1, len(values)) * barRow, Title: title,
		LabelHead: labelHead, ValueHead: valueHead}
	for _, v := range values {
		ch.Max = max(ch.Max, v)
	}
	var total int64
	for _, v := range values {
		total += v
	}
	span := float64(barChartW - barLabelW - barValueRom)
	for i, v := range values {
		b := hbar{Label: truncate(labels[i], 20), Full: labels[i], Value: v, Y: float64(i*barRow) + 4, TextY: float64(i*barRow) + 17}
		if ch.Max > 0 && v > 0 {
			b.W = max(1, float64(v)/float64(ch.Max)*span)
		}
		if total > 0 {
			b.Percent = strconv.FormatFloat(float64(v)*100/float64(total), 'f', 0, 64) + "%"
		}
		b.ValueX = float64(barLabelW) + b.W + 6
		ch.Bars = append(ch.Bars, b)
	}
	return ch
}

// scatter is a volume (log scale) against difficulty plot.
type scatter struct {
	Width, Height    int
	Left, Bottom     int // the plot area's margins, for axis labels
	Points           []point
	YTicks, XTicks   []tick
	EasyX, EasyWidth float64 // the easy band
	PlotTop          int
	// XTickY is the baseline of the difficulty ticks; XTitleX and XTitleY place the axis's
	// title, centred under the plot, below the ticks.
	XTickY, XTitleX, XTitleY int
}

type point struct {
	X, Y    float64
	Easy    bool
	Keyword string
	Volume  int64
	Diff    float64
}

type tick struct {
	Pos   float64
	Label string
}

func compactNumber(n int64) string {
	switch {
	case n >= 1_000_000:
		return strconv.FormatInt(n/1_000_000, 10) + "M"
	case n >= 1_000:
		return strconv.FormatInt(n/1_000, 10) + "k"
	}
	return strconv.FormatInt(n, 10)
}
