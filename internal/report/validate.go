// Package report is the analyses the service sells (keyword research, gaps, content audit,
// recommendations, content map): their catalogue (catalog.go: endpoint, price, request and
// run function of each), their requests and the checks the API runs on them once
// (requests.go, their field checks in validate.go), the builders that gather keyword data and crawls and turn them into answers
// with the pure functions of package analysis (one file per analysis, gather.go for what the
// plans share), and the answers' other forms: meta, NO_DATA advice and CSV (meta.go,
// nodata.go, csv.go).
package report

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/hostname"
)

// Options are what validation depends on.
type Options struct {
	// AllowPrivate accepts IP literals, local names and ports as domains (local tests only).
	AllowPrivate bool
}

// Request is an analysis request that can check and normalise itself.
type Request interface {
	// Normalize checks the request and normalises it in place; it is run once, by the API,
	// before the request is stored.
	Normalize(o Options) error
	// CallbackTarget is the callback URL the request carries, or "".
	CallbackTarget() string
	// defaults fills the optional fields a request lacks, without checking anything.
	defaults()
}

// Countries and languages accepted (docs/api.md's keyword-research lists, for every endpoint).
var (
	Countries = []string{"us", "uk", "ca", "au", "de", "fr", "es", "it", "br", "pt", "nl", "in"}
	Languages = []string{"en", "de", "fr", "es", "it", "pt", "nl", "tr"}
)

func oneOf(field, v, def string, allowed []string) (string, error) {
	v = strings.ToLower(strings.TrimSpace(v))
	if v == "" {
		return def, nil
	}
	for _, a := range allowed {
		if v == a {
			return v, nil
		}
	}
	return "", apperr.Invalid("%s must be one of %s", field, strings.Join(allowed, ", "))
}

// checkMarket checks a country and a language (any case), "" meaning the default.
func checkMarket(country, language string) (string, string, error) {
	country, err := oneOf("country", country, defaultCountry, Countries)
	if err != nil {
		return "", "", err
	}
	language, err = oneOf("language", language, defaultLanguage, Languages)
	return country, language, err
}

func intRange(field string, v, min, max int) error {
	if v < min || v > max {
		return apperr.Invalid("%s must be from %d to %d", field, min, max)
	}
	return nil
}

func text(field, v string, max int) (string, error) {
	v = strings.TrimSpace(v)
	if utf8.RuneCountInString(v) > max {
		return "", apperr.Invalid("%s must be at most %d characters", field, max)
	}
	return v, nil
}

func textList(field string, list []string, maxItems, maxLen int) ([]string, error) {
	if len(list) > maxItems {
		return nil, apperr.Invalid("%s may have at most %d items", field, maxItems)
	}
	out := make([]string, 0, len(list))
	seen := map[string]bool{}
	for i, v := range list {
		v = strings.Join(strings.Fields(v), " ")
		if v == "" {
			return nil, apperr.Invalid("%s[%d] must not be empty", field, i)
		}
		if utf8.RuneCountInString(v) > maxLen {
			return nil, apperr.Invalid("%s[%d] must be at most %d characters", field, i, maxLen)
		}
		if k := strings.ToLower(v); !seen[k] {
			seen[k] = true
			out = append(out, v)
		}
	}
	return out, nil
}

// NormalizeDomain turns "example.com", "www.Example.com." or "https://example.com/path" into
// a lower-case ASCII host without the root dot, so a domain and its spellings compare equal.
// Anything that is not a public DNS name (hostname.ToASCII, at least two labels, no local
// suffix, no IP address in any notation, no port) is refused, unless o.AllowPrivate (then IP
// literals, single-label names and a port pass, for local tests).
func NormalizeDomain(field, raw string, o Options) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", apperr.Invalid("%s is required", field)
	}
	if len(s) > 253+8+200 {
		return "", apperr.Invalid("%s is too long", field)
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return "", apperr.Invalid("%s must be a domain like example.com", field)
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if ip := net.ParseIP(host); ip != nil {
		if !o.AllowPrivate {
			return "", apperr.Invalid("%s must be a domain name, not an IP address", field)
		}
		return joinPort(host, port, ip.To4() == nil), nil
	}
	ascii, err := hostname.ToASCII(host)
	switch {
	case errors.Is(err, hostname.ErrNumeric):
		return "", apperr.Invalid("%s must be a domain name, not an IP address", field)
	case err != nil:
		return "", apperr.Invalid("%s is not a valid domain name (labels of letters, digits and hyphens, separated by single dots)", field)
	}
	if !o.AllowPrivate {
		if port != "" {
			return "", apperr.Invalid("%s must not carry a port", field)
		}
		if !strings.Contains(ascii, ".") || localSuffix(ascii) {
			return "", apperr.Invalid("%s must be a public domain name", field)
		}
	}
	return joinPort(ascii, port, false), nil
}

func joinPort(host, port string, v6 bool) string {
	if port == "" {
		return host
	}
	if v6 {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}

// localSuffix reports names that never resolve publicly.
func localSuffix(host string) bool {
	for _, s := range []string{".local", ".localhost", ".internal", ".lan", ".home.arpa", ".invalid"} {
		if strings.HasSuffix(host, s) || host == strings.TrimPrefix(s, ".") {
			return true
		}
	}
	return false
}

// stripWWW is the key under which keyword data stores a domain.
func stripWWW(host string) string { return strings.TrimPrefix(host, "www.") }

func competitorList(list []string, domain string, min, max int, o Options) ([]string, error) {
	if len(list) < min {
		if min == 1 {
			return nil, apperr.Invalid("competitors is required: give 1 to %d competitor domains", max)
		}
	}
	if len(list) > max {
		return nil, apperr.Invalid("competitors may have at most %d domains", max)
	}
	out := make([]string, 0, len(list))
	seen := map[string]bool{stripWWW(domain): true}
	for i, c := range list {
		d, err := NormalizeDomain(fmt.Sprintf("competitors[%d]", i), c, o)
		if err != nil {
			return nil, err
		}
		if d == domain || stripWWW(d) == stripWWW(domain) {
			return nil, apperr.Invalid("competitors[%d] is the domain itself", i)
		}
		if !seen[stripWWW(d)] {
			seen[stripWWW(d)] = true
			out = append(out, d)
		}
	}
	return out, nil
}

// sitemapURL checks an optional sitemap address: absolute http(s), on the audited site. Its
// host is normalised as the domain is, and a fragment (never sent) is dropped.
func sitemapURL(raw, domain string, o Options) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || len(raw) > 2000 {
		return "", apperr.Invalid("sitemap_url must be an absolute http or https URL")
	}
	host, err := NormalizeDomain("sitemap_url", u.Host, o)
	if err != nil {
		return "", err
	}
	if stripWWW(host) != stripWWW(domain) {
		return "", apperr.Invalid("sitemap_url must be on %s", domain)
	}
	u.Host, u.Fragment, u.RawFragment = host, "", ""
	return u.String(), nil
}
