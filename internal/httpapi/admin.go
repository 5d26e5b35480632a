package httpapi

import (
	"crypto/subtle"
	"encoding/base64"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"

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

// sameOrigin refuses unsafe requests (POST, PUT, PATCH, DELETE) that a browser sends on
// behalf of another site: the queue dashboard's pause, cancel, archive and delete are such
// requests, and a browser adds a cached Basic login to them whatever page makes them. The
// rule is net/http's CrossOriginProtection: Sec-Fetch-Site must be same-origin or none, or,
// from browsers that do not send it, Origin must name the request's host. Requests with
// neither header (curl, scripts) are not a browser's and pass.
func (s *server) sameOrigin(c *fiber.Ctx) error {
	r, err := adaptor.ConvertRequest(c, false)
	if err != nil {
		return err
	}
	if err := s.crossOrigin.Check(r); err != nil {
		return apperr.New(apperr.Forbidden, "Cross-origin requests cannot change the queues; use the dashboard on this host.")
	}
	return c.Next()
}

// noFraming keeps admin pages out of other sites' frames, where a cached Basic login would
// let a hidden queue dashboard be clicked (clickjacking): CSP frame-ancestors for current
// browsers, X-Frame-Options for older ones. It is set on every answer, refusals included.
func noFraming(c *fiber.Ctx) error {
	c.Set(fiber.HeaderXFrameOptions, "DENY")
	c.Set(fiber.HeaderContentSecurityPolicy, "frame-ancestors 'none'")
	return c.Next()
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
