package dashboard

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"

	"github.com/contentapi/contentapi/internal/apperr"
)

// preSessionCookie holds the secret that keys CSRF tokens of forms shown before sign-in
// (the sign-in request, a link's confirmation).
const preSessionCookie = "contentapi_csrf"

// csrfKey is the secret this browser's form tokens derive from: its session's, or before
// sign-in a random one in its own cookie (set here when missing).
func (d *Dashboard) csrfKey(c *fiber.Ctx, create bool) []byte {
	if s, ok := sessionOf(c); ok {
		return s.secret
	}
	if secret, ok := readSecret(c.Cookies(preSessionCookie)); ok {
		return secret
	}
	if !create {
		return nil
	}
	secret, value, err := newSecret()
	if err != nil {
		return nil
	}
	d.setCookie(c, preSessionCookie, value, d.Clock.Now().Add(SessionTTL))
	return secret
}

// csrfToken is the synchronizer token forms carry: an HMAC of a fixed label under the
// browser's session (or pre-session) secret, which a page of another site can neither read
// nor compute.
func (d *Dashboard) csrfToken(c *fiber.Ctx) string {
	key := d.csrfKey(c, true)
	if key == nil {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(csrfMAC(key))
}

func csrfMAC(key []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("contentapi dashboard csrf"))
	return m.Sum(nil)
}

// sameOrigin refuses unsafe requests sent by another site (net/http's CrossOriginProtection:
// Sec-Fetch-Site, or Origin against Host), then requires the CSRF token in the form's body.
func (d *Dashboard) sameOrigin(c *fiber.Ctx) error {
	switch c.Method() {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
		return c.Next()
	}
	forbidden := apperr.New(apperr.Forbidden, "This form has expired or came from another site. Go back, reload the page and try again.")
	r, err := adaptor.ConvertRequest(c, false)
	if err != nil {
		return err
	}
	if err := d.crossOrigin.Check(r); err != nil {
		return forbidden
	}
	key := d.csrfKey(c, false)
	// The token is read from the form's body only: in a query string it would reach access
	// logs, browser history and Referer headers (c.FormValue reads the query first).
	given, err := base64.RawURLEncoding.DecodeString(string(c.Request().PostArgs().Peek("csrf")))
	if key == nil || err != nil || !hmac.Equal(given, csrfMAC(key)) {
		return forbidden
	}
	return c.Next()
}
