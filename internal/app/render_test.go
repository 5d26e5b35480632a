package app_test

import (
	"context"
	"os"
	"testing"

	"github.com/contentapi/contentapi/internal/app/apptest"
	"github.com/contentapi/contentapi/internal/app/worker"
	"github.com/contentapi/contentapi/internal/crawler"
	"github.com/contentapi/contentapi/jobs"
)

// A worker whose browser starts advertises it in Redis, so the API accepts rendered
// audits; one whose CHROME_PATH names no working browser does not.
func TestStartRenderingAdvertisesTheBrowser(t *testing.T) {
	ctx := context.Background()
	broken := apptest.New(t, apptest.Options{Env: map[string]string{"CHROME_PATH": "/bin/false"}})
	if worker.StartRendering(ctx, broken) {
		t.Fatal("StartRendering with CHROME_PATH=/bin/false reported a browser")
	}
	browsers := jobs.Browsers{Redis: broken.Redis}
	if ok, err := browsers.RenderingAvailable(ctx); err != nil || ok {
		t.Fatalf("advertised %v, %v with no browser", ok, err)
	}

	path := crawler.FindBrowser(os.Getenv("CHROME_PATH"))
	if path == "" {
		t.Skip("no Chromium found (CHROME_PATH, chromium, chromium-browser, google-chrome): `make test` installs it")
	}
	a := apptest.New(t, apptest.Options{Redis: broken.Redis, Env: map[string]string{"CHROME_PATH": path}})
	if !worker.StartRendering(ctx, a) {
		t.Fatal("StartRendering with a browser reported none")
	}
	if ok, err := browsers.RenderingAvailable(ctx); err != nil || !ok {
		t.Fatalf("advertised %v, %v with a running browser", ok, err)
	}
	a.Close() // stops advertising and the browser; the key expires on its own
}
