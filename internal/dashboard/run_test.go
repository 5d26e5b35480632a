package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/auth"
	"github.com/contentapi/contentapi/internal/keywords/sample"
	"github.com/contentapi/contentapi/internal/report"
)

var submissionRE = regexp.MustCompile(`name="submission" value="([0-9a-f-]{36})"`)

// researchForm is the research form filled in, as the browser posts it.
func researchForm(p page, t *testing.T, action string) url.Values {
	t.Helper()
	m := submissionRE.FindStringSubmatch(p.Body)
	if m == nil {
		t.Fatalf("no submission key on %s: %s", p.URL, p.Body)
	}
	return url.Values{"csrf": {p.CSRF(t)}, "submission": {m[1]}, "action": {action},
		"domain": {sample.Domains()[0]}, "topic": {"coffee"}, "keywords": {""}, "country": {""}, "language": {"en"}, "limit": {"10"}}
}

func (e *env) account(t testing.TB, email string) auth.Account {
	t.Helper()
	acct, err := e.Accounts.GetByEmail(context.Background(), email)
	if err != nil {
		t.Fatal(err)
	}
	return acct
}

func (e *env) balance(t *testing.T, id uuid.UUID) int {
	t.Helper()
	n, err := e.Ledger.Balance(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Every analysis of the catalogue has its form, with the request's fields; a form's error
// is shown next to the field the API's message names, and costs nothing.
func TestAnalysisForms(t *testing.T) {
	e := startEnv(t)
	b := e.newBrowser(t)
	email := uniqueEmail("forms")
	e.signIn(t, b, email)
	list := b.Get("/dashboard/new")
	for _, a := range report.Catalog {
		slug := strings.ReplaceAll(strings.TrimPrefix(a.Path, "/v1/"), "/", "-")
		if !strings.Contains(list.Body, `href="/dashboard/new/`+slug+`"`) {
			t.Errorf("the list has no form of %s", a.Path)
		}
		form := b.Get("/dashboard/new/" + slug)
		if form.Status != http.StatusOK || !strings.Contains(form.Body, `id="f-domain"`) || strings.Contains(form.Body, "callback_url") {
			t.Errorf("form of %s: %d %s", a.Path, form.Status, form.Body)
		}
	}
	gaps := b.Get("/dashboard/new/keywords-gaps")
	for _, want := range []string{`<textarea id="f-competitors"`, `<select id="f-country"`, `type="number"`} {
		if !strings.Contains(gaps.Body, want) {
			t.Errorf("gaps form lacks %s", want)
		}
	}

	p := b.Get("/dashboard/new/keywords-research")
	v := researchForm(p, t, "check")
	v.Set("domain", "not a domain!")
	bad := b.Post("/dashboard/new/keywords-research", v)
	if bad.Status != http.StatusBadRequest || !regexp.MustCompile(`id="domain-error">domain [^<]+</p>`).MatchString(bad.Body) ||
		!strings.Contains(bad.Body, `aria-describedby="domain-error domain-hint"`) || !strings.Contains(bad.Body, `value="not a domain!"`) {
		t.Fatalf("invalid domain: %d %s", bad.Status, bad.Body)
	}
	v = researchForm(p, t, "check")
	v.Set("limit", "5000")
	if bad := b.Post("/dashboard/new/keywords-research", v); !strings.Contains(bad.Body, `id="limit-error">limit must be from 1 to 1000`) {
		t.Fatalf("limit too large: %d %s", bad.Status, bad.Body)
	}
	v = researchForm(p, t, "check")
	v.Set("limit", "ten")
	if bad := b.Post("/dashboard/new/keywords-research", v); !strings.Contains(bad.Body, `id="limit-error">limit must be a whole number`) {
		t.Fatalf("limit not a number: %d %s", bad.Status, bad.Body)
	}
	// The API refuses a domain that is its own competitor; the form shows it at the item.
	gv := url.Values{"csrf": {gaps.CSRF(t)}, "action": {"check"}, "domain": {"a.example"}, "competitors": {"b.example\na.example"}}
	if bad := b.Post("/dashboard/new/keywords-gaps", gv); !strings.Contains(bad.Body, `id="competitors-error">competitors[1] is the domain itself`) {
		t.Fatalf("competitor is the domain: %d %s", bad.Status, bad.Body)
	}
	// Without the form's token nothing is checked.
	v = researchForm(p, t, "run")
	v.Del("csrf")
	if r := b.Post("/dashboard/new/keywords-research", v); r.Status != http.StatusForbidden {
		t.Fatalf("without csrf: %d", r.Status)
	}
	if got := e.balance(t, e.account(t, email).ID); got != 50 {
		t.Fatalf("balance after refused forms %d, want 50", got)
	}
}

// Check cost is the dry run: the price, the balance and the balance after, nothing charged.
// Run submits through the job path under the form's key: the form sent twice, even at once,
// starts one job charged once, and lands on its page, which reloads until the job is done.
func TestRunAnalysisOnce(t *testing.T) {
	e := startEnv(t)
	b := e.newBrowser(t)
	email := uniqueEmail("run")
	e.signIn(t, b, email)
	acct := e.account(t, email)
	p := b.Get("/dashboard/new/keywords-research")

	check := b.Post("/dashboard/new/keywords-research", researchForm(p, t, "check"))
	// The price is what the run reserves; the rule says the answer is charged by its rows.
	for _, want := range []string{`at most <strong id="cost-credits">5<`, `id="cost-balance">50<`, `id="cost-after">45<`,
		`id="cost-rule">The price is the most this call can cost`, `per started 100 rows it returns`} {
		if !strings.Contains(check.Body, want) {
			t.Fatalf("check cost lacks %s: %d %s", want, check.Status, check.Body)
		}
	}
	if got := e.balance(t, acct.ID); got != 50 {
		t.Fatalf("balance after the dry run %d, want 50", got)
	}

	// The same form (same submission key) sent three times, two of them at once.
	run := researchForm(check, t, "run")
	var wg sync.WaitGroup
	pages := make([]page, 3)
	for i := range 2 {
		wg.Go(func() { pages[i] = b.Post("/dashboard/new/keywords-research", run) })
	}
	wg.Wait()
	pages[2] = b.Post("/dashboard/new/keywords-research", run)
	var jobURL string
	for i, pg := range pages {
		if pg.Status != http.StatusOK || !strings.Contains(pg.URL, "/dashboard/jobs/") {
			t.Fatalf("submit %d: %d at %s: %s", i, pg.Status, pg.URL, pg.Body)
		}
		if jobURL == "" {
			jobURL = pg.URL
		} else if pg.URL != jobURL {
			t.Fatalf("submit %d landed on %s, the first on %s", i, pg.URL, jobURL)
		}
	}
	if got := e.balance(t, acct.ID); got != 45 {
		t.Fatalf("balance after three submits of one form %d, want 45", got)
	}
	// A page of an unfinished job reloads itself; the finished one does not.
	if first := pages[0].Body; strings.Contains(first, `id="job-status">queued<`) || strings.Contains(first, `id="job-status">running<`) {
		if !strings.Contains(first, `data-refresh="2"`) || !strings.Contains(first, `id="job-progress"`) {
			t.Fatalf("unfinished job page without refresh: %s", first)
		}
	}
	done := e.waitJobPage(t, b, acct.ID, jobURL)
	if strings.Contains(done.Body, `data-refresh`) || !strings.Contains(done.Body, `id="report"`) {
		t.Fatalf("finished job page: %s", done.Body)
	}

	// The same form with other values after it ran: refused, with a fresh key for a new run.
	changed := researchForm(check, t, "run")
	changed.Set("topic", "tea")
	again := b.Post("/dashboard/new/keywords-research", changed)
	if again.Status != http.StatusBadRequest || !strings.Contains(again.Body, "already started an analysis") ||
		strings.Contains(again.Body, changed.Get("submission")) {
		t.Fatalf("reused form: %d %s", again.Status, again.Body)
	}
	if got := e.balance(t, acct.ID); got != 45 {
		t.Fatalf("balance after the refused form %d, want 45", got)
	}
}

// waitJobPage waits for the job of a job page's address to end (woken by its signal), then
// loads its page.
func (e *env) waitJobPage(t *testing.T, b *browser, account uuid.UUID, jobURL string) page {
	t.Helper()
	id := uuid.MustParse(jobURL[strings.LastIndex(jobURL, "/")+1:])
	j, err := e.Jobs.Wait(context.Background(), account, id, 20*time.Second)
	if err != nil || !j.Done() {
		t.Fatalf("job %s: %v, %s", id, err, j.Status)
	}
	return b.Get(jobURL)
}

// Too few credits is the form's error, from the dry run and from the run alike, and
// nothing is charged or started.
func TestRunInsufficientCredits(t *testing.T) {
	e := startEnv(t)
	b := e.newBrowser(t)
	email := uniqueEmail("broke")
	e.signIn(t, b, email)
	acct := e.account(t, email)
	if err := e.Accounts.SetPlan(context.Background(), acct.ID, "free", 1000, 0); err != nil {
		t.Fatal(err) // no monthly credits: the low-balance e-mail stays out of this test
	}
	if _, err := e.Ledger.Reserve(context.Background(), acct.ID, 47, "/v1/test"); err != nil {
		t.Fatal(err)
	}
	p := b.Get("/dashboard/new/keywords-research")
	for _, action := range []string{"check", "run"} {
		r := b.Post("/dashboard/new/keywords-research", researchForm(p, t, action))
		if r.Status != http.StatusPaymentRequired || !strings.Contains(r.Body, `id="form-error">`) ||
			!strings.Contains(r.Body, "costs 5 credits") || !strings.Contains(r.Body, "balance is 3") || strings.Contains(r.Body, `id="cost"`) {
			t.Fatalf("%s with 3 credits: %d %s", action, r.Status, r.Body)
		}
	}
	if got := e.balance(t, acct.ID); got != 3 {
		t.Fatalf("balance %d, want 3", got)
	}
	if jobs := b.Get("/dashboard/jobs"); !strings.Contains(jobs.Body, "No jobs") {
		t.Fatalf("a job was started: %s", jobs.Body)
	}
}

// A form counts in the account's rate limit, in the window its keys' calls share: over the
// limit it is the form's error, and nothing is charged.
func TestRunRateLimited(t *testing.T) {
	e := startEnv(t)
	b := e.newBrowser(t)
	email := uniqueEmail("limited")
	key := e.signIn(t, b, email)
	acct := e.account(t, email)
	if err := e.Accounts.SetPlan(context.Background(), acct.ID, "free", 2, 50); err != nil {
		t.Fatal(err)
	}
	if status, body := e.call(t, key, http.MethodGet, "/v1/usage", ""); status != http.StatusOK {
		t.Fatalf("usage: %d %s", status, body)
	}
	p := b.Get("/dashboard/new/keywords-research")
	if r := b.Post("/dashboard/new/keywords-research", researchForm(p, t, "check")); r.Status != http.StatusOK {
		t.Fatalf("second request in the minute: %d %s", r.Status, r.Body)
	}
	before := e.balance(t, acct.ID)
	r := b.Post("/dashboard/new/keywords-research", researchForm(p, t, "run"))
	if r.Status != http.StatusTooManyRequests || !strings.Contains(r.Body, `id="form-error">Rate limit of 2 requests per minute exceeded`) {
		t.Fatalf("third request in the minute: %d %s", r.Status, r.Body)
	}
	if got := e.balance(t, acct.ID); got != before {
		t.Fatalf("balance %d after a refused run, was %d", got, before)
	}
}

// The API's checks that look outside run on a form too: an audit of a name that does not
// resolve is refused at its field before anything is charged, as the call would be.
func TestRunPreflight(t *testing.T) {
	e := startEnv(t)
	b := e.newBrowser(t)
	email := uniqueEmail("preflight")
	e.signIn(t, b, email)
	p := b.Get("/dashboard/new/content-audit")
	v := url.Values{"csrf": {p.CSRF(t)}, "action": {"run"}, "domain": {"no-such-host.invalid"}}
	r := b.Post("/dashboard/new/content-audit", v)
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, `id="domain-error">domain no-such-host.invalid does not resolve`) {
		t.Fatalf("unresolvable domain: %d %s", r.Status, r.Body)
	}
	if got := e.balance(t, e.account(t, email).ID); got != 50 {
		t.Fatalf("balance %d, want 50", got)
	}
}

// The research form's order select and filters reach the API as its JSON would; a filter
// the API refuses is shown at its inputs; a finished research with more rows offers its
// next page, which opens the form filled in with the same values and the answer's cursor,
// and running it lists the following rows.
func TestFormFiltersAndNextPage(t *testing.T) {
	e := startEnv(t)
	b := e.newBrowser(t)
	email := uniqueEmail("filters")
	e.signIn(t, b, email)
	p := b.Get("/dashboard/new/keywords-research")
	for _, want := range []string{`<select id="f-order_by-1-field" name="order_by.1.field"`, `name="order_by.3.dir"`, `<option value="search_volume">Search volume</option>`,
		`name="filters.search_volume.min"`, `name="filters.keyword_difficulty.max"`, `name="filters.intent" value="commercial"`, `id="order_by-hint"`} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("research form lacks %s", want)
		}
	}
	if strings.Contains(p.Body, `<textarea id="f-order_by"`) || strings.Contains(p.Body, `name="order_by.4.field"`) || strings.Contains(p.Body, `filters.position`) || strings.Contains(p.Body, `opportunity_score`) {
		t.Error("research form offers a free order_by, a fourth order key, a position filter or the opportunity score (which research cannot filter or sort on)")
	}
	if c := b.Get("/dashboard/new/keywords-competitors"); strings.Contains(c.Body, `name="order_by`) || !strings.Contains(c.Body, `name="filters.competitor_position.min"`) {
		t.Error("competitors form: order_by offered or competitor_position missing")
	}

	v := researchForm(p, t, "check")
	v.Set("filters.keyword_difficulty.min", "50")
	v.Set("filters.keyword_difficulty.max", "10")
	if bad := b.Post("/dashboard/new/keywords-research", v); bad.Status != http.StatusBadRequest ||
		!strings.Contains(bad.Body, `id="filters.keyword_difficulty-error">filters.keyword_difficulty.min must not be greater`) ||
		!strings.Contains(bad.Body, `name="filters.keyword_difficulty.min" value="50"`) {
		t.Fatalf("min over max: %d %s", bad.Status, bad.Body)
	}

	v = researchForm(p, t, "run")
	v.Set("limit", "5")
	v.Set("order_by.1.field", "search_volume")
	v.Set("order_by.1.dir", "desc")
	v.Set("filters.search_volume.min", "10")
	v["filters.intent"] = []string{"informational", "commercial"}
	v.Set("filters.exclude", "zzz, qqq")
	first, id := runResearch(t, b, v)
	j, err := e.Jobs.Wait(context.Background(), e.account(t, email).ID, id, 20*time.Second)
	if err != nil || j.Status != "succeeded" {
		t.Fatalf("job %v %s: %s", err, j.Status, j.ErrorMessage)
	}
	var stored bytes.Buffer
	if err := json.Compact(&stored, j.Request); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"order_by":["search_volume.desc"]`, `"intent":["commercial","informational"]`, `"exclude":["qqq","zzz"]`, `"search_volume":{"min":10}`} {
		if !strings.Contains(stored.String(), want) {
			t.Errorf("stored request %s lacks %s", j.Request, want)
		}
	}
	page1 := b.Get(first.URL)
	m := regexp.MustCompile(`<a href="([^"]+)" rel="next" id="next-page-link">`).FindStringSubmatch(page1.Body)
	if m == nil || !strings.Contains(page1.Body, `id="research-lead"`) || !strings.Contains(page1.Body, " in all") {
		t.Fatalf("the research shows no total or next page: %s", page1.Body)
	}
	next := b.Get(strings.ReplaceAll(m[1], "&amp;", "&"))
	for _, want := range []string{`name="cursor" value="`, `id="next-page-note"`, `<option value="search_volume" selected>`,
		`name="filters.search_volume.min" value="10"`, `value="commercial" checked`, `value="qqq zzz"`, `name="limit" value="5"`} {
		if !strings.Contains(next.Body, want) {
			t.Errorf("the next page's form lacks %s", want)
		}
	}
	cur := regexp.MustCompile(`name="cursor" value="([^"]+)"`).FindStringSubmatch(next.Body)
	nv := researchForm(next, t, "run")
	nv.Set("limit", "5")
	nv.Set("order_by.1.field", "search_volume")
	nv.Set("order_by.1.dir", "desc")
	nv.Set("filters.search_volume.min", "10")
	nv["filters.intent"] = []string{"informational", "commercial"}
	nv.Set("filters.exclude", "qqq zzz")
	if cur != nil {
		nv.Set("cursor", strings.ReplaceAll(cur[1], "&#43;", "+"))
	}
	// Other values with the cursor: refused before anything is charged, as the API refuses.
	before := e.balance(t, e.account(t, email).ID)
	changed := url.Values{}
	for k, v := range nv {
		changed[k] = v
	}
	changed.Set("filters.search_volume.min", "20")
	changed.Set("submission", uuid.NewString())
	if bad := b.Post("/dashboard/new/keywords-research", changed); bad.Status != http.StatusBadRequest || !strings.Contains(bad.Body, `id="form-error"`) ||
		e.balance(t, e.account(t, email).ID) != before {
		t.Fatalf("a cursor with other values: %d %s", bad.Status, bad.Body)
	}
	second := b.Post("/dashboard/new/keywords-research", nv)
	if second.Status != http.StatusOK || !strings.Contains(second.URL, "/dashboard/jobs/") || second.URL == first.URL {
		t.Fatalf("next page run: %d %s %s", second.Status, second.URL, second.Body)
	}
	id2, _ := uuid.Parse(second.URL[strings.LastIndex(second.URL, "/")+1:])
	j2, err := e.Jobs.Wait(context.Background(), e.account(t, email).ID, id2, 20*time.Second)
	if err == nil {
		j, _ = e.Jobs.Get(context.Background(), e.account(t, email).ID, id)
		j2, err = e.Jobs.Get(context.Background(), e.account(t, email).ID, id2)
	}
	if err != nil || j2.Status != "succeeded" || !strings.Contains(string(j2.Request), `"cursor"`) || len(j2.Result) == 0 || string(j2.Result) == string(j.Result) {
		t.Fatalf("next page job %v %s %s: %s", err, j2.Status, j2.ErrorMessage, j2.Request)
	}
}

// runResearch posts a research form that runs the analysis: the answer is the job's page,
// whose address ends in the job's id.
func runResearch(t *testing.T, b *browser, v url.Values) (page, uuid.UUID) {
	t.Helper()
	r := b.Post("/dashboard/new/keywords-research", v)
	if r.Status != http.StatusOK || !strings.Contains(r.URL, "/dashboard/jobs/") {
		t.Fatalf("run: %d %s %s", r.Status, r.URL, r.Body)
	}
	id, err := uuid.Parse(r.URL[strings.LastIndex(r.URL, "/")+1:])
	if err != nil {
		t.Fatal(err)
	}
	return r, id
}

// researchFormFor signs a new account in (its e-mail made from prefix) and opens the
// research form.
func (e *env) researchFormFor(t *testing.T, prefix string) (b *browser, email string, form page) {
	t.Helper()
	b, email = e.newBrowser(t), uniqueEmail(prefix)
	e.signIn(t, b, email)
	return b, email, b.Get("/dashboard/new/keywords-research")
}

// The research form's three order keys reach the job's request as the API's order_by, in
// the rows' order, and a form opened from that job shows them again in their rows.
func TestFormOrderKeys(t *testing.T) {
	e := startEnv(t)
	b, email, p := e.researchFormFor(t, "order")
	v := researchForm(p, t, "run")
	for i, key := range [][2]string{{"keyword_difficulty", "asc"}, {"search_volume", "desc"}, {"keyword", "asc"}} {
		row := "order_by." + strconv.Itoa(i+1)
		v.Set(row+".field", key[0])
		v.Set(row+".dir", key[1])
	}
	_, id := runResearch(t, b, v)
	j, err := e.Jobs.Get(context.Background(), e.account(t, email).ID, id)
	if err != nil {
		t.Fatal(err)
	}
	var req struct {
		OrderBy []string `json:"order_by"`
	}
	if err := json.Unmarshal(j.Request, &req); err != nil {
		t.Fatal(err)
	}
	if want := []string{"keyword_difficulty.asc", "search_volume.desc", "keyword.asc"}; !slices.Equal(req.OrderBy, want) {
		t.Fatalf("stored order_by %v, want %v", req.OrderBy, want)
	}
	again := b.Get("/dashboard/new/keywords-research?from=" + id.String())
	selected := regexp.MustCompile(`name="order_by\.(\d)\.(field|dir)"[^>]*>(?:\s*<option[^>]*>[^<]*</option>)*?\s*<option value="([a-z_]+)" selected>`)
	var got []string
	for _, m := range selected.FindAllStringSubmatch(again.Body, -1) {
		got = append(got, m[1]+"."+m[2]+"="+m[3])
	}
	want := []string{"1.field=keyword_difficulty", "1.dir=asc", "2.field=search_volume", "2.dir=desc", "3.field=keyword", "3.dir=asc"}
	if !slices.Equal(got, want) {
		t.Fatalf("the form opened from the job selects %v, want %v", got, want)
	}
}

// An order the API refuses (a field named twice, in the first and third rows with the
// second left empty) shows the API's message at the order keys, the row it is about marked
// and the values kept, from the dry run and the run alike; no job is started and nothing
// is charged.
func TestFormOrderRefused(t *testing.T) {
	e := startEnv(t)
	b, email, p := e.researchFormFor(t, "order-refused")
	for _, action := range []string{"check", "run"} {
		v := researchForm(p, t, action)
		// The second row is left empty: the third is the API's order_by[1].
		v.Set("order_by.1.field", "search_volume")
		v.Set("order_by.1.dir", "desc")
		v.Set("order_by.3.field", "search_volume")
		v.Set("order_by.3.dir", "asc")
		r := b.Post("/dashboard/new/keywords-research", v)
		if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, `id="order_by-error">order_by[1] names search_volume a second time</p>`) ||
			!strings.Contains(r.Body, `aria-describedby="order_by-error order_by-hint"`) {
			t.Fatalf("%s, search volume twice: %d %s", action, r.Status, r.Body)
		}
		marked := regexp.MustCompile(`<select id="f-order_by-(\d)-(field|dir)"[^>]* aria-invalid="true" aria-describedby="order_by-error">`).FindAllStringSubmatch(r.Body, -1)
		if len(marked) != 2 || marked[0][1] != "3" || marked[1][1] != "3" {
			t.Errorf("%s: marked rows %v, want the third row's selects", action, marked)
		}
		if !regexp.MustCompile(`name="order_by\.3\.dir"[^>]*>\s*<option value="desc">[^<]*</option>\s*<option value="asc" selected>`).MatchString(r.Body) {
			t.Errorf("%s: the third row's direction is not kept: %s", action, r.Body)
		}
	}
	if got := e.balance(t, e.account(t, email).ID); got != 50 {
		t.Fatalf("balance after refused orders %d, want 50", got)
	}
	if jobs := b.Get("/dashboard/jobs"); !strings.Contains(jobs.Body, "No jobs") {
		t.Fatalf("a job was started: %s", jobs.Body)
	}
}
