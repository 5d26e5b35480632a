package faulttest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
)

// The fault scenario's shape.
const (
	faultAccounts = 5
	faultCalls    = 200
	firstWave     = 120 // calls sent before the outage; the rest are sent during it
	// The outage starts once this many jobs have ended and this many are queued or running
	// (callers waiting on them), or every first-wave job exists if the worker keeps up.
	killAfterEnded   = 20
	killWithInFlight = 20
	outage           = 10 * time.Second // PostgreSQL and Redis both down
	grantPerAcct     = 1000
	// retryFor is how long a caller keeps retrying 503 answers (honouring Retry-After), as
	// the Go client does: long enough to outlast the outage.
	retryFor = 30 * time.Second
	// endWithin is how soon after recovery every job must have ended.
	endWithin = 10 * time.Second
)

// okStatus are the answers allowed during an outage (503 only with Retry-After).
var okStatus = map[int]bool{200: true, 202: true, 402: true, 429: true, 503: true}

// faultCall is one logical analysis call: its attempts share one Idempotency-Key.
type faultCall struct {
	n         int
	account   int
	path      string
	body      map[string]any
	idemKey   string
	wave      int
	attempts  []attemptResult
	transport []string // transport errors (no HTTP answer)
	final     answer
	answered  bool
	jobID     string // from the final answer (data.job_id, meta.job_id or error.job_id)
}

type attemptResult struct {
	took       time.Duration // from sending the request to reading the whole answer
	status     int
	retryAfter string
	code       string
	requestID  string
	jobID      string
	raw        string
}

// faultAccount is a registered account with its grants.
type faultAccount struct {
	email string
	key   string
	id    uuid.UUID
}

// While 200 analysis calls run through the real listener, PostgreSQL and Redis are killed
// (SIGKILL, PostgreSQL's whole process group) for 10 s and started again on the same ports
// and data (Redis comes back empty, as one without persistence does). Every answer must be
// 200, 202, 402, 429 or 503 with Retry-After; no credit may be lost; every job must end
// within 10 s of recovery.
func TestFaultOutageDuringLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("the fault proof takes about a minute")
	}
	// The job path runs with its production tuning (JOB_STALE_AFTER, JOB_SWEEP_INTERVAL and
	// the rest at their defaults): what is proved is what a deployment gets. The one
	// override, the keyword cache off, makes the load harsher, not lighter: every job reads
	// PostgreSQL, so jobs last long enough for many to be in flight when the outage starts
	// and every one of them meets it.
	testStart := time.Now()
	s := newStack(t, "KEYWORD_CACHE_TTL=0s")
	s.ctl("migrate")
	s.ctl("seed-sample")
	s.openDB()
	api, worker := s.startServices()
	ctx := context.Background()

	accounts := make([]faultAccount, faultAccounts)
	for i := range accounts {
		a := faultAccount{email: fmt.Sprintf("fault-%d@example.com", i)}
		a.key = s.register(a.email)
		s.ctl("plan", "set", "--email", a.email, "--plan", "enterprise", "--rate-limit", "100000", "--credits-monthly", "0")
		s.ctl("credits", "grant", "--email", a.email, "--amount", strconv.Itoa(grantPerAcct))
		if err := s.db.QueryRow(ctx, `SELECT id FROM accounts WHERE email = $1`, a.email).Scan(&a.id); err != nil {
			t.Fatal(err)
		}
		accounts[i] = a
	}
	calls := faultCallList(accounts)

	var wg sync.WaitGroup
	launch := func(cs []*faultCall) {
		for _, c := range cs {
			wg.Add(1)
			go func() { defer wg.Done(); s.runFaultCall(c, accounts[c.account].key) }()
		}
	}
	loadStart := time.Now()
	launch(calls[:firstWave])
	var endedAtKill, totalAtKill int
	err := waitFor("jobs ended and jobs in flight before the outage", time.Minute, 5*time.Millisecond, func() (bool, error) {
		err := s.db.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status IN ('succeeded', 'failed')), count(*) FROM jobs`).
			Scan(&endedAtKill, &totalAtKill)
		return err == nil && endedAtKill >= killAfterEnded &&
			(totalAtKill-endedAtKill >= killWithInFlight || totalAtKill >= firstWave), err
	})
	if err != nil {
		t.Fatal(err)
	}

	killedAt := time.Now()
	s.pg.kill()
	s.redis.kill()
	launch(calls[firstWave:])
	// The outage itself: the scenario, not a wait for anything.
	time.Sleep(time.Until(killedAt.Add(outage)))
	restartAt := time.Now()
	restartErr := make(chan error, 2)
	go func() { restartErr <- s.pg.start() }()
	go func() { restartErr <- s.redis.start() }()
	for range 2 {
		if err := <-restartErr; err != nil {
			t.Fatalf("restart after the outage: %v", err)
		}
	}
	recoveredAt := time.Now()

	allAnswered := make(chan struct{})
	go func() { wg.Wait(); close(allAnswered) }()
	select {
	case <-allAnswered:
	case <-time.After(3 * time.Minute):
		t.Fatal("callers still waiting 3 minutes after recovery")
	}
	callsDone := time.Now()

	var unfinished int
	err = waitFor("every job ended", time.Until(recoveredAt.Add(time.Minute)), 20*time.Millisecond, func() (bool, error) {
		err := s.db.QueryRow(ctx, `SELECT count(*) FROM jobs WHERE status IN ('queued', 'running')`).Scan(&unfinished)
		return err == nil && unfinished == 0, err
	})
	if err != nil {
		t.Errorf("%v: %d job(s) still queued or running a minute after recovery", err, unfinished)
		s.logStuckJobs(ctx, worker.logPath)
	}

	r := s.faultReport(ctx, calls, accounts)
	r.setup = loadStart.Sub(testStart)
	r.loadStart, r.killedAt, r.restartAt, r.recoveredAt, r.callsDone = loadStart, killedAt, restartAt, recoveredAt, callsDone
	r.endedAtKill, r.totalAtKill = endedAtKill, totalAtKill
	r.apiAlive, r.workerAlive = !api.exited(), !worker.exited()
	r.apiErrors, r.workerErrors = logErrors(api.logPath), logErrors(worker.logPath)
	t.Log("\n" + r.String())
	r.check(t)
}

// faultCallList is the load: a mix of keyword research (5 credits) and gaps (10 credits) on
// the sample data, spread over the accounts.
func faultCallList(accounts []faultAccount) []*faultCall {
	topics := []string{"coffee", "cold brew", "espresso", "running shoes", "home gardening",
		"budgeting", "dog training", "remote work"}
	competitors := []string{"brewguide-sample.example", "beanbox-sample.example",
		"javajournal-sample.example", "homebarista-sample.example"}
	calls := make([]*faultCall, faultCalls)
	for i := range calls {
		c := &faultCall{n: i, account: i % len(accounts), idemKey: "fault-" + uuid.NewString(), wave: 1}
		if i >= firstWave {
			c.wave = 2
		}
		if i%2 == 0 {
			c.path = "/v1/keywords/research"
			c.body = map[string]any{"domain": "coffee-sample.example", "topic": topics[(i/2)%len(topics)]}
		} else {
			c.path = "/v1/keywords/gaps"
			c.body = map[string]any{"domain": "coffee-sample.example",
				"competitors": []string{competitors[(i/2)%len(competitors)], competitors[(i/2+1)%len(competitors)]}}
		}
		calls[i] = c
	}
	return calls
}

// runFaultCall sends the call and, like the Go client, repeats it with the same
// Idempotency-Key after a 503 (honouring Retry-After) or a failed connection, for up to
// retryFor. Every answer is recorded.
func (s *stack) runFaultCall(c *faultCall, apiKey string) {
	ctx := context.Background()
	until := time.Now().Add(retryFor)
	for {
		sent := time.Now()
		a, err := s.do(ctx, http.MethodPost, c.path, apiKey, c.body, "Idempotency-Key", c.idemKey)
		wait := time.Second
		if err != nil {
			c.transport = append(c.transport, err.Error())
		} else {
			at := attemptResult{took: time.Since(sent), status: a.status, retryAfter: a.header.Get("Retry-After"), code: a.errorCode(),
				requestID: a.header.Get("X-Request-ID"), jobID: jobIDOf(a), raw: snippet(a.raw)}
			c.attempts = append(c.attempts, at)
			if a.status != http.StatusServiceUnavailable || time.Now().After(until) {
				c.final, c.answered, c.jobID = a, true, at.jobID
				return
			}
			if n, err := strconv.Atoi(at.retryAfter); err == nil && n >= 0 {
				wait = time.Duration(n) * time.Second
			}
			c.final, c.answered, c.jobID = a, true, at.jobID
		}
		if time.Now().Add(wait).After(until) {
			return
		}
		// Client back-off before a retry (Retry-After), part of the scenario.
		time.Sleep(wait)
	}
}

func jobIDOf(a answer) string {
	for _, m := range []map[string]any{a.data(), asMap(a.body["meta"]), asMap(a.body["error"])} {
		if id, ok := m["job_id"].(string); ok {
			return id
		}
	}
	return ""
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func snippet(b []byte) string {
	s := string(b)
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// jobRow is a job with its reservation, as the database has it at the end.
type jobRow struct {
	id          uuid.UUID
	account     uuid.UUID
	idemKey     string
	requestID   string
	kind        string
	status      string
	cost        int
	attempts    int
	errorCode   string
	reservation string
	createdAt   time.Time
	finishedAt  *time.Time
}

// accountMoney is one account's credits at the end.
type accountMoney struct {
	email                                         string
	granted, balance, settled, refunded, reserved int
	reservedLeft                                  int
}

// faultReport is what the scenario measured.
type faultReport struct {
	calls    []*faultCall
	jobs     []jobRow
	accounts []accountMoney

	setup                                                  time.Duration
	loadStart, killedAt, restartAt, recoveredAt, callsDone time.Time
	endedAtKill, totalAtKill                               int
	apiAlive, workerAlive                                  bool
	apiErrors, workerErrors                                []logLine
	lastFinished                                           time.Time
}

func (s *stack) faultReport(ctx context.Context, calls []*faultCall, accounts []faultAccount) *faultReport {
	t := s.t
	r := &faultReport{calls: calls}
	rows, err := s.db.Query(ctx, `
		SELECT j.id, j.account_id, COALESCE(j.idempotency_key, ''), j.request_id, j.kind, j.status, j.cost, j.attempts,
			COALESCE(j.error_code, ''), r.status, j.created_at, j.finished_at
		FROM jobs j JOIN reservations r ON r.id = j.reservation_id ORDER BY j.created_at`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var j jobRow
		if err := rows.Scan(&j.id, &j.account, &j.idemKey, &j.requestID, &j.kind, &j.status, &j.cost, &j.attempts,
			&j.errorCode, &j.reservation, &j.createdAt, &j.finishedAt); err != nil {
			t.Fatal(err)
		}
		if j.finishedAt != nil && j.finishedAt.After(r.lastFinished) {
			r.lastFinished = *j.finishedAt
		}
		r.jobs = append(r.jobs, j)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, a := range accounts {
		m := accountMoney{email: a.email}
		err := s.db.QueryRow(ctx, `
			SELECT (SELECT COALESCE(sum(amount), 0) FROM credit_grants WHERE account_id = $1),
				(SELECT COALESCE(sum(remaining), 0) FROM credit_grants WHERE account_id = $1 AND expires_at > now()),
				(SELECT COALESCE(sum(amount) FILTER (WHERE status = 'settled'), 0) FROM reservations WHERE account_id = $1),
				(SELECT COALESCE(sum(amount) FILTER (WHERE status = 'refunded'), 0) FROM reservations WHERE account_id = $1),
				(SELECT COALESCE(sum(amount) FILTER (WHERE status = 'reserved'), 0) FROM reservations WHERE account_id = $1),
				(SELECT count(*) FILTER (WHERE status = 'reserved') FROM reservations WHERE account_id = $1)`, a.id).
			Scan(&m.granted, &m.balance, &m.settled, &m.refunded, &m.reserved, &m.reservedLeft)
		if err != nil {
			t.Fatal(err)
		}
		r.accounts = append(r.accounts, m)
	}
	return r
}

// String is the summary table.
func (r *faultReport) String() string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	sec := func(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
	fmt.Fprintf(&b, "fault proof: %d calls (%d before the outage, %d during it) over %d accounts\n",
		len(r.calls), firstWave, len(r.calls)-firstWave, len(r.accounts))
	fmt.Fprintf(&b, "setup (build %s, PostgreSQL, Redis, migrate, seed, api, worker, accounts): %s\n", sec(buildTook), sec(r.setup))
	fmt.Fprintf(&b, "timeline: outage began %s after the first call (%d of %d jobs ended then); down %s; restarted; both answering %s later; last caller answered %s after recovery\n",
		sec(r.killedAt.Sub(r.loadStart)), r.endedAtKill, r.totalAtKill, sec(r.restartAt.Sub(r.killedAt)),
		sec(r.recoveredAt.Sub(r.restartAt)), sec(r.callsDone.Sub(r.recoveredAt)))

	all, final := map[int]int{}, map[int]int{}
	var retried, withRA, without503RA, transport, replay503 int
	for _, c := range r.calls {
		for i, a := range c.attempts {
			all[a.status]++
			if a.status == 503 {
				if a.retryAfter != "" {
					withRA++
				} else {
					without503RA++
				}
				if a.jobID != "" {
					replay503++
				}
				if i < len(c.attempts)-1 {
					retried++
				}
			}
		}
		transport += len(c.transport)
		if c.answered {
			final[c.final.status]++
		} else {
			final[0]++
		}
	}
	fmt.Fprintln(&b, "\nHTTP answers\tevery attempt\tfinal per call\t")
	for _, st := range sortedKeys(all, final) {
		name := strconv.Itoa(st)
		if st == 0 {
			name = "no answer"
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t\n", name, all[st], final[st])
	}
	w.Flush()
	fmt.Fprintf(&b, "503 retried by the caller: %d; 503 with Retry-After: %d, without: %d; 503 naming a job (a replayed failed job): %d; transport errors: %d\n",
		retried, withRA, without503RA, replay503, transport)
	var took503 []time.Duration
	for _, c := range r.calls {
		for _, a := range c.attempts {
			if a.status == 503 {
				took503 = append(took503, a.took)
			}
		}
	}
	if len(took503) > 0 {
		slices.Sort(took503)
		ms := func(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }
		fmt.Fprintf(&b, "time to a 503: median %s, 90th percentile %s, slowest %s\n",
			ms(took503[len(took503)/2]), ms(took503[len(took503)*9/10]), ms(took503[len(took503)-1]))
	}

	statuses := map[string]int{}
	byRequest := map[string]jobRow{}
	for _, j := range r.jobs {
		statuses[j.status+"/"+j.reservation]++
		byRequest[j.requestID] = j
	}
	untold := map[string]int{}
	for _, c := range r.calls {
		for _, a := range c.attempts {
			if j, made := byRequest[a.requestID]; made && a.status != 200 && a.status != 202 {
				untold[fmt.Sprintf("%d→%s", a.status, j.reservation)]++
			}
		}
	}
	fmt.Fprintf(&b, "requests that made a job but were answered without it (status→the job's reservation): %v\n", untold)
	fmt.Fprintf(&b, "\njobs: %d (job status/reservation: %v)\n", len(r.jobs), statuses)
	var across, rerun, maxAttempts int
	for _, j := range r.jobs {
		if j.createdAt.Before(r.killedAt) && j.finishedAt != nil && j.finishedAt.After(r.restartAt) {
			across++
		}
		if j.attempts > 1 {
			rerun++
		}
		maxAttempts = max(maxAttempts, j.attempts)
	}
	fmt.Fprintf(&b, "jobs made before the outage and ended after it: %d; jobs run more than once: %d (most runs: %d)\n",
		across, rerun, maxAttempts)
	if !r.lastFinished.IsZero() {
		fmt.Fprintf(&b, "last job ended %s after recovery (%s after the restart began); limit %s\n",
			sec(r.lastFinished.Sub(r.recoveredAt)), sec(r.lastFinished.Sub(r.restartAt)), sec(endWithin))
	}

	fmt.Fprintln(&b, "\ncredits\tgranted\tbalance\tsettled\trefunded\tstill reserved\tunaccounted\t")
	for _, m := range r.accounts {
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t\n", m.email, m.granted, m.balance, m.settled, m.refunded,
			m.reserved, m.granted-m.balance-m.settled-m.reserved)
	}
	w.Flush()
	fmt.Fprintf(&b, "api still running: %v, worker still running: %v\n", r.apiAlive, r.workerAlive)
	for _, l := range []struct {
		name  string
		lines []logLine
	}{{"api", r.apiErrors}, {"worker", r.workerErrors}} {
		if len(l.lines) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s log, ERROR lines by message (numbers and ids masked):\n", l.name)
		for i, e := range l.lines {
			if i == 12 {
				fmt.Fprintf(&b, "  … %d more kinds\n", len(l.lines)-i)
				break
			}
			fmt.Fprintf(&b, "  %5d  %s\n", e.count, e.text)
		}
	}
	return b.String()
}

func sortedKeys(ms ...map[int]int) []int {
	var keys []int
	for _, m := range ms {
		for k := range m {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	sort.Ints(keys)
	return keys
}

// check asserts the three figures, each failure with the evidence to route it.
func (r *faultReport) check(t *testing.T) {
	t.Helper()
	// 1. No 500: every answer is one of the allowed statuses, and a 503 says when to retry.
	var bad []string
	for _, c := range r.calls {
		for _, a := range c.attempts {
			if !okStatus[a.status] || (a.status == 503 && a.retryAfter == "") {
				bad = append(bad, fmt.Sprintf("call %d (wave %d) %s: %d Retry-After=%q request %s: %s",
					c.n, c.wave, c.path, a.status, a.retryAfter, a.requestID, a.raw))
			}
		}
		for _, e := range c.transport {
			bad = append(bad, fmt.Sprintf("call %d (wave %d) %s: no answer: %s", c.n, c.wave, c.path, e))
		}
	}
	if len(bad) > 0 {
		t.Errorf("%d answer(s) outside 200/202/402/429/503-with-Retry-After; first ones:\n  %s",
			len(bad), strings.Join(bad[:min(len(bad), 8)], "\n  "))
	}

	// 2. No credit lost.
	for _, m := range r.accounts {
		if m.granted != m.balance+m.settled+m.reserved {
			t.Errorf("%s: granted %d != balance %d + settled %d + reserved %d", m.email, m.granted, m.balance, m.settled, m.reserved)
		}
		if m.reservedLeft != 0 {
			t.Errorf("%s: %d reservation(s) still 'reserved' (%d credits)", m.email, m.reservedLeft, m.reserved)
		}
	}
	byKey := map[string][]jobRow{}
	byID := map[string]jobRow{}
	byRequest := map[string]jobRow{}
	for _, j := range r.jobs {
		byKey[j.idemKey] = append(byKey[j.idemKey], j)
		byID[j.id.String()] = j
		byRequest[j.requestID] = j
		if ok := (j.status == "succeeded" && j.reservation == "settled") || (j.status == "failed" && j.reservation == "refunded"); !ok {
			t.Errorf("job %s is %s with its reservation %s: want succeeded/settled or failed/refunded", j.id, j.status, j.reservation)
		}
	}
	var charged []string
	for _, c := range r.calls {
		jobs := byKey[c.idemKey]
		if len(jobs) > 1 {
			t.Errorf("call %d: %d jobs under one Idempotency-Key", c.n, len(jobs))
		}
		switch {
		case c.answered && c.final.status == 200:
			j, ok := byID[c.jobID]
			if !ok || j.idemKey != c.idemKey || j.status != "succeeded" || j.reservation != "settled" {
				t.Errorf("call %d answered 200 for job %q, which is %+v: want its own job, succeeded and settled once", c.n, c.jobID, j)
			}
		case c.answered && c.final.status == 202:
			j, ok := byID[c.jobID]
			if !ok || j.idemKey != c.idemKey {
				t.Errorf("call %d answered 202 for job %q, which is not its job", c.n, c.jobID)
			}
		default:
			// The caller was told nothing was done: nothing may have been charged.
			for _, j := range jobs {
				if j.reservation == "settled" {
					charged = append(charged, fmt.Sprintf("call %d (final %d) job %s settled %d credits", c.n, c.final.status, j.id, j.cost))
				}
			}
		}
	}
	if len(charged) > 0 {
		t.Errorf("%d call(s) charged although the caller's last answer gave no job: %s",
			len(charged), strings.Join(charged[:min(len(charged), 8)], "; "))
	}
	// A request that made a job and was then answered without it (a 503 while the caller
	// waited) must not be charged later: the answer for a job that may still be charged is
	// 202 with its id. Without an Idempotency-Key, a caller retrying that 503 pays twice.
	var untold []string
	for _, c := range r.calls {
		for _, a := range c.attempts {
			j, made := byRequest[a.requestID]
			if made && a.status != 200 && a.status != 202 && j.reservation == "settled" {
				untold = append(untold, fmt.Sprintf("call %d (wave %d) answered %d %s, its job %s then settled %d credits",
					c.n, c.wave, a.status, a.code, j.id, j.cost))
			}
		}
	}
	if len(untold) > 0 {
		t.Errorf("%d request(s) made a job, were answered without its id, and the job was charged (want 202 with the job id); first ones:\n  %s",
			len(untold), strings.Join(untold[:min(len(untold), 8)], "\n  "))
	}

	// 3. Every job ended within endWithin of recovery.
	for _, j := range r.jobs {
		if j.finishedAt == nil {
			t.Errorf("job %s (%s) never ended: %s, %d attempt(s)", j.id, j.kind, j.status, j.attempts)
		}
	}
	if d := r.lastFinished.Sub(r.recoveredAt); d > endWithin {
		t.Errorf("the last job ended %.2f s after recovery, want at most %s", d.Seconds(), endWithin)
	}
	if !r.apiAlive || !r.workerAlive {
		t.Errorf("a process died during the outage: api running %v, worker running %v", r.apiAlive, r.workerAlive)
	}
}

// logLine is a kind of ERROR log line and how often it appeared.
type logLine struct {
	text  string
	count int
}

var maskVolatile = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\b\d+(\.\d+)?\b`)

// logErrors groups a service's ERROR lines (JSON logs) by message and error.
func logErrors(path string) []logLine {
	f, err := os.Open(path)
	if err != nil {
		return []logLine{{text: err.Error(), count: 1}}
	}
	defer f.Close()
	counts := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var l map[string]any
		if json.Unmarshal(sc.Bytes(), &l) != nil || l["level"] != "ERROR" {
			continue
		}
		text := fmt.Sprintf("%v: %v", l["msg"], l["err"])
		if p, ok := l["path"].(string); ok {
			text = p + " " + text
		}
		if len(text) > 220 {
			text = text[:220] + "…"
		}
		counts[maskVolatile.ReplaceAllString(text, "N")]++
	}
	out := make([]logLine, 0, len(counts))
	for k, v := range counts {
		out = append(out, logLine{k, v})
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].count > out[j].count || out[i].count == out[j].count && out[i].text < out[j].text
	})
	return out
}

// logStuckJobs prints what the worker logged about a few jobs that never ended.
func (s *stack) logStuckJobs(ctx context.Context, workerLog string) {
	rows, err := s.db.Query(ctx, `SELECT id::text, status, attempts, heartbeat_at FROM jobs
		WHERE status IN ('queued', 'running') ORDER BY created_at LIMIT 3`)
	if err != nil {
		s.t.Logf("stuck jobs: %v", err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var id, status string
		var attempts int
		var heartbeat *time.Time
		if err := rows.Scan(&id, &status, &attempts, &heartbeat); err != nil {
			s.t.Logf("stuck jobs: %v", err)
			return
		}
		s.t.Logf("job %s is %s after %d attempt(s), heartbeat %v; the worker logged:\n%s", id, status, attempts, heartbeat, grepLines(workerLog, id, 8))
	}
}

// grepLines returns up to n lines of a file that contain s.
func grepLines(path, s string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, s) && len(out) < n {
			out = append(out, "  "+l)
		}
	}
	return strings.Join(out, "\n")
}
