package app

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/contentapi/contentapi/internal/config"
)

// RedisOptions parses REDIS_URL and tunes the client to fail fast when Redis is down, so a
// caller gets its 503 in milliseconds, not after go-redis's default of about 1.5 s (five
// dial attempts 100 ms apart, for each of four tries): one dial per try, two retries 8 to
// 64 ms apart (enough for a pooled connection that dropped, or a dial refused once during a
// restart), and a 1 s dial timeout for a Redis that does not answer at all. After as many
// failed dials as the pool holds, go-redis answers at once from its last dial error and
// probes the server every second until it is back. Settings given in REDIS_URL's query
// (max_retries, min_retry_backoff, max_retry_backoff, dial_timeout) are kept.
func RedisOptions(c *config.Config) (*redis.Options, error) {
	opt, err := redis.ParseURL(c.RedisURL)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	opt.DialerRetries = 1
	if opt.MaxRetries == 0 {
		opt.MaxRetries = 2
	}
	if opt.MinRetryBackoff == 0 {
		opt.MinRetryBackoff = 8 * time.Millisecond
	}
	if opt.MaxRetryBackoff == 0 {
		opt.MaxRetryBackoff = 64 * time.Millisecond
	}
	if opt.DialTimeout == 0 {
		opt.DialTimeout = time.Second
	}
	return opt, nil
}

// ConnectRedis opens a Redis client on REDIS_URL, tuned by RedisOptions, and checks it
// answers.
func ConnectRedis(ctx context.Context, cfg *config.Config) (*redis.Client, error) {
	opt, err := RedisOptions(cfg)
	if err != nil {
		return nil, err
	}
	rdb := redis.NewClient(opt)
	if err := rdb.Ping(ctx).Err(); err != nil {
		_ = rdb.Close()
		return nil, fmt.Errorf("redis: ping %s: %w", opt.Addr, err)
	}
	return rdb, nil
}
