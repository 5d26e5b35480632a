package httpapi_test

import (
	"context"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
)

func uuidOf(t *testing.T, s string) uuid.UUID {
	t.Helper()
	id, err := uuid.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// GET /v1/jobs lists the caller's jobs newest first, with what each cost and whether it was
// charged, a page at a time; other accounts' jobs never show; bad parameters are a 400.
func TestListJobs(t *testing.T) {
	ctx := context.Background()
	s := startStack(t, stackConfig{noWorker: true})
	key := registerBusy(t, s.testServer)
	other := registerBusy(t, s.testServer)
	submit := func(key, topic string) string {
		t.Helper()
		s.Clock.Advance(time.Second)
		r := do(t, "POST", s.URL+"/v1/keywords/research", key, map[string]any{"domain": "example.com", "topic": topic},
			"Prefer", "respond-async")
		if r.Status != 202 {
			t.Fatalf("submit: %d %s", r.Status, r.Raw)
		}
		return r.data()["job_id"].(string)
	}
	var ids []string // oldest first
	for _, topic := range []string{"one", "two", "three", "four", "five"} {
		ids = append(ids, submit(key, topic))
	}
	submit(other, "not yours")
	if ok, err := s.Jobs.Complete(ctx, uuidOf(t, ids[1]), map[string]any{"clusters": []any{}}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if ok, err := s.Jobs.Fail(ctx, uuidOf(t, ids[2]), "PROVIDER_ERROR", "test"); !ok || err != nil {
		t.Fatal(ok, err)
	}

	r := do(t, "GET", s.URL+"/v1/jobs", key, nil)
	if r.Status != 200 {
		t.Fatalf("list: %d %s", r.Status, r.Raw)
	}
	list := r.data()["jobs"].([]any)
	if len(list) != 5 || r.data()["next_cursor"] != nil {
		t.Fatalf("list: %s", r.Raw)
	}
	want := map[string][2]string{ // job status, credits status
		ids[0]: {"queued", "reserved"}, ids[1]: {"succeeded", "charged"}, ids[2]: {"failed", "refunded"},
		ids[3]: {"queued", "reserved"}, ids[4]: {"queued", "reserved"},
	}
	for i, item := range list {
		j := item.(map[string]any)
		id := j["job_id"].(string)
		if id != ids[len(ids)-1-i] {
			t.Fatalf("job %d is %s, want newest first", i, id)
		}
		cr := j["credits"].(map[string]any)
		if j["status"] != want[id][0] || cr["status"] != want[id][1] || cr["cost"] != float64(5) ||
			j["kind"] != "keywords:research" || j["endpoint"] != "/v1/keywords/research" ||
			j["status_url"] != "http://api.test/v1/jobs/"+id {
			t.Errorf("job %s: %v", id, j)
		}
		if (j["finished_at"] == nil) != (want[id][0] == "queued") {
			t.Errorf("job %s: finished_at %v", id, j["finished_at"])
		}
	}

	// Pages of two: 2, 2, 1, then no cursor; together the whole list.
	var paged []string
	cursor := ""
	for page := 0; ; page++ {
		q := "?limit=2"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		r := do(t, "GET", s.URL+"/v1/jobs"+q, key, nil)
		if r.Status != 200 || page > 3 {
			t.Fatalf("page %d: %d %s", page, r.Status, r.Raw)
		}
		for _, item := range r.data()["jobs"].([]any) {
			paged = append(paged, item.(map[string]any)["job_id"].(string))
		}
		next, _ := r.data()["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	newestFirst := slices.Clone(ids)
	slices.Reverse(newestFirst)
	if !slices.Equal(paged, newestFirst) {
		t.Fatalf("pages %v, want %v", paged, newestFirst)
	}

	r = do(t, "GET", s.URL+"/v1/jobs?status=succeeded", key, nil)
	if list := r.data()["jobs"].([]any); r.Status != 200 || len(list) != 1 || list[0].(map[string]any)["job_id"] != ids[1] {
		t.Fatalf("status=succeeded: %d %s", r.Status, r.Raw)
	}
	r = do(t, "GET", s.URL+"/v1/jobs", other, nil)
	if list := r.data()["jobs"].([]any); len(list) != 1 || slices.Contains(ids, list[0].(map[string]any)["job_id"].(string)) {
		t.Fatalf("the other account's list: %s", r.Raw)
	}

	for _, q := range []string{"limit=0", "limit=101", "limit=ten", "limit=2&limit=3", "status=done", "cursor=garbage",
		"cursor=" + url.QueryEscape("bm90IGEgY3Vyc29y"), "before=2026-01-01", "Limit=5"} {
		if r := do(t, "GET", s.URL+"/v1/jobs?"+q, key, nil); r.Status != 400 || r.errCode() != "VALIDATION_ERROR" {
			t.Errorf("?%s: %d %s", q, r.Status, r.Raw)
		}
	}
	if r := do(t, "GET", s.URL+"/v1/jobs", "", nil); r.Status != 401 {
		t.Errorf("without a key: %d", r.Status)
	}
}
