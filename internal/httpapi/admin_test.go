package httpapi_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/hibiken/asynq"
	"github.com/hibiken/asynqmon"

	"github.com/contentapi/contentapi/internal/httpapi"
	"github.com/contentapi/contentapi/internal/metrics"
	"github.com/contentapi/contentapi/internal/testenv"
	"github.com/contentapi/contentapi/jobs"
)

func TestMetricsAndAdminGuard(t *testing.T) {
	s := startStack(t, stackConfig{configure: func(d *httpapi.Deps) {
		d.Metrics.Register(jobs.NewQueueCollector(asynq.NewInspectorFromRedisClient(testenv.Redis(t))))
		d.AdminToken = "s3cret-admin"
		d.AdminQueues = adminQueues(t)
	}})
	key := register(t, s.testServer)
	if r := do(t, "POST", s.URL+"/v1/keywords/research", key, map[string]any{"domain": sampleDomains(t)[0], "topic": "coffee"}); r.Status != 200 {
		t.Fatalf("research: %d", r.Status)
	}
	do(t, "GET", s.URL+"/v1/nothing-here", "", nil)

	for _, h := range []string{"", "Bearer wrong", "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:wrong")), "Bearer " + key} {
		r := do(t, "GET", s.URL+"/metrics", "", nil, "Authorization", h)
		if r.Status != 401 || r.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("metrics with %q: %d", h, r.Status)
		}
	}
	r := do(t, "GET", s.URL+"/metrics", "", nil, "Authorization", "Bearer s3cret-admin")
	if r.Status != 200 {
		t.Fatalf("metrics: %d %s", r.Status, r.Raw)
	}
	for _, want := range []string{
		`contentapi_http_requests_total{method="POST",route="/v1/keywords/research",status="200"} 1`,
		`contentapi_http_requests_total{method="GET",route="unmatched",status="404"} 1`,
		`contentapi_http_request_duration_seconds_bucket{method="POST",route="/v1/keywords/research",status="200"`,
		`contentapi_credits_total{event="reserved"} 5`,
		`contentapi_credits_total{event="settled"} 5`,
		`contentapi_jobs_total{kind="keywords:research",outcome="succeeded"} 1`,
		`contentapi_job_duration_seconds_count{kind="keywords:research",outcome="succeeded"} 1`,
		`contentapi_queue_tasks{queue="analysis",state="pending"}`,
		`go_goroutines`,
	} {
		if !strings.Contains(r.Raw, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:s3cret-admin"))
	if r := do(t, "GET", s.URL+"/admin/queues", "", nil, "Authorization", basic); r.Status != 200 || !strings.Contains(strings.ToLower(r.Raw), "<html") {
		t.Fatalf("queue dashboard: %d", r.Status)
	}
	if r := do(t, "GET", s.URL+"/admin/queues", "", nil); r.Status != 401 {
		t.Fatalf("dashboard without token: %d", r.Status)
	}
}

func TestAdminRoutesOffWithoutToken(t *testing.T) {
	s := startServer(t, func(d *httpapi.Deps) { d.Metrics = metrics.New() })
	if r := do(t, "GET", s.URL+"/metrics", "", nil, "Authorization", "Bearer "); r.Status != 404 {
		t.Fatalf("metrics with no ADMIN_TOKEN: %d", r.Status)
	}
}

// adminQueues is the queue dashboard over the package's Redis, closed with the test.
func adminQueues(t testing.TB) *asynqmon.HTTPHandler {
	o := testenv.RedisOptions(t)
	h := asynqmon.New(asynqmon.Options{RootPath: "/admin/queues", RedisConnOpt: asynq.RedisClientOpt{Addr: o.Addr, DB: o.DB}})
	t.Cleanup(func() { _ = h.Close() })
	return h
}
