// Package ratelimit admits requests with a sliding-window log in Redis: at most N requests in
// any rolling window, decided atomically by one Lua script so every API replica shares it.
// A GCRA or token bucket with a burst of N would let nearly 2N through in a minute; the log
// is exact as plans state their limits.
package ratelimit

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/redis/go-redis/v9"
)

// WindowLua is the body of the sliding-window log. It expects locals `zkey` (a sorted set of
// admitted requests scored by microsecond time), `limit` and `window_us`; it returns
// {admitted (1|2), limit, remaining, reset_us}. Redis's own clock is used so replicas with
// skewed clocks agree. Members are the time plus the count before the add, unique even for
// two requests in the same microsecond.
const WindowLua = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('ZREMRANGEBYSCORE', zkey, '-inf', now - window_us)
local n = redis.call('ZCARD', zkey)
local admitted = 2
if n < limit then
	redis.call('ZADD', zkey, now, t[1] .. '.' .. t[2] .. '.' .. n)
	redis.call('PEXPIRE', zkey, math.ceil(window_us / 1000))
	n = n + 1
	admitted = 1
end
local oldest = redis.call('ZRANGE', zkey, 0, 0, 'WITHSCORES')
local reset = 0
if oldest[2] then reset = tonumber(oldest[2]) + window_us - now end
return {admitted, limit, limit - n, reset}
`

var windowScript = redis.NewScript(`
local zkey = KEYS[1]
local limit, window_us = tonumber(ARGV[1]), tonumber(ARGV[2])
` + WindowLua)

// Decision is the outcome of one admission.
type Decision struct {
	Allowed   bool
	Limit     int
	Remaining int
	// Reset is how long until the oldest admitted request leaves the window (a slot frees).
	Reset time.Duration
}

// RetryAfterSeconds is the whole seconds a refused caller should wait, at least 1.
func (d Decision) RetryAfterSeconds() int {
	s := int((d.Reset + time.Second - 1) / time.Second)
	if s < 1 {
		s = 1
	}
	return s
}

// ParseReply turns the script's reply into a Decision.
func ParseReply(v []any) (Decision, error) {
	if len(v) < 4 {
		return Decision{}, fmt.Errorf("ratelimit: short reply %v", v)
	}
	ints := make([]int64, 4)
	for i := range ints {
		n, ok := v[i].(int64)
		if !ok {
			return Decision{}, fmt.Errorf("ratelimit: reply %v", v)
		}
		ints[i] = n
	}
	return Decision{Allowed: ints[0] == 1, Limit: int(ints[1]), Remaining: int(ints[2]),
		Reset: time.Duration(ints[3]) * time.Microsecond}, nil
}

// Limiter admits requests per bucket.
type Limiter struct {
	rdb redis.Scripter
}

// New returns a Limiter on rdb.
func New(rdb redis.Scripter) *Limiter { return &Limiter{rdb: rdb} }

// Allow admits one request to bucket if fewer than limit were admitted in the last window.
func (l *Limiter) Allow(ctx context.Context, bucket string, limit int, window time.Duration) (Decision, error) {
	v, err := windowScript.Run(ctx, l.rdb, []string{"rl:{" + bucket + "}"},
		limit, window.Microseconds()).Slice()
	if err != nil {
		return Decision{}, fmt.Errorf("ratelimit: %w", err)
	}
	return ParseReply(v)
}

// AddressBucket is a per-client limit's key for a client address: the address for IPv4,
// its /64 for IPv6 (one subscriber's allocation, so a host cannot take a new bucket with
// each of its 2^64 addresses).
func AddressBucket(a netip.Addr) string {
	if a.Is6() {
		return netip.PrefixFrom(a, 64).Masked().String()
	}
	return a.String()
}
