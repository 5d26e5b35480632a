package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/crawler"
	"github.com/contentapi/contentapi/internal/crawler/crawltest"
	"github.com/contentapi/contentapi/internal/httpapi"
	"github.com/contentapi/contentapi/internal/job"
	"github.com/contentapi/contentapi/jobs"
)

// SIGTERM to the real worker while its browser is held by a page's endless script: the
// worker exits within SHUTDOWN_TIMEOUT, hands the job back with its attempt not spent, and
// leaves no browser process behind.
func TestWorkerSIGTERMDuringHostileRender(t *testing.T) {
	browser := crawler.FindBrowser(os.Getenv("CHROME_PATH"))
	if browser == "" {
		t.Skip("no Chromium found (CHROME_PATH, chromium, chromium-browser, google-chrome): `make test` installs it")
	}
	rendering := make(chan struct{}, 1)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			// The stylesheet is fetched by the browser (through the worker) before the
			// script runs, which then holds the browser's one thread for good.
			fmt.Fprint(w, `<!doctype html><html><head><title>hostile</title><link rel="stylesheet" href="/rendering.css"></head>
<body><p>hostile</p><script>while (true) {}</script></body></html>`)
		case "/rendering.css":
			select {
			case rendering <- struct{}{}:
			default:
			}
			w.Header().Set("Content-Type", "text/css")
			fmt.Fprint(w, "p { color: red }")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(site.Close)

	s := startStack(t, stackConfig{noWorker: true, configure: func(d *httpapi.Deps) {
		d.Renderers = jobs.Browsers{Redis: d.Redis}
	}})
	key := register(t, s.testServer)
	const shutdownTimeout = 3 * time.Second
	w := startWorkerProcess(t, newFakeDataForSEO(t), 3, "CHROME_PATH="+browser, "CRAWLER_ALLOW_PRIVATE=true",
		"SHUTDOWN_TIMEOUT="+shutdownTimeout.String(), "RENDER_TIMEOUT=120s", "JOB_STALE_AFTER=15s", "JOB_SWEEP_INTERVAL=10m")
	advertised := jobs.Browsers{Redis: s.Graph.Redis}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) { // once its browser started
		if ok, err := advertised.RenderingAvailable(context.Background()); ok || err != nil || time.Now().After(deadline) {
			break
		}
	}
	r := do(t, "POST", s.URL+"/v1/content/audit", key, map[string]any{"domain": strings.TrimPrefix(site.URL, "http://"), "render": "javascript"},
		"Prefer", "respond-async")
	if r.Status != http.StatusAccepted {
		t.Fatalf("rendered audit: %d %s", r.Status, r.Raw)
	}
	id := uuid.MustParse(r.data()["job_id"].(string))
	select {
	case <-rendering:
	case <-time.After(60 * time.Second):
		t.Fatal("the worker never rendered the page")
	}
	browsers := crawltest.Descendants(w.Process.Pid)
	if len(browsers) == 0 {
		t.Fatal("the worker has no browser process")
	}

	sent := time.Now()
	if err := w.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- w.Wait() }()
	select {
	case err := <-exited:
		took := time.Since(sent)
		t.Logf("worker exited %s after SIGTERM (SHUTDOWN_TIMEOUT %s): %v", took.Round(time.Millisecond), shutdownTimeout, err)
		// The old shutdown drained for all of SHUTDOWN_TIMEOUT before stopping runs: 3.6 s.
		if took > shutdownTimeout+250*time.Millisecond { // a process's exit and a signal's delivery
			t.Errorf("worker took %s to exit, over SHUTDOWN_TIMEOUT %s", took, shutdownTimeout)
		}
	case <-time.After(shutdownTimeout + 10*time.Second):
		t.Fatalf("worker still running %s after SIGTERM", shutdownTimeout+10*time.Second)
	}
	for _, pid := range browsers {
		if crawltest.Alive(pid) {
			t.Errorf("browser process %d still running after the worker exited", pid)
		}
	}
	if j, err := s.Jobs.Load(context.Background(), id); err != nil || j.Status != job.Queued || j.Attempts != 0 {
		t.Errorf("job after the shutdown: %s attempts %d, %v; want queued with its attempt not spent", j.Status, j.Attempts, err)
	}
}
