package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/contentapi/contentapi/internal/credits"
	"github.com/contentapi/contentapi/internal/keywords/sample"
	"github.com/contentapi/contentapi/internal/report"
)

// axeScript is axe-core's standalone script (testdata/axe, with its licence), injected
// into each page the browser tests check.
var axeScript = func() string {
	b, err := os.ReadFile("testdata/axe/axe.min.js")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

// axe runs axe-core on the page shown and fails on any serious or critical violation.
func (c *chrome) axe(name string) {
	c.t.Helper()
	// The dashboard's CSP allows only its own scripts; the test's script comes through the
	// protocol, which CSP does not govern once bypassed.
	c.do(name+" axe", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, cdppage.SetBypassCSP, cdppage.SetBypassCSPParams{Enabled: true})
		return err
	}), chromedp.Evaluate[chromedp.Void](axeScript))
	found := get(c, name+" axe", chromedp.Evaluate[[]string](`axe.run(document, {resultTypes: ["violations"]}).then(r =>
		r.violations.filter(v => v.impact === "serious" || v.impact === "critical")
			.map(v => v.impact + " " + v.id + ": " + v.help + " (" + v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(", ") + ")"))`,
		chromedp.EvalAwaitPromise))
	if len(found) > 0 {
		c.fail(name, fmt.Errorf("axe-core: %d serious or critical violations:\n%s", len(found), strings.Join(found, "\n")))
	}
}

// signInChrome registers an account with room for every analysis and signs the browser in
// through the mailed link; it returns the account's key.
func signInChrome(t *testing.T, e *env, c *chrome, email string) string {
	t.Helper()
	key := e.register(t, email)
	ctx := context.Background()
	acct, err := e.Accounts.GetByEmail(ctx, email)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Accounts.SetPlan(ctx, acct.ID, "enterprise", 10000, 0); err != nil {
		t.Fatal(err)
	}
	now := e.Clock.Now()
	if _, err := e.Ledger.Grant(ctx, credits.Grant{AccountID: acct.ID, Amount: 500, IssuedAt: now, ExpiresAt: now.AddDate(0, 1, 0),
		Source: credits.SourceOperator, SourceRef: "browser reports"}); err != nil {
		t.Fatal(err)
	}
	link := e.Mail.Next(t).Link(t)
	c.do("open the mailed link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID("continue")))
	c.do("confirm", chromedp.Click(chromedp.ID("continue")), chromedp.WaitVisible(chromedp.ID("credits-remaining")))
	return key
}

// brokenWords lists the words of the report's text (URLs aside) that a line break cuts:
// each word's range must lie on one line.
const brokenWords = `(() => {
	const out = [];
	const walk = document.createTreeWalker(document.getElementById("report"), NodeFilter.SHOW_TEXT);
	for (let n = walk.nextNode(); n && out.length < 10; n = walk.nextNode()) {
		const el = n.parentElement;
		if (el.closest(".url, svg, .sr-only, details:not([open])") || el.offsetParent === null) continue;
		const re = /\S+/g;
		for (let m; (m = re.exec(n.data)) && out.length < 10;) {
			const r = document.createRange();
			r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
			const tops = new Set(Array.from(r.getClientRects()).filter(x => x.width > 0).map(x => Math.round(x.top)));
			if (tops.size > 1) out.push(m[0]);
		}
	}
	return out;
})()`

// chartLabels lists the charts' labels that stick out of their chart or are drawn under
// 10 px high.
const chartLabels = `Array.from(document.querySelectorAll("#report figure svg text")).filter(t => {
	const r = t.getBoundingClientRect(), box = t.ownerSVGElement.getBoundingClientRect();
	return r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1 || r.height < 10;
}).slice(0, 8).map(t => t.textContent + " " + Math.round(t.getBoundingClientRect().height) + "px")`

// hundredRankings is a rankings result of 100 rows with long keywords and URLs, as JSON.
func hundredRankings(t *testing.T) []byte {
	r := report.RankingsResult{Domain: "javajournal-sample.example", Country: "us", Total: 4321, Source: "local",
		PositionBands: report.PositionBands{Top3: 12, Top10: 40, Page2: 90, To50: 1800, To100: 2379}}
	next := "opaque-cursor"
	r.NextCursor = &next
	for i := range 100 {
		vol, diff, cpc, traffic := int64(123456-i*1000), float64(i%100), 0.19+float64(i)/7, int64(54321-i*500)
		url := fmt.Sprintf("https://javajournal-sample.example/how-to/brew/informational-guides/%d-the-longest-slug-anyone-wrote-for-coffee", i)
		kw := []string{"cold brew ratio", "how long to steep cold brew", "is cold brew stronger than regular coffee", "nitro cold brew",
			"best coffee for cold brew at home", "cold brew vs iced coffee", "v60 recipe", "how to make cold brew concentrate"}[i%8]
		r.Rankings = append(r.Rankings, report.RankingRecord{Keyword: fmt.Sprintf("%s %d", kw, i), Position: 1 + i,
			URL: &url, SearchVolume: &vol, Difficulty: &diff, CPC: &cpc, SearchIntent: []string{"informational", "commercial", "transactional", "navigational"}[i%4],
			EstimatedTraffic: &traffic})
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// analyses runs one analysis of every kind through the API (on the imported sample data and
// a local site) and returns their job ids by report kind.
func analyses(t *testing.T, e *env, key string) map[string]string {
	t.Helper()
	doms := sample.Domains()
	site := localSite(t)
	calls := []struct{ kind, path, body string }{
		{"research", "/v1/keywords/research", `{"domain":"` + doms[0] + `","topic":"coffee","limit":30}`},
		{"gaps", "/v1/keywords/gaps", `{"domain":"` + doms[0] + `","competitors":["` + doms[1] + `","` + doms[2] + `"]}`},
		{"audit", "/v1/content/audit", `{"domain":"` + site + `","max_pages":10}`},
		{"recommend", "/v1/content/recommend", `{"domain":"` + site + `","focus_topics":["coffee"],"competitors":["` + doms[1] + `"],"limit":5}`},
		{"contentmap", "/v1/content-map", `{"domain":"` + doms[0] + `","competitors":["` + doms[1] + `","` + doms[2] + `"],"focus_topics":["coffee"]}`},
		{"rankings", "/v1/keywords/rankings", `{"domain":"javajournal-sample.example","limit":20}`},
		{"competitors", "/v1/keywords/competitors", `{"domain":"javajournal-sample.example","limit":8}`},
	}
	ids := map[string]string{}
	idRE := regexp.MustCompile(`"job_id":"([0-9a-f-]{36})"`)
	for _, call := range calls {
		status, body := e.call(t, key, http.MethodPost, call.path, call.body)
		m := idRE.FindStringSubmatch(body)
		if status != http.StatusOK || m == nil {
			t.Fatalf("%s: %d %s", call.path, status, body)
		}
		ids[call.kind] = m[1]
	}
	return ids
}

// Every report kind in Chromium at desktop and phone width: the report shows, nothing
// scrolls sideways, axe-core finds no serious violation, tables sort; then a report is
// shared, opened in a fresh browser context with no cookies, printed to PDF, and revoked.
func TestBrowserReports(t *testing.T) {
	e := startEnv(t)
	desk := startChrome(t, desktopWidth)
	key := signInChrome(t, e, desk, uniqueEmail("reports"))
	ids := analyses(t, e, key)

	phone := startChrome(t, phoneWidth)
	// The phone's account runs its own analyses: a job is its account's only.
	phoneIDs := analyses(t, e, signInChrome(t, e, phone, uniqueEmail("reports-phone")))

	for _, run := range []struct {
		c   *chrome
		ids map[string]string
	}{{desk, ids}, {phone, phoneIDs}} {
		c, w := run.c, run.c.width
		for _, p := range []struct{ path, wait string }{
			{"/dashboard", "credits-remaining"}, {"/dashboard/jobs", "jobs"}, {"/dashboard/keys", "key-name"}, {"/dashboard/billing", "current-plan"},
		} {
			c.do(fmt.Sprintf("%s at %d", p.path, w), chromedp.Navigate(e.URL+p.path), chromedp.WaitVisible(chromedp.ID(p.wait)))
			c.page(fmt.Sprintf("%s at %d", strings.TrimPrefix(p.path, "/"), w))
		}
		for _, kind := range []string{"research", "gaps", "rankings", "competitors", "audit", "recommend", "contentmap"} {
			name := fmt.Sprintf("%s report at %d", kind, w)
			c.do(name, chromedp.Navigate(e.URL+"/dashboard/jobs/"+run.ids[kind]), chromedp.WaitVisible(chromedp.CSS(`#report[data-kind="`+kind+`"]`)))
			c.page(name)
			// Chart labels: inside their chart, and at least 10 px tall once scaled.
			if bad := get(c, name, chromedp.Evaluate[[]string](chartLabels)); len(bad) > 0 {
				c.fail(name, fmt.Errorf("chart labels clipped or too small: %q", bad))
			}
		}
		name := fmt.Sprintf("audit issue page at %d", w)
		c.do(name, chromedp.Navigate(e.URL+"/dashboard/jobs/"+run.ids["audit"]+"/issues/missing_viewport"), chromedp.WaitVisible(chromedp.ID("issue-urls")))
		c.page(name)
	}

	// A page of 100 rankings (the sample's sites rank for fewer: the stored result is
	// replaced by one of 100 rows) fits a phone: no sideways scroll, no word broken inside,
	// position bands in numeric order, no internals, and a page under 5,000 px.
	for _, run := range []struct {
		c   *chrome
		ids map[string]string
	}{{desk, ids}, {phone, phoneIDs}} {
		c, w := run.c, run.c.width
		if _, err := e.Pool.Exec(context.Background(), `UPDATE jobs SET result = $2 WHERE id = $1`, run.ids["rankings"], hundredRankings(t)); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("100 rankings at %d", w)
		c.do(name, chromedp.Navigate(e.URL+"/dashboard/jobs/"+run.ids["rankings"]), chromedp.WaitVisible(chromedp.ID("rankings-table")))
		c.page(name)
		height := get(c, name, chromedp.Evaluate[int](`document.documentElement.scrollHeight`))
		rows := get(c, name, chromedp.Evaluate[int](`document.querySelectorAll("#rankings-table tbody tr").length`))
		t.Logf("%s: %d rows, page %d px tall", name, rows, height)
		t.Logf("layout: %s", get(c, name, chromedp.Evaluate[string](`["rankings-summary","bands-h","rankings-table","next-page","job-details","share"].map(id => { const e = document.getElementById(id); return e ? id + " " + Math.round(e.getBoundingClientRect().top + scrollY) + "+" + Math.round(e.getBoundingClientRect().height) : id + " none" }).join("; ") + "; rows " + Array.from(document.querySelectorAll("#rankings-table tbody tr")).slice(0, 8).map(r => Math.round(r.getBoundingClientRect().height)).join(",")`)))
		if rows != 100 || (w == phoneWidth && height >= 5000) {
			c.fail(name, fmt.Errorf("%d rows, page %d px tall (at most 5,000 at %d px)", rows, height, w))
		}
		if broken := get(c, name, chromedp.Evaluate[[]string](brokenWords)); len(broken) > 0 {
			c.fail(name, fmt.Errorf("words broken across lines: %q", broken))
		}
		bands := get(c, name, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#report .hchart text.lbl")).map(t => t.textContent)`))
		if strings.Join(bands, ",") != "Positions 1–3,Positions 4–10,Positions 11–20,Positions 21–50,Positions 51–100" {
			c.fail(name, fmt.Errorf("bands %q", bands))
		}
		text := get(c, name, chromedp.Evaluate[string](`document.getElementById("report").innerText`))
		for _, bad := range []string{"Next cursor", "Source local", "next_cursor"} {
			if strings.Contains(text, bad) {
				c.fail(name, fmt.Errorf("the report shows %q", bad))
			}
		}
		// The findings come first: the summary is above the job's details and share box.
		order := get(c, name, chromedp.Evaluate[bool](`document.getElementById("rankings-summary").getBoundingClientRect().top < document.getElementById("job-details").getBoundingClientRect().top &&
			document.getElementById("job-details").getBoundingClientRect().top < document.getElementById("share").getBoundingClientRect().top`))
		if !order {
			c.fail(name, fmt.Errorf("the report does not open with its summary"))
		}
	}

	// Sorting the research's first table by volume, both ways.
	c := desk
	c.do("research", chromedp.Navigate(e.URL+"/dashboard/jobs/"+ids["research"]), chromedp.WaitVisible(chromedp.ID("report")))
	volumes := func() []float64 {
		return get(c, "volumes", chromedp.Evaluate[[]float64](`Array.from(document.querySelector("table.sortable").tBodies[0].rows).map(r => parseFloat(r.cells[0].dataset.v || "-1"))`))
	}
	c.do("sort by volume", chromedp.Click(chromedp.CSS(`table.sortable th:nth-child(2) button`)))
	up := volumes()
	c.do("sort by volume again", chromedp.Click(chromedp.CSS(`table.sortable th:nth-child(2) button`)))
	down := volumes()
	if len(up) < 2 || up[0] > up[len(up)-1] || down[0] < down[len(down)-1] {
		c.fail("sort", fmt.Errorf("ascending %v, descending %v", up, down))
	}

	// Share the audit for 3 days; the link shown once.
	jobURL := e.URL + "/dashboard/jobs/" + ids["audit"]
	c.do("audit", chromedp.Navigate(jobURL), chromedp.WaitVisible(chromedp.CSS("#share > summary")),
		chromedp.Click(chromedp.CSS("#share > summary")), chromedp.WaitVisible(chromedp.ID("create-share")))
	c.do("share", chromedp.SetValue(chromedp.ID("share-days"), "3"), chromedp.Click(chromedp.ID("create-share")), chromedp.WaitVisible(chromedp.ID("share-link")))
	c.page("shared link made")
	link := get(c, "share link", chromedp.Value(chromedp.ID("share-link")))

	// A fresh browser context: no cookies, no session.
	freshCtx, cancel := chromedp.NewContext(desk.ctx, chromedp.WithNewBrowserContext())
	defer cancel()
	fresh := &chrome{t: t, ctx: freshCtx, width: desktopWidth}
	// Its first action opens its tab, on freshCtx itself (a deadline would close the tab).
	if err := chromedp.Do(freshCtx, chromedp.Navigate("about:blank"), chromedp.EmulateViewport(desktopWidth, 900)); err != nil {
		t.Fatalf("fresh browser context: %v", err)
	}
	open := func(step string) int64 {
		ctx, cancel := context.WithTimeout(freshCtx, 20*time.Second)
		defer cancel()
		resp, err := chromedp.RunResponse(ctx, chromedp.Navigate(link))
		if err != nil {
			fresh.fail(step, err)
		}
		return resp.Status
	}
	if status := open("open the shared link"); status != http.StatusOK {
		fresh.fail("open the shared link", fmt.Errorf("status %d", status))
	}
	fresh.do("shared report", chromedp.WaitVisible(chromedp.CSS(`#report[data-kind="audit"]`)))
	fresh.page("shared report")
	text := get(fresh, "shared report", chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	cookies := get(fresh, "cookies", chromedp.Evaluate[string](`document.cookie`))
	if strings.Contains(text, "Sign out") || strings.Contains(text, "@example.com") || strings.Contains(text, `name="csrf"`) || cookies != "" {
		fresh.fail("shared report", fmt.Errorf("the shared page shows the account or sets cookies (%q)", cookies))
	}

	// Printed: a PDF of a few pages, and in print layout no table is wider than the paper.
	pdf := get(fresh, "print", chromedp.PrintToPDF(chromedp.PDFPaper(chromedp.PaperA4)))
	pages := len(regexp.MustCompile(`/Type\s*/Page[^s]`).FindAll(pdf, -1))
	if !bytes.HasPrefix(pdf, []byte("%PDF-")) || len(pdf) < 5000 || pages < 1 || pages > 30 {
		fresh.fail("print", fmt.Errorf("PDF of %d bytes, %d pages", len(pdf), pages))
	}
	fresh.do("print layout", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "print"})
		return err
	}), chromedp.EmulateViewport(700, 1000))
	cut := get(fresh, "print layout", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("table, svg, pre")).filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1 || e.scrollWidth > e.clientWidth + 1).map(e => e.tagName + "#" + e.id + " " + Math.round(e.getBoundingClientRect().right))`))
	// Every folded section is open on paper, and sortable tables keep their headings.
	shown := get(fresh, "print layout", chromedp.Evaluate[bool](`Array.from(document.querySelectorAll("details.issue table, table.sortable th button")).every(t => t.getBoundingClientRect().height > 0)`))
	if len(cut) > 0 || !shown {
		fresh.fail("print layout", fmt.Errorf("cut in print: %v; issue details shown: %v", cut, shown))
	}
	fresh.shot("print layout")
	fresh.do("screen again", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{})
		return err
	}))

	// Revoked from the dashboard: the link answers 410 Gone.
	c.do("revoke", chromedp.Navigate(jobURL), chromedp.WaitVisible(chromedp.CSS(`#shares button.danger`)),
		chromedp.Click(chromedp.CSS(`#shares button.danger`)), chromedp.WaitVisible(`//table[@id="shares"]//td[.="revoked"]`))
	c.page("link revoked")
	if status := open("revoked link"); status != http.StatusGone {
		fresh.fail("revoked link", fmt.Errorf("status %d", status))
	}
	fresh.page("revoked link")
	// DASHBOARD_SCREENSHOTS=dir keeps the pages of a passing run too, and the PDF.
	if dir := os.Getenv("DASHBOARD_SCREENSHOTS"); dir != "" {
		for i, ch := range []*chrome{desk, phone, fresh} {
			sub := filepath.Join(dir, []string{"desktop", "phone", "shared"}[i])
			if err := os.MkdirAll(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := ch.save(sub); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "shared-report.pdf"), pdf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
