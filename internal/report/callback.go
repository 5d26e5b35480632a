package report

import (
	"net/url"
	"strings"

	"github.com/contentapi/contentapi/internal/apperr"
)

// Callback is the optional completion callback every analysis request may carry: when the
// job ends, the worker POSTs its result there, signed with the account's secret.
type Callback struct {
	CallbackURL string `json:"callback_url,omitempty"`
}

// CallbackTarget returns the normalised callback URL, or "".
func (c *Callback) CallbackTarget() string { return c.CallbackURL }

// normalizeCallback accepts an absolute HTTPS URL on a public host (plain http and any host
// only with AllowPrivate, for local tests). The address is checked again when delivering.
func (c *Callback) normalizeCallback(o Options) error {
	raw := strings.TrimSpace(c.CallbackURL)
	if raw == "" {
		c.CallbackURL = ""
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || len(raw) > 2000 || u.Fragment != "" {
		return apperr.Invalid("callback_url must be an absolute https URL")
	}
	if u.Scheme != "https" && !(o.AllowPrivate && u.Scheme == "http") {
		return apperr.Invalid("callback_url must use https")
	}
	host, err := NormalizeDomain("callback_url", u.Host, o)
	if err != nil {
		return err
	}
	u.Host = host
	c.CallbackURL = u.String()
	return nil
}
