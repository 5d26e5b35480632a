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
	"strings"
	"sync"
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
func stripeMockBinary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("STRIPE_MOCK_BIN"); p != "" {
		return p
	}
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if err != nil {
		t.Fatalf("billingtest: go env GOPATH: %v", err)
	}
	gopath := strings.TrimSpace(strings.Split(string(out), string(os.PathListSeparator))[0])
	bin := filepath.Join(gopath, "bin", "stripe-mock")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	var installErr error
	installOnce.Do(func() {
		cmd := exec.Command("go", "install", "github.com/stripe/stripe-mock@"+StripeMockVersion)
		if out, err := cmd.CombinedOutput(); err != nil {
			installErr = fmt.Errorf("%w: %s", err, out)
		}
	})
	if installErr != nil {
		t.Fatalf("billingtest: install stripe-mock %s: %v", StripeMockVersion, installErr)
	}
	return bin
}

// StripeMock starts stripe-mock on free loopback ports and returns its HTTP base URL. It is
// stopped when the test ends.
func StripeMock(t testing.TB) string {
	t.Helper()
	bin := stripeMockBinary(t)
	cmd := exec.Command(bin, "-http-addr", "127.0.0.1:0", "-https-addr", "127.0.0.1:0")
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatalf("billingtest: start stripe-mock: %v", err)
	}
	addr := make(chan string, 1)
	var logMu sync.Mutex
	var log bytes.Buffer
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			logMu.Lock()
			log.WriteString(line + "\n")
			logMu.Unlock()
			if a, ok := strings.CutPrefix(line, "Listening for HTTP at address: "); ok {
				addr <- strings.TrimSpace(a)
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = pw.Close()
	})
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case <-time.After(60 * time.Second):
		logMu.Lock()
		defer logMu.Unlock()
		t.Fatalf("billingtest: stripe-mock did not report its address:\n%s", log.String())
	}
	// It logs the address once listening; a bounded retry covers a slow first accept.
	var lastErr error
	for attempt := 0; attempt < 100; attempt++ {
		req, _ := http.NewRequest(http.MethodGet, base+"/v1/customers?limit=1", nil)
		req.SetBasicAuth(SecretKey, "")
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return base
			}
			err = fmt.Errorf("status %d", res.StatusCode)
		}
		lastErr = err
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("billingtest: stripe-mock at %s not answering: %v", base, lastErr)
	return ""
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

// NewStripe starts stripe-mock and the fake in front of it.
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
