package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/contentapi/contentapi/internal/config"
	"github.com/contentapi/contentapi/internal/testenv"
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
	opt, err := AsynqRedis(c)
	if err != nil {
		t.Fatal(err)
	}
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
	for _, cl := range []redis.UniversalClient{rdb, asynqRdb} {
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

// Retry and dial settings given in REDIS_URL win over the fail-fast defaults, and REDIS_URL's
// password, database, TLS and settings hold for Sentinel and Cluster too, whose clients are
// of the kind each needs.
func TestRedisOptionsKeepURLSettings(t *testing.T) {
	const url = "rediss://:pw@redis.example:6379/3?max_retries=-1&dial_timeout=3s&pool_size=7"
	for _, tc := range []struct {
		mode  string
		env   map[string]string
		addrs []string
		want  string // the client's type
	}{
		{"single", map[string]string{"REDIS_URL": url}, []string{"redis.example:6379"}, "*redis.Client"},
		{"sentinel", map[string]string{"REDIS_URL": url, "REDIS_SENTINEL_MASTER": "main",
			"REDIS_SENTINEL_ADDRS": "s1:26379, s2:26379,s3:26379", "REDIS_SENTINEL_PASSWORD": "spw"},
			[]string{"s1:26379", "s2:26379", "s3:26379"}, "*redis.Client"},
		{"cluster", map[string]string{"REDIS_URL": strings.Replace(url, "/3?", "/0?", 1), "REDIS_CLUSTER_ADDRS": "n1:7000,n2:7001"},
			[]string{"n1:7000", "n2:7001"}, "*redis.ClusterClient"},
	} {
		c, err := config.Load(env(tc.env))
		if err != nil {
			t.Fatalf("%s: %v", tc.mode, err)
		}
		if c.RedisMode() != tc.mode {
			t.Errorf("mode %q, want %q", c.RedisMode(), tc.mode)
		}
		o, err := RedisOptions(c)
		if err != nil {
			t.Fatal(err)
		}
		if o.MaxRetries != -1 || o.DialTimeout != 3*time.Second || o.DialerRetries != 1 || o.MaxRetryBackoff != 64*time.Millisecond ||
			o.PoolSize != 7 || o.Password != "pw" || o.TLSConfig == nil {
			t.Errorf("%s: options %+v", tc.mode, o)
		}
		if !slices.Equal(o.Addrs, tc.addrs) {
			t.Errorf("%s: addresses %q, want %q", tc.mode, o.Addrs, tc.addrs)
		}
		if sn := o.TLSConfig.ServerName; (tc.mode == "single") != (sn == "redis.example") {
			t.Errorf("%s: TLS server name %q", tc.mode, sn)
		}
		if tc.mode == "sentinel" && (o.MasterName != "main" || o.SentinelPassword != "spw" || o.DB != 3) {
			t.Errorf("sentinel: master %q, sentinel password %q, db %d", o.MasterName, o.SentinelPassword, o.DB)
		}
		rdb := NewRedis(o)
		if got := fmt.Sprintf("%T", rdb); got != tc.want {
			t.Errorf("%s: client %s, want %s", tc.mode, got, tc.want)
		}
		_ = rdb.Close()
	}
}

// Sentinel and Cluster settings that cannot work are refused at start, each with its reason.
func TestRedisTopologyRefused(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"REDIS_SENTINEL_MASTER": "main"}, "REDIS_SENTINEL_MASTER and REDIS_SENTINEL_ADDRS go together"},
		{map[string]string{"REDIS_SENTINEL_ADDRS": "s1:26379"}, "REDIS_SENTINEL_MASTER and REDIS_SENTINEL_ADDRS go together"},
		{map[string]string{"REDIS_SENTINEL_PASSWORD": "x"}, "REDIS_SENTINEL_PASSWORD is set without"},
		{map[string]string{"REDIS_SENTINEL_MASTER": "main", "REDIS_SENTINEL_ADDRS": "s1:26379", "REDIS_CLUSTER_ADDRS": "n1:7000"},
			"set one, Sentinel or Cluster, not both"},
		{map[string]string{"REDIS_SENTINEL_MASTER": "main", "REDIS_SENTINEL_ADDRS": "s1"}, `REDIS_SENTINEL_ADDRS: "s1" is not a host:port`},
		{map[string]string{"REDIS_CLUSTER_ADDRS": "n1:7000,:7001"}, `REDIS_CLUSTER_ADDRS: ":7001" is not a host:port`},
		{map[string]string{"REDIS_CLUSTER_ADDRS": "n1:99999"}, `"n1:99999" is not a host:port`},
		{map[string]string{"REDIS_CLUSTER_ADDRS": "n1:7000", "REDIS_URL": "redis://x:6379/2"}, "Redis Cluster has only database 0, but REDIS_URL selects database 2"},
		{map[string]string{"REDIS_CLUSTER_ADDRS": "n1:7000", "REDIS_URL": "redis://x:6379?db=5"}, "selects database 5"},
	} {
		_, err := config.Load(env(tc.env))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error saying %q", tc.env, err, tc.want)
		}
	}
}
