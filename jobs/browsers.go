package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/redis/go-redis/v9"
)

// BrowserKey is the Redis key a worker able to render JavaScript keeps alive. The API and
// the workers are separate processes (and images): the API reads it before it charges a
// rendered audit.
const BrowserKey = "contentapi:render:browser"

// BrowserTTL is how long an advertisement lasts unless refreshed; a worker refreshes it
// every BrowserTTL/3, so a worker gone for good stops counting within BrowserTTL.
const BrowserTTL = 60 * time.Second

// Browsers records in Redis that some worker has a browser to render pages with.
type Browsers struct {
	Redis redis.UniversalClient
}

// Advertise says, for BrowserTTL, that this process can render.
func (b Browsers) Advertise(ctx context.Context) error {
	host, _ := os.Hostname()
	if err := b.Redis.Set(ctx, BrowserKey, host, BrowserTTL).Err(); err != nil {
		return fmt.Errorf("advertise browser: %w", err)
	}
	return nil
}

// Run advertises the browser every BrowserTTL/3 until ctx ends (the caller advertised it
// once already). The key is left to expire at the end: another worker may be advertising
// under it too.
func (b Browsers) Run(ctx context.Context, log *slog.Logger) {
	t := time.NewTicker(BrowserTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := b.Advertise(ctx); err != nil && ctx.Err() == nil {
			log.Warn("browser not advertised; rendered audits may be refused", "err", err)
		}
	}
}

// RenderingAvailable reports whether a worker advertised a browser within BrowserTTL.
func (b Browsers) RenderingAvailable(ctx context.Context) (bool, error) {
	n, err := b.Redis.Exists(ctx, BrowserKey).Result()
	if err != nil {
		return false, fmt.Errorf("browser advertisement: %w", err)
	}
	return n > 0, nil
}
