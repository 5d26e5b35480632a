package dashboard

import (
	"math"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/auth"
)

func (d *Dashboard) keyRoutes(r fiber.Router) {
	r.Get("/keys", d.signedIn, d.keysPage)
	r.Post("/keys", d.signedIn, d.createKey)
	r.Post("/keys/:id/roll", d.signedIn, d.rollKey)
	r.Post("/keys/:id/revoke", d.signedIn, d.revokeKey)
}

type keyRow struct {
	auth.Key
	Status string
}

type keysData struct {
	Keys []keyRow
	// NewKey is a key just created or rolled, shown this once.
	NewKey     string
	NewKeyName string
	Error      string
	Name       string
}

func (d *Dashboard) keysPage(c *fiber.Ctx) error {
	return d.renderKeys(c, fiber.StatusOK, keysData{})
}

func (d *Dashboard) renderKeys(c *fiber.Ctx, status int, data keysData) error {
	s, _ := sessionOf(c)
	// This replica's buffered last-use times and call counts go out first.
	if err := d.Gate.FlushLastUsed(c.UserContext()); err != nil {
		d.Log.Warn("dashboard: flush key use", "err", err)
	}
	keys, err := d.Accounts.ListKeys(c.UserContext(), s.Account.ID)
	if err != nil {
		return err
	}
	now := d.Clock.Now()
	for _, k := range keys {
		data.Keys = append(data.Keys, keyRow{Key: k, Status: k.Status(now)})
	}
	return d.render(c, status, "keys", view{Title: "API keys", Nav: "keys", Data: data})
}

// expiryDays reads the form's expiry: empty or 0 for a key that never expires.
func expiryDays(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 3650 {
		return 0, apperr.Invalid("Expiry must be a number of days from 1 to 3650, or never.")
	}
	return n, nil
}

func (d *Dashboard) createKey(c *fiber.Ctx) error {
	s, _ := sessionOf(c)
	name := strings.TrimSpace(c.FormValue("name"))
	days, err := expiryDays(c.FormValue("expires_in_days"))
	if err == nil && name == "" {
		err = apperr.Invalid("Give the key a name that says where it is used, like \"production server\".")
	}
	var k auth.Key
	var key string
	if err == nil {
		k, key, err = d.Accounts.CreateKey(c.UserContext(), s.Account.ID, name, days)
	}
	if e, ok := apperr.As(err); ok && e.Code == apperr.Validation {
		// The name is shown again to be corrected, as text the page can hold.
		return d.renderKeys(c, fiber.StatusBadRequest, keysData{Error: e.Message, Name: strings.ToValidUTF8(name, "\uFFFD")})
	}
	if err != nil {
		return err
	}
	return d.renderKeys(c, fiber.StatusCreated, keysData{NewKey: key, NewKeyName: k.Name})
}

// routeKey finds the key the route names among the account's keys, which it returns too.
func (d *Dashboard) routeKey(c *fiber.Ctx) (session, auth.Key, []auth.Key, error) {
	s, _ := sessionOf(c)
	keys, err := d.Accounts.ListKeys(c.UserContext(), s.Account.ID)
	if err != nil {
		return s, auth.Key{}, nil, err
	}
	if id, err := uuid.Parse(c.Params("id")); err == nil {
		for _, k := range keys {
			if k.ID == id {
				return s, k, keys, nil
			}
		}
	}
	return s, auth.Key{}, nil, apperr.New(apperr.NotFound, "API key not found.")
}

// rollKey replaces a key by a new one with the same name and lifetime, then revokes it.
func (d *Dashboard) rollKey(c *fiber.Ctx) error {
	s, old, _, err := d.routeKey(c)
	if err != nil {
		return err
	}
	if old.Status(d.Clock.Now()) == "revoked" {
		return apperr.Invalid("This key is already revoked; create a new one instead.")
	}
	days := 0
	if old.ExpiresAt != nil {
		days = max(1, int(math.Round(old.ExpiresAt.Sub(old.CreatedAt).Hours()/24)))
	}
	k, key, err := d.Accounts.CreateKey(c.UserContext(), s.Account.ID, old.Name, days)
	if err != nil {
		return err
	}
	if _, err := d.Accounts.RevokeKey(c.UserContext(), s.Account.ID, old.ID); err != nil {
		return err
	}
	return d.renderKeys(c, fiber.StatusCreated, keysData{NewKey: key, NewKeyName: k.Name})
}

// revokeKey revokes a key; the account's last active key only once the form confirms it.
func (d *Dashboard) revokeKey(c *fiber.Ctx) error {
	s, k, keys, err := d.routeKey(c)
	if err != nil {
		return err
	}
	now := d.Clock.Now()
	active := 0
	for _, other := range keys {
		if other.Status(now) == "active" {
			active++
		}
	}
	if active == 1 && k.Status(now) == "active" && c.FormValue("confirm") != "yes" {
		return d.render(c, fiber.StatusOK, "revoke_confirm", view{Title: "Revoke your last key", Nav: "keys", Data: k})
	}
	if _, err := d.Accounts.RevokeKey(c.UserContext(), s.Account.ID, k.ID); err != nil {
		return err
	}
	return c.Redirect(Path+"/keys", fiber.StatusSeeOther)
}
