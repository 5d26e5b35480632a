package dashboard_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/mail"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/app/apptest"
	"github.com/contentapi/contentapi/internal/auth"
	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/crawler"
	"github.com/contentapi/contentapi/internal/credits"
	"github.com/contentapi/contentapi/internal/dashboard"
	"github.com/contentapi/contentapi/internal/httpapi"
	"github.com/contentapi/contentapi/internal/job"
	"github.com/contentapi/contentapi/internal/keywords/local"
	"github.com/contentapi/contentapi/internal/keywords/sample"
	"github.com/contentapi/contentapi/internal/ratelimit"
	"github.com/contentapi/contentapi/internal/report"
	"github.com/contentapi/contentapi/internal/testenv"
	"github.com/contentapi/contentapi/jobs"
)

func TestMain(m *testing.M) { testenv.MainNoLeaks(m, testenv.FasthttpGoroutines...) }

// env is the API as cmd/api wires it, dashboard included, with an asynq worker, on a real
// listener over the test PostgreSQL and Redis, sending e-mail to an SMTP server of its own.
type env struct {
	URL      string
	client   *http.Client
	Clock    *clock.Manual
	Accounts *auth.Accounts
	Ledger   *credits.Ledger
	Jobs     *job.Service
	Dash     *dashboard.Dashboard
	Mail     *mailbox
	Pool     *pgxpool.Pool
	log      *lockedWriter
}

// logText is what the service logged so far.
func (e *env) logText() string {
	e.log.mu.Lock()
	defer e.log.mu.Unlock()
	return e.log.w.String()
}

var seedOnce sync.Once

// envConfig changes the env: the dashboard's settings, HTTPS, a fake Stripe for billing.
type envConfig struct {
	dash   func(*dashboard.Deps)
	tls    bool
	stripe string
}

type envOption func(*envConfig)

func withDash(fn func(*dashboard.Deps)) envOption { return func(c *envConfig) { c.dash = fn } }

// withHTTPS serves the API over TLS (with a certificate the env's clients trust), as
// checkout wants the dashboard's addresses to be https.
func withHTTPS() envOption { return func(c *envConfig) { c.tls = true } }

// withStripe points billing at a fake Stripe (billingtest).
func withStripe(url string) envOption { return func(c *envConfig) { c.stripe = url } }

func startEnv(t testing.TB, opts ...envOption) *env {
	t.Helper()
	var ec envConfig
	for _, o := range opts {
		o(&ec)
	}
	pool := testenv.Postgres(t)
	rdb := testenv.Redis(t)
	seedOnce.Do(func() {
		if _, _, err := sample.Seed(context.Background(), pool); err != nil {
			t.Fatalf("seed: %v", err)
		}
	})
	// Each test starts on its own day, so the per-day chart and the hourly limits of one
	// test never count another's.
	clk := clock.NewManual(time.Now().UTC().Truncate(time.Millisecond))
	logW := &lockedWriter{w: &bytes.Buffer{}}
	log := slog.New(slog.NewJSONHandler(logW, nil))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	client := &http.Client{Timeout: 30 * time.Second}
	if ec.tls {
		// httptest's certificate is for 127.0.0.1, and its client trusts it.
		ts := httptest.NewUnstartedServer(http.NotFoundHandler())
		ts.StartTLS()
		t.Cleanup(ts.Close)
		cfg := ts.TLS.Clone()
		cfg.NextProtos = []string{"http/1.1"}
		ln = tls.NewListener(ln, cfg)
		base = "https://" + ln.Addr().String()
		client = ts.Client()
	}
	a := apptest.New(t, apptest.Options{Clock: clk, Log: log, Stripe: ec.stripe,
		Env: map[string]string{"DASHBOARD_URL": base + "/dashboard"}})

	box := startMailbox(t)
	smtpMailer, err := dashboard.NewSMTPMailer("smtp://"+box.addr+"?tls=none", "ContentAPI <no-reply@contentapi.test>")
	if err != nil {
		t.Fatal(err)
	}
	// As in cmd/api, e-mails go through an outbox; the mailbox waits for it to be idle
	// before saying that no message came.
	outbox := dashboard.NewOutbox(smtpMailer, log, dashboard.OutboxConfig{})
	t.Cleanup(func() { _ = outbox.Close(context.Background()) })
	box.settle = outbox.Wait
	var mailer dashboard.Mailer = outbox
	limiter := ratelimit.New(rdb)
	dd := dashboard.Deps{Log: log, Pool: pool, Accounts: a.Accounts, Gate: a.Gate, Ledger: a.Ledger, Limiter: limiter,
		Jobs: a.Jobs, Mailer: mailer, Clock: clk, URL: base + "/dashboard", SignInPerAddress: 1000,
		AnalysisOptions: report.Options{AllowPrivate: true}}
	if ec.stripe != "" {
		dd.Billing = a.Billing
	}
	if ec.dash != nil {
		ec.dash(&dd)
	}
	// Keyword answers' cursors, signed alike by the API and the worker, as cmd/api and
	// cmd/worker share theirs.
	cursors := report.NewCursors([]byte("the dashboard tests' cursor key, 32+ bytes"))
	dd.Cursors = cursors
	dash, err := dashboard.New(dd)
	if err != nil {
		t.Fatal(err)
	}
	app := httpapi.New(httpapi.Deps{Log: log, Pool: pool, Redis: rdb, Accounts: a.Accounts, Gate: a.Gate, Ledger: a.Ledger,
		Limiter: limiter, Clock: clk, PublicBaseURL: base, DashboardURL: base + "/dashboard",
		DocsURL: base + "/docs", RegisterLimit: 1000, TrustedProxies: []string{"127.0.0.1"}, Jobs: a.Jobs, SyncTimeout: 20 * time.Second,
		AnalysisOptions: report.Options{AllowPrivate: true}, Hosts: a.Crawler,
		Billing: dd.Billing, Dashboard: dash, Cursors: cursors})
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.ShutdownWithTimeout(5 * time.Second) })

	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Concurrency: 4, Queues: jobs.Queues, TaskCheckInterval: time.Millisecond,
		DelayedTaskCheckInterval: 50 * time.Millisecond, LogLevel: asynq.FatalLevel,
	})
	mux := asynq.NewServeMux()
	runner := &report.Builder{Keywords: local.New(pool), Crawler: crawler.New(crawler.Config{AllowPrivate: true}), Clock: clk, ThinWords: 300,
		Cursors: cursors}
	(&jobs.Analysis{Jobs: a.Jobs, Runner: runner, MaxAttempts: a.JobConfig.MaxAttempts, Log: log}).Register(mux)
	if err := srv.Start(mux); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	return &env{URL: base, client: client, Clock: clk, Accounts: a.Accounts, Ledger: a.Ledger, Jobs: a.Jobs, Dash: dash, Mail: box, Pool: pool, log: logW}
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// message is an e-mail the test SMTP server received.
type message struct {
	From, To, Subject, Body string
}

var linkRE = regexp.MustCompile(`https?://\S+/dashboard/link\?token=[A-Za-z0-9_-]+`)

// Link is the dashboard link in the message.
func (m message) Link(t testing.TB) string {
	t.Helper()
	link := linkRE.FindString(m.Body)
	if link == "" {
		t.Fatalf("no dashboard link in %q", m.Body)
	}
	return link
}

// mailbox is an SMTP server (go-smtp) on a loopback port that keeps what it receives.
type mailbox struct {
	addr   string
	msgs   chan message
	settle func() // returns when every e-mail sent so far has reached the server

	// Set before the first message, for the outbox's tests: entered receives once per
	// message read, hold is received from before answering, and the first rejects
	// messages are refused with a temporary SMTP error.
	entered chan struct{}
	hold    chan struct{}
	rejects atomic.Int32
}

func startMailbox(t testing.TB) *mailbox {
	t.Helper()
	box := &mailbox{msgs: make(chan message, 100)}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &smtpSession{box: box}, nil }))
	srv.Domain = "mail.test"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	box.addr = ln.Addr().String()
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return box
}

// Next returns the next message, failing when none arrives in 10 s (e-mails are sent in
// the background, after the request's answer).
func (b *mailbox) Next(t testing.TB) message {
	t.Helper()
	select {
	case m := <-b.msgs:
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no e-mail arrived")
	}
	return message{}
}

// Empty fails if a message is waiting once the outbox has sent everything it was given.
func (b *mailbox) Empty(t testing.TB) {
	t.Helper()
	if b.settle != nil {
		b.settle()
	}
	select {
	case m := <-b.msgs:
		t.Fatalf("unexpected e-mail to %s: %s", m.To, m.Subject)
	default:
	}
}

type smtpSession struct {
	box      *mailbox
	from, to string
}

func (s *smtpSession) Mail(from string, _ *smtp.MailOptions) error { s.from = from; return nil }
func (s *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error   { s.to = to; return nil }
func (s *smtpSession) Reset()                                      {}
func (s *smtpSession) Logout() error                               { return nil }

func (s *smtpSession) Data(r io.Reader) error {
	m, err := mail.ReadMessage(r)
	if err != nil {
		return err
	}
	body := m.Body
	if strings.EqualFold(m.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
		body = quotedprintable.NewReader(m.Body)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	dec := new(mime.WordDecoder)
	subject, err := dec.DecodeHeader(m.Header.Get("Subject"))
	if err != nil {
		return err
	}
	if s.box.entered != nil {
		s.box.entered <- struct{}{}
	}
	if s.box.hold != nil {
		<-s.box.hold
	}
	if s.box.rejects.Add(-1) >= 0 {
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try again later"}
	}
	s.box.msgs <- message{From: s.from, To: s.to, Subject: subject, Body: string(b)}
	return nil
}

// browser is an HTTP client with a cookie jar, as a browser signs in.
type browser struct {
	t      testing.TB
	c      *http.Client
	base   string
	header http.Header // added to every request
}

// newBrowser is a browser with no cookies yet; it follows redirects within the env only.
func (e *env) newBrowser(t testing.TB) *browser {
	jar, _ := cookiejar.New(nil)
	c := *e.client
	c.Jar = jar
	c.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		if !strings.HasPrefix(req.URL.String(), e.URL) {
			return http.ErrUseLastResponse
		}
		return nil
	}
	return &browser{t: t, base: e.URL, header: http.Header{}, c: &c}
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]*)"`)

type page struct {
	Status   int
	URL      string
	Location string // where a redirect out of the env points
	Body     string
}

// CSRF is the form token on the page.
func (p page) CSRF(t testing.TB) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(p.Body)
	if m == nil {
		t.Fatalf("no csrf token on %s: %s", p.URL, p.Body)
	}
	return m[1]
}

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	for k, v := range b.header {
		req.Header[k] = v
	}
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return page{Status: res.StatusCode, URL: res.Request.URL.String(), Location: res.Header.Get("Location"), Body: string(body)}
}

func (b *browser) Get(path string) page {
	b.t.Helper()
	if !strings.HasPrefix(path, "http") {
		path = b.base + path
	}
	req, err := http.NewRequest(http.MethodGet, path, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.do(req)
}

func (b *browser) Post(path string, form url.Values) page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

// register makes an account through the API and returns its first key.
func (e *env) register(t testing.TB, email string) string {
	t.Helper()
	res, err := e.client.Post(e.URL+"/v1/auth/register", "application/json", strings.NewReader(`{"email":"`+email+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("register: %d %s", res.StatusCode, body)
	}
	key := regexp.MustCompile(`"api_key":"(ap_[A-Za-z0-9]+)"`).FindSubmatch(body)
	if key == nil {
		t.Fatalf("register: no key in %s", body)
	}
	return string(key[1])
}

// signIn registers email and signs b in through the verification e-mail's link.
func (e *env) signIn(t testing.TB, b *browser, email string) string {
	t.Helper()
	key := e.register(t, email)
	link := e.Mail.Next(t).Link(t)
	confirm := b.Get(link)
	if confirm.Status != http.StatusOK {
		t.Fatalf("link page: %d %s", confirm.Status, confirm.Body)
	}
	home := b.Post("/dashboard/link", url.Values{"csrf": {confirm.CSRF(t)}, "token": {tokenOf(t, link)}})
	if home.Status != http.StatusOK || !strings.Contains(home.Body, email) {
		t.Fatalf("after the link: %d %s %s", home.Status, home.URL, home.Body)
	}
	return key
}

func tokenOf(t testing.TB, link string) string {
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("token")
}

// call makes an authenticated API call and returns its status.
func (e *env) call(t *testing.T, key, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, e.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}
