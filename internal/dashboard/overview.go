package dashboard

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/contentapi/contentapi/internal/credits"
	"github.com/contentapi/contentapi/internal/job"
)

// ChartDays is how many days the usage chart covers, today included.
const ChartDays = 30

func (d *Dashboard) overviewRoutes(r fiber.Router) {
	r.Get("/", d.signedIn, d.overview)
}

type overviewData struct {
	Usage  credits.Usage
	Grants []credits.SpendableGrant
	Chart  Chart
	Jobs   []job.Summary
}

func (d *Dashboard) overview(c *fiber.Ctx) error {
	s, _ := sessionOf(c)
	ctx := c.UserContext()
	u, err := d.Ledger.Usage(ctx, s.Account.ID)
	if err != nil {
		return err
	}
	now := d.Clock.Now()
	grants, err := d.Ledger.SpendableGrants(ctx, s.Account.ID)
	if err != nil {
		return err
	}
	daily, err := d.Ledger.DailySpend(ctx, s.Account.ID, startOfDay(now).AddDate(0, 0, -(ChartDays-1)))
	if err != nil {
		return err
	}
	jobs, _, err := d.Jobs.List(ctx, s.Account.ID, job.ListQuery{Limit: 10})
	if err != nil {
		return err
	}
	return d.render(c, fiber.StatusOK, "overview", view{Title: "Overview", Nav: "overview",
		Data: overviewData{Usage: u, Grants: grants, Chart: NewChart(daily, now), Jobs: jobs}})
}

func startOfDay(t time.Time) time.Time {
	y, m, dd := t.UTC().Date()
	return time.Date(y, m, dd, 0, 0, 0, 0, time.UTC)
}

// Chart is the credits-per-day bar chart, laid out for an SVG drawn by the template.
type Chart struct {
	Width, Height int
	Bars          []Bar
	Max           int // the value of the top of the scale
	Total         int // credits used over the chart's days: the overview's "used" figure
	Days          int
	First, Last   string // the first and last day
}

// Bar is one day's bar: where it stands, and its day and credits for labels.
type Bar struct {
	X, Y, W, H float64
	Day        string
	Credits    int
}

const (
	chartWidth  = 600
	chartHeight = 160
	chartTop    = 10 // room above the tallest bar
)

// NewChart lays out the last ChartDays UTC days up to now's, from credits per day
// ("2006-01-02" keys; days missing used none).
func NewChart(daily map[string]int, now time.Time) Chart {
	ch := Chart{Width: chartWidth, Height: chartHeight, Days: ChartDays}
	first := startOfDay(now).AddDate(0, 0, -(ChartDays - 1))
	for i := 0; i < ChartDays; i++ {
		n := daily[first.AddDate(0, 0, i).Format(time.DateOnly)]
		ch.Max = max(ch.Max, n)
		ch.Total += n
	}
	slot := float64(chartWidth) / ChartDays
	for i := 0; i < ChartDays; i++ {
		day := first.AddDate(0, 0, i).Format(time.DateOnly)
		b := Bar{X: float64(i)*slot + 1, W: slot - 2, Day: day, Credits: daily[day], Y: chartHeight}
		if ch.Max > 0 && b.Credits > 0 {
			b.H = max(1, float64(b.Credits)/float64(ch.Max)*(chartHeight-chartTop))
			b.Y = chartHeight - b.H
		}
		ch.Bars = append(ch.Bars, b)
	}
	ch.First, ch.Last = ch.Bars[0].Day, ch.Bars[ChartDays-1].Day
	return ch
}
