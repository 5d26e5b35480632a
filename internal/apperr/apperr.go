// Package apperr is the service's one application error type: a code of docs/api.md's
// error table and a message safe to show the caller. The HTTP layer maps codes to statuses and
// body shapes in one place.
package apperr

import (
	"errors"
	"fmt"
)

// Codes of docs/api.md's error table.
//
//nolint:gosec // G101 takes the error codes for credentials
const (
	MissingAuthHeader    = "MISSING_AUTH_HEADER"
	InvalidAPIKey        = "INVALID_API_KEY"
	ExpiredAPIKey        = "EXPIRED_API_KEY"
	RateLimitExceeded    = "RATE_LIMIT_EXCEEDED"
	InsufficientCredits  = "INSUFFICIENT_CREDITS"
	Validation           = "VALIDATION_ERROR"
	EmailTaken           = "EMAIL_ALREADY_REGISTERED"
	PayloadTooLarge      = "PAYLOAD_TOO_LARGE"
	UnsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE"
	NotFound             = "NOT_FOUND"
	MethodNotAllowed     = "METHOD_NOT_ALLOWED"
	IdempotencyKeyReused = "IDEMPOTENCY_KEY_REUSED"
	ServiceUnavailable   = "SERVICE_UNAVAILABLE"
	Internal             = "INTERNAL_ERROR"
	InvalidPlan          = "INVALID_PLAN"
	InvalidURL           = "INVALID_URL"
	PromoCodeInvalid     = "PROMO_CODE_INVALID"
	AlreadySubscribed    = "ALREADY_SUBSCRIBED"
	BillingNotConfigured = "BILLING_NOT_CONFIGURED"
	Unauthorized         = "UNAUTHORIZED"
	Forbidden            = "FORBIDDEN"
	JobFailed            = "JOB_FAILED"
	// NoData: the analysis found nothing to report (no keyword data for the request); the
	// call is refunded and the message says what to try instead.
	NoData = "NO_DATA"
	// SiteUnreachable: an audited site answered neither over https nor over http, or its
	// name does not resolve.
	SiteUnreachable = "SITE_UNREACHABLE"
	// SiteTooLarge: a crawl's result would exceed the crawler's result limit; retrying
	// cannot help, fewer pages can.
	SiteTooLarge = "SITE_TOO_LARGE"
	// RenderingUnavailable: an audit asked for JavaScript rendering and no worker has a
	// browser to render with; nothing is charged.
	RenderingUnavailable = "RENDERING_UNAVAILABLE"
	// ProviderError: a data source (the keyword provider, mostly) refused or did not answer.
	ProviderError = "PROVIDER_ERROR"
	// ProviderRateLimited: the keyword provider refused for its account's rate limit
	// (DataForSEO's 40202); the call failed at once, refunded, and may be retried after
	// Retry-After.
	ProviderRateLimited = "PROVIDER_RATE_LIMITED"
	// NoBillingAccount: a billing-portal request from an account that never checked out.
	NoBillingAccount = "NO_BILLING_ACCOUNT"
	// InvalidCursor: a keyword call's cursor was altered, has expired, was issued to another
	// account or continues another query; nothing is charged.
	InvalidCursor = "INVALID_CURSOR"
)

// Error is an error with a code and a message for the caller.
type Error struct {
	Code    string
	Message string
	// RetryAfter, in seconds, for RATE_LIMIT_EXCEEDED.
	RetryAfter int
	// JobID names the job a refused call may nonetheless have created (SERVICE_UNAVAILABLE
	// after the database went away during its COMMIT): the caller looks the job up there
	// instead of calling again.
	JobID string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// New returns an *Error.
func New(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid is a VALIDATION_ERROR naming what is wrong.
func Invalid(format string, args ...any) *Error { return New(Validation, format, args...) }

// CodeOf returns the code of err, or Internal when err is not an *Error.
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// As returns err's *Error, if any.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
