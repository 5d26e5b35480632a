package httpapi_test

import (
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/contentapi/contentapi/internal/httpapi"
)

// randomV4 and randomV6Prefix give fresh addresses per run (the package's Redis keeps
// buckets between runs of -count=2): IPv4 from the benchmarking range 198.18.0.0/15, IPv6
// /64s from the documentation range 2001:db8::/32.
func randomV4(t *testing.T) string {
	t.Helper()
	b := make([]byte, 2)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return netip.AddrFrom4([4]byte{198, 18 + b[0]&1, b[1], 1 + b[0]>>1}).String()
}

func randomV6Prefix(t *testing.T) string {
	t.Helper()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("2001:db8:%x:%x", int(b[0])<<8|int(b[1]), int(b[2])<<8|int(b[3]))
}

// registerFrom registers with the given X-Forwarded-For headers (one header line each) and
// returns the status and the registration limit's remaining count.
func registerFrom(t *testing.T, s *testServer, xff ...string) (int, int) {
	t.Helper()
	body := fmt.Sprintf(`{"email":%q}`, uniqueEmail())
	req, err := http.NewRequest("POST", s.URL+"/v1/auth/register", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for _, h := range xff {
		req.Header.Add("X-Forwarded-For", h)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	validateAgainstSpec(t, "POST", req.URL.String(), response{Status: res.StatusCode, Header: res.Header, Raw: string(raw)})
	remaining, err := strconv.Atoi(res.Header.Get("X-RateLimit-Remaining"))
	if err != nil {
		t.Fatalf("register: %d without X-RateLimit-Remaining: %s", res.StatusCode, raw)
	}
	return res.StatusCode, remaining
}

// The registration limit behind trusted proxies keys on the right-most address that is not
// a proxy: whatever a client writes to the left of it does not give it a new bucket.
func TestRegisterLimitBehindProxies(t *testing.T) {
	const limit = 3
	s := startServer(t, func(d *httpapi.Deps) {
		d.TrustedProxies = []string{"127.0.0.1", "10.0.0.0/8"}
		d.RegisterLimit = limit
	})
	// sameBucket registers once per header set and wants one bucket counting down from full.
	sameBucket := func(what string, xffs ...[]string) {
		t.Helper()
		for i, xff := range xffs {
			status, remaining := registerFrom(t, s, xff...)
			wantStatus, wantRemaining := 201, limit-1-i
			if i >= limit {
				wantStatus, wantRemaining = 429, 0
			}
			if status != wantStatus || remaining != wantRemaining {
				t.Fatalf("%s, registration %d (X-Forwarded-For %q): %d, %d remaining; want %d, %d",
					what, i+1, xff, status, remaining, wantStatus, wantRemaining)
			}
		}
	}

	// The proxy (127.0.0.1, the test's own address) appended the client's address; the
	// client wrote another address before it each time.
	client := randomV4(t)
	var spoofed [][]string
	for i := 0; i < limit+2; i++ {
		spoofed = append(spoofed, []string{randomV4(t) + ", " + client})
	}
	sameBucket("spoofed left-most addresses", spoofed...)

	// Two trusted hops (an inner proxy in 10/8), the header split over two lines, ports on
	// some entries: the client is the address the outer proxy saw. An IPv4-mapped IPv6
	// address is the IPv4 address.
	client = randomV4(t)
	sameBucket("chain of proxies",
		[]string{randomV4(t) + ", " + client, "10.1.2.3"},
		[]string{"[::1]:9", client + ":4711, 10.1.2.3:80"},
		[]string{"::ffff:" + client})

	// IPv6: one bucket per /64, so a host cannot take a new bucket with each of its addresses.
	net64 := randomV6Prefix(t)
	sameBucket("one /64", []string{net64 + "::1"}, []string{net64 + ":ffff:ffff:ffff:fffe"}, []string{"[" + net64 + ":1:2:3:4]:443"})
	sameBucket("another /64", []string{randomV6Prefix(t) + "::1"})

	// A malformed entry stops the walk at the trusted proxy that passed it on: such requests
	// share that proxy's bucket.
	proxy := strings.Replace(randomV4(t), "198.", "10.", 1)
	sameBucket("malformed entries", []string{"not-an-address, " + proxy}, []string{"also garbage, " + proxy})
}

// Without trusted proxies (or from a peer that is not one) X-Forwarded-For is ignored.
func TestRegisterLimitIgnoresForwardedForFromUntrustedPeers(t *testing.T) {
	s := startServer(t, func(d *httpapi.Deps) {
		d.TrustedProxies = []string{"10.0.0.1"}
		d.RegisterLimit = 1_000_000
	})
	_, first := registerFrom(t, s, randomV4(t))
	_, second := registerFrom(t, s, randomV4(t))
	if second != first-1 {
		t.Fatalf("X-Forwarded-For from an untrusted peer chose the bucket: %d then %d remaining", first, second)
	}
}
