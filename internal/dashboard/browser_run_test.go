package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/job"
	"github.com/contentapi/contentapi/internal/keywords/sample"
)

// Running an analysis from the dashboard in Chromium, at desktop and phone widths: the
// form's validation errors next to their fields (a sort key refused at its row), the dry
// run's cost, the run with three sort keys, the job page's
// progress reloading itself until the job ends, and the usage page's charts; no page
// scrolls sideways.
func TestBrowserRunAnalysis(t *testing.T) {
	for _, width := range []int{1280, 390} {
		t.Run(strconv.Itoa(width), func(t *testing.T) { browserRunAnalysis(t, width) })
	}
}

func browserRunAnalysis(t *testing.T, width int) {
	e := startEnv(t)
	c := startChrome(t, width)
	email := uniqueEmail("browser-run")
	e.register(t, email)
	c.do("sign in", chromedp.Navigate(e.Mail.Next(t).Link(t)), chromedp.WaitVisible(chromedp.ID("continue")),
		chromedp.Click(chromedp.ID("continue")), chromedp.WaitVisible(chromedp.ID("credits-remaining")))
	acct := e.account(t, email)

	c.do("new analysis", chromedp.Click(chromedp.CSS(`nav a[href="/dashboard/new"]`)), chromedp.WaitVisible(chromedp.ID("analyses")))
	c.page("new analysis")
	c.do("research form", chromedp.Click(chromedp.CSS(`a[href="/dashboard/new/keywords-research"]`)), chromedp.WaitVisible(chromedp.ID("f-domain")))
	c.page("research form")

	// An invalid domain: the API's message next to the field, which points to it.
	c.do("invalid domain", chromedp.SetValue(chromedp.ID("f-domain"), "not a domain!"), chromedp.Click(chromedp.ID("check-cost")),
		chromedp.WaitVisible(chromedp.ID("domain-error")))
	c.page("invalid domain")
	msg := get(c, "invalid domain", chromedp.Text(chromedp.ID("domain-error")))
	next := get(c, "invalid domain", chromedp.Evaluate[bool](`(() => {
		const f = document.getElementById("f-domain");
		return f.getAttribute("aria-invalid") === "true" && f.getAttribute("aria-describedby").split(" ").includes("domain-error") &&
			document.getElementById("domain-error").closest(".field").contains(f);
	})()`))
	if !strings.HasPrefix(msg, "domain ") || !next {
		c.fail("invalid domain", fmt.Errorf("error %q, beside its field %v", msg, next))
	}

	// Sort keys the API refuses (a field twice): its message at the order keys, the row it
	// is about marked.
	c.do("order twice", chromedp.SetValue(chromedp.ID("f-domain"), sample.Domains()[0]),
		chromedp.SetValue(chromedp.ID("f-order_by-1-field"), "search_volume"), chromedp.SetValue(chromedp.ID("f-order_by-2-field"), "search_volume"),
		chromedp.SetValue(chromedp.ID("f-order_by-2-dir"), "asc"), chromedp.Click(chromedp.ID("check-cost")), chromedp.WaitVisible(chromedp.ID("order_by-error")))
	c.page("order twice")
	msg = get(c, "order twice", chromedp.Text(chromedp.ID("order_by-error")))
	marked := get(c, "order twice", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#f-order_by select[aria-invalid="true"]')).map(s => s.id)`))
	if msg != "order_by[1] names search_volume a second time" || strings.Join(marked, " ") != "f-order_by-2-field f-order_by-2-dir" {
		c.fail("order twice", fmt.Errorf("error %q, marked %v", msg, marked))
	}

	// Fixed (three keys) and checked: the dry run's cost and the balance after it, the keys kept.
	c.do("check cost", chromedp.SetValue(chromedp.ID("f-topic"), "coffee"), chromedp.SetValue(chromedp.ID("f-limit"), "10"),
		chromedp.SetValue(chromedp.ID("f-order_by-2-field"), "keyword_difficulty"), chromedp.SetValue(chromedp.ID("f-order_by-3-field"), "keyword"),
		chromedp.SetValue(chromedp.ID("f-order_by-3-dir"), "asc"), chromedp.Click(chromedp.ID("check-cost")), chromedp.WaitVisible(chromedp.ID("cost")))
	c.page("cost")
	keys := get(c, "cost", chromedp.Evaluate[string](`Array.from(document.querySelectorAll("#f-order_by select")).map(s => s.value).join(" ")`))
	if keys != "search_volume desc keyword_difficulty asc keyword asc" {
		c.fail("cost", fmt.Errorf("order keys after the check %q", keys))
	}
	cost := get(c, "cost", chromedp.Text(chromedp.ID("cost-credits")))
	after := get(c, "cost", chromedp.Text(chromedp.ID("cost-after")))
	if cost != "5" || after != "45" || e.balance(t, acct.ID) != 50 {
		c.fail("cost", fmt.Errorf("cost %q, after %q, balance %d", cost, after, e.balance(t, acct.ID)))
	}

	// Typing after the check makes the script say the cost is stale.
	c.do("stale cost", chromedp.SendKeys(chromedp.ID("f-topic"), " beans"),
		chromedp.WaitVisible(`//p[@id="cost"][contains(., "check the cost again")]`), chromedp.SetValue(chromedp.ID("f-topic"), "coffee"))

	// Run: the job's page, which reloads itself until the job is done.
	c.do("run", chromedp.Click(chromedp.ID("run")), chromedp.WaitVisible(chromedp.ID("job-status")))
	c.page("job")
	c.do("job done", chromedp.WaitVisible(`//*[@id="job-status"][.="succeeded"]`), chromedp.WaitVisible(chromedp.ID("report")))
	c.page("job done")
	if e.balance(t, acct.ID) != 45 {
		c.fail("job done", fmt.Errorf("balance %d, want 45", e.balance(t, acct.ID)))
	}
	loc := get(c, "job done", chromedp.Location())
	ran, err := e.Jobs.Get(context.Background(), acct.ID, uuid.MustParse(loc[strings.LastIndex(loc, "/")+1:]))
	var req struct {
		OrderBy []string `json:"order_by"`
	}
	if err == nil {
		err = json.Unmarshal(ran.Request, &req)
	}
	if want := []string{"search_volume.desc", "keyword_difficulty.asc", "keyword.asc"}; err != nil || !slices.Equal(req.OrderBy, want) {
		c.fail("job done", fmt.Errorf("the job's order_by %v (%v), want %v", req.OrderBy, err, want)) //nolint:errorlint // err may be nil
	}

	// Progress seen for sure: a job no worker takes stays queued; its page shows progress and
	// reloads itself, and shows the job's end without being navigated.
	held, err := e.Jobs.Submit(context.Background(), job.Submission{AccountID: acct.ID, Kind: "test:held",
		Endpoint: "/v1/keywords/research", Cost: 5, Request: map[string]string{"domain": "held.example"}, Source: job.SourceDashboard})
	if err != nil {
		t.Fatal(err)
	}
	c.do("progress", chromedp.Navigate(e.URL+"/dashboard/jobs/"+held.ID.String()), chromedp.WaitVisible(chromedp.ID("job-progress")))
	c.page("progress")
	if _, err := e.Jobs.Fail(context.Background(), held.ID, apperr.ProviderError, "held by the test"); err != nil {
		t.Fatal(err)
	}
	c.do("progress ends", chromedp.WaitVisible(`//dd[@id="job-status"][.="failed"]`), chromedp.WaitNotPresent(chromedp.ID("job-progress")))

	// Usage: both charts have today's bar: the research by endpoint, the dashboard by key.
	today := e.Clock.Now().UTC().Format(time.DateOnly)
	c.do("usage", chromedp.Click(chromedp.CSS(`nav a[href="/dashboard/usage"]`)), chromedp.WaitVisible(chromedp.ID("usage-by-key")))
	c.do("usage numbers", chromedp.Click(`//section[@aria-labelledby="by-key-h"]//summary`))
	c.page("usage")
	byEndpoint := get(c, "usage", chromedp.AttributeValue(chromedp.CSS(`#usage-by-endpoint rect[data-day="`+today+`"][data-series="/v1/keywords/research"]`), "data-credits"))
	byKey := get(c, "usage", chromedp.AttributeValue(chromedp.CSS(`#usage-by-key rect[data-day="`+today+`"][data-series="Dashboard"]`), "data-credits"))
	if byEndpoint.Value != "5" || byKey.Value != "5" {
		c.fail("usage", fmt.Errorf("today's research %q, dashboard %q credits", byEndpoint.Value, byKey.Value))
	}
	c.do("usage 90 days", chromedp.Click(chromedp.CSS(`a[href="/dashboard/usage?days=90"]`)),
		chromedp.WaitVisible(`//a[@aria-current="page"][.="Last 90 days"]`))
	c.page("usage 90 days")

	// DASHBOARD_SCREENSHOTS=dir keeps the pages of a passing run too, to look at.
	if dir := os.Getenv("DASHBOARD_SCREENSHOTS"); dir != "" {
		if err := c.save(filepath.Join(dir, "run-"+strconv.Itoa(width))); err != nil {
			t.Fatal(err)
		}
	}
}
