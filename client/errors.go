package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Error codes the API answers with.
//
//nolint:gosec // G101 takes the error codes for credentials
const (
	CodeMissingAuthHeader      = "MISSING_AUTH_HEADER"
	CodeInvalidAPIKey          = "INVALID_API_KEY"
	CodeExpiredAPIKey          = "EXPIRED_API_KEY"
	CodeUnauthorized           = "UNAUTHORIZED" // admin routes without the admin token
	CodeForbidden              = "FORBIDDEN"
	CodeInsufficientCredits    = "INSUFFICIENT_CREDITS"
	CodeRateLimitExceeded      = "RATE_LIMIT_EXCEEDED"
	CodeValidation             = "VALIDATION_ERROR"
	CodeEmailAlreadyRegistered = "EMAIL_ALREADY_REGISTERED"
	CodeNotFound               = "NOT_FOUND"
	CodeMethodNotAllowed       = "METHOD_NOT_ALLOWED"
	CodePayloadTooLarge        = "PAYLOAD_TOO_LARGE"
	CodeUnsupportedMediaType   = "UNSUPPORTED_MEDIA_TYPE"
	CodeIdempotencyKeyReused   = "IDEMPOTENCY_KEY_REUSED"
	CodeSiteUnreachable        = "SITE_UNREACHABLE"
	CodeSiteTooLarge           = "SITE_TOO_LARGE"
	CodeRenderingUnavailable   = "RENDERING_UNAVAILABLE"
	CodeProviderRateLimited    = "PROVIDER_RATE_LIMITED"
	CodeNoData                 = "NO_DATA"
	CodeProviderError          = "PROVIDER_ERROR"
	CodeJobFailed              = "JOB_FAILED"
	CodeServiceUnavailable     = "SERVICE_UNAVAILABLE"
	CodeInternal               = "INTERNAL_ERROR"
	CodeInvalidPlan            = "INVALID_PLAN"
	CodeInvalidURL             = "INVALID_URL"
	CodePromoCodeInvalid       = "PROMO_CODE_INVALID"
	CodeAlreadySubscribed      = "ALREADY_SUBSCRIBED"
	CodeNoBillingAccount       = "NO_BILLING_ACCOUNT"
	CodeBillingNotConfigured   = "BILLING_NOT_CONFIGURED"
	CodeInvalidCursor          = "INVALID_CURSOR" // altered, expired, foreign or mismatched cursor
)

// Error is an error answer of the API, whichever of its three shapes it came in.
type Error struct {
	// Status is the HTTP status.
	Status int
	// Code is the API's error code (CodeInvalidAPIKey, ...); empty when the answer was not
	// one of the API's error bodies (a proxy's page, say).
	Code string
	// Message says what went wrong, for people.
	Message string
	// RequestID is the answer's X-Request-ID; quote it to support.
	RequestID string
	// RetryAfter is how long the server asked to wait (429, some 503s); 0 when it did not.
	RetryAfter time.Duration
	// JobID and CreditsRefunded are set when an analysis job failed: its credits were
	// returned to the account. JobID is also set on a 503 to an analysis call that may have
	// been accepted as that job (the server lost its database while recording it); the
	// client's analysis calls then look the job up instead of calling again.
	JobID           string
	CreditsRefunded int
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "contentapi: %d", e.Status)
	if e.Code != "" {
		b.WriteString(" " + e.Code)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.RequestID != "" {
		b.WriteString(" (request " + e.RequestID + ")")
	}
	return b.String()
}

// ErrorCode returns the API error code of err ("" when err is not an *Error).
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// IsCode reports whether err is an *Error with the code.
func IsCode(err error, code string) bool { return ErrorCode(err) == code }

// parseError reads an error answer in any of the three shapes: {"error", "message",
// "code"} (authentication, rate limit), {"success": false, "error": {"code", "message"}}
// (validation and the rest) and {"status": "error", "error", "message", "code"} (billing).
func parseError(a *answer) *Error {
	e := &Error{Status: a.status, RequestID: a.header.Get("X-Request-ID"), RetryAfter: retryAfter(a.header.Get("Retry-After"))}
	var env envelope
	if json.Unmarshal(a.body, &env) == nil {
		e.Code, e.Message = env.Code, env.Message
		if len(env.Error) > 0 {
			var nested struct {
				Code            string `json:"code"`
				Message         string `json:"message"`
				JobID           string `json:"job_id"`
				CreditsRefunded int    `json:"credits_refunded"`
			}
			var text string
			switch {
			case json.Unmarshal(env.Error, &nested) == nil:
				if nested.Code != "" {
					e.Code = nested.Code
				}
				if nested.Message != "" {
					e.Message = nested.Message
				}
				e.JobID, e.CreditsRefunded = nested.JobID, nested.CreditsRefunded
			case json.Unmarshal(env.Error, &text) == nil && e.Message == "":
				e.Message = text
			}
		}
	}
	if e.Message == "" {
		e.Message = strings.TrimSpace(string(a.body))
		if len(e.Message) > 200 || e.Message == "" || !isJSON(a.header) {
			e.Message = http.StatusText(a.status)
		}
	}
	return e
}

// retryAfter reads Retry-After: seconds, or an HTTP date.
func retryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil {
		if s < 0 {
			return 0
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}
