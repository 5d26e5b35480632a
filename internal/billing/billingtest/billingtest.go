// Package billingtest gives billing tests a Stripe to talk to: stripe-mock (a real Stripe API
// server that answers with fixture data), a thin fake in front of it that records requests
// and answers what stripe-mock cannot (usable promotion codes, subscriptions with periods),
// and signed webhook events built with stripe-go's webhook package.
package billingtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v76/webhook"
)

// StripeMockVersion is the stripe-mock the tests run (installed with go install when absent).
const StripeMockVersion = "v0.203.0"

// Test configuration shared by the billing tests.
const (
	SecretKey     = "sk_test_billingtest"
	WebhookSecret = "whsec_billingtest"

	PriceProMonthly   = "price_pro_monthly"
	PriceProAnnual    = "price_pro_annual"
	PriceScaleMonthly = "price_scale_monthly"
	PriceScaleAnnual  = "price_scale_annual"
)

var installOnce sync.Once

// stripeMockBinary finds stripe-mock: $STRIPE_MOCK_BIN, or $(go env GOPATH)/bin/stripe-mock,
// installing it there when absent.
func stripeMockBinary() (string, error) {
	if p := os.Getenv("STRIPE_MOCK_BIN"); p != "" {
		return p, nil
	}
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOPATH: %w", err)
	}
	gopath := strings.TrimSpace(strings.Split(string(out), string(os.PathListSeparator))[0])
	bin := filepath.Join(gopath, "bin", "stripe-mock")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	var installErr error
	installOnce.Do(func() {
		cmd := exec.Command("go", "install", "github.com/stripe/stripe-mock@"+StripeMockVersion)
		if out, err := cmd.CombinedOutput(); err != nil {
			installErr = fmt.Errorf("%w: %s", err, out)
		}
	})
	if installErr != nil {
		return "", fmt.Errorf("install stripe-mock %s: %w", StripeMockVersion, installErr)
	}
	return bin, nil
}

// stripeMock is the test binary's stripe-mock process.
type stripeMock struct {
	url    string
	pid    int
	exited chan struct{} // closed when the process has exited
	err    error         // why it exited, once exited is closed
	log    tailBuffer
}

// The tests of a package share one stripe-mock: it keeps no state between requests (each
// answer is built from its fixtures and the request), so sharing it keeps tests independent,
// and each start costs about a second and 70 MB.
var (
	mockOnce  sync.Once
	mock      *stripeMock
	mockStart error
)

// StripeMock returns the HTTP base URL of the test binary's stripe-mock, started on free
// loopback ports by the first caller. It runs until the test binary exits (the kernel kills
// it then, however the binary ends).
func StripeMock(t testing.TB) string {
	t.Helper()
	mockOnce.Do(func() { mock, mockStart = startStripeMock() })
	if mockStart != nil {
		t.Fatalf("billingtest: %v", mockStart)
	}
	select {
	case <-mock.exited:
		t.Fatalf("billingtest: stripe-mock exited: %v\n%s", mock.err, mock.log.String())
	default:
	}
	return mock.url
}

func startStripeMock() (*stripeMock, error) {
	bin, err := stripeMockBinary()
	if err != nil {
		return nil, err
	}
	m := &stripeMock{exited: make(chan struct{})}
	addr := make(chan string, 1)
	started := make(chan error, 1)
	// Pdeathsig fires when the thread that started the process ends, not the process: start
	// it from a goroutine locked to its thread, which lives until stripe-mock exits.
	go func() {
		runtime.LockOSThread()
		cmd := exec.Command(bin, "-http-addr", "127.0.0.1:0", "-https-addr", "127.0.0.1:0")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		out, err := cmd.StdoutPipe()
		if err != nil {
			started <- err
			return
		}
		cmd.Stderr = cmd.Stdout
		if err := cmd.Start(); err != nil {
			started <- fmt.Errorf("start stripe-mock: %w", err)
			return
		}
		m.pid = cmd.Process.Pid
		started <- nil
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			m.log.add(line)
			if a, ok := strings.CutPrefix(line, "Listening for HTTP at address: "); ok {
				select {
				case addr <- strings.TrimSpace(a):
				default:
				}
			}
		}
		m.err = cmd.Wait()
		close(m.exited)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	select {
	case a := <-addr:
		m.url = "http://" + a
	case <-m.exited:
		return nil, fmt.Errorf("stripe-mock exited before listening: %w\n%s", m.err, m.log.String())
	case <-time.After(60 * time.Second):
		return nil, fmt.Errorf("stripe-mock did not report its address:\n%s", m.log.String())
	}
	// It logs the address once listening; a bounded retry covers a slow first accept.
	var lastErr error
	for attempt := 0; attempt < 100; attempt++ {
		req, _ := http.NewRequest(http.MethodGet, m.url+"/v1/customers?limit=1", nil)
		req.SetBasicAuth(SecretKey, "")
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return m, nil
			}
			err = fmt.Errorf("status %d", res.StatusCode)
		}
		lastErr = err
		time.Sleep(20 * time.Millisecond)
	}
	return nil, fmt.Errorf("stripe-mock at %s not answering: %w", m.url, lastErr)
}

// tailBuffer keeps the last lines stripe-mock printed, for failure messages.
type tailBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (b *tailBuffer) add(line string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.lines) == 200 {
		b.lines = b.lines[1:]
	}
	b.lines = append(b.lines, line)
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}

// Request is one request the fake Stripe received.
type Request struct {
	Method string
	Path   string
	Form   url.Values // query and form body together
}

// Stripe is the fake Stripe API the service is pointed at in tests.
type Stripe struct {
	URL string

	mu       sync.Mutex
	requests []Request
	promos   map[string]map[string]any
	subs     map[string]map[string]any
}

// NewStripe starts a fake of its own (its requests, promotion codes and subscriptions) in
// front of the test binary's shared stripe-mock, stopped when the test ends.
func NewStripe(t testing.TB) *Stripe {
	t.Helper()
	target, _ := url.Parse(StripeMock(t))
	proxy := httputil.NewSingleHostReverseProxy(target)
	s := &Stripe{promos: map[string]map[string]any{}, subs: map[string]map[string]any{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		form, _ := url.ParseQuery(string(body))
		for k, v := range r.URL.Query() {
			form[k] = append(form[k], v...)
		}
		s.mu.Lock()
		s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Form: form})
		var canned any
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/v1/promotion_codes":
			if p, ok := s.promos[strings.ToUpper(form.Get("code"))]; ok {
				canned = map[string]any{"object": "list", "url": "/v1/promotion_codes", "has_more": false, "data": []any{p}}
			}
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/subscriptions/"):
			if sub, ok := s.subs[strings.TrimPrefix(r.URL.Path, "/v1/subscriptions/")]; ok {
				canned = sub
			}
		}
		s.mu.Unlock()
		if canned != nil {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(canned)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// AddPromotionCode makes the promotion code list answer obj for its code.
func (s *Stripe) AddPromotionCode(obj map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.promos[strings.ToUpper(obj["code"].(string))] = obj
}

// AddSubscription makes retrieving the subscription answer obj.
func (s *Stripe) AddSubscription(obj map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subs[obj["id"].(string)] = obj
}

// Requests returns the requests received for a method and path.
func (s *Stripe) Requests(method, path string) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Request
	for _, r := range s.requests {
		if r.Method == method && r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// PromotionCode is a promotion code object of Stripe's API version 2023-10-16.
func PromotionCode(id, code string, active bool, expiresAt time.Time, coupon map[string]any) map[string]any {
	var exp any
	if !expiresAt.IsZero() {
		exp = expiresAt.Unix()
	}
	c := map[string]any{"id": "co_" + id, "object": "coupon", "valid": true, "duration": "once"}
	for k, v := range coupon {
		c[k] = v
	}
	return map[string]any{"id": id, "object": "promotion_code", "code": code, "active": active,
		"expires_at": exp, "coupon": c, "created": 1700000000, "livemode": false, "times_redeemed": 0,
		"restrictions": map[string]any{"first_time_transaction": false}}
}

// Event is a Stripe event envelope around obj.
func Event(id, typ string, created time.Time, obj map[string]any) []byte {
	b, err := json.Marshal(map[string]any{
		"id": id, "object": "event", "api_version": "2023-10-16", "created": created.Unix(),
		"type": typ, "livemode": false, "pending_webhooks": 1,
		"data": map[string]any{"object": obj},
	})
	if err != nil {
		panic(err)
	}
	return b
}

// Sign returns the Stripe-Signature header for payload, timestamped now (real time, as
// Stripe's tolerance is checked against it).
func Sign(payload []byte, secret string) string {
	return webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: secret}).Header
}

// SignAt is Sign with a chosen timestamp.
func SignAt(payload []byte, secret string, at time.Time) string {
	return webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: secret, Timestamp: at}).Header
}

// CheckoutSession is a completed subscription checkout session as the service creates it.
func CheckoutSession(id, accountID, subID, customerID, plan, cycle string) map[string]any {
	return map[string]any{
		"id": id, "object": "checkout.session", "mode": "subscription", "status": "complete",
		"payment_status": "paid", "client_reference_id": accountID, "customer": nullable(customerID),
		"subscription": nullable(subID), "url": nil,
		"metadata": map[string]any{"account_id": accountID, "plan": plan, "billing_cycle": cycle},
	}
}

// Sub describes a subscription object.
type Sub struct {
	ID, Customer, AccountID, Price, Status string
	Start, End                             time.Time
	Created                                time.Time
	CancelAtPeriodEnd                      bool
}

// Subscription is a subscription object of API version 2023-10-16.
func Subscription(s Sub) map[string]any {
	if s.Status == "" {
		s.Status = "active"
	}
	meta := map[string]any{}
	if s.AccountID != "" {
		meta["contentapi_account_id"] = s.AccountID
	}
	created := s.Created
	if created.IsZero() {
		created = s.Start
	}
	return map[string]any{
		"id": s.ID, "object": "subscription", "customer": nullable(s.Customer), "status": s.Status,
		"created": created.Unix(), "current_period_start": s.Start.Unix(), "current_period_end": s.End.Unix(),
		"cancel_at_period_end": s.CancelAtPeriodEnd, "metadata": meta,
		"items": map[string]any{"object": "list", "has_more": false, "data": []any{map[string]any{
			"id": "si_" + s.ID, "object": "subscription_item", "quantity": 1, "subscription": s.ID,
			"price": map[string]any{"id": s.Price, "object": "price", "currency": "usd"},
		}}},
	}
}

// Invoice is a paid subscription invoice; reason is its billing_reason. Its own period is
// the one before the line's, as Stripe has it for renewals.
func Invoice(id, reason, subID, customer, accountID, price string, start, end time.Time) map[string]any {
	meta := map[string]any{}
	if accountID != "" {
		meta["contentapi_account_id"] = accountID
	}
	return map[string]any{
		"id": id, "object": "invoice", "billing_reason": reason, "status": "paid", "paid": true,
		"subscription": subID, "customer": nullable(customer), "currency": "usd",
		"period_start": start.AddDate(0, -1, 0).Unix(), "period_end": start.Unix(),
		"subscription_details": map[string]any{"metadata": meta},
		"lines": map[string]any{"object": "list", "has_more": false, "data": []any{map[string]any{
			"id": "il_" + id, "object": "line_item", "type": "subscription", "proration": false,
			"subscription": subID, "period": map[string]any{"start": start.Unix(), "end": end.Unix()},
			"price": map[string]any{"id": price, "object": "price", "currency": "usd"},
		}}},
	}
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
