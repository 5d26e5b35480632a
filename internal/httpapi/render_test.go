package httpapi_test

import (
	"context"
	"os"
	"testing"

	"github.com/contentapi/contentapi/internal/crawler"
	"github.com/contentapi/contentapi/internal/crawler/crawltest"
	"github.com/contentapi/contentapi/internal/httpapi"
	"github.com/contentapi/contentapi/internal/keywords/local"
	"github.com/contentapi/contentapi/internal/report"
	"github.com/contentapi/contentapi/internal/testenv"
	"github.com/contentapi/contentapi/jobs"
)

// A rendered audit is refused before any charge while no worker advertises a browser;
// once one does, it costs 30 credits (the dry run says so) and, on a single-page app whose
// links and titles only JavaScript writes, finds every page where the plain audit finds one.
func TestRenderedAuditOfSinglePageApp(t *testing.T) {
	browser := crawler.FindBrowser(os.Getenv("CHROME_PATH"))
	if browser == "" {
		t.Skip("no Chromium found (CHROME_PATH, chromium, chromium-browser, google-chrome): `make test` installs it")
	}
	spa := crawltest.NewSPA(t)
	worker := crawler.New(crawler.Config{AllowPrivate: true, Render: crawler.RenderConfig{BrowserPath: browser}})
	t.Cleanup(worker.Close)
	var browsers jobs.Browsers
	s := startStack(t, stackConfig{
		runner: &report.Builder{Keywords: local.New(testenv.Postgres(t)), Crawler: worker, ThinWords: 300},
		configure: func(d *httpapi.Deps) {
			browsers = jobs.Browsers{Redis: d.Redis}
			d.Renderers = browsers
			forgetBrowsers(t, d)
		},
	})
	key := register(t, s.testServer)
	audit := func(render string, query string) response {
		body := map[string]any{"domain": spa.Domain(), "max_pages": 20}
		if render != "" {
			body["render"] = render
		}
		return do(t, "POST", s.URL+"/v1/content/audit"+query, key, body)
	}

	if r := audit("flash", ""); r.Status != 400 || r.errCode() != "VALIDATION_ERROR" {
		t.Fatalf("render flash: %d %s, want 400 VALIDATION_ERROR", r.Status, r.Raw)
	}
	for _, q := range []string{"?dry_run=true", ""} {
		if r := audit("javascript", q); r.Status != 503 || r.errCode() != "RENDERING_UNAVAILABLE" {
			t.Fatalf("rendered audit%s with no browser advertised: %d %s, want 503 RENDERING_UNAVAILABLE", q, r.Status, r.Raw)
		}
	}
	if b := s.balanceOf(t, key); b != 50 {
		t.Fatalf("balance %d after refused calls, want 50", b)
	}
	if n := reservationsOf(t, accountID(t, s.testServer, key)); len(n) != 0 {
		t.Fatalf("refused calls left reservations %v", n)
	}

	if err := browsers.Advertise(t.Context()); err != nil {
		t.Fatal(err)
	}
	if r := audit("javascript", "?dry_run=true"); r.Status != 200 || r.data()["credits_cost"] != float64(30) {
		t.Fatalf("dry run: %d %s, want credits_cost 30", r.Status, r.Raw)
	}
	plain := audit("", "")
	if plain.Status != 200 || plain.data()["pages_crawled"] != float64(1) || plain.data()["render"] != "none" {
		t.Fatalf("plain audit: %d %s, want the home page alone", plain.Status, plain.Raw)
	}
	rendered := audit("javascript", "")
	if rendered.Status != 200 {
		t.Fatalf("rendered audit: %d %s", rendered.Status, rendered.Raw)
	}
	d := rendered.data()
	if d["pages_crawled"] != float64(len(crawltest.SPARoutes)) || d["render"] != "javascript" {
		t.Fatalf("rendered audit crawled %v pages (render %v), want %d: %s", d["pages_crawled"], d["render"], len(crawltest.SPARoutes), rendered.Raw)
	}
	for _, p := range d["pages"].([]any) {
		p := p.(map[string]any)
		r, _ := p["rendered"].(map[string]any)
		if r == nil || r["title"] == "Loading" || r["title"] == "" || p["title"] != "Loading" {
			t.Errorf("page %v: title %v, rendered %v", p["url"], p["title"], r)
		}
	}
	// The rendering issues: every page's content, h1, links and title come from its script;
	// one page's script throws.
	counts := d["summary"].(map[string]any)["issues"].(map[string]any)
	n := float64(len(crawltest.SPARoutes))
	want := map[string]float64{"content_only_rendered": n, "h1_only_rendered": n, "links_only_rendered": n,
		"title_changed_by_rendering": n, "console_errors": 1, "render_failed": 0, "title_only_rendered": 0}
	for typ, c := range want {
		if counts[typ] != c {
			t.Errorf("summary.issues.%s = %v, want %v", typ, counts[typ], c)
		}
		if plainCount := plain.data()["summary"].(map[string]any)["issues"].(map[string]any)[typ]; plainCount != float64(0) {
			t.Errorf("plain audit: summary.issues.%s = %v, want 0", typ, plainCount)
		}
	}
	if b := s.balanceOf(t, key); b != 50-15-30 {
		t.Fatalf("balance %d, want 50 - 15 (plain) - 30 (rendered)", b)
	}
}

// A rendered audit that reaches a worker without a browser (another worker advertised
// one) fails with RENDERING_UNAVAILABLE and is refunded.
func TestRenderedAuditOnWorkerWithoutBrowser(t *testing.T) {
	spa := crawltest.NewSPA(t)
	s := startStack(t, stackConfig{configure: func(d *httpapi.Deps) {
		forgetBrowsers(t, d)
		browsers := jobs.Browsers{Redis: d.Redis}
		if err := browsers.Advertise(t.Context()); err != nil {
			t.Fatal(err)
		}
		d.Renderers = browsers
	}})
	key := register(t, s.testServer)
	r := do(t, "POST", s.URL+"/v1/content/audit", key, map[string]any{"domain": spa.Domain(), "render": "javascript"})
	if r.Status != 503 || r.errCode() != "RENDERING_UNAVAILABLE" {
		t.Fatalf("rendered audit on a worker without a browser: %d %s, want 503 RENDERING_UNAVAILABLE", r.Status, r.Raw)
	}
	if b := s.balanceOf(t, key); b != 50 {
		t.Fatalf("balance %d, want 50: the failed job is refunded", b)
	}
}

// forgetBrowsers removes any browser advertisement, now and when the test ends: the tests of
// the package share one Redis.
func forgetBrowsers(t *testing.T, d *httpapi.Deps) {
	forget := func() {
		if err := d.Redis.Del(context.Background(), jobs.BrowserKey).Err(); err != nil {
			t.Fatal(err)
		}
	}
	forget()
	t.Cleanup(forget)
}
