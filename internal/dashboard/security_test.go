package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/auth"
	"github.com/contentapi/contentapi/internal/dashboard"
	"github.com/contentapi/contentapi/internal/testenv"
)

// statements records the SQL a pool sends, in order (a pgx query tracer).
type statements struct {
	mu  sync.Mutex
	sql []string
}

func (s *statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sql = append(s.sql, d.SQL)
	return ctx
}

func (s *statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// take returns the statements sent since the last take.
func (s *statements) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.sql
	s.sql = nil
	return out
}

// withTracedPool gives the dashboard (and the accounts it reads) a pool whose statements
// are recorded.
func withTracedPool(t testing.TB, st *statements) envOption {
	_, dsn := testenv.PostgresDSN(t)
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Tracer = st
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return withDash(func(d *dashboard.Deps) {
		d.Pool = pool
		d.Accounts = auth.NewAccounts(pool, d.Ledger, d.Clock, d.Gate)
	})
}

// A sign-in request for an address without an account sends the same statements to the
// database as one for a registered address, in the same order, and queues an e-mail too:
// the answer's timing no longer tells who has an account.
func TestSignInDoesTheSameWorkForUnknownAddresses(t *testing.T) {
	st := &statements{}
	e := startEnv(t, withTracedPool(t, st))
	email := uniqueEmail("same-work")
	e.register(t, email)
	e.Mail.Next(t)

	b := e.newBrowser(t)
	csrf := b.Get("/dashboard/signin").CSRF(t)
	ask := func(addr string) []string {
		t.Helper()
		st.take()
		if p := b.Post("/dashboard/signin", url.Values{"csrf": {csrf}, "email": {addr}}); p.Status != http.StatusOK ||
			!strings.Contains(p.Body, "Check your e-mail") {
			t.Fatalf("sign-in request for %s: %d %s", addr, p.Status, p.Body)
		}
		return st.take()
	}
	known := ask(email)
	if msg := e.Mail.Next(t); msg.To != email || !strings.Contains(msg.Body, "/dashboard/link?token=") {
		t.Fatalf("known address: e-mail %+v", msg)
	}
	unknown := ask("nobody-" + email)
	if len(known) == 0 || !slices.Equal(known, unknown) {
		t.Fatalf("statements differ:\nknown:   %q\nunknown: %q", known, unknown)
	}
	msg := e.Mail.Next(t)
	if msg.To != "nobody-"+email || strings.Contains(msg.Body, "token=") || !strings.Contains(msg.Body, "no account") {
		t.Fatalf("unknown address: e-mail %+v", msg)
	}
	e.Mail.Empty(t)
}

// Key names with NUL, invalid UTF-8, control or bidirectional-text characters are refused
// with the form's message (as the JSON API refuses them), and no key is made.
func TestKeyNamesRefuseControlAndBidiCharacters(t *testing.T) {
	e := startEnv(t)
	b := e.newBrowser(t)
	e.signIn(t, b, uniqueEmail("keyname"))
	csrf := b.Get("/dashboard/keys").CSRF(t)
	for _, name := range []string{"a\x00b", "a\xffb", "a\x01b", "a\u202eb", "a\nb", "a\u2066b"} {
		p := b.Post("/dashboard/keys", url.Values{"csrf": {csrf}, "name": {name}})
		if p.Status != http.StatusBadRequest || !strings.Contains(p.Body, `role="alert"`) || len(activeKeyIDs(p)) != 1 ||
			!utf8.ValidString(p.Body) || strings.Contains(p.Body, "\x00") {
			t.Errorf("name %q: %d %s", name, p.Status, p.Body)
		}
	}
	if p := b.Post("/dashboard/keys", url.Values{"csrf": {csrf}, "name": {"café ☕ שרת"}}); p.Status != http.StatusCreated {
		t.Fatalf("a name in other scripts: %d %s", p.Status, p.Body)
	}
}

// "Sign out everywhere" also voids the sign-in and verification links not yet used.
func TestSignOutEverywhereVoidsPendingLinks(t *testing.T) {
	e := startEnv(t)
	b := e.newBrowser(t)
	email := uniqueEmail("voids")
	e.signIn(t, b, email)

	other := e.newBrowser(t)
	csrf := other.Get("/dashboard/signin").CSRF(t)
	other.Post("/dashboard/signin", url.Values{"csrf": {csrf}, "email": {email}})
	pending := e.Mail.Next(t).Link(t)

	home := b.Get("/dashboard")
	if p := b.Post("/dashboard/signout-all", url.Values{"csrf": {home.CSRF(t)}}); !strings.HasSuffix(p.URL, "/dashboard/signin") {
		t.Fatalf("sign-out everywhere went to %s", p.URL)
	}
	if p := other.Get(pending); p.Status != http.StatusBadRequest {
		t.Fatalf("pending link page after sign-out everywhere: %d", p.Status)
	}
	if p := other.Post("/dashboard/link", url.Values{"csrf": {csrf}, "token": {tokenOf(t, pending)}}); p.Status != http.StatusBadRequest ||
		strings.Contains(p.Body, email) {
		t.Fatalf("pending link used after sign-out everywhere: %d %s", p.Status, p.Body)
	}
}

// The CSRF token counts only in the form's body: in the query string (where logs and
// Referer headers would carry it) it is refused, and the access log masks it.
func TestCSRFTokenOnlyFromTheBody(t *testing.T) {
	e := startEnv(t)
	b := e.newBrowser(t)
	e.signIn(t, b, uniqueEmail("csrf-query"))
	csrf := b.Get("/dashboard/keys").CSRF(t)
	if p := b.Post("/dashboard/keys?csrf="+url.QueryEscape(csrf), url.Values{"name": {"from the query"}}); p.Status != http.StatusForbidden {
		t.Fatalf("token in the query: %d %s", p.Status, p.Body)
	}
	if p := b.Get("/dashboard/keys"); strings.Contains(p.Body, "from the query") {
		t.Fatalf("a key was made: %s", p.Body)
	}
	if strings.Contains(e.logText(), csrf) || !strings.Contains(e.logText(), `"query":"csrf=****"`) {
		t.Fatalf("the log shows the token or no masked query:\n%s", e.logText())
	}
}

// Dashboard pages cannot be framed by another site, in old browsers too.
func TestDashboardPagesRefuseFraming(t *testing.T) {
	e := startEnv(t)
	res, err := e.client.Get(e.URL + "/dashboard/signin")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(res.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Fatalf("headers %v", res.Header)
	}
}
