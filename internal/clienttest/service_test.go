package clienttest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"github.com/contentapi/contentapi/client"
	"github.com/contentapi/contentapi/internal/app/apptest"
	"github.com/contentapi/contentapi/internal/app/worker"
	"github.com/contentapi/contentapi/internal/auth"
	"github.com/contentapi/contentapi/internal/billing/billingtest"
	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/crawler"
	"github.com/contentapi/contentapi/internal/credits"
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

// service is the real API (as cmd/api wires it) with an asynq worker, in this process,
// over the test PostgreSQL and Redis.
type service struct {
	URL      string
	Ledger   *credits.Ledger
	Accounts *auth.Accounts
	Gate     *auth.Gate
	Jobs     *job.Service
	// startWorker starts the worker when the service was made without one.
	startWorker func()
}

type serviceConfig struct {
	noWorker  bool          // the worker starts only on startWorker()
	sync      time.Duration // how long a call waits for its job before answering 202
	callbacks bool          // deliver job callbacks (to loopback addresses)
	stripe    string        // billing against this Stripe API address
}

var seedOnce sync.Once

func quiet() *slog.Logger { return slog.New(slog.NewJSONHandler(io.Discard, nil)) }

func startService(t *testing.T, sc serviceConfig) *service {
	t.Helper()
	pool := testenv.Postgres(t)
	rdb := testenv.Redis(t)
	seedOnce.Do(func() {
		if _, _, err := sample.Seed(context.Background(), pool); err != nil {
			t.Fatalf("seed: %v", err)
		}
	})
	if sc.sync == 0 {
		sc.sync = 20 * time.Second
	}
	clk := clock.NewManual(time.Now().UTC().Truncate(time.Millisecond))
	log := quiet()
	a := apptest.New(t, apptest.Options{Clock: clk, Log: log, Pool: pool, Redis: rdb, Stripe: sc.stripe,
		Env: map[string]string{"DASHBOARD_URL": "https://dash.test/dashboard"}})
	d := httpapi.Deps{Log: log, Pool: pool, Redis: rdb, Accounts: a.Accounts, Gate: a.Gate, Ledger: a.Ledger,
		Limiter: ratelimit.New(rdb), Clock: clk, PublicBaseURL: "http://api.test", DashboardURL: "https://dash.test",
		DocsURL: "https://docs.test", RegisterLimit: 1000, Jobs: a.Jobs, SyncTimeout: sc.sync,
		AnalysisOptions: report.Options{AllowPrivate: true}, Hosts: a.Crawler, Cursors: a.Cursors}
	if sc.stripe != "" {
		d.Billing = a.Billing
	}
	app := httpapi.New(d)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.ShutdownWithTimeout(5 * time.Second) })

	s := &service{URL: "http://" + ln.Addr().String(), Ledger: a.Ledger, Accounts: a.Accounts, Gate: a.Gate, Jobs: a.Jobs}
	var once sync.Once
	s.startWorker = func() {
		once.Do(func() {
			srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
				Concurrency: 10, Queues: jobs.Queues, TaskCheckInterval: time.Millisecond,
				DelayedTaskCheckInterval: 50 * time.Millisecond, LogLevel: asynq.FatalLevel,
				RetryDelayFunc: func(int, error, *asynq.Task) time.Duration { return 10 * time.Millisecond },
			})
			mux := asynq.NewServeMux()
			runner := &report.Builder{Keywords: local.New(pool), Crawler: crawler.New(crawler.Config{AllowPrivate: true}), Clock: clk, ThinWords: 300,
				Cursors: a.Cursors}
			(&jobs.Analysis{Jobs: a.Jobs, Runner: runner, MaxAttempts: a.JobConfig.MaxAttempts, Log: log}).Register(mux)
			if sc.callbacks {
				worker.ScheduleCallbacks(a)
				worker.Callbacks(a).Register(mux)
			}
			if err := srv.Start(mux); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(srv.Shutdown)
		})
	}
	if !sc.noWorker {
		s.startWorker()
	}
	return s
}

// register makes an account through the client and returns a client with its key; the
// account gets a busy plan's rate limit unless free is asked for.
func (s *service) register(t *testing.T, free bool, opts ...client.Option) *client.Client {
	t.Helper()
	return client.New(s.registerKey(t, free), append([]client.Option{client.WithBaseURL(s.URL)}, opts...)...)
}

func (s *service) registerKey(t *testing.T, free bool) string {
	t.Helper()
	c := client.New("", client.WithBaseURL(s.URL))
	reg, err := c.Register(context.Background(), client.RegisterRequest{Email: "client-" + uuid.NewString() + "@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(reg.APIKey, "ap_") || len(reg.APIKey) != 35 || reg.Plan != "free" || reg.Credits != 50 {
		t.Fatalf("registration %+v", reg)
	}
	if !free {
		if err := s.Accounts.SetPlan(context.Background(), s.accountOf(t, reg.APIKey), "enterprise", 10000, 0); err != nil {
			t.Fatal(err)
		}
	}
	return reg.APIKey
}

// observe is a transport that shows every answer to see before the client reads it.
type observe func(*http.Response)

func (o observe) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		o(res)
	}
	return res, err
}

func (s *service) accountOf(t *testing.T, key string) uuid.UUID {
	t.Helper()
	p, _, err := s.Gate.Authenticate(context.Background(), "Bearer "+key)
	if err != nil {
		t.Fatal(err)
	}
	return p.AccountID
}

var sampleDomain = func() string { return sample.Domains()[0] }

func TestClientAgainstService(t *testing.T) {
	s := startService(t, serviceConfig{})
	ctx := context.Background()
	key := s.registerKey(t, false)
	c := client.New(key, client.WithBaseURL(s.URL))

	info, err := client.New("", client.WithBaseURL(s.URL)).ServiceInfo(ctx)
	if err != nil || info.Status != "operational" || info.Endpoints["POST /v1/content-map"] == "" {
		t.Fatalf("info %+v %v", info, err)
	}
	u, err := c.Usage(ctx)
	if err != nil || u.CreditsRemaining != 50 || u.Plan != "enterprise" || u.PeriodStart.IsZero() || !u.PeriodEnd.After(u.PeriodStart) {
		t.Fatalf("usage %+v %v", u, err)
	}

	res, err := c.KeywordResearch(ctx, client.ResearchRequest{Domain: sampleDomain(), Topic: "coffee", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if res.TotalKeywords == 0 || len(res.Clusters) == 0 || res.Meta.CreditsUsed != 5 || res.Meta.CreditsRemaining != 45 ||
		res.Meta.RequestID == "" || res.Meta.JobID == "" || res.Meta.RateLimit.Limit != 10000 {
		t.Fatalf("research %+v meta %+v", res, res.Meta)
	}

	// A 202 job, waited for.
	j, err := c.Submit(ctx, client.OpKeywordResearch, client.ResearchRequest{Domain: sampleDomain(), Topic: "espresso", Limit: 5})
	if err != nil || j.Status == client.JobSucceeded || j.ID == "" {
		t.Fatalf("submit %+v %v", j, err)
	}
	done, err := c.WaitJob(ctx, j.ID)
	if err != nil || !done.Done() || done.Meta.CreditsUsed != 5 {
		t.Fatalf("wait %+v %v", done, err)
	}
	var later client.ResearchResult
	if err := done.Decode(&later); err != nil || later.Topic != "espresso" {
		t.Fatalf("decode %+v %v", later, err)
	}

	// Idempotency: the same key twice is one charge and one job.
	req := client.GapsRequest{Domain: sample.Domains()[0], Competitors: []string{sample.Domains()[1]}, Limit: 5}
	g1, err := c.KeywordGaps(ctx, req, client.WithIdempotencyKey("client-test-gaps"))
	if err != nil {
		t.Fatal(err)
	}
	g2, err := c.KeywordGaps(ctx, req, client.WithIdempotencyKey("client-test-gaps"))
	if err != nil || g1.Meta.JobID != g2.Meta.JobID || !g2.Meta.Replayed || g2.Meta.CreditsRemaining != 30 {
		t.Fatalf("replay %+v %+v %v", g1.Meta, g2.Meta, err)
	}

	dry, err := c.DryRun(ctx, client.OpContentMap, client.ContentMapRequest{Domain: "example.com"})
	if err != nil || dry.CreditsCost != 25 || dry.BalanceAfter != 5 {
		t.Fatalf("dry run %+v %v", dry, err)
	}

	// Keys.
	nk, err := c.CreateKey(ctx, client.CreateKeyRequest{Name: "ci", ExpiresInDays: 30})
	if err != nil || nk.ExpiresAt == nil || !strings.HasPrefix(nk.APIKey, "ap_") {
		t.Fatalf("create key %+v %v", nk, err)
	}
	keys, err := c.ListKeys(ctx)
	if err != nil || len(keys) != 2 {
		t.Fatalf("keys %+v %v", keys, err)
	}
	if k, err := c.RevokeKey(ctx, nk.ID); err != nil || k.Status != "revoked" {
		t.Fatalf("revoke %+v %v", k, err)
	}
	acct, err := c.Account(ctx)
	if err != nil || acct.Plan != "enterprise" || acct.Callbacks == nil || acct.Callbacks.SigningSecret == "" {
		t.Fatalf("account %+v %v", acct, err)
	}

	// Typed errors: 401 (both codes), 400, 402.
	var e *client.Error
	_, err = client.New("", client.WithBaseURL(s.URL)).Usage(ctx)
	if !errors.As(err, &e) || e.Status != 401 || e.Code != client.CodeMissingAuthHeader || e.RequestID == "" {
		t.Fatalf("no key: %#v", err)
	}
	_, err = c.WithAPIKey(nk.APIKey).Usage(ctx)
	if !errors.As(err, &e) || e.Status != 401 || e.Code != client.CodeInvalidAPIKey {
		t.Fatalf("revoked key: %#v", err)
	}
	_, err = c.KeywordResearch(ctx, client.ResearchRequest{Topic: "coffee"})
	if !errors.As(err, &e) || e.Status != 400 || e.Code != client.CodeValidation || !strings.Contains(e.Message, "domain is required") {
		t.Fatalf("no domain: %#v", err)
	}
	res2, err := s.Ledger.Reserve(ctx, s.accountOf(t, key), 30, "/test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ledger.Settle(ctx, res2); err != nil {
		t.Fatal(err)
	}
	_, err = c.ContentMap(ctx, client.ContentMapRequest{Domain: sampleDomain(), FocusTopics: []string{"coffee"}})
	if !errors.As(err, &e) || e.Status != 402 || e.Code != client.CodeInsufficientCredits {
		t.Fatalf("no credits: %#v", err)
	}
}

// An analysis call the server answers 202 is waited for transparently: the worker starts
// only once the 202 has been seen, so the answer cannot have been synchronous.
func TestClientWaitsForAcceptedCall(t *testing.T) {
	s := startService(t, serviceConfig{noWorker: true, sync: time.Millisecond})
	accepted := make(chan struct{})
	var once sync.Once
	hc := &http.Client{Transport: observe(func(r *http.Response) {
		if r.StatusCode == http.StatusAccepted && r.Request.Method == http.MethodPost {
			once.Do(func() { close(accepted) })
		}
	})}
	c := s.register(t, false, client.WithHTTPClient(hc),
		client.WithPollPolicy(client.PollPolicy{Initial: 20 * time.Millisecond, Max: 100 * time.Millisecond}))
	go func() {
		<-accepted
		s.startWorker()
	}()
	res, err := c.KeywordResearch(context.Background(), client.ResearchRequest{Domain: sampleDomain(), Topic: "coffee", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-accepted:
	default:
		t.Fatal("the call was not answered 202")
	}
	if res.TotalKeywords == 0 || res.Meta.CreditsUsed != 5 || res.Meta.JobID == "" {
		t.Fatalf("result %+v", res.Meta)
	}
}

// A job callback the service delivers verifies with ParseCallback and the account's secret.
func TestClientParsesServiceCallback(t *testing.T) {
	s := startService(t, serviceConfig{callbacks: true})
	c := s.register(t, false)
	acct, err := c.Account(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *client.JobCallback, 1)
	bad := make(chan error, 1)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		cb, err := client.ParseCallback(acct.Callbacks.SigningSecret, body, r.Header.Get(acct.Callbacks.SignatureHeader), time.Minute)
		if err != nil {
			bad <- err
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		got <- cb
	}))
	t.Cleanup(recv.Close)
	j, err := c.Submit(context.Background(), client.OpKeywordResearch, client.ResearchRequest{Domain: sampleDomain(), Topic: "coffee",
		Limit: 5, CallbackURL: recv.URL + "/hook"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case cb := <-got:
		var res client.ResearchResult
		if cb.JobID != j.ID || cb.Event != "job.succeeded" || cb.Meta == nil || cb.Meta.CreditsUsed != 5 {
			t.Fatalf("callback %+v", cb)
		}
		if err := json.Unmarshal(cb.Data, &res); err != nil || res.TotalKeywords == 0 {
			t.Fatalf("callback data: %v", err)
		}
	case err := <-bad:
		t.Fatalf("callback refused: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("no callback")
	}
}

func TestClientBilling(t *testing.T) {
	fake := billingtest.NewStripe(t)
	s := startService(t, serviceConfig{stripe: fake.URL})
	c := s.register(t, true)
	ctx := context.Background()
	sess, err := c.Checkout(ctx, client.CheckoutRequest{Plan: "pro", SuccessURL: "https://app.example.com/done", CancelURL: "https://app.example.com/cancel"})
	if err != nil || !strings.HasPrefix(sess.CheckoutURL, "https://") || sess.PlanDetails.Price.Amount != 4900 || sess.ExpiryTime.IsZero() {
		t.Fatalf("checkout %+v %v", sess, err)
	}
	_, err = c.Checkout(ctx, client.CheckoutRequest{Plan: "free", SuccessURL: "https://a.example/x", CancelURL: "https://a.example/y"})
	if e := (*client.Error)(nil); !errors.As(err, &e) || e.Status != 400 || e.Code != client.CodeInvalidPlan {
		t.Fatalf("invalid plan: %#v", err)
	}
	if _, err := c.BillingPortal(ctx, client.PortalRequest{}); !client.IsCode(err, client.CodeNoBillingAccount) {
		t.Fatalf("portal: %v", err)
	}
}
