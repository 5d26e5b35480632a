package httpapi_test

import (
	"encoding/base64"
	"testing"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"github.com/contentapi/contentapi/internal/httpapi"
	"github.com/contentapi/contentapi/internal/testenv"
)

// The queue dashboard's actions (pause, cancel, archive, delete) refuse requests a browser
// makes for another site, which would carry the cached Basic login; the dashboard's own
// requests, and those of non-browser clients, work.
func TestQueueDashboardRefusesCrossSiteActions(t *testing.T) {
	s := startServer(t, func(d *httpapi.Deps) {
		d.AdminToken = "s3cret-admin"
		d.AdminQueues = adminQueues(t)
	})
	queue := "origin-" + uuid.NewString()[:8]
	client := asynq.NewClientFromRedisClient(testenv.Redis(t))
	if _, err := client.Enqueue(asynq.NewTask("test:noop", nil), asynq.Queue(queue)); err != nil {
		t.Fatal(err)
	}
	inspector := asynqInspector(t)
	paused := func() bool {
		t.Helper()
		info, err := inspector.GetQueueInfo(queue)
		if err != nil {
			t.Fatal(err)
		}
		return info.Paused
	}
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:s3cret-admin"))
	api := s.URL + "/admin/queues/api/queues/" + queue

	for _, c := range []struct {
		name, method, path string
		headers            []string
	}{
		{"cross-site pause", "POST", ":pause", []string{"Sec-Fetch-Site", "cross-site"}},
		{"same-site pause", "POST", ":pause", []string{"Sec-Fetch-Site", "same-site"}},
		{"pause from another origin (no Sec-Fetch-Site)", "POST", ":pause", []string{"Origin", "https://evil.example"}},
		{"pause from a null origin", "POST", ":pause", []string{"Origin", "null"}},
		{"cross-site delete", "DELETE", "", []string{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"}},
	} {
		r := do(t, c.method, api+c.path, "", nil, append([]string{"Authorization", basic}, c.headers...)...)
		if r.Status != 403 || r.errCode() != "FORBIDDEN" {
			t.Fatalf("%s: %d %s", c.name, r.Status, r.Raw)
		}
		if paused() {
			t.Fatalf("%s paused the queue", c.name)
		}
	}
	if _, err := inspector.GetQueueInfo(queue); err != nil {
		t.Fatalf("the queue is gone after a refused delete: %v", err)
	}
	// Reading is allowed from anywhere the login is.
	if r := do(t, "GET", api, "", nil, "Authorization", basic, "Sec-Fetch-Site", "cross-site"); r.Status != 200 {
		t.Fatalf("cross-site read: %d %s", r.Status, r.Raw)
	}

	// The dashboard's own requests.
	if r := do(t, "POST", api+":pause", "", nil, "Authorization", basic, "Sec-Fetch-Site", "same-origin", "Origin", s.URL); r.Status/100 != 2 || !paused() {
		t.Fatalf("same-origin pause: %d %s (paused %v)", r.Status, r.Raw, paused())
	}
	if r := do(t, "POST", api+":resume", "", nil, "Authorization", basic, "Origin", s.URL); r.Status/100 != 2 || paused() {
		t.Fatalf("resume from the same origin (no Sec-Fetch-Site): %d %s", r.Status, r.Raw)
	}
	// A non-browser client sends neither header.
	if r := do(t, "POST", api+":pause", "", nil, "Authorization", "Bearer s3cret-admin"); r.Status/100 != 2 || !paused() {
		t.Fatalf("pause with curl: %d %s", r.Status, r.Raw)
	}
}

// The queue dashboard cannot be framed by another page (clickjacking its buttons): every
// /admin answer, a refused login's too, forbids framing in old and new browsers.
func TestQueueDashboardRefusesFraming(t *testing.T) {
	s := startServer(t, func(d *httpapi.Deps) {
		d.AdminToken = "s3cret-admin"
		d.AdminQueues = adminQueues(t)
	})
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:s3cret-admin"))
	for _, r := range []response{
		do(t, "GET", s.URL+"/admin/queues", "", nil, "Authorization", basic),
		do(t, "GET", s.URL+"/admin/queues/api/queues", "", nil, "Authorization", basic),
		do(t, "GET", s.URL+"/admin/queues", "", nil),
	} {
		if r.Header.Get("X-Frame-Options") != "DENY" || r.Header.Get("Content-Security-Policy") != "frame-ancestors 'none'" {
			t.Errorf("%d answer framing headers: %v", r.Status, r.Header)
		}
	}
}
