package dashboard

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/auth"
	"github.com/contentapi/contentapi/internal/credits"
	"github.com/contentapi/contentapi/internal/job"
)

// UsageDays are the spans the usage page offers, in days up to today.
var UsageDays = []int{30, 90}

// maxSeries is how many endpoints or keys a stacked chart draws apart; the rest are summed
// as "Other".
const maxSeries = 7

// seriesColors tell series apart for colour-blind readers too (the Okabe–Ito palette); the
// last is "Other".
var seriesColors = []string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#8a8a8a"}

func (d *Dashboard) usageRoutes(r fiber.Router) {
	r.Get("/usage", d.signedIn, d.usagePage)
	r.Post("/usage/alerts", d.signedIn, d.setAlerts)
}

// keyUse is one key's calls, as the usage page lists them.
type keyUse struct {
	Name, Prefix, Status string
	Calls                int64 // every authenticated request, ever
	Analyses, Credits    int   // in the span shown
}

type usageData struct {
	Days       int
	Spans      []int
	Usage      credits.Usage
	ByEndpoint StackedChart
	ByKey      StackedChart
	Keys       []keyUse
	// Dashboard is what analyses run from the dashboard made in the span shown; Unrecorded
	// what calls whose key was not recorded made (before keys were, or a deleted key).
	Dashboard, Unrecorded keyUse
	Alerts                bool
}

func (d *Dashboard) usagePage(c *fiber.Ctx) error {
	s, _ := sessionOf(c)
	days := UsageDays[0]
	if q := c.Query("days"); q != "" {
		if days = c.QueryInt("days"); !slices.Contains(UsageDays, days) {
			return apperr.Invalid("Choose 30 or 90 days.")
		}
	}
	var notice string
	switch c.Query("alerts") {
	case "on":
		notice = "Low-balance e-mails are on: you get one when your balance falls below a tenth of your period's credits."
	case "off":
		notice = "Low-balance e-mails are off."
	}
	ctx := c.UserContext()
	now := d.Clock.Now()
	u, err := d.Ledger.Usage(ctx, s.Account.ID)
	if err != nil {
		return err
	}
	spend, err := d.Ledger.SpendSince(ctx, s.Account.ID, startOfDay(now).AddDate(0, 0, -(days-1)))
	if err != nil {
		return err
	}
	keys, err := d.Accounts.ListKeys(ctx, s.Account.ID)
	if err != nil {
		return err
	}
	alerts, err := d.alertsOn(ctx, s.Account.ID)
	if err != nil {
		return err
	}
	data := usageData{Days: days, Spans: UsageDays, Usage: u, Alerts: alerts,
		ByEndpoint: NewStackedChart(spend, func(x credits.Spend) string { return x.Endpoint }, days, now),
		ByKey:      NewStackedChart(spend, channelName, days, now)}
	data.Keys, data.Dashboard, data.Unrecorded = keyUses(keys, spend, now)
	return d.render(c, fiber.StatusOK, "usage", view{Title: "Usage", Nav: "usage", Notice: notice, Data: data})
}

// channelName names who made a call: its key, the dashboard, or a key not recorded (calls
// made before keys were recorded, or with a key since deleted).
func channelName(x credits.Spend) string {
	switch {
	case x.Source == job.SourceDashboard:
		return "Dashboard"
	case x.KeyID != nil:
		return fmt.Sprintf("%s (%s…)", x.KeyName, x.KeyPrefix)
	}
	return "Key not recorded"
}

// keyUses is each key's calls, the dashboard's, and those of no recorded key, in the span
// spend covers.
func keyUses(keys []auth.Key, spend []credits.Spend, now time.Time) ([]keyUse, keyUse, keyUse) {
	byKey := map[uuid.UUID]*keyUse{}
	out := make([]keyUse, len(keys))
	for i, k := range keys {
		out[i] = keyUse{Name: k.Name, Prefix: k.KeyPrefix, Status: k.Status(now), Calls: k.Calls}
		byKey[k.ID] = &out[i]
	}
	dash, unrecorded := keyUse{Name: "Dashboard"}, keyUse{Name: "Key not recorded"}
	for _, x := range spend {
		u := &unrecorded
		switch {
		case x.Source == job.SourceDashboard:
			u = &dash
		case x.KeyID != nil && byKey[*x.KeyID] != nil:
			u = byKey[*x.KeyID]
		}
		u.Analyses += x.Calls
		u.Credits += x.Credits
	}
	return out, dash, unrecorded
}

// stackedView is what the "stacked" template draws: a chart with its element id, title and
// the name of its series' column.
type stackedView struct {
	ID, Title, Column string
	Chart             StackedChart
}

func stacked(id, title, column string, ch StackedChart) stackedView {
	return stackedView{ID: id, Title: title, Column: column, Chart: ch}
}

// StackedChart is credits per day split into series (endpoints or keys), laid out for an
// SVG drawn by the template, with the numbers for its table.
type StackedChart struct {
	Width, Height int
	Days          []StackedDay
	Series        []Series
	Max, Total    int
	First, Last   string
}

// Series is one stacked series: its name, colour and total.
type Series struct {
	Name, Color string
	Credits     int
}

// StackedDay is one day's bar: its segments bottom up. X and W are SVG coordinates,
// formatted once here rather than by the template for each segment.
type StackedDay struct {
	Day      string
	X, W     string
	Credits  int
	Segments []Segment
}

// Segment is one series' part of a day's bar (Y and H formatted as SVG coordinates).
type Segment struct {
	Y, H    string
	Series  string
	Color   string
	Credits int
}

func coord(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// NewStackedChart lays out the credits of spend per UTC day of the last days days up to
// now's, stacked by the series name picks; the largest series are drawn apart and the rest
// summed as "Other".
func NewStackedChart(spend []credits.Spend, name func(credits.Spend) string, days int, now time.Time) StackedChart {
	ch := StackedChart{Width: chartWidth, Height: chartHeight}
	first := startOfDay(now).AddDate(0, 0, -(days - 1))
	// Rows outside the span (SpendSince returns none) count nowhere.
	from, to := first.Format(time.DateOnly), startOfDay(now).Format(time.DateOnly)
	spend = slices.DeleteFunc(slices.Clone(spend), func(x credits.Spend) bool { return x.Day < from || x.Day > to })
	totals := map[string]int{}
	for _, x := range spend {
		if x.Credits > 0 {
			totals[name(x)] += x.Credits
		}
	}
	names := make([]string, 0, len(totals))
	for n := range totals {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(totals[b], totals[a]), cmp.Compare(a, b)) })
	color := map[string]string{}
	for i, n := range names {
		if i < maxSeries || len(names) == maxSeries+1 {
			color[n] = seriesColors[i]
			ch.Series = append(ch.Series, Series{Name: n, Color: seriesColors[i], Credits: totals[n]})
			continue
		}
		if i == maxSeries {
			ch.Series = append(ch.Series, Series{Name: "Other", Color: seriesColors[maxSeries]})
		}
		ch.Series[maxSeries].Credits += totals[n]
	}
	seriesOf := func(n string) int {
		if _, ok := color[n]; ok {
			return slices.IndexFunc(ch.Series, func(s Series) bool { return s.Name == n })
		}
		return maxSeries
	}
	perDay := map[string][]int{}
	for _, x := range spend {
		if x.Credits == 0 {
			continue
		}
		row := perDay[x.Day]
		if row == nil {
			row = make([]int, len(ch.Series))
			perDay[x.Day] = row
		}
		row[seriesOf(name(x))] += x.Credits
	}
	slot := float64(chartWidth) / float64(days)
	for i := range days {
		day := first.AddDate(0, 0, i).Format(time.DateOnly)
		sd := StackedDay{Day: day, X: coord(float64(i)*slot + slot*0.1), W: coord(slot * 0.8)}
		for _, n := range perDay[day] {
			sd.Credits += n
		}
		ch.Max = max(ch.Max, sd.Credits)
		ch.Total += sd.Credits
		ch.Days = append(ch.Days, sd)
	}
	for i := range ch.Days {
		sd := &ch.Days[i]
		y := float64(chartHeight)
		for si, n := range perDay[sd.Day] {
			if n == 0 {
				continue
			}
			h := max(1, float64(n)/float64(ch.Max)*(chartHeight-chartTop))
			y -= h
			sd.Segments = append(sd.Segments, Segment{Y: coord(y), H: coord(h), Series: ch.Series[si].Name, Color: ch.Series[si].Color, Credits: n})
		}
	}
	ch.First, ch.Last = ch.Days[0].Day, ch.Days[len(ch.Days)-1].Day
	return ch
}
