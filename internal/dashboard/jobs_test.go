package dashboard_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/contentapi/contentapi/internal/credits"
	"github.com/contentapi/contentapi/internal/keywords/sample"
)

var jobLinkRE = regexp.MustCompile(`href="/dashboard/jobs/([0-9a-f-]{36})"`)

// The jobs list pages through an account's jobs, newest first, filters by status, and opens
// a job with its result for download as JSON and CSV (the API's own CSV).
func TestJobsPages(t *testing.T) {
	e := startEnv(t)
	b := e.newBrowser(t)
	email := uniqueEmail("jobs")
	key := e.signIn(t, b, email)
	ctx := context.Background()
	acct, err := e.Accounts.GetByEmail(ctx, email)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Accounts.SetPlan(ctx, acct.ID, "enterprise", 10000, 0); err != nil {
		t.Fatal(err)
	}
	now := e.Clock.Now()
	if _, err := e.Ledger.Grant(ctx, credits.Grant{AccountID: acct.ID, Amount: 200, IssuedAt: now, ExpiresAt: now.AddDate(0, 1, 0),
		Source: credits.SourceOperator, SourceRef: "jobs test"}); err != nil {
		t.Fatal(err)
	}

	if p := b.Get("/dashboard/jobs"); p.Status != http.StatusOK || !strings.Contains(p.Body, "No jobs") {
		t.Fatalf("empty list: %d %s", p.Status, p.Body)
	}
	research := `{"domain":"` + sample.Domains()[0] + `","topic":"coffee","limit":10}`
	for i := 0; i < 26; i++ {
		if status, body := e.call(t, key, http.MethodPost, "/v1/keywords/research", research); status != http.StatusOK {
			t.Fatalf("call %d: %d %s", i, status, body)
		}
	}
	// A failed one: nothing is crawlable at a closed port (refunded).
	e.call(t, key, http.MethodPost, "/v1/content/audit", `{"domain":"127.0.0.1:1","max_pages":1}`)

	first := b.Get("/dashboard/jobs")
	ids := jobLinkRE.FindAllStringSubmatch(first.Body, -1)
	next := regexp.MustCompile(`cursor=([A-Za-z0-9_-]+)" rel="next"`).FindStringSubmatch(first.Body)
	if len(ids) != 25 || next == nil {
		t.Fatalf("first page: %d jobs, next %v", len(ids), next)
	}
	second := b.Get("/dashboard/jobs?cursor=" + next[1])
	more := jobLinkRE.FindAllStringSubmatch(second.Body, -1)
	if len(more) != 2 || strings.Contains(second.Body, `rel="next"`) {
		t.Fatalf("second page: %d jobs: %s", len(more), second.Body)
	}
	// Each row says what the job was about, not only its endpoint.
	if !strings.Contains(first.Body, sample.Domains()[0]+" · “coffee”") {
		t.Fatalf("the list does not say what the jobs were about: %s", first.Body)
	}
	// and names each by what it is, not by its API path.
	if !strings.Contains(first.Body, `<strong class="kind">Keyword research</strong>`) || strings.Contains(first.Body, "<code>/v1/") {
		t.Fatalf("the list names jobs by their API path: %s", first.Body)
	}
	seen := map[string]bool{}
	for _, m := range append(ids, more...) {
		seen[m[1]] = true
	}
	if len(seen) != 27 {
		t.Fatalf("%d distinct jobs over two pages, want 27", len(seen))
	}
	failed := b.Get("/dashboard/jobs?status=failed")
	if n := len(jobLinkRE.FindAllString(failed.Body, -1)); n != 1 || !strings.Contains(failed.Body, `<strong class="kind">Site audit</strong>`) {
		t.Fatalf("failed jobs: %d %s", n, failed.Body)
	}
	for _, bad := range []string{"?status=lost", "?cursor=nonsense"} {
		if p := b.Get("/dashboard/jobs" + bad); p.Status != http.StatusBadRequest {
			t.Errorf("%s: %d", bad, p.Status)
		}
	}

	// A research job (any but the failed one: the test's clock stands still, so all were
	// made at the same time), opened and downloaded.
	failedID := jobLinkRE.FindStringSubmatch(failed.Body)[1]
	id := ids[0][1]
	if id == failedID {
		id = ids[1][1]
	}
	page := b.Get("/dashboard/jobs/" + id)
	if page.Status != http.StatusOK || !strings.Contains(page.Body, `id="job-status">succeeded<`) ||
		!strings.Contains(page.Body, `data-kind="research"`) || !strings.Contains(page.Body, "result.csv") {
		t.Fatalf("job page: %d %s", page.Status, page.Body)
	}
	status, apiJob := e.call(t, key, http.MethodGet, "/v1/jobs/"+id, "")
	if status != http.StatusOK {
		t.Fatalf("API job: %d", status)
	}
	res, err := b.c.Get(e.URL + "/dashboard/jobs/" + id + "/result.json")
	if err != nil {
		t.Fatal(err)
	}
	var result map[string]any
	err = json.NewDecoder(res.Body).Decode(&result)
	res.Body.Close()
	if err != nil || res.Header.Get("Content-Disposition") != `attachment; filename="job-`+id+`.json"` ||
		!strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") || result["clusters"] == nil ||
		!strings.Contains(apiJob, `"total_keywords":`) {
		t.Fatalf("JSON download: %v %v %v", res.Header, result, err)
	}
	res, err = b.c.Get(e.URL + "/dashboard/jobs/" + id + "/result.csv")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(res.Body).ReadAll()
	res.Body.Close()
	if err != nil || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") || len(rows) < 2 || rows[0][1] != "keyword" {
		t.Fatalf("CSV download: %v %v %v", res.Header, rows, err)
	}

	// The failed job has nothing to download; other accounts' jobs are not found.
	if p := b.Get("/dashboard/jobs/" + failedID); !strings.Contains(p.Body, `id="job-status">failed<`) || strings.Contains(p.Body, "Download") {
		t.Fatalf("failed job page: %s", p.Body)
	}
	if p := b.Get("/dashboard/jobs/" + failedID + "/result.json"); p.Status != http.StatusNotFound {
		t.Fatalf("failed job's JSON: %d", p.Status)
	}
	other := e.newBrowser(t)
	e.signIn(t, other, uniqueEmail("other-jobs"))
	for _, path := range []string{"", "/result.json", "/result.csv"} {
		if p := other.Get("/dashboard/jobs/" + id + path); p.Status != http.StatusNotFound {
			t.Errorf("another account's job%s: %d", path, p.Status)
		}
	}
	if p := other.Get("/dashboard/jobs/not-a-uuid"); p.Status != http.StatusNotFound {
		t.Errorf("bad id: %d", p.Status)
	}
}

// The overview's "used" figure is the chart's: the credits of the same UTC days. The
// billing period's figure, which starts at an instant (here after the first call), is
// labelled with that instant, not with a day the chart counts whole.
func TestOverviewUsedMatchesChart(t *testing.T) {
	e := startEnv(t)
	b := e.newBrowser(t)
	email := uniqueEmail("used")
	key := e.signIn(t, b, email)
	ctx := context.Background()
	acct := e.account(t, email)
	research := `{"domain":"` + sample.Domains()[0] + `","topic":"coffee","limit":5}`
	if status, body := e.call(t, key, http.MethodPost, "/v1/keywords/research", research); status != http.StatusOK {
		t.Fatalf("research: %d %s", status, body)
	}
	e.Clock.Advance(time.Minute)
	if _, err := e.Pool.Exec(ctx, `UPDATE accounts SET period_start = $2 WHERE id = $1`, acct.ID, e.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Minute)
	if status, body := e.call(t, key, http.MethodPost, "/v1/keywords/research", `{"domain":"`+sample.Domains()[1]+`","topic":"coffee","limit":5}`); status != http.StatusOK {
		t.Fatalf("research: %d %s", status, body)
	}
	p := b.Get("/dashboard")
	used := regexp.MustCompile(`id="used-chart">(\d+)<`).FindStringSubmatch(p.Body)
	total := regexp.MustCompile(`data-total="(\d+)"`).FindStringSubmatch(p.Body)
	period := regexp.MustCompile(`id="used-period">(\d+)</span> this billing period, since (\d{4}-\d\d-\d\d \d\d:\d\d UTC)`).FindStringSubmatch(p.Body)
	if used == nil || total == nil || period == nil {
		t.Fatalf("overview: %s", p.Body)
	}
	if used[1] != total[1] || used[1] != "10" || period[1] != "5" {
		t.Fatalf("used %s, chart total %s, period %s (want 10, 10, 5)", used[1], total[1], period[1])
	}
}
