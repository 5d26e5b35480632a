package app

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/contentapi/contentapi/internal/config"
	"github.com/contentapi/contentapi/internal/testenv"
	"github.com/contentapi/contentapi/jobs"
)

func env(m map[string]string) config.Getenv { return func(k string) string { return m[k] } }

// outageBudget is how long a Redis command may take to fail once Redis is gone: a caller's
// 503 must not wait for go-redis's default dial retries (about 1.5 s a command).
const outageBudget = 300 * time.Millisecond

// The clients built from REDIS_URL (the service's and asynq's) keep working over a dropped
// connection, and once Redis is killed every command fails within outageBudget: the first
// ones on pooled connections that died, the next ones on refused dials.
func TestRedisClientsFailFastWhenRedisIsDown(t *testing.T) {
	ctx := context.Background()
	rs := testenv.StartRedisServer(t)
	c, err := config.Load(env(map[string]string{"REDIS_URL": "redis://" + rs.Addr + "/0"}))
	if err != nil {
		t.Fatal(err)
	}
	rdb, err := ConnectRedis(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	o, err := RedisOptions(c)
	if err != nil {
		t.Fatal(err)
	}
	opt := jobs.RedisConnOpt(o)
	asynqRdb, ok := opt.MakeRedisClient().(*redis.Client)
	if !ok {
		t.Fatalf("asynq's client is a %T", opt.MakeRedisClient())
	}
	defer asynqRdb.Close()
	queue := asynq.NewClientFromRedisClient(rdb)

	// Fill both pools, then drop every connection: the next commands retry on new ones.
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(2)
		go func() { defer wg.Done(); _ = rdb.Ping(ctx).Err() }()
		go func() { defer wg.Done(); _ = asynqRdb.Ping(ctx).Err() }()
	}
	wg.Wait()
	if err := rs.Client(t).ClientKillByFilter(ctx, "TYPE", "normal", "SKIPME", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	for _, cl := range []*redis.Client{rdb, asynqRdb} {
		if err := cl.Set(ctx, "after-drop", "1", time.Minute).Err(); err != nil {
			t.Fatalf("command after the connections dropped: %v; want it retried on a new connection", err)
		}
	}

	rs.Kill()
	cmds := map[string]func() error{
		"GET":     func() error { return rdb.Get(ctx, "k").Err() },
		"PUBLISH": func() error { return rdb.Publish(ctx, "c", "m").Err() },
		"enqueue": func() error {
			_, err := queue.EnqueueContext(ctx, asynq.NewTask("t", nil, asynq.Queue("analysis")))
			return err
		},
		"asynq GET": func() error { return asynqRdb.Get(ctx, "k").Err() },
	}
	var slowest time.Duration
	for round := range 5 {
		for name, cmd := range cmds {
			start := time.Now()
			err := cmd()
			took := time.Since(start)
			slowest = max(slowest, took)
			if err == nil || errors.Is(err, redis.Nil) {
				t.Fatalf("%s with Redis down: %v", name, err)
			}
			if took > outageBudget {
				t.Errorf("round %d: %s failed after %s, want within %s (%v)", round, name, took, outageBudget, err)
			}
		}
	}
	t.Logf("slowest failure with Redis down: %s", slowest)
}

// Retry and dial settings given in REDIS_URL win over the fail-fast defaults.
func TestRedisOptionsKeepURLSettings(t *testing.T) {
	c, err := config.Load(env(map[string]string{"REDIS_URL": "redis://127.0.0.1:6379/0?max_retries=-1&dial_timeout=3s"}))
	if err != nil {
		t.Fatal(err)
	}
	o, err := RedisOptions(c)
	if err != nil {
		t.Fatal(err)
	}
	if o.MaxRetries != -1 || o.DialTimeout != 3*time.Second || o.DialerRetries != 1 || o.MaxRetryBackoff != 64*time.Millisecond {
		t.Fatalf("options %+v", o)
	}
	if !strings.HasPrefix(o.Addr, "127.0.0.1") {
		t.Fatalf("addr %q", o.Addr)
	}
}
