package report

import (
	"strings"
	"testing"

	"github.com/contentapi/contentapi/internal/apperr"
)

func TestNormalizeDomainStrict(t *testing.T) {
	public := Options{}
	ok := map[string]string{
		"example.com":                   "example.com",
		" www.Example.COM ":             "www.example.com",
		"example.com.":                  "example.com",
		"https://Example.com./path?q=1": "example.com",
		"http://bücher.example.org":     "xn--bcher-kva.example.org",
		"1password.com":                 "1password.com",
	}
	for in, want := range ok {
		if got, err := NormalizeDomain("domain", in, public); err != nil || got != want {
			t.Errorf("NormalizeDomain(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	bad := map[string]string{
		"":                               "domain is required",
		"..":                             "not a valid domain name",
		"a..com":                         "not a valid domain name",
		".example.com":                   "not a valid domain name",
		"example.com..":                  "not a valid domain name",
		"-example.com":                   "not a valid domain name",
		"exa_mple.com":                   "not a valid domain name",
		strings.Repeat("a", 64) + ".com": "not a valid domain name",
		"127.0.0.1":                      "not an IP address",
		"127.1":                          "not an IP address",
		"2130706433":                     "not an IP address",
		"0x7f.1":                         "not an IP address",
		"0x7f000001":                     "not an IP address",
		"0177.0.0.1":                     "not an IP address",
		"127.0.0.1.":                     "not an IP address",
		"[::1]":                          "not an IP address",
		"http://[::ffff:127.0.0.1]/":     "not an IP address",
		"localhost":                      "public domain name",
		"com":                            "public domain name",
		"printer.local":                  "public domain name",
		"example.com:8080":               "must not carry a port",
		"ftp://example.com":              "must be a domain like",
		"user@example.com":               "must be a domain like",
		"https://user@example.com":       "must be a domain like",
	}
	for in, msg := range bad {
		got, err := NormalizeDomain("domain", in, public)
		if e, ok := apperr.As(err); !ok || !strings.Contains(e.Message, msg) {
			t.Errorf("NormalizeDomain(%q) = %q, %v; want an error with %q", in, got, err, msg)
		}
	}
	// Local tests may name IP literals, one-label names and ports, but not malformed names.
	local := Options{AllowPrivate: true}
	for in, want := range map[string]string{"127.0.0.1:8080": "127.0.0.1:8080", "localhost": "localhost", "[::1]:81": "[::1]:81"} {
		if got, err := NormalizeDomain("domain", in, local); err != nil || got != want {
			t.Errorf("AllowPrivate NormalizeDomain(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"127.1", "a..b", "2130706433"} {
		if got, err := NormalizeDomain("domain", in, local); err == nil {
			t.Errorf("AllowPrivate NormalizeDomain(%q) = %q, accepted", in, got)
		}
	}
}

// A domain spelt another way (case, root dot, www., scheme) is still the domain itself.
func TestCompetitorEqualToDomainRefused(t *testing.T) {
	for _, c := range []string{"a.com.", "A.COM", "https://a.com/", "www.a.com", "http://WWW.A.com./x"} {
		r := &GapsRequest{Domain: "a.com", Competitors: []string{c}}
		err := r.Normalize(Options{})
		if e, ok := apperr.As(err); !ok || !strings.Contains(e.Message, "competitors[0] is the domain itself") {
			t.Errorf("competitor %q: %v", c, err)
		}
	}
	r := &GapsRequest{Domain: "a.com.", Competitors: []string{"b.com", "B.com.", "www.b.com"}}
	if err := r.Normalize(Options{}); err != nil || r.Domain != "a.com" || len(r.Competitors) != 1 || r.Competitors[0] != "b.com" {
		t.Fatalf("normalised %q %q, %v", r.Domain, r.Competitors, err)
	}
	m := &ContentMapRequest{Domain: "a.com", Competitors: []string{"b.com", "a.com."}}
	if err := m.Normalize(Options{}); err == nil || !strings.Contains(err.Error(), "competitors[1] is the domain itself") {
		t.Fatalf("content map competitor equal to domain: %v", err)
	}
}

func TestSitemapURLNormalised(t *testing.T) {
	r := &AuditRequest{Domain: "Example.com", SitemapURL: "https://WWW.eXAmple.Com./sitemap.xml?x=1#top"}
	if err := r.Normalize(Options{}); err != nil || r.SitemapURL != "https://www.example.com/sitemap.xml?x=1" {
		t.Fatalf("sitemap_url %q, %v", r.SitemapURL, err)
	}
}

// render takes none (the default, stored as no field) or javascript in any case; anything
// else is a VALIDATION_ERROR naming the field. Only javascript costs the rendered price.
func TestAuditRenderMode(t *testing.T) {
	audit, _ := Lookup(string(KindAudit))
	cases := []struct {
		in, want string
		cost     int
	}{{"", "", 15}, {"none", "", 15}, {" NONE ", "", 15}, {" JavaScript ", RenderJavaScript, 30}}
	for _, c := range cases {
		r := &AuditRequest{Domain: "example.com", Render: c.in}
		if err := r.Normalize(Options{}); err != nil || r.Render != c.want || audit.CostOf(r) != c.cost {
			t.Errorf("render %q: %q, %v, cost %d; want %q, cost %d", c.in, r.Render, err, audit.CostOf(r), c.want, c.cost)
		}
	}
	for _, in := range []string{"js", "chromium", "true"} {
		r := &AuditRequest{Domain: "example.com", Render: in}
		err := r.Normalize(Options{})
		if apperr.CodeOf(err) != apperr.Validation || !strings.Contains(err.Error(), "render must be one of none, javascript") {
			t.Errorf("render %q: %v, want a VALIDATION_ERROR naming render", in, err)
		}
	}
	if got := audit.CostText(); got != `15 credits; 30 with "render": "javascript"` {
		t.Errorf("cost text %q", got)
	}
	research, _ := Lookup(string(KindResearch))
	if got := research.CostOf(&ResearchRequest{}); got != 5 || research.CostText() != "5 credits per started 100 rows returned, at least 5 (a later page with no row: 0); "+
		"the call reserves the price of its limit and gives back the rest" {
		t.Errorf("research costs %d (%q)", got, research.CostText())
	}
}
