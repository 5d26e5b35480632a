package crawler

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// namedPrefix is an address range the crawler refuses, with the reason shown in errors.
type namedPrefix struct {
	prefix netip.Prefix
	reason string
}

// reservedPrefixes are ranges netip's predicates do not cover but which are not public
// internet hosts, or which embed another address the crawler cannot check (IANA's
// special-purpose registries). IPv4-mapped addresses (::ffff:0:0/96) are not listed: the
// IPv4 address they carry is checked instead, as it is what a connection reaches (and
// the resolver may hand out IPv4 answers in that form).
var reservedPrefixes = []namedPrefix{
	{netip.MustParsePrefix("0.0.0.0/8"), "this network"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"}, // includes broadcast 255.255.255.255
	{netip.MustParsePrefix("192.88.99.0/24"), "6to4 relay anycast"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible"},
	{netip.MustParsePrefix("::ffff:0:0:0/96"), "IPv4-translated"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local NAT64"},
	{netip.MustParsePrefix("100::/64"), "discard"},
	{netip.MustParsePrefix("100:0:0:1::/64"), "dummy prefix"},
	{netip.MustParsePrefix("2001::/32"), "Teredo"},
	{netip.MustParsePrefix("2001::/23"), "IETF protocol assignments"}, // benchmarking, ORCHID, AMT, ...
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
	{netip.MustParsePrefix("3fff::/20"), "documentation"},
	{netip.MustParsePrefix("2002::/16"), "6to4"},
	{netip.MustParsePrefix("5f00::/16"), "segment routing"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"}, // deprecated, still routed inside some networks
}

// metadataAddrs are cloud instance-metadata endpoints (AWS/GCP/Azure, AWS IPv6, Alibaba).
// Most fall in ranges refused anyway; they are named so errors say what was at stake.
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"),
	netip.MustParseAddr("fd00:ec2::254"),
	netip.MustParseAddr("100.100.100.200"),
}

// nat64 is the well-known NAT64 prefix: its last 32 bits are an IPv4 address, checked as such.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// forbiddenAddr returns an error wrapping ErrForbiddenAddress when a is not a public
// unicast address.
func forbiddenAddr(a netip.Addr) error {
	a = a.Unmap()
	if reason := addrClass(a); reason != "" {
		return fmt.Errorf("%w %s (%s)", ErrForbiddenAddress, a, reason)
	}
	if nat64.Contains(a) {
		b := a.As16()
		if err := forbiddenAddr(netip.AddrFrom4([4]byte(b[12:]))); err != nil {
			return fmt.Errorf("NAT64 %s: %w", a, err)
		}
	}
	return nil
}

func addrClass(a netip.Addr) string {
	for _, m := range metadataAddrs {
		if a == m {
			return "cloud metadata"
		}
	}
	switch {
	case !a.IsValid():
		return "invalid"
	case a.IsLoopback():
		return "loopback"
	case a.IsPrivate():
		return "private"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "link-local"
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		return "multicast"
	case a.IsUnspecified():
		return "unspecified"
	}
	for _, p := range reservedPrefixes {
		if p.prefix.Contains(a) {
			return p.reason
		}
	}
	return ""
}

func lookupNetIP(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// CheckHost resolves host (any :port is ignored) and fails with ErrForbiddenAddress when
// any of its addresses may not be crawled, or with ErrUnresolvable when it does not
// resolve. It gives callers an early, clear answer; the dial-time check in every crawl is
// what actually enforces the rule, DNS rebinding included.
func (c *Crawler) CheckHost(ctx context.Context, host string) error {
	name := hostOnly(host)
	addrs, err := c.lookup(ctx, c.resolvedName(name))
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrUnresolvable, name, err)
	}
	if len(addrs) == 0 {
		return fmt.Errorf("%w: %s: no addresses", ErrUnresolvable, name)
	}
	if c.checkAddr == nil {
		return nil
	}
	for _, a := range addrs {
		if err := c.checkAddr(a); err != nil {
			return fmt.Errorf("crawler: host %s: %w", name, err)
		}
	}
	return nil
}

// resolvedName is the name looked up for host. With AllowPrivate a name under .localhost
// (shop.localhost) is looked up as localhost: RFC 6761 makes every such name the loopback
// host, but the system resolver knows only "localhost" itself, and a developer auditing
// several local sites tells them apart by name. Without AllowPrivate names are left alone
// (the loopback address they would reach is refused anyway).
func (c *Crawler) resolvedName(host string) string {
	if c.cfg.AllowPrivate && strings.HasSuffix(strings.TrimSuffix(strings.ToLower(host), "."), ".localhost") {
		return "localhost"
	}
	return host
}

// dialContext dials address, looking its host up as resolvedName says; the Host header and
// TLS server name stay those of the URL.
func (c *Crawler) dialContext(dialer *net.Dialer) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		if host, port, err := net.SplitHostPort(address); err == nil {
			address = net.JoinHostPort(c.resolvedName(host), port)
		}
		return dialer.DialContext(ctx, network, address)
	}
}

// dialControl runs after DNS resolution, just before each connect, so it sees the address
// really connected to: on the first request, on every redirect and after any rebinding.
func (c *Crawler) dialControl(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("crawler: dial %s: %w", address, err)
	}
	// Off the web ports a public host may run internal services (admin panels, databases).
	if !c.cfg.AllowPrivate && ap.Port() != 80 && ap.Port() != 443 {
		return fmt.Errorf("%w %s (port not allowed)", ErrForbiddenAddress, ap)
	}
	if c.checkAddr == nil {
		return nil
	}
	return c.checkAddr(ap.Addr())
}

// newTransport builds the one transport a crawl uses for robots.txt, sitemaps and pages.
func (c *Crawler) newTransport() *http.Transport {
	dialer := &net.Dialer{
		Timeout:   min(c.cfg.RequestTimeout, 10*time.Second),
		KeepAlive: 30 * time.Second,
		Control:   c.dialControl,
	}
	return &http.Transport{
		// No proxy: with one, the dial check would see the proxy's address, not the target's.
		Proxy:                  nil,
		DialContext:            c.dialContext(dialer),
		TLSClientConfig:        c.tlsConfig.Clone(),
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           4 * c.cfg.Parallelism,
		MaxIdleConnsPerHost:    c.cfg.Parallelism,
		IdleConnTimeout:        30 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  c.cfg.RequestTimeout,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
}

// newClient is the plain client for robots.txt and sitemaps; pages go through colly.
func (c *Crawler) newClient(t http.RoundTripper) *http.Client {
	return &http.Client{Transport: t, Timeout: c.cfg.RequestTimeout, CheckRedirect: c.checkRedirect}
}

var (
	errTooManyRedirects = errors.New("too many redirects")
	errURLTooLong       = fmt.Errorf("URL longer than %d bytes", maxURLBytes)
)

// checkRedirect caps redirect chains, keeps them on http(s) and refuses URLs longer than
// maxURLBytes. Address checks need no
// code here: each hop dials through dialControl.
func (c *Crawler) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > c.cfg.MaxRedirects {
		return fmt.Errorf("%w: more than %d", errTooManyRedirects, c.cfg.MaxRedirects)
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return fmt.Errorf("redirect to unsupported scheme %q", req.URL.Scheme)
	}
	if len(req.URL.String()) > maxURLBytes {
		return fmt.Errorf("%w: redirect", errURLTooLong)
	}
	return nil
}

// HTTPClient returns a client with the crawler's address rules (private, loopback,
// link-local, CGNAT, multicast and metadata addresses refused at connect time and on every
// redirect; only ports 80 and 443 unless AllowPrivate), for other outbound requests to
// caller-chosen addresses such as job callbacks.
func (c *Crawler) HTTPClient() *http.Client {
	return c.newClient(c.newTransport())
}
