package jobs

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"github.com/contentapi/contentapi/internal/auth"
	"github.com/contentapi/contentapi/internal/crawler"
	"github.com/contentapi/contentapi/internal/job"
	"github.com/contentapi/contentapi/internal/report"
)

// Callback delivery: a task per finished job that carries a callback URL.
const (
	TypeDeliverCallback = "callback:deliver"
	QueueCallbacks      = "callbacks"
	// CallbackWindow is how long a delivery keeps being retried.
	CallbackWindow = 24 * time.Hour
	// callbackMaxRetry with callbackDelay spans about CallbackWindow.
	callbackMaxRetry = 25
	// SignatureHeader carries "sha256=" and the hex HMAC-SHA256 of the body under the
	// account's callback secret.
	SignatureHeader = "X-ContentAPI-Signature"
)

// CallbackPayload is the payload of a delivery task.
type CallbackPayload struct {
	JobID uuid.UUID `json:"job_id"`
}

// CallbackScheduler enqueues deliveries.
type CallbackScheduler struct {
	Client *asynq.Client
	Log    *slog.Logger
}

// Schedule enqueues the delivery of a finished job's callback; it never blocks or fails
// the job: an enqueue error is logged.
func (s *CallbackScheduler) Schedule(ctx context.Context, jobID uuid.UUID) {
	payload, _ := json.Marshal(CallbackPayload{JobID: jobID})
	t := asynq.NewTask(TypeDeliverCallback, payload, asynq.Queue(QueueCallbacks), asynq.TaskID("callback-"+jobID.String()),
		asynq.MaxRetry(callbackMaxRetry), asynq.Timeout(30*time.Second), asynq.Deadline(time.Now().Add(CallbackWindow)),
		asynq.Retention(CallbackWindow))
	if _, err := s.Client.EnqueueContext(ctx, t); err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) {
		s.Log.Error("callback not scheduled", "job_id", jobID, "err", err)
	}
}

// CallbackDelay is the wait before delivery retry n: 15 s doubling to at most 2 h, so 25
// retries span about a day.
func CallbackDelay(n int) time.Duration {
	d := 15 * time.Second
	for i := 0; i < n && d < 2*time.Hour; i++ {
		d *= 2
	}
	return min(d, 2*time.Hour)
}

// Callbacks delivers job callbacks.
type Callbacks struct {
	Jobs     *job.Service
	Accounts *auth.Accounts
	// Client must refuse private addresses (crawler.HTTPClient) outside local tests. Its
	// redirect policy is ignored: callbacks never follow redirects.
	Client *http.Client
	Log    *slog.Logger
}

// Register adds the delivery handler to mux.
func (c *Callbacks) Register(mux *asynq.ServeMux) { mux.HandleFunc(TypeDeliverCallback, c.deliver) }

func (c *Callbacks) deliver(ctx context.Context, t *asynq.Task) error {
	var p CallbackPayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil {
		return fmt.Errorf("callback payload: %w: %w", err, asynq.SkipRetry)
	}
	cb, err := c.Jobs.CallbackOf(ctx, p.JobID)
	if err != nil {
		return err
	}
	if cb.URL == "" || cb.Status == "delivered" {
		return nil
	}
	j, err := c.Jobs.Load(ctx, p.JobID)
	if err != nil {
		return err
	}
	secret, err := c.Accounts.CallbackSecret(ctx, j.AccountID)
	if err != nil {
		return err
	}
	body, err := CallbackBody(j, time.Now())
	if err != nil {
		return fmt.Errorf("callback body: %w: %w", err, asynq.SkipRetry)
	}
	sendErr := c.post(ctx, cb.URL, j, body, secret)
	retried, _ := asynq.GetRetryCount(ctx)
	maxRetry, _ := asynq.GetMaxRetry(ctx)
	refused := errors.Is(sendErr, crawler.ErrForbiddenAddress)
	final := sendErr != nil && (refused || retried >= maxRetry)
	msg := ""
	if sendErr != nil {
		msg = sendErr.Error()
	}
	if err := c.Jobs.RecordCallback(context.WithoutCancel(ctx), j.ID, sendErr == nil, final, msg); err != nil {
		return err
	}
	if refused {
		return fmt.Errorf("%w: %w", sendErr, asynq.SkipRetry)
	}
	return sendErr
}

func (c *Callbacks) post(ctx context.Context, url string, j job.Job, body []byte, secret string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "ContentStrategyAPI-Callbacks/1.0")
	req.Header.Set(SignatureHeader, Sign(secret, body))
	req.Header.Set("X-ContentAPI-Event", "job."+j.Status)
	req.Header.Set("X-ContentAPI-Delivery", j.ID.String())
	res, err := c.noRedirects().Do(req)
	if err != nil {
		return fmt.Errorf("callback POST: %w", err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	if res.StatusCode/100 == 3 {
		return fmt.Errorf("callback POST: status %d: redirects are not followed", res.StatusCode)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return fmt.Errorf("callback POST: status %d", res.StatusCode)
	}
	return nil
}

// noRedirects is the configured client, told to stop at the first answer: a callback goes
// to the URL the caller gave, signed, and a redirect answered with a 3xx is a failed
// delivery, never a second POST of the body somewhere else.
func (c *Callbacks) noRedirects() *http.Client {
	client := *c.Client
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &client
}

// Sign returns the signature header value of body under secret.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// CallbackBody is what a callback POSTs: the job's identity and, as GET /v1/jobs/{id}
// answers it, its result with meta or its failure with the refund.
func CallbackBody(j job.Job, sent time.Time) ([]byte, error) {
	out := map[string]any{
		"event":       "job." + j.Status,
		"job_id":      j.ID,
		"endpoint":    j.Endpoint,
		"status":      j.Status,
		"created_at":  j.CreatedAt,
		"finished_at": j.FinishedAt,
		"sent_at":     sent.UTC(),
	}
	switch j.Status {
	case job.Succeeded:
		out["success"] = true
		out["data"] = j.Result
		meta := map[string]any{"credits_used": j.Cost, "job_id": j.ID, "request_id": j.RequestID}
		if m, ok := report.StoredMeta(j.Meta); ok {
			meta["data_source"], meta["warnings"] = m.DataSource, m.Warnings
		}
		out["meta"] = meta
	case job.Failed:
		out["success"] = false
		out["error"] = map[string]any{"code": j.ErrorCode, "message": j.ErrorMessage, "job_id": j.ID,
			"status": j.Status, "credits_refunded": j.Cost}
	default:
		return nil, errors.New("job has not ended: " + j.Status + " " + strconv.Itoa(j.Attempts))
	}
	return json.Marshal(out)
}
