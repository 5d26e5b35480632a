package crawler

import (
	"context"
	"errors"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

func TestForbiddenAddr(t *testing.T) {
	tests := []struct {
		addr   string
		reason string // "" when allowed
	}{
		{"127.0.0.1", "loopback"}, {"127.1.2.3", "loopback"}, {"10.0.0.1", "private"},
		{"172.16.5.4", "private"}, {"192.168.1.1", "private"}, {"169.254.169.254", "cloud metadata"},
		{"169.254.1.1", "link-local"}, {"100.64.0.1", "carrier-grade NAT"}, {"100.100.100.200", "cloud metadata"},
		{"0.0.0.0", "unspecified"}, {"0.1.2.3", "this network"}, {"224.0.0.1", "link-local"}, {"239.1.2.3", "multicast"},
		{"255.255.255.255", "reserved"}, {"240.0.0.1", "reserved"}, {"192.0.2.1", "documentation"},
		{"198.18.0.1", "benchmarking"}, {"192.0.0.8", "IETF protocol assignments"},
		{"192.88.99.1", "6to4 relay anycast"},
		{"::1", "loopback"}, {"::", "unspecified"}, {"fe80::1", "link-local"}, {"fc00::1", "private"},
		{"fd00:ec2::254", "cloud metadata"}, {"ff02::1", "link-local"}, {"ff05::1", "multicast"}, {"2001:db8::1", "documentation"},
		{"::10.0.0.1", "IPv4-compatible"}, {"::8.8.8.8", "IPv4-compatible"},
		// Site-local, deprecated but still routed inside some networks.
		{"fec0::1", "site-local"}, {"feff:ffff::1", "site-local"},
		// IPv4-mapped: the embedded IPv4 address is what a connection reaches.
		{"::ffff:127.0.0.1", "loopback"}, {"::ffff:10.0.0.1", "private"}, {"::ffff:169.254.169.254", "cloud metadata"},
		{"::ffff:100.64.0.1", "carrier-grade NAT"}, {"::ffff:8.8.8.8", ""},
		// IPv4-translated (SIIT), NAT64 and 6to4 embed IPv4 addresses too.
		{"::ffff:0:a00:1", "IPv4-translated"}, {"::ffff:0:808:808", "IPv4-translated"},
		{"64:ff9b::a00:1", "private"}, {"64:ff9b::7f00:1", "loopback"}, {"64:ff9b::a9fe:a9fe", "cloud metadata"},
		{"64:ff9b::808:808", ""}, {"64:ff9b:1::808:808", "local NAT64"},
		{"2002:a00:1::", "6to4"}, {"2002:808:808::1", "6to4"},
		// IETF protocol assignments: Teredo, benchmarking, ORCHID, AMT and the like.
		{"2001::1", "Teredo"}, {"2001:2::1", "IETF protocol assignments"},
		{"2001:20::1", "IETF protocol assignments"}, {"2001:1ff::1", "IETF protocol assignments"},
		{"100::1", "discard"}, {"100:0:0:1::1", "dummy prefix"}, {"3fff::1", "documentation"},
		{"5f00::1", "segment routing"},
		{"93.184.215.14", ""}, {"8.8.8.8", ""}, {"1.1.1.1", ""}, {"100.128.0.1", ""},
		{"2606:4700:4700::1111", ""}, {"2001:200::1", ""}, {"2a00:1450:4001::1", ""},
	}
	for _, tt := range tests {
		a := netip.MustParseAddr(tt.addr)
		err := forbiddenAddr(a)
		switch {
		case tt.reason == "" && err != nil:
			t.Errorf("forbiddenAddr(%s) = %v, want nil", tt.addr, err)
		case tt.reason == "":
		case !errors.Is(err, ErrForbiddenAddress):
			t.Errorf("forbiddenAddr(%s) = %v, want ErrForbiddenAddress (%s)", tt.addr, err, tt.reason)
		case !strings.Contains(err.Error(), a.Unmap().String()) || !strings.Contains(err.Error(), "("+tt.reason+")"):
			t.Errorf("forbiddenAddr(%s) = %q, want it to name the address and %q", tt.addr, err, tt.reason)
		}
	}
}

func TestCheckHost(t *testing.T) {
	c := New(Config{})
	ctx := context.Background()
	for _, host := range []string{
		"127.0.0.1", "10.1.2.3", "169.254.169.254", "100.64.3.4", "::1", "[::1]:8080",
		"localhost", "localhost:443", "0.0.0.0", "fd00:ec2::254", "100.100.100.200",
	} {
		err := c.CheckHost(ctx, host)
		if !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("CheckHost(%q) = %v, want ErrForbiddenAddress", host, err)
		}
	}
	for _, host := range []string{"8.8.8.8", "1.1.1.1:443", "2606:4700:4700::1111"} {
		if err := c.CheckHost(ctx, host); err != nil {
			t.Errorf("CheckHost(%q) = %v, want nil", host, err)
		}
	}
	if err := New(Config{AllowPrivate: true}).CheckHost(ctx, "127.0.0.1:8080"); err != nil {
		t.Errorf("CheckHost with AllowPrivate = %v, want nil", err)
	}
}

func TestCheckHostResolution(t *testing.T) {
	c := New(Config{})
	c.lookup = func(_ context.Context, host string) ([]netip.Addr, error) {
		switch host {
		case "rebind.example": // one public and one private record, as a rebinding attack serves
			return []netip.Addr{netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("10.0.0.7")}, nil
		case "public.example":
			return []netip.Addr{netip.MustParseAddr("93.184.215.14")}, nil
		case "empty.example":
			return nil, nil
		}
		return nil, errors.New("no such host")
	}
	ctx := context.Background()
	if err := c.CheckHost(ctx, "rebind.example"); !errors.Is(err, ErrForbiddenAddress) || !strings.Contains(err.Error(), "10.0.0.7") {
		t.Errorf("rebind.example: %v, want ErrForbiddenAddress naming 10.0.0.7", err)
	}
	if err := c.CheckHost(ctx, "public.example:443"); err != nil {
		t.Errorf("public.example: %v", err)
	}
	for _, host := range []string{"missing.example", "empty.example"} {
		if err := c.CheckHost(ctx, host); !errors.Is(err, ErrUnresolvable) {
			t.Errorf("%s: %v, want ErrUnresolvable", host, err)
		}
	}
}

func TestDialRefusesLoopbackWithoutAllowPrivate(t *testing.T) {
	srv := httptest.NewServer(nil)
	defer srv.Close()
	c := New(Config{})
	// The port check would refuse the test server's port first; call the address check
	// the way the dialer does for a web port.
	err := c.dialControl("tcp4", "127.0.0.1:80", nil)
	if !errors.Is(err, ErrForbiddenAddress) || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("dialControl(127.0.0.1:80) = %v, want ErrForbiddenAddress", err)
	}
	transport := c.newTransport()
	defer transport.CloseIdleConnections()
	_, err = c.newClient(transport).Get(srv.URL)
	if !errors.Is(err, ErrForbiddenAddress) {
		t.Errorf("GET %s = %v, want ErrForbiddenAddress", srv.URL, err)
	}
	if err := c.dialControl("tcp4", "93.184.215.14:443", nil); err != nil {
		t.Errorf("dialControl(public:443) = %v", err)
	}
}

func TestCrawlRefusesLocalTargets(t *testing.T) {
	c := New(Config{})
	_, err := c.Crawl(context.Background(), Request{Domain: "localhost", MaxPages: 1})
	if !errors.Is(err, ErrForbiddenAddress) || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("Crawl(localhost) = %v, want ErrForbiddenAddress (loopback)", err)
	}
	_, err = c.Crawl(context.Background(), Request{Domain: "example.com:8080", MaxPages: 1})
	if !errors.Is(err, ErrInvalidDomain) {
		t.Errorf("Crawl(example.com:8080) = %v, want ErrInvalidDomain", err)
	}
	for _, d := range []string{"", "example.com/path", "user@example.com", "exa mple.com"} {
		if _, err := c.Crawl(context.Background(), Request{Domain: d}); !errors.Is(err, ErrInvalidDomain) {
			t.Errorf("Crawl(%q) = %v, want ErrInvalidDomain", d, err)
		}
	}
}
