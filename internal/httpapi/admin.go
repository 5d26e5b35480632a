package httpapi

import (
	"crypto/subtle"
	"encoding/base64"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/contentapi/contentapi/internal/apperr"
)

// adminOnly lets through requests carrying ADMIN_TOKEN, as a bearer token (scrapers) or as
// the password of HTTP Basic authentication (a browser opening the queue dashboard). With no
// token configured the admin routes do not exist.
func (s *server) adminOnly(c *fiber.Ctx) error {
	if s.AdminToken == "" {
		return fiber.ErrNotFound
	}
	if s.adminAuthorized(c.Get(fiber.HeaderAuthorization)) {
		return c.Next()
	}
	c.Set(fiber.HeaderWWWAuthenticate, `Basic realm="contentapi admin"`)
	return apperr.New(apperr.Unauthorized, "Admin routes need the ADMIN_TOKEN, as a bearer token or a Basic password.")
}

func (s *server) adminAuthorized(header string) bool {
	scheme, value, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok {
		return false
	}
	var given string
	switch strings.ToLower(scheme) {
	case "bearer":
		given = strings.TrimSpace(value)
	case "basic":
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(value))
		if err != nil {
			return false
		}
		_, given, _ = strings.Cut(string(raw), ":")
	default:
		return false
	}
	return subtle.ConstantTimeCompare([]byte(given), []byte(s.AdminToken)) == 1
}
