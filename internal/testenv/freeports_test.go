package testenv

import (
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FreePorts draws distinct ports below the ephemeral range, each free when returned.
func TestFreePortsBelowEphemeral(t *testing.T) {
	lo := ephemeralLow()
	if lo-firstFixedPort < 1000 {
		t.Skipf("the ephemeral range starts at %d: FreePorts falls back to :0", lo)
	}
	ports, err := FreePorts(20)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p < firstFixedPort || p >= lo || seen[p] {
			t.Fatalf("port %d of %v: want distinct ports in [%d, %d)", p, ports, firstFixedPort, lo)
		}
		seen[p] = true
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Fatalf("port %d is not free: %v", p, err)
		}
		_ = l.Close()
	}
}

// A redis-server that exits at start is reported with its output, not waited for: each
// attempt's exit used to be taken by the readiness wait, and the kill after it waited for
// the exit again, for ever.
func TestLaunchRedisReportsAnExit(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := launchRedisWith(func(port int) ([]string, error) {
			return append(serverArgs(port), "--no-such-directive", "yes"), nil
		})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "exited") || !strings.Contains(err.Error(), "no-such-directive") {
			t.Fatalf("launch with a bad directive: %v; want the exit and the server's words", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("launch with a bad directive has not returned in a minute")
	}
}
