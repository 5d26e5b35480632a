package config

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/redis/go-redis/v9"
)

// NewLogger returns the JSON logger every binary writes with.
func NewLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}

// RedisOptions parses REDIS_URL.
func (c *Config) RedisOptions() (*redis.Options, error) {
	opt, err := redis.ParseURL(c.RedisURL)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	return opt, nil
}

// ConnectRedis opens a Redis client and checks it answers.
func (c *Config) ConnectRedis(ctx context.Context) (*redis.Client, error) {
	opt, err := c.RedisOptions()
	if err != nil {
		return nil, err
	}
	rdb := redis.NewClient(opt)
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("redis: ping %s: %w", opt.Addr, err)
	}
	return rdb, nil
}
