// Package redact masks credentials in text that is about to be logged: a URL's password, the
// values of query parameters that carry secrets (?password=, ?token=, ?api_key=, ...), and
// the passwords of key/value connection strings (host=db password=...).
package redact

import (
	"net/url"
	"regexp"
	"strings"
)

// Mask replaces a secret.
const Mask = "****"

// secretParams are query parameter names whose values are secrets, compared in lower case;
// names containing secretParts are secrets too.
var (
	secretParams = map[string]bool{"key": true, "pass": true, "pwd": true, "auth": true, "sig": true}
	secretParts  = []string{"password", "passwd", "secret", "token", "apikey", "api_key", "api-key",
		"access_key", "private_key", "signature", "credential", "sslkey", "csrf"}
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

var (
	// userinfoRE finds a URL's user:password@, even in a URL that does not parse; the
	// password runs to the last @ before a space or quote, so that one holding an @ is
	// masked whole.
	userinfoRE = regexp.MustCompile("([A-Za-z][A-Za-z0-9+.-]*://[^:/?#@\\s\"'`]*):[^\\s\"'`]*@")
	// queryParamRE finds a parameter of a URL's query.
	queryParamRE = regexp.MustCompile(`([?&])([^=&#\s"'` + "`" + `]+)=([^&#\s"'` + "`" + `]*)`)
	// keyValueRE finds a keyword = value setting of a libpq connection string, its value
	// single-quoted (with backslash escapes) or running to the next space.
	keyValueRE = regexp.MustCompile(`(^|[\s(,;"'` + "`" + `])([A-Za-z_][A-Za-z0-9_.-]*)(\s*=\s*)('(?:[^'\\]|\\.)*'?|\S*)`)
)

// ConnString masks the passwords in a connection string, a URL (postgres://app:pw@db/app,
// ?password=pw) or key/value (host=db password=pw), or in a text quoting one, such as an
// error message. A URL need not parse: the strings that reach error messages are often the
// ones that did not. The rest stays as written, so a mistake in it can still be seen.
func ConnString(s string) string {
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && u.Host != "" {
		return URL(s)
	}
	s = userinfoRE.ReplaceAllString(s, "${1}:xxxxx@")
	s = queryParamRE.ReplaceAllStringFunc(s, func(m string) string {
		p := queryParamRE.FindStringSubmatch(m)
		if name, err := url.QueryUnescape(p[2]); err == nil && SecretParam(name) || SecretParam(p[2]) {
			return p[1] + p[2] + "=" + Mask
		}
		return m
	})
	return keyValueRE.ReplaceAllStringFunc(s, func(m string) string {
		p := keyValueRE.FindStringSubmatch(m)
		if SecretParam(p[2]) {
			return p[1] + p[2] + p[3] + Mask
		}
		return m
	})
}

// Error is err with ConnString applied to its message; errors.Is and errors.As still see
// err beneath it.
func Error(err error) error {
	if err == nil {
		return nil
	}
	msg := ConnString(err.Error())
	if msg == err.Error() {
		return err
	}
	return &maskedError{msg: msg, err: err}
}

type maskedError struct {
	msg string
	err error
}

func (e *maskedError) Error() string { return e.msg }
func (e *maskedError) Unwrap() error { return e.err }
