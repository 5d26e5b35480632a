package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/contentapi/contentapi/internal/dashboard"
	"github.com/contentapi/contentapi/internal/testenv"
)

func uniqueEmail(prefix string) string {
	return prefix + "-" + time.Now().Format("150405.000000000") + "@example.com"
}

// Registration mails a verification link; the link signs the browser in once, marks the
// address verified, and the session it starts lives in a cookie whose secret is stored only
// as a digest.
func TestRegistrationLinkSignsInOnce(t *testing.T) {
	e := startEnv(t)
	b := e.newBrowser(t)
	email := uniqueEmail("verify")

	if p := b.Get("/dashboard"); p.Status != http.StatusOK || !strings.HasSuffix(p.URL, "/dashboard/signin") {
		t.Fatalf("signed out, /dashboard answered %d at %s", p.Status, p.URL)
	}
	e.register(t, email)
	msg := e.Mail.Next(t)
	if msg.To != email || !strings.Contains(msg.Subject, "Confirm") || !strings.Contains(msg.From, "no-reply@contentapi.test") {
		t.Fatalf("verification e-mail %+v", msg)
	}
	link := msg.Link(t)
	pool := testenv.Postgres(t)
	var verified *time.Time
	if err := pool.QueryRow(context.Background(), `SELECT email_verified_at FROM accounts WHERE email = $1`, email).Scan(&verified); err != nil || verified != nil {
		t.Fatalf("before the link: verified %v, %v", verified, err)
	}

	// Opening the link only shows a button (mail scanners that fetch links spend nothing).
	confirm := b.Get(link)
	if confirm.Status != http.StatusOK || !strings.Contains(confirm.Body, "Confirm and sign in") {
		t.Fatalf("link page %d %s", confirm.Status, confirm.Body)
	}
	confirm = b.Get(link)
	form := url.Values{"csrf": {confirm.CSRF(t)}, "token": {tokenOf(t, link)}}
	home := b.Post("/dashboard/link", form)
	if home.Status != http.StatusOK || !strings.HasSuffix(home.URL, "/dashboard") || !strings.Contains(home.Body, email) ||
		!strings.Contains(home.Body, `id="credits-remaining">50<`) {
		t.Fatalf("after the link: %d %s %s", home.Status, home.URL, home.Body)
	}
	if err := pool.QueryRow(context.Background(), `SELECT email_verified_at FROM accounts WHERE email = $1`, email).Scan(&verified); err != nil || verified == nil {
		t.Fatalf("after the link: verified %v, %v", verified, err)
	}

	// The session cookie's value is nowhere in the database: only its digest is.
	u, _ := url.Parse(e.URL + "/dashboard/")
	var cookie string
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == "contentapi_session" {
			cookie = c.Value
		}
	}
	var n int
	if err := pool.QueryRow(context.Background(), `
		SELECT count(*) FROM dashboard_sessions s JOIN accounts a ON a.id = s.account_id
		WHERE a.email = $1 AND s.expires_at > now() + interval '29 days' AND encode(s.digest, 'escape') NOT LIKE '%' || $2 || '%'`,
		email, cookie).Scan(&n); err != nil || cookie == "" || n != 1 {
		t.Fatalf("sessions stored: %d (cookie %q), %v", n, cookie, err)
	}

	// The same link again, in another browser: spent.
	other := e.newBrowser(t)
	if p := other.Get(link); p.Status != http.StatusBadRequest || !strings.Contains(p.Body, "not valid") {
		t.Fatalf("spent link page: %d %s", p.Status, p.Body)
	}
	again := other.Get("/dashboard/signin")
	if p := other.Post("/dashboard/link", url.Values{"csrf": {again.CSRF(t)}, "token": {tokenOf(t, link)}}); p.Status != http.StatusBadRequest {
		t.Fatalf("spent link used: %d %s", p.Status, p.Body)
	}
	if p := other.Get("/dashboard/keys"); !strings.HasSuffix(p.URL, "/dashboard/signin") {
		t.Fatalf("other browser reached %s", p.URL)
	}
}

// A sign-in link is mailed to a known address only (an unknown one is told it has no
// account), expires after 15 minutes, and the session ends on sign-out, after 30 days, or
// everywhere at once.
func TestSignInLinkAndSessions(t *testing.T) {
	e := startEnv(t)
	email := uniqueEmail("signin")
	e.register(t, email)
	e.Mail.Next(t) // the verification e-mail, not used

	b := e.newBrowser(t)
	form := b.Get("/dashboard/signin")
	sent := b.Post("/dashboard/signin", url.Values{"csrf": {form.CSRF(t)}, "email": {"nobody-" + email}})
	if sent.Status != http.StatusOK || !strings.Contains(sent.Body, "Check your e-mail") {
		t.Fatalf("unknown address: %d %s", sent.Status, sent.Body)
	}
	if msg := e.Mail.Next(t); msg.To != "nobody-"+email || linkRE.MatchString(msg.Body) || !strings.Contains(msg.Body, "no account") {
		t.Fatalf("unknown address: e-mail %+v", msg)
	}
	e.Mail.Empty(t)

	bad := b.Post("/dashboard/signin", url.Values{"csrf": {form.CSRF(t)}, "email": {"not an address"}})
	if bad.Status != http.StatusBadRequest || !strings.Contains(bad.Body, "plain e-mail address") || !strings.Contains(bad.Body, `aria-invalid="true"`) {
		t.Fatalf("bad address: %d %s", bad.Status, bad.Body)
	}
	e.Mail.Empty(t)

	// Case and spaces do not matter; the link expires after 15 minutes.
	sent = b.Post("/dashboard/signin", url.Values{"csrf": {form.CSRF(t)}, "email": {"  " + strings.ToUpper(email[:3]) + email[3:] + " "}})
	if sent.Status != http.StatusOK {
		t.Fatalf("sign-in request: %d %s", sent.Status, sent.Body)
	}
	msg := e.Mail.Next(t)
	if msg.To != email || !strings.Contains(msg.Body, "15 minutes") {
		t.Fatalf("sign-in e-mail %+v", msg)
	}
	e.Clock.Advance(dashboard.SignInLinkTTL + time.Second)
	if p := b.Get(msg.Link(t)); p.Status != http.StatusBadRequest {
		t.Fatalf("expired link page: %d", p.Status)
	}
	if p := b.Post("/dashboard/link", url.Values{"csrf": {form.CSRF(t)}, "token": {tokenOf(t, msg.Link(t))}}); p.Status != http.StatusBadRequest {
		t.Fatalf("expired link used: %d", p.Status)
	}

	// Two browsers signed in with fresh links.
	signInWithLink := func(b *browser) {
		t.Helper()
		f := b.Get("/dashboard/signin")
		b.Post("/dashboard/signin", url.Values{"csrf": {f.CSRF(t)}, "email": {email}})
		link := e.Mail.Next(t).Link(t)
		c := b.Get(link)
		if p := b.Post("/dashboard/link", url.Values{"csrf": {c.CSRF(t)}, "token": {tokenOf(t, link)}}); !strings.Contains(p.Body, email) {
			t.Fatalf("not signed in: %d %s", p.Status, p.Body)
		}
	}
	b2 := e.newBrowser(t)
	signInWithLink(b)
	signInWithLink(b2)

	// Sign-out ends this browser's session only.
	home := b.Get("/dashboard")
	if p := b.Post("/dashboard/signout", url.Values{"csrf": {home.CSRF(t)}}); !strings.HasSuffix(p.URL, "/dashboard/signin") {
		t.Fatalf("sign-out went to %s", p.URL)
	}
	if p := b.Get("/dashboard"); !strings.HasSuffix(p.URL, "/dashboard/signin") {
		t.Fatalf("signed out, reached %s", p.URL)
	}
	if p := b2.Get("/dashboard"); !strings.Contains(p.Body, email) {
		t.Fatalf("other browser signed out too: %s", p.URL)
	}

	// Sign-out everywhere ends them all.
	signInWithLink(b)
	home = b.Get("/dashboard")
	b.Post("/dashboard/signout-all", url.Values{"csrf": {home.CSRF(t)}})
	for _, br := range []*browser{b, b2} {
		if p := br.Get("/dashboard"); !strings.HasSuffix(p.URL, "/dashboard/signin") {
			t.Fatalf("after sign-out everywhere, reached %s", p.URL)
		}
	}

	// A session ends after 30 days.
	signInWithLink(b)
	e.Clock.Advance(dashboard.SessionTTL - time.Minute)
	if p := b.Get("/dashboard"); !strings.Contains(p.Body, email) {
		t.Fatalf("session ended early: %s", p.URL)
	}
	e.Clock.Advance(2 * time.Minute)
	if p := b.Get("/dashboard"); !strings.HasSuffix(p.URL, "/dashboard/signin") {
		t.Fatalf("session outlived 30 days: %s", p.URL)
	}
}

// Forms without the browser's token, or sent by another site, change nothing.
func TestFormsNeedTheirToken(t *testing.T) {
	e := startEnv(t)
	b := e.newBrowser(t)
	email := uniqueEmail("csrf")
	e.signIn(t, b, email)
	keys := b.Get("/dashboard/keys")
	token := keys.CSRF(t)

	for name, try := range map[string]func() page{
		"no token":    func() page { return b.Post("/dashboard/keys", url.Values{"name": {"x"}}) },
		"wrong token": func() page { return b.Post("/dashboard/keys", url.Values{"name": {"x"}, "csrf": {token[1:] + "A"}}) },
		"other browser's token": func() page {
			other := e.newBrowser(t)
			return other.Post("/dashboard/signin", url.Values{"email": {email}, "csrf": {token}})
		},
		"cross-site": func() page {
			b.header.Set("Sec-Fetch-Site", "cross-site")
			defer b.header.Del("Sec-Fetch-Site")
			return b.Post("/dashboard/keys", url.Values{"name": {"x"}, "csrf": {token}})
		},
	} {
		if p := try(); p.Status != http.StatusForbidden {
			t.Errorf("%s: %d %s", name, p.Status, p.Body)
		}
	}
	e.Mail.Empty(t)
	if p := b.Get("/dashboard/keys"); strings.Count(p.Body, "data-key-id=") != 1 {
		t.Fatalf("a refused form created a key: %s", p.Body)
	}
	// The same form with its token works.
	if p := b.Post("/dashboard/keys", url.Values{"name": {"x"}, "csrf": {token}}); p.Status != http.StatusCreated {
		t.Fatalf("with its token: %d %s", p.Status, p.Body)
	}
}

// Sign-in links are limited per address asked for and per client address.
func TestSignInRateLimits(t *testing.T) {
	e := startEnv(t, withDash(func(d *dashboard.Deps) { d.SignInPerEmail, d.SignInPerAddress = 2, 3 }))
	email := uniqueEmail("limit")
	e.register(t, email)
	e.Mail.Next(t)
	b := e.newBrowser(t)
	// The client's address, as the trusted proxy in front (the test itself) forwards it:
	// one no other test uses.
	b.header.Set("X-Forwarded-For", fmt.Sprintf("203.0.113.%d", time.Now().UnixNano()%250+1))
	token := b.Get("/dashboard/signin").CSRF(t)
	ask := func(addr string) page {
		return b.Post("/dashboard/signin", url.Values{"csrf": {token}, "email": {addr}})
	}
	for i := 0; i < 2; i++ {
		if p := ask(email); p.Status != http.StatusOK {
			t.Fatalf("request %d: %d", i, p.Status)
		}
		e.Mail.Next(t)
	}
	if p := ask(email); p.Status != http.StatusTooManyRequests || !strings.Contains(p.Body, "Too many") {
		t.Fatalf("third link for one address: %d %s", p.Status, p.Body)
	}
	e.Mail.Empty(t)
	// The client's own limit (3 an hour) is spent by the next request, whatever the address.
	if p := ask("other-" + email); p.Status != http.StatusTooManyRequests {
		t.Fatalf("fourth request from one client: %d", p.Status)
	}
	e.Mail.Empty(t)
}

// Without SMTP_URL (make run) the e-mail is written to the log, where its link works.
func TestLinksAreLoggedWithoutSMTP(t *testing.T) {
	e := startEnv(t, withDash(func(d *dashboard.Deps) { d.Mailer = dashboard.LogMailer{Log: d.Log} }))
	email := uniqueEmail("logged")
	e.register(t, email)
	e.Mail.Empty(t)
	link := linkRE.FindString(strings.ReplaceAll(e.logText(), `\u0026`, "&"))
	if link == "" {
		t.Fatalf("no link in the log: %s", e.logText())
	}
	b := e.newBrowser(t)
	confirm := b.Get(link)
	if p := b.Post("/dashboard/link", url.Values{"csrf": {confirm.CSRF(t)}, "token": {tokenOf(t, link)}}); !strings.Contains(p.Body, email) {
		t.Fatalf("logged link: %d %s", p.Status, p.Body)
	}
}
