package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/contentapi/contentapi/internal/config"
	"github.com/contentapi/contentapi/jobs"
)

// RedisOptions is where Redis is and how every client of it is tuned: REDIS_URL's one
// server, a master found through Sentinel (REDIS_SENTINEL_MASTER, REDIS_SENTINEL_ADDRS) or a
// Cluster (REDIS_CLUSTER_ADDRS), with REDIS_URL's password, database, TLS and settings in
// every case. NewRedis makes the clients; every user of Redis (API, worker, ctl, asynq's
// server, scheduler, client and inspector, the queue dashboard) gets one from it.
//
// The clients fail fast when Redis is down, so a caller gets its 503 in milliseconds, not
// after go-redis's default of about 1.5 s (five dial attempts 100 ms apart, for each of four
// tries): one dial per try, two retries 8 to 64 ms apart (enough for a pooled connection that
// dropped, or a dial refused once during a restart or a failover), and a 1 s dial timeout for
// a Redis that does not answer at all. After as many failed dials as the pool holds, go-redis
// answers at once from its last dial error and probes the server every second until it is
// back. Settings given in REDIS_URL's query (max_retries, min_retry_backoff,
// max_retry_backoff, dial_timeout, ...) are kept.
func RedisOptions(c *config.Config) (*redis.UniversalOptions, error) {
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
	u := universal(opt)
	switch c.RedisMode() {
	case "sentinel":
		u.MasterName, u.Addrs, u.SentinelPassword = c.RedisSentinelMaster, c.RedisSentinelAddrs, c.RedisSentinelPassword
	case "cluster":
		u.Addrs, u.IsClusterMode = c.RedisClusterAddrs, true
	}
	if c.RedisMode() != "single" && u.TLSConfig != nil {
		// REDIS_URL's host is not the server dialled: each connection checks the
		// certificate of the node it reaches.
		u.TLSConfig = u.TLSConfig.Clone()
		u.TLSConfig.ServerName = ""
	}
	return u, nil
}

// universal is opt, parsed from a URL, as the options of any kind of client.
func universal(opt *redis.Options) *redis.UniversalOptions {
	return &redis.UniversalOptions{
		Addrs: []string{opt.Addr}, ClientName: opt.ClientName, Protocol: opt.Protocol,
		Username: opt.Username, Password: opt.Password, DB: opt.DB, TLSConfig: opt.TLSConfig,
		MaxRetries: opt.MaxRetries, MinRetryBackoff: opt.MinRetryBackoff, MaxRetryBackoff: opt.MaxRetryBackoff,
		DialTimeout: opt.DialTimeout, DialerRetries: opt.DialerRetries, DialerRetryTimeout: opt.DialerRetryTimeout,
		ReadTimeout: opt.ReadTimeout, WriteTimeout: opt.WriteTimeout, ContextTimeoutEnabled: opt.ContextTimeoutEnabled,
		PoolFIFO: opt.PoolFIFO, PoolSize: opt.PoolSize, MaxConcurrentDials: opt.MaxConcurrentDials,
		PoolTimeout: opt.PoolTimeout, MinIdleConns: opt.MinIdleConns, MaxIdleConns: opt.MaxIdleConns,
		MaxActiveConns: opt.MaxActiveConns, ConnMaxIdleTime: opt.ConnMaxIdleTime, ConnMaxLifetime: opt.ConnMaxLifetime,
		ConnMaxLifetimeJitter: opt.ConnMaxLifetimeJitter, PipelinePoolSize: opt.PipelinePoolSize,
		PipelineReadBufferSize: opt.PipelineReadBufferSize, PipelineWriteBufferSize: opt.PipelineWriteBufferSize,
	}
}

// NewRedis returns a client made from opt: a *redis.Client on one server or on Sentinel's
// master (following its failovers), a *redis.ClusterClient on a Cluster. It does not connect
// until used. opt is not changed (go-redis fills in the options it gets: each client gets a
// copy).
func NewRedis(opt *redis.UniversalOptions) redis.UniversalClient {
	o := *opt
	o.Addrs = append([]string(nil), opt.Addrs...)
	return redis.NewUniversalClient(&o)
}

// ConnectRedis opens a Redis client as RedisOptions says and checks it answers.
func ConnectRedis(ctx context.Context, cfg *config.Config) (redis.UniversalClient, error) {
	opt, err := RedisOptions(cfg)
	if err != nil {
		return nil, err
	}
	rdb := NewRedis(opt)
	if err := rdb.Ping(ctx).Err(); err != nil {
		_ = rdb.Close()
		where := strings.Join(opt.Addrs, ",")
		if opt.MasterName != "" {
			where = fmt.Sprintf("master %q through sentinels %s", opt.MasterName, where)
		}
		return nil, fmt.Errorf("redis (%s): ping %s: %w", cfg.RedisMode(), where, err)
	}
	return rdb, nil
}

// AsynqRedis gives asynq's server, scheduler and the queue dashboard their own clients, made
// by NewRedis as RedisOptions says.
func AsynqRedis(cfg *config.Config) (asynq.RedisConnOpt, error) {
	opt, err := RedisOptions(cfg)
	if err != nil {
		return nil, err
	}
	return jobs.RedisConnOpt(func() redis.UniversalClient { return NewRedis(opt) }), nil
}
