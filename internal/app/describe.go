package app

import (
	"net/url"

	"github.com/contentapi/contentapi/internal/config"
	"github.com/contentapi/contentapi/internal/redact"
)

// Describe lists every configuration variable with its effective value, secrets masked,
// for the start log.
func Describe(getenv config.Getenv) map[string]string {
	settings := config.Settings(getenv)
	out := make(map[string]string, len(settings))
	for _, s := range settings {
		out[s.Name] = mask(s.Value, s.Secret)
	}
	return out
}

// mask hides a secret variable's value, or, when it is a URL, only the password in it;
// secrets in any URL's query (?password=, ?token=, ...) are hidden too.
func mask(val string, secret bool) string {
	if u, err := url.Parse(val); err == nil && u.Host != "" {
		return redact.URL(val)
	}
	if !secret || val == "" {
		return redact.ConnString(val) // key/value connection strings: password=... masked
	}
	return redact.Mask
}
