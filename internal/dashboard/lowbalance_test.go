package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/keywords/sample"
)

// spend reserves credits as a call does (the ledger tells the dashboard after its commit).
func (e *env) spend(t *testing.T, id uuid.UUID, n int) uuid.UUID {
	t.Helper()
	r, err := e.Ledger.Reserve(context.Background(), id, n, "/v1/keywords/research")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The balance falling below a tenth of the period's credits (5 of the free plan's 50) sends
// one e-mail, even when ten charges cross the line at once; nothing more that period, however
// the balance moves; one again in the next period.
func TestLowBalanceEmailOncePerPeriod(t *testing.T) {
	e := startEnv(t)
	b := e.newBrowser(t)
	email := uniqueEmail("low")
	e.signIn(t, b, email)
	acct := e.account(t, email)

	e.spend(t, acct.ID, 45) // 5 left: not below a tenth
	e.Mail.Empty(t)

	var wg sync.WaitGroup
	var reservations [5]uuid.UUID
	for i := range reservations {
		wg.Go(func() { reservations[i] = e.spend(t, acct.ID, 1) })
	}
	wg.Wait()
	m := e.Mail.Next(t)
	if m.To != email || !strings.Contains(m.Subject, "running low") || !strings.Contains(m.Body, "/dashboard/usage") ||
		!strings.Contains(m.Body, "of the 50 credits of your current period") {
		t.Fatalf("low-balance e-mail: %+v", m)
	}
	e.Mail.Empty(t)

	// Refunded above the line and spent below it again: the period had its e-mail.
	for _, r := range reservations {
		if _, err := e.Ledger.Refund(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	e.spend(t, acct.ID, 5)
	e.Mail.Empty(t)

	// The next period: 50 new credits, and an e-mail when they run low.
	e.Clock.Advance(32 * 24 * time.Hour)
	if renewed, _, err := e.Ledger.RenewPeriod(context.Background(), acct.ID); err != nil || !renewed {
		t.Fatalf("renew: %v %v", renewed, err)
	}
	if got := e.balance(t, acct.ID); got != 50 {
		t.Fatalf("balance in the new period %d, want 50", got)
	}
	e.spend(t, acct.ID, 46)
	if m := e.Mail.Next(t); !strings.Contains(m.Subject, "running low") || !strings.Contains(m.Body, "balance is 4 credits") {
		t.Fatalf("second period's e-mail: %+v", m)
	}
	e.Mail.Empty(t)
}

// The usage page's setting turns the e-mail off (then nothing is sent) and on again; its
// form needs the CSRF token.
func TestLowBalanceEmailSetting(t *testing.T) {
	e := startEnv(t)
	b := e.newBrowser(t)
	email := uniqueEmail("lowoff")
	e.signIn(t, b, email)
	acct := e.account(t, email)

	usage := b.Get("/dashboard/usage")
	if !strings.Contains(usage.Body, `name="low_balance_alerts" value="on" checked`) {
		t.Fatalf("the e-mail is not on by default: %s", usage.Body)
	}
	if r := b.Post("/dashboard/usage/alerts", url.Values{}); r.Status != http.StatusForbidden {
		t.Fatalf("setting without csrf: %d", r.Status)
	}
	off := b.Post("/dashboard/usage/alerts", url.Values{"csrf": {usage.CSRF(t)}})
	if off.Status != http.StatusOK || !strings.Contains(off.Body, "Low-balance e-mails are off") ||
		strings.Contains(off.Body, `value="on" checked`) {
		t.Fatalf("turned off: %d %s", off.Status, off.Body)
	}
	e.spend(t, acct.ID, 48)
	e.Mail.Empty(t)

	on := b.Post("/dashboard/usage/alerts", url.Values{"csrf": {usage.CSRF(t)}, "low_balance_alerts": {"on"}})
	if !strings.Contains(on.Body, `value="on" checked`) {
		t.Fatalf("turned on: %d %s", on.Status, on.Body)
	}
	e.spend(t, acct.ID, 1)
	if m := e.Mail.Next(t); !strings.Contains(m.Subject, "running low") {
		t.Fatalf("after turning it on: %+v", m)
	}
	e.Mail.Empty(t)
}

// The usage page splits the credits of each day by endpoint and by key (the dashboard being
// a channel of its own), lists each key's calls, and shows 30 or 90 days.
func TestUsagePage(t *testing.T) {
	e := startEnv(t)
	b := e.newBrowser(t)
	email := uniqueEmail("usage")
	key := e.signIn(t, b, email)
	acct := e.account(t, email)
	if status, body := e.call(t, key, http.MethodPost, "/v1/keywords/research",
		`{"domain":"`+sample.Domains()[0]+`","topic":"coffee","limit":10}`); status != http.StatusOK {
		t.Fatalf("research: %d %s", status, body)
	}
	p := b.Get("/dashboard/new/keywords-research")
	run := b.Post("/dashboard/new/keywords-research", researchForm(p, t, "run"))
	e.waitJobPage(t, b, acct.ID, run.URL)

	// A charge whose key was not recorded (made before keys were) is counted apart.
	if _, err := e.Ledger.Settle(context.Background(), e.spend(t, acct.ID, 10)); err != nil {
		t.Fatal(err)
	}

	today := e.Clock.Now().UTC().Format(time.DateOnly)
	u := b.Get("/dashboard/usage")
	rect := func(chart, series string) string {
		re := regexp.MustCompile(`data-day="` + today + `" data-series="` + regexp.QuoteMeta(series) + `" data-credits="(\d+)"`)
		i := strings.Index(u.Body, `id="`+chart+`"`)
		j := strings.Index(u.Body[i:], "</svg>")
		m := re.FindStringSubmatch(u.Body[i : i+j])
		if m == nil {
			t.Fatalf("%s has no bar of %s today: %s", chart, series, u.Body[i:i+j])
		}
		return m[1]
	}
	if got := rect("usage-by-endpoint", "/v1/keywords/research"); got != "20" {
		t.Errorf("research credits today %s, want 20", got)
	}
	if got := rect("usage-by-key", "Key not recorded"); got != "10" {
		t.Errorf("credits of no recorded key today %s, want 10", got)
	}
	if got := rect("usage-by-key", "Dashboard"); got != "5" {
		t.Errorf("dashboard credits today %s, want 5", got)
	}
	if !regexp.MustCompile(`data-series="[^"]+ \(ap_[^"]*…\)" data-credits="5"`).MatchString(u.Body) {
		t.Errorf("no bar of the key: %s", u.Body)
	}
	calls := regexp.MustCompile(`(?s)<table class="keys" id="key-calls">.*?</table>`).FindString(u.Body)
	if !regexp.MustCompile(`(?s)<th scope="row">[^<]+<code>ap_.*?class="num">\d+</td><td data-label="Analyses" class="num">1</td><td data-label="Credits" class="num">5</td>`).MatchString(calls) ||
		!regexp.MustCompile(`(?s)<tr data-channel="dashboard">.*?class="num">1</td><td data-label="Credits" class="num">5</td>`).MatchString(calls) ||
		!regexp.MustCompile(`(?s)<tr data-channel="unrecorded">.*?class="num">1</td><td data-label="Credits" class="num">10</td>`).MatchString(calls) {
		t.Errorf("calls per key: %s", calls)
	}
	first90 := e.Clock.Now().UTC().AddDate(0, 0, -89).Format(time.DateOnly)
	if u90 := b.Get("/dashboard/usage?days=90"); !strings.Contains(u90.Body, "from "+first90+" to "+today) {
		t.Errorf("90 days do not start on %s", first90)
	}
	if bad := b.Get("/dashboard/usage?days=7"); bad.Status != http.StatusBadRequest {
		t.Errorf("7 days: %d", bad.Status)
	}
}
