// Package redact masks credentials in text that is about to be logged: a URL's password and
// the values of query parameters that carry secrets (?password=, ?token=, ?api_key=, ...).
package redact

import (
	"net/url"
	"strings"
)

// Mask replaces a secret.
const Mask = "****"

// secretParams are query parameter names whose values are secrets, compared in lower case;
// names containing secretParts are secrets too.
var (
	secretParams = map[string]bool{"key": true, "pass": true, "pwd": true, "auth": true, "sig": true}
	secretParts  = []string{"password", "passwd", "secret", "token", "apikey", "api_key", "api-key",
		"access_key", "private_key", "signature", "credential", "sslkey"}
)

// SecretParam reports whether a query parameter of this name carries a secret.
func SecretParam(name string) bool {
	n := strings.ToLower(name)
	if secretParams[n] {
		return true
	}
	for _, p := range secretParts {
		if strings.Contains(n, p) {
			return true
		}
	}
	return false
}

// Query masks the values of secret parameters in a raw query string, leaving the rest as
// written (order, encoding, parameters without a value).
func Query(raw string) string {
	if raw == "" {
		return raw
	}
	parts := strings.Split(raw, "&")
	changed := false
	for i, p := range parts {
		name, _, hasValue := strings.Cut(p, "=")
		if decoded, err := url.QueryUnescape(name); err == nil {
			name = decoded
		}
		if hasValue && SecretParam(name) {
			parts[i] = p[:strings.IndexByte(p, '=')+1] + Mask
			changed = true
		}
	}
	if !changed {
		return raw
	}
	return strings.Join(parts, "&")
}

// URL masks the password of a URL's user information (as url.URL.Redacted: "xxxxx") and its
// secret query parameters. A value that is not a URL is returned as it is.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return raw
	}
	u.RawQuery = Query(u.RawQuery)
	return u.Redacted()
}
