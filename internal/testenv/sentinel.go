package testenv

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// SentinelMaster is the name the sentinels of StartRedisSentinel watch their master under.
const SentinelMaster = "contentapi"

// RedisSentinel is a private Redis that fails over: a master, one replica of it and three
// sentinels (quorum two) watching the master, each its own redis-server on a loopback port,
// all killed when the test ends at the latest.
type RedisSentinel struct {
	// Sentinels are the sentinels' host:port addresses.
	Sentinels []string
	// Master and Replica are the servers as started; after a failover the replica is
	// the master.
	Master, Replica string
	kills           map[string]func()
}

// SentinelTimings are how fast the sentinels act: DownAfter without an answer from the
// master makes a sentinel call it down; FailoverTimeout bounds a failover's steps (and a
// failed election is tried again after twice it).
type SentinelTimings struct {
	DownAfter, FailoverTimeout time.Duration
}

// StartRedisSentinel starts the master, its replica and the sentinels, and returns once the
// replica is in sync and every sentinel knows the replica and the two other sentinels, so
// that a failover can start the moment the master is killed.
func StartRedisSentinel(t testing.TB, timings SentinelTimings) *RedisSentinel {
	t.Helper()
	s := &RedisSentinel{kills: map[string]func(){}}
	start := func(launch func() (string, func(), error)) string {
		t.Helper()
		addr, kill, err := launch()
		if err != nil {
			t.Fatalf("testenv: %v", err)
		}
		t.Cleanup(kill)
		s.kills[addr] = kill
		return addr
	}
	s.Master = start(func() (string, func(), error) { return launchRedis() })
	host, port, _ := net.SplitHostPort(s.Master)
	s.Replica = start(func() (string, func(), error) { return launchRedis("--replicaof", host, port) })
	dir := t.TempDir()
	for range 3 {
		s.Sentinels = append(s.Sentinels, start(func() (string, func(), error) {
			return launchRedisWith(func(p int) ([]string, error) {
				// A sentinel rewrites its configuration file: each gets its own.
				conf := filepath.Join(dir, fmt.Sprintf("sentinel-%d.conf", p))
				m := SentinelMaster
				text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndaemonize no\nloglevel warning\nlogfile \"\"\n", p) +
					fmt.Sprintf("sentinel monitor %s %s %s 2\n", m, host, port) +
					fmt.Sprintf("sentinel down-after-milliseconds %s %d\n", m, timings.DownAfter.Milliseconds()) +
					fmt.Sprintf("sentinel failover-timeout %s %d\n", m, timings.FailoverTimeout.Milliseconds()) +
					fmt.Sprintf("sentinel parallel-syncs %s 1\n", m)
				return []string{conf, "--sentinel"}, os.WriteFile(conf, []byte(text), 0o600)
			})
		}))
	}
	s.await(t, 30*time.Second, "the replica in sync and every sentinel knowing the others and the replica", func(ctx context.Context) (bool, error) {
		info, err := serverCmd(ctx, s.Replica, func(c *redis.Client) (string, error) { return c.Info(ctx, "replication").Result() })
		if err != nil || !strings.Contains(info, "master_link_status:up") {
			return false, err
		}
		for _, a := range s.Sentinels {
			c := redis.NewSentinelClient(oneOff(a))
			m, err := c.Master(ctx, SentinelMaster).Result()
			_ = c.Close()
			if err != nil || m["num-slaves"] != "1" || m["num-other-sentinels"] != "2" {
				return false, err
			}
		}
		return true, nil
	})
	return s
}

// oneOff are options for a client making one command.
func oneOff(addr string) *redis.Options {
	return &redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second, PoolSize: 1}
}

// serverCmd runs cmd on a client of the server at addr, closed afterwards.
func serverCmd[T any](ctx context.Context, addr string, cmd func(*redis.Client) (T, error)) (T, error) {
	c := redis.NewClient(oneOff(addr))
	defer c.Close()
	return cmd(c)
}

// MasterAddr is the master every sentinel names, or "" while they disagree or one does not
// answer.
func (s *RedisSentinel) MasterAddr(ctx context.Context) string {
	var agreed string
	for i, a := range s.Sentinels {
		c := redis.NewSentinelClient(oneOff(a))
		hp, err := c.GetMasterAddrByName(ctx, SentinelMaster).Result()
		_ = c.Close()
		if err != nil || len(hp) != 2 {
			return ""
		}
		addr := net.JoinHostPort(hp[0], hp[1])
		if i > 0 && addr != agreed {
			return ""
		}
		agreed = addr
	}
	return agreed
}

// Kill kills the server at addr at once (SIGKILL) and waits for it to exit.
func (s *RedisSentinel) Kill(addr string) { s.kills[addr]() }

// AwaitMaster waits up to timeout for every sentinel to name want as the master, and want
// to say it is one.
func (s *RedisSentinel) AwaitMaster(t testing.TB, want string, timeout time.Duration) {
	t.Helper()
	s.await(t, timeout, "the sentinels to name "+want+" the master", func(ctx context.Context) (bool, error) {
		if s.MasterAddr(ctx) != want {
			return false, nil
		}
		role, err := serverCmd(ctx, want, func(c *redis.Client) ([]any, error) { return c.Do(ctx, "ROLE").Slice() })
		return err == nil && len(role) > 0 && role[0] == "master", err
	})
}

// await polls cond every 20 ms until it holds, failing the test after timeout. Polling: a
// sentinel's view has no event to wait on that covers all three.
func (s *RedisSentinel) await(t testing.TB, timeout time.Duration, what string, cond func(context.Context) (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		ok, err := cond(ctx)
		cancel()
		if ok {
			return
		}
		if err != nil {
			last = err
		}
		if time.Now().After(deadline) {
			t.Fatalf("testenv: waited %s for %s (last error: %v)", timeout, what, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
