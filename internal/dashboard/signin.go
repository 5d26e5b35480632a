package dashboard

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/auth"
	"github.com/contentapi/contentapi/internal/ratelimit"
)

// Links e-mailed by the dashboard work once, within these times.
const (
	SignInLinkTTL = 15 * time.Minute
	VerifyLinkTTL = 24 * time.Hour
)

const (
	purposeSignIn = "signin"
	purposeVerify = "verify"
)

func (d *Dashboard) signInRoutes(r fiber.Router) {
	r.Get("/signin", d.signInPage)
	r.Post("/signin", d.requestLink)
	r.Get("/link", d.linkPage)
	r.Post("/link", d.useLink)
	r.Post("/signout", d.signedIn, d.signOut)
	r.Post("/signout-all", d.signedIn, d.signOutEverywhere)
}

type signInData struct {
	Email string
	Error string
}

func (d *Dashboard) signInPage(c *fiber.Ctx) error {
	if _, ok := sessionOf(c); ok {
		return c.Redirect(Path, fiber.StatusSeeOther)
	}
	return d.render(c, fiber.StatusOK, "signin", view{Title: "Sign in"})
}

// requestLink e-mails a sign-in link to the address if it has an account, and otherwise an
// e-mail saying it has none. The answer, and the work done for it, are the same either way,
// so the form does not tell who has an account.
func (d *Dashboard) requestLink(c *fiber.Ctx) error {
	email := strings.TrimSpace(c.FormValue("email"))
	norm, err := auth.NormalizeEmail(email)
	if err != nil {
		e, _ := apperr.As(err)
		return d.render(c, fiber.StatusBadRequest, "signin", view{Title: "Sign in",
			Data: signInData{Email: email, Error: e.Message}})
	}
	ctx := c.UserContext()
	for _, lim := range []struct {
		bucket string
		limit  int
	}{
		{"signin-addr:" + ratelimit.AddressBucket(d.clientAddr(c)), d.SignInPerAddress},
		{"signin-email:" + strings.ToLower(norm), d.SignInPerEmail},
	} {
		dec, err := d.Limiter.Allow(ctx, lim.bucket, lim.limit, time.Hour)
		if err != nil {
			return err
		}
		if !dec.Allowed {
			c.Set(fiber.HeaderRetryAfter, fmt.Sprint(dec.RetryAfterSeconds()))
			return d.render(c, fiber.StatusTooManyRequests, "signin", view{Title: "Sign in", Data: signInData{Email: email,
				Error: fmt.Sprintf("Too many sign-in links were asked for. Try again in %d minutes.", (dec.RetryAfterSeconds()+59)/60)}})
		}
	}
	acct, err := d.Accounts.GetByEmail(ctx, norm)
	known := err == nil
	if !known && apperr.CodeOf(err) != apperr.NotFound {
		return err
	}
	// An address without an account takes the same path: a link is stored (for no account,
	// so it signs nobody in) and an e-mail is queued, one saying there is no account. The
	// write and the queueing cost the same either way, so the answer's timing (and a full
	// outbox's refusal) do not tell who has an account.
	link, err := d.issueLink(ctx, uuid.NullUUID{UUID: acct.ID, Valid: known}, purposeSignIn, SignInLinkTTL)
	if err != nil {
		return err
	}
	to, subject, body := acct.Email, "Your ContentAPI sign-in link", "Open this link to sign in to the ContentAPI dashboard:\n\n"+link+
		"\n\nIt works once, within 15 minutes. If you did not ask to sign in, ignore this e-mail.\n"
	if !known {
		to, subject, body = norm, "Your ContentAPI sign-in request", "Someone asked to sign in to the ContentAPI dashboard with this "+
			"address, but there is no account with it. If your account uses another address, ask for a sign-in link for "+
			"that one at "+d.URL+"/signin. If you did not ask to sign in, ignore this e-mail.\n"
	}
	if err := d.Mailer.Send(ctx, to, subject, body); err != nil {
		d.Log.Error("dashboard: send sign-in e-mail", "err", err)
		return apperr.New(apperr.ServiceUnavailable, "We could not send the e-mail just now. Try again in a few minutes.")
	}
	return d.render(c, fiber.StatusOK, "signin_sent", view{Title: "Check your e-mail", Data: norm})
}

// SendVerification e-mails a new account its verification link, which also signs it in to
// the dashboard (registration calls it).
func (d *Dashboard) SendVerification(ctx context.Context, accountID uuid.UUID, email string) error {
	link, err := d.issueLink(ctx, uuid.NullUUID{UUID: accountID, Valid: true}, purposeVerify, VerifyLinkTTL)
	if err != nil {
		return err
	}
	body := "Welcome to ContentAPI. Confirm your e-mail address and open your dashboard:\n\n" + link +
		"\n\nThe link works once, within 24 hours. Afterwards, ask for a sign-in link at " + d.URL + "/signin.\n"
	return d.Mailer.Send(ctx, email, "Confirm your ContentAPI e-mail address", body)
}

// issueLink stores a new one-time link for the account (its digest only) and returns it;
// without an account, a link that signs nobody in.
func (d *Dashboard) issueLink(ctx context.Context, accountID uuid.NullUUID, purpose string, ttl time.Duration) (string, error) {
	secret, value, err := newSecret()
	if err != nil {
		return "", err
	}
	now := d.Clock.Now()
	_, err = d.Pool.Exec(ctx, `
		WITH purged AS (DELETE FROM dashboard_links WHERE expires_at <= $4)
		INSERT INTO dashboard_links (digest, account_id, purpose, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5)`, digest(secret), accountID, purpose, now, now.Add(ttl))
	if err != nil {
		return "", fmt.Errorf("dashboard: issue link: %w", err)
	}
	return d.URL + "/link?token=" + value, nil
}

var errBadLink = apperr.Invalid("This link is not valid: it has expired, was already used, or was copied incompletely. Ask for a new sign-in link.")

// linkPage asks the browser to confirm the sign-in with a button: mail scanners that open
// links do not use them up, and the link works in whichever browser it is opened.
func (d *Dashboard) linkPage(c *fiber.Ctx) error {
	token := strings.Clone(c.Query("token"))
	secret, ok := readSecret(token)
	if !ok {
		return errBadLink
	}
	var purpose string
	err := d.Pool.QueryRow(c.UserContext(), `
		SELECT purpose FROM dashboard_links
		WHERE digest = $1 AND account_id IS NOT NULL AND used_at IS NULL AND expires_at > $2`,
		digest(secret), d.Clock.Now()).Scan(&purpose)
	if errors.Is(err, pgx.ErrNoRows) {
		return errBadLink
	}
	if err != nil {
		return fmt.Errorf("dashboard: read link: %w", err)
	}
	return d.render(c, fiber.StatusOK, "link", view{Title: "Sign in", Data: struct{ Token, Purpose string }{token, purpose}})
}

// useLink spends the link, marks the address verified and signs the browser in.
func (d *Dashboard) useLink(c *fiber.Ctx) error {
	secret, ok := readSecret(c.FormValue("token"))
	if !ok {
		return errBadLink
	}
	var accountID uuid.UUID
	err := d.Pool.QueryRow(c.UserContext(), `
		WITH used AS (
			UPDATE dashboard_links SET used_at = $2 WHERE digest = $1 AND used_at IS NULL AND expires_at > $2
			RETURNING account_id)
		UPDATE accounts a SET email_verified_at = COALESCE(a.email_verified_at, $2)
		FROM used WHERE a.id = used.account_id RETURNING a.id`, digest(secret), d.Clock.Now()).Scan(&accountID)
	if errors.Is(err, pgx.ErrNoRows) {
		return errBadLink
	}
	if err != nil {
		return fmt.Errorf("dashboard: use link: %w", err)
	}
	if err := d.startSession(c, accountID); err != nil {
		return err
	}
	return c.Redirect(Path, fiber.StatusSeeOther)
}

func (d *Dashboard) signOut(c *fiber.Ctx) error {
	s, _ := sessionOf(c)
	if err := d.endSession(c, s); err != nil {
		return err
	}
	return c.Redirect(Path+"/signin", fiber.StatusSeeOther)
}

func (d *Dashboard) signOutEverywhere(c *fiber.Ctx) error {
	s, _ := sessionOf(c)
	if err := d.endAllSessions(c, s); err != nil {
		return err
	}
	return c.Redirect(Path+"/signin", fiber.StatusSeeOther)
}
