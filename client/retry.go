package client

import (
	"math/rand/v2"
	"time"
)

// RetryPolicy says how calls refused with 429 (rate limit) or 503 (unavailable), and GETs,
// DELETEs and idempotency-keyed POSTs whose connection failed, are retried.
type RetryPolicy struct {
	// MaxAttempts counts the first attempt too; 1 disables retries.
	MaxAttempts int
	// InitialBackoff is the wait before the first retry when the server named none
	// (Retry-After); it doubles per retry up to MaxBackoff, with jitter.
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	// MaxRetryAfter is the longest wait honoured (65 s when 0): an answer asking for more
	// is returned to the caller at once, as an *Error with RetryAfter set.
	MaxRetryAfter time.Duration
}

// DefaultRetryPolicy retries up to 3 times, honouring Retry-After up to 65 s (a free plan's
// full minute window).
var DefaultRetryPolicy = RetryPolicy{MaxAttempts: 4, InitialBackoff: 500 * time.Millisecond,
	MaxBackoff: 10 * time.Second, MaxRetryAfter: 65 * time.Second}

// NoRetry returns every refusal to the caller.
var NoRetry = RetryPolicy{MaxAttempts: 1}

func (p RetryPolicy) normalized() RetryPolicy {
	if p.MaxAttempts < 1 {
		p.MaxAttempts = 1
	}
	if p.InitialBackoff <= 0 {
		p.InitialBackoff = DefaultRetryPolicy.InitialBackoff
	}
	if p.MaxBackoff < p.InitialBackoff {
		p.MaxBackoff = p.InitialBackoff
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = DefaultRetryPolicy.MaxRetryAfter
	}
	return p
}

// backoff is the wait before retry n (n = 1 after the first attempt): exponential, capped,
// with "equal jitter" (half fixed, half random) so clients refused together spread out.
func (p RetryPolicy) backoff(n int) time.Duration {
	d := p.InitialBackoff
	for i := 1; i < n && d < p.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, p.MaxBackoff)
	half := d / 2
	return half + time.Duration(rand.Int64N(int64(half)+1)) //nolint:gosec // jitter, not a secret
}

// PollPolicy says how a running job is polled: Initial first, growing by half each poll up
// to Max.
type PollPolicy struct {
	Initial time.Duration
	Max     time.Duration
}

// DefaultPollPolicy polls after 0.5 s, growing to every 5 s.
var DefaultPollPolicy = PollPolicy{Initial: 500 * time.Millisecond, Max: 5 * time.Second}

func (p PollPolicy) normalized() PollPolicy {
	if p.Initial <= 0 {
		p.Initial = DefaultPollPolicy.Initial
	}
	if p.Max < p.Initial {
		p.Max = p.Initial
	}
	return p
}

func (p PollPolicy) next(d time.Duration) time.Duration {
	return min(d+d/2, p.Max)
}
