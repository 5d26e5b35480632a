package testenv

import (
	"net"
	"strconv"
	"testing"
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
