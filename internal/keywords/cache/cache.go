// Package cache wraps a keyword provider with a Redis cache, so a question asked again
// within the TTL costs the operator nothing. Answers are stored as JSON under
//
//	keywords:v3:<provider name>[@<data version>]:<method>:<hex SHA-256 of the request's JSON>
//
// The data version is that of a provider answering from data this service writes
// (keywords.Versioned: the local provider's imports and sample set): an import moves it, so
// its answers are never served from before the import, whatever the TTL.
// Unknown metrics (nil) are stored as null and come back nil. Errors are never cached.
// Redis is an optimisation only: when it fails the provider answers, and the failure is
// logged.
package cache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/contentapi/contentapi/internal/keywords"
)

// KeyPrefix starts every cache key; its version changes when the stored format does (v2:
// gap lists name the competitors without ranking data; keywords carry the synthetic flag;
// v3: competitors name the numbers their source does not know, rankings hold one row per
// keyword).
const KeyPrefix = "keywords:v3:"

// DefaultRedisTimeout bounds each Redis call, so a stalled Redis delays an answer by at most
// this much before the provider is asked.
const DefaultRedisTimeout = time.Second

// Provider is a keywords.Provider answering from Redis when it can.
type Provider struct {
	next    keywords.Provider
	rdb     redis.UniversalClient
	ttl     time.Duration
	timeout time.Duration
	log     *slog.Logger

	hits, misses atomic.Uint64
}

var _ keywords.Provider = (*Provider)(nil)

// Option configures a Provider.
type Option func(*Provider)

// WithLogger logs Redis failures to l; without it they are discarded.
func WithLogger(l *slog.Logger) Option { return func(p *Provider) { p.log = l } }

// WithRedisTimeout bounds each Redis call (default DefaultRedisTimeout).
func WithRedisTimeout(d time.Duration) Option { return func(p *Provider) { p.timeout = d } }

// New caches p's answers in rdb for ttl; a ttl of 0 (or less) disables the cache.
func New(p keywords.Provider, rdb redis.UniversalClient, ttl time.Duration, opts ...Option) *Provider {
	c := &Provider{next: p, rdb: rdb, ttl: ttl, timeout: DefaultRedisTimeout}
	for _, o := range opts {
		o(c)
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c
}

// Name is the wrapped provider's name: the cache is transparent.
func (p *Provider) Name() string { return p.next.Name() }

// Hits counts answers served from Redis.
func (p *Provider) Hits() uint64 { return p.hits.Load() }

// Misses counts answers the provider had to give (Redis had none, or failed).
func (p *Provider) Misses() uint64 { return p.misses.Load() }

// idea is the stored form of an idea: Keyword hides Relevance from JSON, the cache keeps it.
type idea struct {
	keywords.Keyword
	Relevance float64 `json:"relevance"`
}

// ideaList is the stored form of an IdeaList.
type ideaList struct {
	Ideas     []idea `json:"ideas"`
	Total     int    `json:"total"`
	Next      string `json:"next,omitempty"`
	Estimated bool   `json:"estimated,omitempty"`
	// Dropped keeps the ideas Keep left out as they are (Relevance does not matter there).
	Dropped []keywords.Keyword `json:"dropped,omitempty"`
}

// Ideas answers from the cache or from the provider, with each idea's synthetic flag (the
// cache is not a keywords.SyntheticLabeler: what it stores is labelled already). A request
// with a Keep rule it cannot name (no KeepRule) is passed on uncached.
func (p *Provider) Ideas(ctx context.Context, req keywords.IdeasRequest) (keywords.IdeaList, error) {
	if req.Keep != nil && req.KeepRule == "" {
		return keywords.Ideas(ctx, p.next, req)
	}
	stored, err := through(ctx, p, "ideas", req, func() (ideaList, error) {
		list, err := keywords.Ideas(ctx, p.next, req) // labelled before they are stored
		if err != nil {
			return ideaList{}, err
		}
		out := ideaList{Ideas: make([]idea, len(list.Ideas)), Total: list.Total, Next: list.Next, Estimated: list.Estimated,
			Dropped: list.Dropped}
		for i, k := range list.Ideas {
			out.Ideas[i] = idea{Keyword: k, Relevance: k.Relevance}
		}
		return out, nil
	})
	if err != nil {
		return keywords.IdeaList{}, err
	}
	out := keywords.IdeaList{Ideas: make([]keywords.Keyword, len(stored.Ideas)), Total: stored.Total, Next: stored.Next,
		Estimated: stored.Estimated, Dropped: stored.Dropped}
	for i, s := range stored.Ideas {
		out.Ideas[i] = s.Keyword
		out.Ideas[i].Relevance = s.Relevance
	}
	return out, nil
}

// Ranked answers from the cache or from the provider.
func (p *Provider) Ranked(ctx context.Context, req keywords.RankedRequest) ([]keywords.Ranking, error) {
	return through(ctx, p, "ranked", req, func() ([]keywords.Ranking, error) { return p.next.Ranked(ctx, req) })
}

// Gaps answers from the cache or from the provider.
func (p *Provider) Gaps(ctx context.Context, req keywords.GapsRequest) (keywords.GapList, error) {
	// Trends are read before the answer is stored, as ideas' labels are.
	return through(ctx, p, "gaps", req, func() (keywords.GapList, error) { return keywords.Gaps(ctx, p.next, req) })
}

// Popular asks the wrapped provider, uncached, when it is a keywords.Suggester; otherwise
// it names no keyword. It is asked only when a call found no data.
func (p *Provider) Popular(ctx context.Context, country, language string, n int) ([]string, error) {
	if s, ok := p.next.(keywords.Suggester); ok {
		return s.Popular(ctx, country, language, n)
	}
	return nil, nil
}

// MinSeedChars is the wrapped provider's, when it is a keywords.SeedMinimum; else 0.
func (p *Provider) MinSeedChars() int {
	if m, ok := p.next.(keywords.SeedMinimum); ok {
		return m.MinSeedChars()
	}
	return 0
}

// RanksKeywords is the wrapped provider's, when it is a keywords.KeywordRanked; else false.
func (p *Provider) RanksKeywords() bool {
	k, ok := p.next.(keywords.KeywordRanked)
	return ok && k.RanksKeywords()
}

// Key returns the Redis key of a request to the named provider's method; version, when not
// empty, is the provider's data version (keywords.Versioned), which the key then names
// after the provider.
func Key(provider, version, method string, req any) (string, error) {
	b, err := json.Marshal(req) // struct fields in declaration order: canonical
	if err != nil {
		return "", fmt.Errorf("cache: encode request: %w", err)
	}
	sum := sha256.Sum256(b)
	if version != "" {
		provider += "@" + version
	}
	return KeyPrefix + provider + ":" + method + ":" + hex.EncodeToString(sum[:]), nil
}

// through returns the cached answer for req, or loads it and stores it. A versioned
// provider's answers are keyed by the version read before the load: after a write to its
// data no question finds an entry of the data before it. When the version cannot be read,
// the provider answers uncached.
func through[T any](ctx context.Context, p *Provider, method string, req any, load func() (T, error)) (T, error) {
	if p.ttl <= 0 || p.rdb == nil {
		return load()
	}
	var version string
	if v, ok := p.next.(keywords.Versioned); ok {
		var err error
		if version, err = v.DataVersion(ctx); err != nil {
			if ctx.Err() != nil {
				var zero T
				return zero, ctx.Err()
			}
			p.log.WarnContext(ctx, "keyword cache: data version unreadable, asking the provider", "error", err)
			return load()
		}
	}
	key, err := Key(p.next.Name(), version, method, req)
	if err != nil {
		return load()
	}
	rctx, cancel := context.WithTimeout(ctx, p.timeout)
	b, err := p.rdb.Get(rctx, key).Bytes()
	cancel()
	redisUp := true
	switch {
	case err == nil:
		var v T
		jerr := json.Unmarshal(b, &v)
		if jerr == nil {
			p.hits.Add(1)
			return v, nil
		}
		p.log.WarnContext(ctx, "keyword cache: undecodable entry, asking the provider", "key", key, "error", jerr)
	case errors.Is(err, redis.Nil):
	default:
		redisUp = false
		if ctx.Err() != nil { // the caller gave up, not Redis
			var zero T
			return zero, ctx.Err()
		}
		p.log.WarnContext(ctx, "keyword cache: redis get failed, asking the provider", "key", key, "error", err)
	}
	p.misses.Add(1)
	v, err := load()
	if err != nil || !redisUp {
		return v, err
	}
	data, err := json.Marshal(v)
	if err != nil {
		p.log.WarnContext(ctx, "keyword cache: encode answer", "key", key, "error", err)
		return v, nil
	}
	rctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), p.timeout)
	defer cancel()
	if err := p.rdb.Set(rctx, key, data, p.ttl).Err(); err != nil {
		p.log.WarnContext(ctx, "keyword cache: redis set failed", "key", key, "error", err)
	}
	return v, nil
}

// Rankings answers from the cache or from the provider.
func (p *Provider) Rankings(ctx context.Context, req keywords.RankingsRequest) (keywords.RankingList, error) {
	return through(ctx, p, "rankings", req, func() (keywords.RankingList, error) { return p.next.Rankings(ctx, req) })
}

// Competitors answers from the cache or from the provider.
func (p *Provider) Competitors(ctx context.Context, req keywords.CompetitorsRequest) (keywords.CompetitorList, error) {
	return through(ctx, p, "competitors", req, func() (keywords.CompetitorList, error) { return p.next.Competitors(ctx, req) })
}
