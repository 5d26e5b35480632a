package client

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Operation is an analysis endpoint.
type Operation string

// The analysis operations, with their credit costs.
const (
	OpKeywordResearch    Operation = "/v1/keywords/research"    // 5 credits
	OpKeywordGaps        Operation = "/v1/keywords/gaps"        // 10 credits
	OpKeywordRankings    Operation = "/v1/keywords/rankings"    // 5 credits
	OpKeywordCompetitors Operation = "/v1/keywords/competitors" // 10 credits
	OpContentAudit       Operation = "/v1/content/audit"        // 15 credits
	OpContentRecommend   Operation = "/v1/content/recommend"    // 15 credits
	OpContentMap         Operation = "/v1/content-map"          // 25 credits
)

// CallOption adjusts one analysis call.
type CallOption func(*callOptions)

type callOptions struct {
	idempotencyKey string
}

// WithIdempotencyKey sends key instead of a fresh random one: repeating the call with the
// same key and body within 24 hours returns the first call's answer and charges nothing.
// Use it to make a call safe across restarts of your own process.
func WithIdempotencyKey(key string) CallOption {
	return func(o *callOptions) { o.idempotencyKey = key }
}

func options(opts []CallOption) callOptions {
	o := callOptions{}
	for _, f := range opts {
		f(&o)
	}
	if o.idempotencyKey == "" {
		o.idempotencyKey = newIdempotencyKey()
	}
	return o
}

// Register creates a free account and returns its first API key (shown only this once).
// Use c.WithAPIKey(reg.APIKey) for the calls that follow. 0 credits.
func (c *Client) Register(ctx context.Context, req RegisterRequest) (*Registration, error) {
	var out Registration
	if _, err := c.send(ctx, http.MethodPost, "/v1/auth/register", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Usage returns the plan, credits and recent calls. 0 credits.
func (c *Client) Usage(ctx context.Context) (*Usage, error) {
	var out Usage
	if _, err := c.get(ctx, "/v1/usage", &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Account returns the account's details. 0 credits.
func (c *Client) Account(ctx context.Context) (*Account, error) {
	var out Account
	if _, err := c.get(ctx, "/v1/account", &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListKeys lists the account's API keys, newest first. 0 credits.
func (c *Client) ListKeys(ctx context.Context) ([]APIKey, error) {
	var out struct {
		Keys []APIKey `json:"keys"`
	}
	if _, err := c.get(ctx, "/v1/keys", &out); err != nil {
		return nil, err
	}
	return out.Keys, nil
}

// CreateKey issues a new key (shown only this once). 0 credits.
func (c *Client) CreateKey(ctx context.Context, req CreateKeyRequest) (*NewAPIKey, error) {
	var out NewAPIKey
	if _, err := c.send(ctx, http.MethodPost, "/v1/keys", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RevokeKey revokes one of the account's keys by id. 0 credits.
func (c *Client) RevokeKey(ctx context.Context, id string) (*APIKey, error) {
	var out APIKey
	if _, err := c.send(ctx, http.MethodDelete, "/v1/keys/"+url.PathEscape(id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// KeywordResearch finds and clusters keywords about a topic for the domain. 5 credits.
func (c *Client) KeywordResearch(ctx context.Context, req ResearchRequest, opts ...CallOption) (*ResearchResult, error) {
	var out ResearchResult
	m, err := c.analysis(ctx, OpKeywordResearch, req, &out, opts)
	if err != nil {
		return nil, err
	}
	out.Meta = m
	return &out, nil
}

// KeywordGaps lists keywords competitors rank for and the domain does not. 10 credits.
func (c *Client) KeywordGaps(ctx context.Context, req GapsRequest, opts ...CallOption) (*GapsResult, error) {
	var out GapsResult
	m, err := c.analysis(ctx, OpKeywordGaps, req, &out, opts)
	if err != nil {
		return nil, err
	}
	out.Meta = m
	return &out, nil
}

// KeywordRankings lists the keywords a domain ranks for, with estimated traffic and counts
// by position band. 5 credits.
func (c *Client) KeywordRankings(ctx context.Context, req RankingsRequest, opts ...CallOption) (*RankingsResult, error) {
	var out RankingsResult
	m, err := c.analysis(ctx, OpKeywordRankings, req, &out, opts)
	if err != nil {
		return nil, err
	}
	out.Meta = m
	return &out, nil
}

// KeywordCompetitors lists the domains sharing the most ranked keywords with a domain.
// 10 credits.
func (c *Client) KeywordCompetitors(ctx context.Context, req CompetitorsRequest, opts ...CallOption) (*CompetitorsResult, error) {
	var out CompetitorsResult
	m, err := c.analysis(ctx, OpKeywordCompetitors, req, &out, opts)
	if err != nil {
		return nil, err
	}
	out.Meta = m
	return &out, nil
}

// ContentAudit crawls the site and reports its pages, thin content and cannibalization.
// 15 credits.
func (c *Client) ContentAudit(ctx context.Context, req AuditRequest, opts ...CallOption) (*AuditResult, error) {
	var out AuditResult
	m, err := c.analysis(ctx, OpContentAudit, req, &out, opts)
	if err != nil {
		return nil, err
	}
	out.Meta = m
	return &out, nil
}

// ContentRecommend builds a content plan for the domain. 15 credits.
func (c *Client) ContentRecommend(ctx context.Context, req RecommendRequest, opts ...CallOption) (*RecommendResult, error) {
	var out RecommendResult
	m, err := c.analysis(ctx, OpContentRecommend, req, &out, opts)
	if err != nil {
		return nil, err
	}
	out.Meta = m
	return &out, nil
}

// ContentMap returns audit, rankings, gaps and recommendations in one answer. 25 credits.
func (c *Client) ContentMap(ctx context.Context, req ContentMapRequest, opts ...CallOption) (*ContentMapResult, error) {
	var out ContentMapResult
	m, err := c.analysis(ctx, OpContentMap, req, &out, opts)
	if err != nil {
		return nil, err
	}
	out.Meta = m
	return &out, nil
}

// analysis runs an analysis call and, when the server answers 202 (the job outlasted its
// synchronous wait), waits for the job; the result is decoded into out.
func (c *Client) analysis(ctx context.Context, op Operation, req, out any, opts []CallOption) (Meta, error) {
	o := options(opts)
	a, j, err := c.post(ctx, call{method: http.MethodPost, path: string(op), body: req, idempotencyKey: o.idempotencyKey})
	if err != nil {
		return Meta{}, err
	}
	if j == nil && a.status == http.StatusAccepted {
		if j, err = jobOf(a); err != nil {
			return Meta{}, err
		}
	}
	if j != nil {
		if !j.Done() {
			if j, err = c.WaitJob(ctx, j.ID); err != nil {
				return Meta{}, err
			}
		}
		return j.Meta, json.Unmarshal(j.Data, out)
	}
	env, err := decodeData(a, out)
	if err != nil {
		return Meta{}, err
	}
	return metaOf(a, env), nil
}

// Submit starts an analysis job without waiting for it (Prefer: respond-async) and
// returns it: usually running, or already succeeded when an Idempotency-Key replayed a
// finished call. Follow it with WaitJob or GetJob. req is the operation's request
// (ResearchRequest for OpKeywordResearch, ...).
func (c *Client) Submit(ctx context.Context, op Operation, req any, opts ...CallOption) (*Job, error) {
	o := options(opts)
	a, j, err := c.post(ctx, call{method: http.MethodPost, path: string(op), body: req, idempotencyKey: o.idempotencyKey,
		header: http.Header{"Prefer": {"respond-async"}}})
	if err != nil || j != nil {
		return j, err
	}
	return jobOf(a)
}

// post makes an analysis call. A 503 naming a job (the call may have been accepted and
// charged as it) is not answered by calling again: the job is fetched and returned. Only
// when it is not found (the call was not recorded, nothing was charged) is the call made
// again, under the same Idempotency-Key, within the retry policy's attempts.
func (c *Client) post(ctx context.Context, cl call) (*answer, *Job, error) {
	for attempt := 1; ; attempt++ {
		a, err := c.do(ctx, cl)
		id := maybeAccepted(err)
		if id == "" {
			return a, nil, err
		}
		j, jerr := c.GetJob(ctx, id)
		if !IsCode(jerr, CodeNotFound) {
			return nil, j, jerr
		}
		if attempt >= c.retry.MaxAttempts {
			return nil, nil, err
		}
	}
}

// DryRun checks an analysis request and the balance as the real call would, and returns
// what it would cost, without running or charging anything.
func (c *Client) DryRun(ctx context.Context, op Operation, req any) (*DryRunResult, error) {
	var out DryRunResult
	if _, err := c.send(ctx, http.MethodPost, string(op)+"?dry_run=true", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetJob returns a job: running, or succeeded with its result. A failed job is returned as
// an *Error carrying JobID and CreditsRefunded. 0 credits.
func (c *Client) GetJob(ctx context.Context, id string) (*Job, error) {
	a, err := c.do(ctx, call{method: http.MethodGet, path: "/v1/jobs/" + url.PathEscape(id)})
	if err != nil {
		return nil, err
	}
	return jobOf(a)
}

// ListJobs returns a page of the account's analysis jobs, newest first: what each was, its
// status, its cost and whether it was charged, and its StatusURL. A caller whose connection
// dropped before an answer finds the job here and fetches its result with GetJob. Pass
// NextCursor as Cursor for the next page; it is "" on the last (ListJobsPages walks them).
// 0 credits.
func (c *Client) ListJobs(ctx context.Context, opts ListJobsOptions) (*JobList, error) {
	q := url.Values{}
	if opts.Limit != 0 {
		q.Set("limit", strconv.Itoa(opts.Limit))
	}
	if opts.Status != "" {
		q.Set("status", opts.Status)
	}
	if opts.Cursor != "" {
		q.Set("cursor", string(opts.Cursor))
	}
	path := "/v1/jobs"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out struct {
		Jobs       []JobSummary `json:"jobs"`
		NextCursor Cursor       `json:"next_cursor"`
	}
	if _, err := c.get(ctx, path, &out); err != nil {
		return nil, err
	}
	return &JobList{Jobs: out.Jobs, NextCursor: out.NextCursor}, nil
}

// WaitJob polls a job (GET /v1/jobs/{id}, growing intervals as the poll policy says) until
// it succeeds, fails (an *Error) or ctx ends.
func (c *Client) WaitJob(ctx context.Context, id string) (*Job, error) {
	wait := c.poll.Initial
	for {
		j, err := c.GetJob(ctx, id)
		if err != nil || j.Done() {
			return j, err
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, err
		}
		wait = c.poll.next(wait)
	}
}

// jobOf reads a job from an answer: 202 with its status, or 200 with its result.
func jobOf(a *answer) (*Job, error) {
	if a.status == http.StatusAccepted {
		var j Job
		if _, err := decodeData(a, &j); err != nil {
			return nil, err
		}
		j.Meta = metaOf(a, nil)
		j.Meta.JobID = j.ID
		return &j, nil
	}
	var data json.RawMessage
	env, err := decodeData(a, &data)
	if err != nil {
		return nil, err
	}
	m := metaOf(a, env)
	return &Job{ID: m.JobID, Status: JobSucceeded, Data: data, Meta: m}, nil
}

// Checkout creates a hosted checkout session to upgrade to a paid plan; send the payer to
// its CheckoutURL. 0 credits.
func (c *Client) Checkout(ctx context.Context, req CheckoutRequest) (*CheckoutSession, error) {
	var out CheckoutSession
	if _, err := c.send(ctx, http.MethodPost, "/v1/billing/checkout", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// BillingPortal opens a billing portal session (change or cancel the plan, invoices).
// 0 credits.
func (c *Client) BillingPortal(ctx context.Context, req PortalRequest) (*PortalSession, error) {
	var out PortalSession
	if _, err := c.send(ctx, http.MethodPost, "/v1/billing/portal", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ServiceInfo returns the service information document (GET /v1).
func (c *Client) ServiceInfo(ctx context.Context) (*ServiceInfo, error) {
	var out ServiceInfo
	if _, err := c.get(ctx, "/v1", &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// JobCallback is the body the API POSTs to an analysis call's callback URL when its job
// ends.
type JobCallback struct {
	Event      string          `json:"event"` // job.succeeded or job.failed
	JobID      string          `json:"job_id"`
	Endpoint   string          `json:"endpoint"`
	Status     string          `json:"status"`
	CreatedAt  time.Time       `json:"created_at"`
	FinishedAt time.Time       `json:"finished_at"`
	SentAt     time.Time       `json:"sent_at"`
	Success    bool            `json:"success"`
	Data       json.RawMessage `json:"data,omitempty"` // the result, when it succeeded
	Meta       *struct {
		CreditsUsed int    `json:"credits_used"`
		JobID       string `json:"job_id"`
		RequestID   string `json:"request_id"`
	} `json:"meta,omitempty"`
	Error *struct {
		Code            string `json:"code"`
		Message         string `json:"message"`
		CreditsRefunded int    `json:"credits_refunded"`
	} `json:"error,omitempty"`
}

// ParseCallback verifies a job callback's signature (the X-ContentAPI-Signature header)
// with the account's signing secret (Account().Callbacks.SigningSecret) and decodes it.
// Callbacks older than maxAge (by their sent_at) are refused, so a captured one cannot be
// replayed later; 0 skips that check.
func ParseCallback(secret string, body []byte, signature string, maxAge time.Duration) (*JobCallback, error) {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	want := "sha256=" + hex.EncodeToString(m.Sum(nil))
	if !hmac.Equal([]byte(want), []byte(strings.TrimSpace(signature))) {
		return nil, &Error{Code: "INVALID_SIGNATURE", Message: "the callback signature does not match its body"}
	}
	var cb JobCallback
	if err := json.Unmarshal(body, &cb); err != nil {
		return nil, err
	}
	if maxAge > 0 && time.Since(cb.SentAt) > maxAge {
		return nil, &Error{Code: "STALE_CALLBACK", Message: "the callback was sent at " + cb.SentAt.Format(time.RFC3339)}
	}
	return &cb, nil
}
