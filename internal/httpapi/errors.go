package httpapi

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"unsafe"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/apperr"
)

var errPanic = errors.New("panic recovered")

const (
	localRequestID = "request_id"
	localPrincipal = "principal"
	localBilling   = "billing_shape"
)

// requestID is a request's id and the bytes it is kept in, allocated together once: the
// pointer Locals holds costs no allocation of its own, nor does the id's text.
type requestID struct {
	buf [64]byte
	s   string // in buf
}

// setRequestID gives the request id (a copy of it: fasthttp reuses the bytes a header was
// read from), in Locals and the X-Request-ID header; a new random one when id is "".
func setRequestID(c *fiber.Ctx, id string) {
	r := new(requestID)
	if id == "" {
		u := uuid.New()
		hex.Encode(r.buf[0:8], u[0:4])
		hex.Encode(r.buf[9:13], u[4:6])
		hex.Encode(r.buf[14:18], u[6:8])
		hex.Encode(r.buf[19:23], u[8:10])
		hex.Encode(r.buf[24:36], u[10:16])
		r.buf[8], r.buf[13], r.buf[18], r.buf[23] = '-', '-', '-', '-'
		r.s = unsafe.String(&r.buf[0], 36)
	} else {
		n := copy(r.buf[:], id) // validRequestID bounds it to 64 bytes
		r.s = unsafe.String(&r.buf[0], n)
	}
	c.Locals(localRequestID, r)
	c.Set(fiber.HeaderXRequestID, r.s)
}

func requestIDOf(c *fiber.Ctx) string {
	if r, ok := c.Locals(localRequestID).(*requestID); ok {
		return r.s
	}
	return ""
}

// statusOf maps codes to statuses (the error table of docs/api.md).
var statusOf = map[string]int{
	apperr.MissingAuthHeader:    http.StatusUnauthorized,
	apperr.InvalidAPIKey:        http.StatusUnauthorized,
	apperr.Unauthorized:         http.StatusUnauthorized,
	apperr.ExpiredAPIKey:        http.StatusForbidden,
	apperr.Forbidden:            http.StatusForbidden,
	apperr.RateLimitExceeded:    http.StatusTooManyRequests,
	apperr.InsufficientCredits:  http.StatusPaymentRequired,
	apperr.Validation:           http.StatusBadRequest,
	apperr.EmailTaken:           http.StatusConflict,
	apperr.PayloadTooLarge:      http.StatusRequestEntityTooLarge,
	apperr.UnsupportedMediaType: http.StatusUnsupportedMediaType,
	apperr.NotFound:             http.StatusNotFound,
	apperr.MethodNotAllowed:     http.StatusMethodNotAllowed,
	apperr.IdempotencyKeyReused: http.StatusUnprocessableEntity,
	apperr.ServiceUnavailable:   http.StatusServiceUnavailable,
	apperr.InvalidPlan:          http.StatusBadRequest,
	apperr.InvalidURL:           http.StatusBadRequest,
	apperr.PromoCodeInvalid:     http.StatusBadRequest,
	apperr.AlreadySubscribed:    http.StatusConflict,
	apperr.BillingNotConfigured: http.StatusServiceUnavailable,
	apperr.Internal:             http.StatusInternalServerError,
	apperr.NoData:               http.StatusUnprocessableEntity,
	apperr.SiteUnreachable:      http.StatusUnprocessableEntity,
	apperr.SiteTooLarge:         http.StatusUnprocessableEntity,
	apperr.RenderingUnavailable: http.StatusServiceUnavailable,
	apperr.ProviderError:        http.StatusBadGateway,
	apperr.ProviderRateLimited:  http.StatusServiceUnavailable,
	apperr.JobFailed:            http.StatusBadGateway,
	// An account with no Stripe customer cannot open the billing portal.
	apperr.NoBillingAccount: http.StatusConflict,
	apperr.InvalidCursor:    http.StatusBadRequest,
}

// retryAfter is the Retry-After, in seconds, of the codes that say "not now": a browser
// advertisement lasts a minute, and a worker refreshes it every 20 s.
var retryAfter = map[string]int{apperr.ServiceUnavailable: apperr.RetryAfterUnavailable, apperr.RenderingUnavailable: 20,
	apperr.ProviderRateLimited: apperr.RetryAfterProviderRateLimit}

// authShaped codes answer in the authentication / rate-limit shape of docs/api.md.
var authShaped = map[string]bool{
	apperr.MissingAuthHeader: true, apperr.InvalidAPIKey: true, apperr.ExpiredAPIKey: true,
	apperr.RateLimitExceeded: true, apperr.InsufficientCredits: true, apperr.Unauthorized: true,
}

// handleError is the one error mapper: it turns any error into the shapes of docs/api.md. Internal
// errors are logged with the request id and answered with a generic message.
func (s *server) handleError(c *fiber.Ctx, err error) error {
	if requestIDOf(c) == "" {
		// Errors raised before the middleware ran (an oversized body) still get an id.
		setRequestID(c, "")
	}
	e := toAppError(err)
	switch e.Code {
	case apperr.Internal:
		s.Log.Error("internal error", "request_id", requestIDOf(c), "method", c.Method(), "path", c.Path(), "err", err)
	case apperr.ServiceUnavailable:
		s.Log.Warn("service unavailable", "request_id", requestIDOf(c), "method", c.Method(), "path", c.Path(), "err", err)
	}
	status, ok := statusOf[e.Code]
	if !ok {
		status = http.StatusBadRequest
	}
	c.Status(status)
	if retry := retryAfter[e.Code]; retry > 0 && e.RetryAfter <= 0 {
		cp := *e
		cp.RetryAfter = retry
		e = &cp
	}
	if e.RetryAfter > 0 {
		c.Set(fiber.HeaderRetryAfter, fmt.Sprint(e.RetryAfter))
	}
	if e.JobID != "" {
		// The call may have been accepted: Location and error.job_id name the job to look
		// up, so a client polls it rather than calling again.
		c.Set(fiber.HeaderLocation, s.PublicBaseURL+"/v1/jobs/"+e.JobID)
	}
	switch {
	case authShaped[e.Code]:
		return c.JSON(fiber.Map{"error": http.StatusText(status), "message": e.Message, "code": e.Code})
	case c.Locals(localBilling) == true && e.Code != apperr.UnsupportedMediaType:
		// A refused media type is about the request's envelope, not billing: it answers
		// in the validation shape everywhere, as the Content-Encoding check before the
		// billing routes does.
		return c.JSON(fiber.Map{"status": "error", "error": http.StatusText(status), "message": e.Message, "code": e.Code})
	default:
		body := fiber.Map{"code": e.Code, "message": e.Message}
		if e.JobID != "" {
			body["job_id"] = e.JobID
		}
		return c.JSON(fiber.Map{"success": false, "error": body})
	}
}

func toAppError(err error) *apperr.Error {
	if e, ok := apperr.As(err); ok {
		return e
	}
	var fe *fiber.Error
	if errors.As(err, &fe) {
		switch fe.Code {
		case fiber.StatusNotFound:
			return apperr.New(apperr.NotFound, "No such endpoint. See GET /v1 for the list.")
		case fiber.StatusMethodNotAllowed:
			return apperr.New(apperr.MethodNotAllowed, "This path does not take that method; the Allow header lists the ones it takes.")
		case fiber.StatusRequestEntityTooLarge:
			return apperr.New(apperr.PayloadTooLarge, "The request body is larger than %d KiB.", BodyLimit>>10)
		case fiber.StatusBadRequest:
			return apperr.Invalid("The request is malformed.")
		}
		if fe.Code < 500 {
			return apperr.New(apperr.Validation, "%s", fe.Message)
		}
	}
	// PostgreSQL or Redis down, restarting or failing over: the caller may retry shortly.
	if apperr.IsUnavailable(err) {
		return &apperr.Error{Code: apperr.ServiceUnavailable, RetryAfter: apperr.RetryAfterUnavailable,
			Message: "The service is briefly unavailable (database or queue). Retry shortly."}
	}
	return apperr.New(apperr.Internal, "An internal error occurred. Quote the X-Request-ID header when contacting support.")
}
