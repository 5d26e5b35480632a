package testenv

import (
	"testing"

	"github.com/redis/go-redis/v9"
)

// RedisServer is a private redis-server a test may kill, to see what code does when Redis
// goes away. It is not the package's shared Redis (see Redis), which must stay up.
type RedisServer struct {
	// Addr is the server's host:port.
	Addr string
	kill func()
}

// StartRedisServer starts a private redis-server, killed when the test ends at the latest.
func StartRedisServer(t testing.TB) *RedisServer {
	t.Helper()
	addr, kill, err := launchRedis()
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	t.Cleanup(kill)
	return &RedisServer{Addr: addr, kill: kill}
}

// Kill stops the server at once (SIGKILL) and waits for it to exit; its clients then get
// connection errors.
func (s *RedisServer) Kill() { s.kill() }

// Client returns a client of the server, closed with the test.
func (s *RedisServer) Client(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	t.Cleanup(func() { c.Close() })
	return c
}
