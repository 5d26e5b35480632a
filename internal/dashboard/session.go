package dashboard

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contentapi/contentapi/internal/auth"
)

// SessionTTL is how long a browser session lasts after sign-in.
const SessionTTL = 30 * 24 * time.Hour

const (
	sessionCookie = "contentapi_session"
	localSession  = "dashboard.session"
)

// session is the signed-in browser: its account and the secret its cookie carries (the
// key of its CSRF tokens).
type session struct {
	Account auth.Account
	secret  []byte
	digest  []byte
}

// newSecret returns 32 random bytes and their cookie or link form.
func newSecret() ([]byte, string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, "", fmt.Errorf("dashboard: random: %w", err)
	}
	return b, base64.RawURLEncoding.EncodeToString(b), nil
}

// readSecret decodes a cookie or link secret; anything not 32 bytes is no secret of ours.
func readSecret(s string) ([]byte, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 32 {
		return nil, false
	}
	return b, true
}

// digest is what the database keeps of a secret: lookups are equality on a hash, so the
// secret never meets a timing-sensitive comparison.
func digest(secret []byte) []byte {
	sum := sha256.Sum256(secret)
	return sum[:]
}

func sessionOf(c *fiber.Ctx) (session, bool) {
	s, ok := c.Locals(localSession).(session)
	return s, ok
}

// loadSession finds the browser's session, if any, for the handlers after it.
func (d *Dashboard) loadSession(c *fiber.Ctx) error {
	secret, ok := readSecret(c.Cookies(sessionCookie))
	if !ok {
		return c.Next()
	}
	dig := digest(secret)
	var accountID uuid.UUID
	err := d.Pool.QueryRow(c.UserContext(), `
		SELECT account_id FROM dashboard_sessions WHERE digest = $1 AND expires_at > $2`, dig, d.Clock.Now()).
		Scan(&accountID)
	if errors.Is(err, pgx.ErrNoRows) {
		d.clearCookie(c, sessionCookie)
		return c.Next()
	}
	if err != nil {
		return fmt.Errorf("dashboard: load session: %w", err)
	}
	acct, err := d.Accounts.Get(c.UserContext(), accountID)
	if err != nil {
		return err
	}
	c.Locals(localSession, session{Account: acct, secret: secret, digest: dig})
	return c.Next()
}

// signedIn sends a browser without a session to the sign-in page.
func (d *Dashboard) signedIn(c *fiber.Ctx) error {
	if _, ok := sessionOf(c); !ok {
		return c.Redirect(Path+"/signin", fiber.StatusSeeOther)
	}
	return c.Next()
}

// startSession signs the browser in to the account with a fresh session (any session
// cookie it had is replaced, so a planted one is worthless).
func (d *Dashboard) startSession(c *fiber.Ctx, accountID uuid.UUID) error {
	secret, value, err := newSecret()
	if err != nil {
		return err
	}
	now := d.Clock.Now()
	ua := c.Get(fiber.HeaderUserAgent)
	if len(ua) > 200 {
		ua = ua[:200]
	}
	_, err = d.Pool.Exec(c.UserContext(), `
		WITH purged AS (DELETE FROM dashboard_sessions WHERE expires_at <= $3)
		INSERT INTO dashboard_sessions (digest, account_id, created_at, expires_at, user_agent)
		VALUES ($1, $2, $3, $4, $5)`, digest(secret), accountID, now, now.Add(SessionTTL), ua)
	if err != nil {
		return fmt.Errorf("dashboard: start session: %w", err)
	}
	d.setCookie(c, sessionCookie, value, now.Add(SessionTTL))
	c.Locals(localSession, nil)
	return nil
}

// endSession signs this browser out.
func (d *Dashboard) endSession(c *fiber.Ctx, s session) error {
	if _, err := d.Pool.Exec(c.UserContext(), `DELETE FROM dashboard_sessions WHERE digest = $1`, s.digest); err != nil {
		return fmt.Errorf("dashboard: end session: %w", err)
	}
	d.clearCookie(c, sessionCookie)
	return nil
}

// endAllSessions signs the account out in every browser, and voids its links not yet used:
// one waiting in a mailbox someone else reads would otherwise sign them in again.
func (d *Dashboard) endAllSessions(c *fiber.Ctx, s session) error {
	if _, err := d.Pool.Exec(c.UserContext(), `
		WITH voided AS (DELETE FROM dashboard_links WHERE account_id = $1)
		DELETE FROM dashboard_sessions WHERE account_id = $1`, s.Account.ID); err != nil {
		return fmt.Errorf("dashboard: end sessions: %w", err)
	}
	d.clearCookie(c, sessionCookie)
	return nil
}

func (d *Dashboard) setCookie(c *fiber.Ctx, name, value string, expires time.Time) {
	c.Cookie(&fiber.Cookie{Name: name, Value: value, Path: Path, Expires: expires, HTTPOnly: true,
		Secure: d.secure || c.Protocol() == "https", SameSite: fiber.CookieSameSiteLaxMode})
}

func (d *Dashboard) clearCookie(c *fiber.Ctx, name string) {
	c.Cookie(&fiber.Cookie{Name: name, Value: "", Path: Path, Expires: time.Unix(0, 0), MaxAge: -1, HTTPOnly: true,
		Secure: d.secure || c.Protocol() == "https", SameSite: fiber.CookieSameSiteLaxMode})
}
