package dashboard

import (
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/contentapi/contentapi/internal/report"
)

// The keyword gaps report: the gaps as rows and as a volume-by-difficulty scatter, easy wins
// marked.

// easyDifficulty is the keyword difficulty under which a gap counts as an easy win (when
// its volume is also at least the list's median): the "easy" bands of the common SEO tools
// end around 30.
const easyDifficulty = 30

// gapsView is a gap list with one position column per competitor and its scatter plot.
type gapsView struct {
	Domain      string
	Competitors []string
	Rows        []gapRow
	Plot        scatter
	EasyWins    int
	MedianVol   int64
}

type gapRow struct {
	report.GapRecord
	Positions []string // per competitor, in Competitors order ("—" where it does not rank)
	Easy      bool
}

const (
	plotW, plotH         = 600, 320
	plotLeft, plotBottom = 60, 56
	plotTop, plotRight   = 34, 24
)

func newGapsView(domain string, competitors []string, gaps []report.GapRecord) *gapsView {
	comps := slices.Clone(competitors)
	sort.Strings(comps)
	v := &gapsView{Domain: domain, Competitors: comps}
	var vols []int64
	for _, g := range gaps {
		if g.SearchVolume != nil {
			vols = append(vols, *g.SearchVolume)
		}
	}
	slices.Sort(vols)
	if len(vols) > 0 {
		v.MedianVol = vols[len(vols)/2]
	}
	var maxVol int64 = 10
	for _, x := range vols {
		maxVol = max(maxVol, x)
	}
	top := math.Ceil(math.Log10(float64(maxVol)))
	p := scatter{Width: plotW, Height: plotH, Left: plotLeft, Bottom: plotBottom, PlotTop: plotTop,
		XTickY: plotH - plotBottom + 22, XTitleX: (plotLeft + plotW - plotRight) / 2, XTitleY: plotH - 6}
	innerW, innerH := float64(plotW-plotLeft-plotRight), float64(plotH-plotBottom-plotTop)
	xOf := func(d float64) float64 { return plotLeft + d/100*innerW }
	yOf := func(vol int64) float64 {
		return plotTop + innerH - math.Log10(float64(max(vol, 1)))/top*innerH
	}
	p.EasyX, p.EasyWidth = xOf(0), xOf(easyDifficulty)-xOf(0)
	for d := 0; d <= 100; d += 20 {
		p.XTicks = append(p.XTicks, tick{Pos: xOf(float64(d)), Label: strconv.Itoa(d)})
	}
	for e := 0; e <= int(top); e++ {
		vol := int64(math.Pow10(e))
		p.YTicks = append(p.YTicks, tick{Pos: yOf(vol), Label: compactNumber(vol)})
	}
	for _, g := range gaps {
		row := gapRow{GapRecord: g}
		for _, c := range comps {
			if pos, ok := g.CompetitorPositions[c]; ok {
				row.Positions = append(row.Positions, strconv.Itoa(pos))
			} else {
				row.Positions = append(row.Positions, "—")
			}
		}
		if g.SearchVolume != nil && g.Difficulty != nil {
			row.Easy = *g.Difficulty < easyDifficulty && *g.SearchVolume >= v.MedianVol
			p.Points = append(p.Points, point{X: xOf(*g.Difficulty), Y: yOf(*g.SearchVolume), Easy: row.Easy,
				Keyword: g.Keyword, Volume: *g.SearchVolume, Diff: *g.Difficulty})
		}
		if row.Easy {
			v.EasyWins++
		}
		v.Rows = append(v.Rows, row)
	}
	// Easy wins drawn last, on top.
	slices.SortStableFunc(p.Points, func(a, b point) int {
		if a.Easy == b.Easy {
			return 0
		}
		if a.Easy {
			return 1
		}
		return -1
	})
	v.Plot = p
	return v
}
