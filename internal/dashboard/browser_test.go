package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/contentapi/contentapi/internal/keywords/sample"
)

// chromium finds Debian's Chromium (`make test` installs it when missing).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("Chromium is not installed: run `make test`, or apt-get install -y chromium")
	return ""
}

// chrome is a headless Chromium at a device's width (a phone's, 390 px, or a desktop's)
// driving the dashboard. On failure it writes a screenshot of the page that failed to a
// directory that is kept, and with DASHBOARD_SCREENSHOTS set, one of every page it saw
// (taking them is a sixth of the browser tests' CPU time: off by default). Each page it
// checks is also checked with axe-core.
type chrome struct {
	t     *testing.T
	ctx   context.Context
	width int // the device's width in CSS pixels
	shots []shot
}

type shot struct {
	name string
	png  []byte
}

// Device widths the browser tests run at.
const (
	phoneWidth   = 390
	desktopWidth = 1280
)

func startChrome(t *testing.T, width int) *chrome {
	t.Helper()
	// Flags for this closed network: no background connections (they would be refused) and
	// a fresh profile.
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.UserDataDir(t.TempDir()),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first action starts the browser, on ctx itself: a browser started on a context
	// with a deadline would end with it.
	emulate := chromedp.EmulateViewport(desktopWidth, 900)
	if width == phoneWidth {
		emulate = chromedp.EmulateViewport(phoneWidth, 844, chromedp.EmulateMobile)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank"), emulate); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return &chrome{t: t, ctx: ctx, width: width}
}

// do performs a step's actions; on failure it saves the screenshots and stops the test.
func (c *chrome) do(name string, actions ...chromedp.Action[chromedp.Void]) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		c.fail(name, err)
	}
}

// get reads a value from the page, as do performs a step.
func get[T any](c *chrome, name string, a chromedp.Action[T]) T {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		c.fail(name, err)
	}
	return v
}

// page screenshots the page shown when DASHBOARD_SCREENSHOTS is set, checks that it fits
// the device's width without scrolling sideways, and runs axe-core on it.
//
// The width is compared with the device's, not the window's: on a phone Chromium widens
// the layout viewport (window.innerWidth) to fit content wider than the screen, so a page
// compared with its own viewport always fits.
func (c *chrome) page(name string) {
	c.t.Helper()
	// A page that reloads itself (a running job's) is held still while it is checked, and
	// reloaded after: on a loaded machine the checks outlast its reload time.
	held := get(c, name+" hold", chromedp.Evaluate[bool](`(() => {
		if (!document.body.hasAttribute("data-refresh")) return false;
		for (let id = setTimeout(() => {}, 0); id > 0; id--) clearTimeout(id);
		return true })()`))
	if held {
		defer c.do(name+" reload", chromedp.Reload())
	}
	c.shot(name)
	fits := fmt.Sprintf(`document.documentElement.scrollWidth <= %d && window.innerWidth <= %d`, c.width, c.width)
	if !get(c, name+" width", chromedp.Evaluate[bool](fits)) {
		wide := get(c, name+" width", chromedp.Evaluate[[]string](fmt.Sprintf(`Array.from(document.querySelectorAll("body *")).filter(e => e.getBoundingClientRect().right > %d || e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX == "visible").slice(0, 8).map(e => e.tagName + "." + e.className + " " + Math.round(e.getBoundingClientRect().right)).concat(["window " + window.innerWidth, "page " + document.documentElement.scrollWidth])`, c.width)))
		c.fail(name, fmt.Errorf("the page is wider than the %d px device: %v", c.width, wide))
	}
	c.axe(name)
}

func (c *chrome) fail(name string, err error) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)
	defer cancel()
	if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
		c.shots = append(c.shots, shot{"failed-" + name, png})
	}
	dir, derr := os.MkdirTemp("", "dashboard-browser-")
	if derr == nil {
		derr = c.save(dir)
	}
	if derr != nil {
		c.t.Fatalf("%s: %v (screenshots not saved: %v)", name, err, derr)
	}
	every := "; DASHBOARD_SCREENSHOTS=dir keeps every page's"
	if everyShot {
		every = ", and of each page before it"
	}
	c.t.Fatalf("%s: %v (the failed page's screenshot in %s%s)", name, err, dir, every)
}

// everyShot is whether the browser tests keep a screenshot of every page
// (DASHBOARD_SCREENSHOTS), not only of the one that failed.
var everyShot = os.Getenv("DASHBOARD_SCREENSHOTS") != ""

// shot keeps a screenshot of the page shown, under name, when DASHBOARD_SCREENSHOTS is set.
func (c *chrome) shot(name string) {
	c.t.Helper()
	if everyShot {
		c.shots = append(c.shots, shot{name, get(c, name+" screenshot", chromedp.FullScreenshot(100))})
	}
}

// save writes the screenshots to dir, numbered in the order they were taken.
func (c *chrome) save(dir string) error {
	for i, s := range c.shots {
		name := fmt.Sprintf("%02d-%s.png", i, strings.NewReplacer(" ", "-", "/", "-").Replace(s.name))
		if err := os.WriteFile(filepath.Join(dir, name), s.png, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// The whole flow in a real browser: register, open the mailed link, create a key, use it
// against the API, see the call in the chart and open its job, revoke the key, sign out.
func TestBrowserFlow(t *testing.T) {
	e := startEnv(t)
	c := startChrome(t, phoneWidth)
	email := uniqueEmail("browser")
	e.register(t, email)
	link := e.Mail.Next(t).Link(t)

	c.do("open the mailed link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID("continue")))
	c.page("link")
	c.do("confirm", chromedp.Click(chromedp.ID("continue")), chromedp.WaitVisible(chromedp.ID("credits-remaining")))
	c.page("overview")
	if got := get(c, "overview", chromedp.Text(chromedp.ID("credits-remaining"))); got != "50" {
		c.fail("overview", fmt.Errorf("credits remaining %q, want 50", got))
	}

	// A key, created with the keyboard (Enter submits), shown once with a copy button.
	c.do("keys page", chromedp.Click(chromedp.CSS(`nav a[href="/dashboard/keys"]`)), chromedp.WaitVisible(chromedp.ID("key-name")))
	c.page("keys")
	c.do("create a key", chromedp.SetValue(chromedp.ID("key-expiry"), "30"),
		chromedp.SendKeys(chromedp.ID("key-name"), "browser test\r"), chromedp.WaitVisible(chromedp.ID("newkey")))
	key := get(c, "new key", chromedp.Value(chromedp.ID("newkey")))
	c.do("copy", chromedp.Click(chromedp.CSS(`button[data-copy="newkey"]`)))
	copied := get(c, "copy", chromedp.Poll[string](`document.querySelector(".copied").textContent`, chromedp.WithPollingTimeout(5*time.Second)))
	c.page("new key")
	if !strings.HasPrefix(key, "ap_") || copied == "" {
		c.fail("new key", fmt.Errorf("key %q, copy status %q", key, copied))
	}

	// The key against the API: keyword research, 5 credits.
	status, body := e.call(t, key, http.MethodPost, "/v1/keywords/research",
		`{"domain":"`+sample.Domains()[0]+`","topic":"coffee","limit":10}`)
	if status != http.StatusOK {
		t.Fatalf("research with the new key: %d %s", status, body)
	}

	// The call in the chart (today's bar), in the balance and in the recent calls.
	today := e.Clock.Now().UTC().Format(time.DateOnly)
	c.do("overview after the call", chromedp.Click(chromedp.CSS(`nav a[href="/dashboard"]`)), chromedp.WaitVisible(chromedp.ID("usage-chart")))
	c.page("overview after the call")
	bar := get(c, "chart", chromedp.AttributeValue(chromedp.CSS(`#usage-chart rect[data-day="`+today+`"]`), "data-credits"))
	remaining := get(c, "balance", chromedp.Text(chromedp.ID("credits-remaining")))
	calls := get(c, "recent calls", chromedp.Text(chromedp.ID("recent-calls")))
	if bar.Value != "5" || remaining != "45" || !strings.Contains(calls, "Keyword research") {
		c.fail("overview after the call", fmt.Errorf("today's bar %q credits, remaining %q, recent calls %q", bar.Value, remaining, calls))
	}

	// The call's job, opened from the recent calls, with its downloads.
	c.do("open the job", chromedp.Click(chromedp.CSS(`#recent-calls a`)), chromedp.WaitVisible(chromedp.ID("report")))
	c.page("job")
	if st := get(c, "job", chromedp.Text(chromedp.ID("job-status"))); st != "succeeded" {
		c.fail("job", fmt.Errorf("job status %q", st))
	}
	c.do("job downloads", chromedp.WaitVisible(chromedp.CSS(`a[href$="/result.csv"]`)), chromedp.WaitVisible(chromedp.CSS(`a[href$="/result.json"]`)))

	// Revoke it (not the last key: the registration's is still active); the API refuses it.
	c.do("keys again", chromedp.Click(chromedp.CSS(`nav a[href="/dashboard/keys"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-status="active"] button[aria-label="Revoke key browser test"]`)))
	rowCalls := get(c, "calls", chromedp.Text(`//tr[th="browser test"]/td[@class="num"]`))
	c.do("revoke", chromedp.Click(chromedp.CSS(`button[aria-label="Revoke key browser test"]`)),
		chromedp.WaitVisible(`//tr[@data-status="revoked"]/th[.="browser test"]`))
	c.page("keys after revoking")
	if rowCalls != "1" {
		c.fail("keys after revoking", fmt.Errorf("the key's calls %q, want 1", rowCalls))
	}
	if status, _ := e.call(t, key, http.MethodGet, "/v1/usage", ""); status != http.StatusUnauthorized {
		t.Fatalf("revoked key answered %d", status)
	}

	// The billing page (billing is off here), at phone width too.
	c.do("billing", chromedp.Click(chromedp.CSS(`nav a[href="/dashboard/billing"]`)), chromedp.WaitVisible(chromedp.ID("current-plan")))
	c.page("billing")

	// Sign out: the dashboard asks for an e-mail address again, even for its other pages.
	c.do("sign out", chromedp.Click(chromedp.CSS(".signout button")), chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.Navigate(e.URL+"/dashboard/keys"), chromedp.WaitVisible(chromedp.ID("email")))
	c.page("signed out")
	if url := get(c, "signed out", chromedp.Location()); !strings.HasSuffix(url, "/dashboard/signin") {
		c.fail("signed out", fmt.Errorf("at %s", url))
	}
	// DASHBOARD_SCREENSHOTS=dir keeps the pages of a passing run too, to look at.
	if dir := os.Getenv("DASHBOARD_SCREENSHOTS"); dir != "" {
		if err := c.save(dir); err != nil {
			t.Fatal(err)
		}
	}
}
