package testenv

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// StartRedisCluster starts a private Redis Cluster of masters (no replicas), each its own
// redis-server on a loopback port, the 16384 slots shared out between them, and returns
// their addresses once every node says the cluster is ok. They are killed when the test ends
// at the latest.
func StartRedisCluster(t testing.TB, masters int) []string {
	t.Helper()
	dir := t.TempDir()
	addrs := make([]string, masters)
	for i := range addrs {
		addr, kill, err := launchRedisWith(func(port int) ([]string, error) {
			return append(serverArgs(port), "--cluster-enabled", "yes", "--cluster-node-timeout", "2000",
				"--cluster-config-file", filepath.Join(dir, fmt.Sprintf("nodes-%d.conf", port))), nil
		})
		if err != nil {
			t.Fatalf("testenv: %v", err)
		}
		t.Cleanup(kill)
		addrs[i] = addr
	}
	ctx := context.Background()
	first := redis.NewClient(oneOff(addrs[0]))
	defer first.Close()
	for i, addr := range addrs {
		c := redis.NewClient(oneOff(addr))
		from, to := i*16384/masters, (i+1)*16384/masters-1
		err := c.ClusterAddSlotsRange(ctx, from, to).Err()
		c.Close()
		if err != nil {
			t.Fatalf("testenv: cluster slots %d-%d on %s: %v", from, to, addr, err)
		}
		if i > 0 {
			host, port, _ := net.SplitHostPort(addr)
			if err := first.ClusterMeet(ctx, host, port).Err(); err != nil {
				t.Fatalf("testenv: cluster meet %s: %v", addr, err)
			}
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, addr := range addrs {
		for {
			info, err := serverCmd(ctx, addr, func(c *redis.Client) (string, error) { return c.ClusterInfo(ctx).Result() })
			if err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d", masters)) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("testenv: the cluster is not ok after 30 s: %v %s", err, info)
			}
			// Polling: nodes learn of each other by gossip, which has no event to wait on.
			time.Sleep(20 * time.Millisecond)
		}
	}
	return addrs
}
