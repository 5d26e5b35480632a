// Package client is a Go client of the Content Strategy API: keyword research, competitor
// keyword gaps, content audits, content recommendations and content maps, paid for in
// credits.
//
//	c := client.New(os.Getenv("CONTENTAPI_KEY"), client.WithBaseURL("https://api.example.com"))
//	res, err := c.KeywordResearch(ctx, client.ResearchRequest{Domain: "example.com", Topic: "cold brew"})
//
// The client accepts both answer envelopes the API's specification allows ({"success":
// true, "data", "meta"} and {"status": "success", "data"}, with credits_remaining at the top
// level or in meta), turns all three error shapes into *Error, retries calls refused with
// 429 (after Retry-After) or 503, and sends analysis calls with an Idempotency-Key made
// before the first attempt, so a retry is never charged twice. An analysis call that the
// server answers with 202 (still running) is waited for by polling GET /v1/jobs/{id}, and so
// is one answered 503 with the job it may have been accepted as (error.job_id): that job is
// fetched rather than the call made again.
//
// Lists answered page by page (keyword research, gaps, rankings, competitors and the
// account's jobs) carry a NextCursor of the one type Cursor, "" on the last page; each has a
// ...Pages method walking its pages as an iter.Seq2, one call (and charge) a page:
//
//	for page, err := range c.KeywordRankingsPages(ctx, client.RankingsRequest{Domain: "example.com"}) {
//		if err != nil {
//			return err
//		}
//		for _, r := range page.Rankings { ... }
//	}
//
// It is a module of its own (github.com/contentapi/contentapi/client) and depends on the
// standard library only: requiring it pulls in nothing of the service's modules.
package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultBaseURL is the address of a local development server.
const DefaultBaseURL = "http://localhost:8080"

// Version is this client's version, sent in the User-Agent.
const Version = "1.0.0"

// maxBody bounds what is read of one answer.
const maxBody = 64 << 20

// Client calls the API. It is safe for concurrent use; its settings do not change after
// New (WithAPIKey returns a copy).
type Client struct {
	baseURL   string
	apiKey    string
	http      *http.Client
	retry     RetryPolicy
	poll      PollPolicy
	userAgent string
}

// Option configures a Client.
type Option func(*Client)

// WithBaseURL sets the API's address, for example "https://api.example.com" (a path prefix
// is kept: "https://example.com/api").
func WithBaseURL(u string) Option {
	return func(c *Client) { c.baseURL = strings.TrimRight(u, "/") }
}

// WithHTTPClient sets the HTTP client (timeouts, proxies, transport). The default is a
// client with a 2-minute timeout per request.
func WithHTTPClient(h *http.Client) Option {
	return func(c *Client) {
		if h != nil {
			c.http = h
		}
	}
}

// WithRetryPolicy sets how refused calls are retried; NoRetry disables retries.
func WithRetryPolicy(p RetryPolicy) Option { return func(c *Client) { c.retry = p.normalized() } }

// WithPollPolicy sets how WaitJob (and analysis calls answered 202) poll a running job.
func WithPollPolicy(p PollPolicy) Option { return func(c *Client) { c.poll = p.normalized() } }

// WithUserAgent puts the caller's product name before the client's in User-Agent.
func WithUserAgent(ua string) Option {
	return func(c *Client) { c.userAgent = strings.TrimSpace(ua + " contentapi-go/" + Version) }
}

// New returns a client authenticating with apiKey ("ap_..."); apiKey may be empty for
// Register and ServiceInfo.
func New(apiKey string, opts ...Option) *Client {
	c := &Client{
		baseURL:   DefaultBaseURL,
		apiKey:    apiKey,
		http:      &http.Client{Timeout: 2 * time.Minute},
		retry:     DefaultRetryPolicy,
		poll:      DefaultPollPolicy,
		userAgent: "contentapi-go/" + Version,
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// WithAPIKey returns a copy of the client using another key, for example the one Register
// returned.
func (c *Client) WithAPIKey(apiKey string) *Client {
	cp := *c
	cp.apiKey = apiKey
	return &cp
}

// BaseURL returns the API address the client calls.
func (c *Client) BaseURL() string { return c.baseURL }

// call is one logical API call.
type call struct {
	method string
	path   string // below the base URL, with any query
	body   any    // JSON-encoded when not nil
	header http.Header
	// idempotencyKey, when set, is sent on every attempt: the server then answers a
	// repeated attempt with the first one's result and charges once.
	idempotencyKey string
}

// answer is what the server said.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// do runs a call with retries and returns the final answer; an error answer (status 400
// and above) is returned as *Error.
func (c *Client) do(ctx context.Context, cl call) (*answer, error) {
	var payload []byte
	if cl.body != nil {
		var err error
		if payload, err = json.Marshal(cl.body); err != nil {
			return nil, fmt.Errorf("contentapi: encode request: %w", err)
		}
	}
	// A transport error leaves unknown whether the server acted: only calls that are safe
	// to repeat are retried after one.
	repeatable := cl.method == http.MethodGet || cl.method == http.MethodDelete || cl.idempotencyKey != ""
	for attempt := 1; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, cl.method, c.baseURL+cl.path, bodyReader(payload))
		if err != nil {
			return nil, fmt.Errorf("contentapi: %w", err)
		}
		for k, v := range cl.header {
			req.Header[k] = v
		}
		if req.Header.Get("Accept") == "" {
			req.Header.Set("Accept", "application/json")
		}
		req.Header.Set("User-Agent", c.userAgent)
		if payload != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if c.apiKey != "" {
			req.Header.Set("Authorization", "Bearer "+c.apiKey)
		}
		if cl.idempotencyKey != "" {
			req.Header.Set("Idempotency-Key", cl.idempotencyKey)
		}
		res, err := c.http.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if repeatable && attempt < c.retry.MaxAttempts {
				if err := sleep(ctx, c.retry.backoff(attempt)); err != nil {
					return nil, err
				}
				continue
			}
			return nil, fmt.Errorf("contentapi: %s %s: %w", cl.method, cl.path, err)
		}
		body, err := io.ReadAll(io.LimitReader(res.Body, maxBody))
		res.Body.Close()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if repeatable && attempt < c.retry.MaxAttempts {
				if err := sleep(ctx, c.retry.backoff(attempt)); err != nil {
					return nil, err
				}
				continue
			}
			return nil, fmt.Errorf("contentapi: %s %s: read answer: %w", cl.method, cl.path, err)
		}
		a := &answer{status: res.StatusCode, header: res.Header, body: body}
		if a.status < 400 {
			if e := envelopeError(a); e != nil {
				return nil, e
			}
			return a, nil
		}
		apiErr := parseError(a)
		if attempt < c.retry.MaxAttempts && retryable(apiErr) {
			wait := apiErr.RetryAfter
			if wait <= 0 {
				wait = c.retry.backoff(attempt)
			}
			if wait <= c.retry.MaxRetryAfter {
				if err := sleep(ctx, wait); err != nil {
					return nil, err
				}
				continue
			}
		}
		return nil, apiErr
	}
}

func bodyReader(b []byte) io.Reader {
	if b == nil {
		return nil
	}
	return bytes.NewReader(b)
}

// retryable says whether an error answer may succeed when repeated unchanged: a rate limit
// (nothing was done or charged) or a passing unavailability. BILLING_NOT_CONFIGURED is a
// 503 that no retry cures, and a 503 naming a job (maybeAccepted) is answered by looking
// the job up, not by calling again.
func retryable(e *Error) bool {
	switch e.Status {
	case http.StatusTooManyRequests:
		return true
	case http.StatusServiceUnavailable:
		return e.Code != CodeBillingNotConfigured && e.JobID == ""
	}
	return false
}

// maybeAccepted returns the job a 503 names: the server lost its database while recording
// the call, which may have been accepted (and charged) as that job.
func maybeAccepted(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Status == http.StatusServiceUnavailable {
		return e.JobID
	}
	return ""
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// envelope is every success and error shape the API answers with, read tolerantly.
type envelope struct {
	Success          *bool           `json:"success"`
	Status           string          `json:"status"`
	Data             json.RawMessage `json:"data"`
	Meta             *wireMeta       `json:"meta"`
	CreditsRemaining *int            `json:"credits_remaining"` // the introductory example's top level
	Error            json.RawMessage `json:"error"`             // a string or an object
	Message          string          `json:"message"`
	Code             string          `json:"code"`
}

type wireMeta struct {
	CreditsUsed      *int     `json:"credits_used"`
	CreditsRemaining *int     `json:"credits_remaining"`
	RequestID        string   `json:"request_id"`
	JobID            string   `json:"job_id"`
	DataSource       string   `json:"data_source"`
	Warnings         []string `json:"warnings"`
}

// envelopeError finds an error reported with a success status ({"success": false} or
// {"status": "error"}), which a tolerant client treats as the error it is.
func envelopeError(a *answer) *Error {
	if !isJSON(a.header) {
		return nil
	}
	var env envelope
	if json.Unmarshal(a.body, &env) != nil {
		return nil //nolint:nilerr // a body that is not an envelope is not an error answer
	}
	if (env.Success != nil && !*env.Success) || strings.EqualFold(env.Status, "error") {
		return parseError(a)
	}
	return nil
}

func isJSON(h http.Header) bool {
	ct := strings.ToLower(h.Get("Content-Type"))
	return ct == "" || strings.Contains(ct, "json")
}

// decodeData reads an answer's data (in either envelope) into v and returns the envelope.
func decodeData(a *answer, v any) (*envelope, error) {
	var env envelope
	if err := json.Unmarshal(a.body, &env); err != nil {
		return nil, fmt.Errorf("contentapi: answer is not JSON (status %d): %w", a.status, err)
	}
	data := env.Data
	if len(data) == 0 || string(data) == "null" {
		data = a.body // an answer without an envelope
	}
	if v != nil {
		if err := json.Unmarshal(data, v); err != nil {
			return nil, fmt.Errorf("contentapi: decode answer: %w", err)
		}
	}
	return &env, nil
}

// metaOf gathers an analysis answer's metadata from wherever this answer put it: meta,
// the top level, data (credits_used in the introductory example) or the headers.
func metaOf(a *answer, env *envelope) Meta {
	m := Meta{RequestID: a.header.Get("X-Request-ID"), JobID: a.header.Get("X-Job-ID"),
		Replayed: a.header.Get("Idempotent-Replayed") == "true", RateLimit: rateLimitOf(a.header),
		DataSource: a.header.Get("X-Data-Source")}
	if env != nil && env.Meta != nil {
		if env.Meta.CreditsUsed != nil {
			m.CreditsUsed = *env.Meta.CreditsUsed
		}
		if env.Meta.CreditsRemaining != nil {
			m.CreditsRemaining = *env.Meta.CreditsRemaining
		}
		if env.Meta.RequestID != "" {
			m.RequestID = env.Meta.RequestID
		}
		if env.Meta.JobID != "" {
			m.JobID = env.Meta.JobID
		}
		if env.Meta.DataSource != "" {
			m.DataSource = env.Meta.DataSource
		}
		m.Warnings = env.Meta.Warnings
	}
	if env != nil && (env.Meta == nil || env.Meta.CreditsRemaining == nil) && env.CreditsRemaining != nil {
		m.CreditsRemaining = *env.CreditsRemaining
	}
	if env != nil && (env.Meta == nil || env.Meta.CreditsUsed == nil) && len(env.Data) > 0 {
		var inData struct {
			CreditsUsed *int `json:"credits_used"`
		}
		if json.Unmarshal(env.Data, &inData) == nil && inData.CreditsUsed != nil {
			m.CreditsUsed = *inData.CreditsUsed
		}
	}
	if v, err := strconv.Atoi(a.header.Get("X-Credits-Used")); err == nil && (env == nil || env.Meta == nil) {
		m.CreditsUsed = v
	}
	if v, err := strconv.Atoi(a.header.Get("X-Credits-Remaining")); err == nil && (env == nil || env.Meta == nil) {
		m.CreditsRemaining = v
	}
	return m
}

func rateLimitOf(h http.Header) RateLimit {
	atoi := func(name string) int {
		v, _ := strconv.Atoi(h.Get(name))
		return v
	}
	return RateLimit{Limit: atoi("X-RateLimit-Limit"), Remaining: atoi("X-RateLimit-Remaining"),
		Reset: time.Duration(atoi("X-RateLimit-Reset")) * time.Second}
}

// newIdempotencyKey returns a fresh random key for one logical call.
func newIdempotencyKey() string { return "go-" + rand.Text() }

// get and friends are the plain (non-analysis) calls.
func (c *Client) get(ctx context.Context, path string, v any) (*answer, error) {
	a, err := c.do(ctx, call{method: http.MethodGet, path: path})
	if err != nil {
		return nil, err
	}
	_, err = decodeData(a, v)
	return a, err
}

func (c *Client) send(ctx context.Context, method, path string, body, v any) (*answer, error) {
	a, err := c.do(ctx, call{method: method, path: path, body: body})
	if err != nil {
		return nil, err
	}
	_, err = decodeData(a, v)
	return a, err
}
