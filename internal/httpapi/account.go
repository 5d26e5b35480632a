package httpapi

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/auth"
	"github.com/contentapi/contentapi/internal/plan"
	"github.com/contentapi/contentapi/internal/ratelimit"
)

const keyWarning = "Save this API key now: it is shown only once and cannot be retrieved again."

// authenticate checks the bearer key and the account's rate limit, and sets the rate-limit
// headers on the response whatever the outcome.
func (s *server) authenticate(c *fiber.Ctx) error {
	p, d, err := s.Gate.Authenticate(c.UserContext(), c.Get(fiber.HeaderAuthorization))
	setRateHeaders(c, d)
	if err != nil {
		return err
	}
	c.Locals(localPrincipal, p)
	return c.Next()
}

func principalOf(c *fiber.Ctx) auth.Principal {
	p, _ := c.Locals(localPrincipal).(auth.Principal)
	return p
}

type registerRequest struct {
	Email string `json:"email"`
	Name  string `json:"name"`
}

func (s *server) register(c *fiber.Ctx) error {
	d, err := s.Limiter.Allow(c.UserContext(), "register:"+ratelimit.AddressBucket(s.clientAddr(c)), s.RegisterLimit, time.Hour)
	if err != nil {
		return err
	}
	setRateHeaders(c, d)
	if !d.Allowed {
		return &apperr.Error{Code: apperr.RateLimitExceeded, RetryAfter: d.RetryAfterSeconds(),
			Message: "Too many registrations from this address. Retry later."}
	}
	var req registerRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	reg, err := s.Accounts.Register(c.UserContext(), req.Email, req.Name)
	if err != nil {
		return err
	}
	if s.Dashboard != nil {
		// The account and its key exist whatever happens to the e-mail (queued here, sent
		// in the background); without it, a sign-in link asked for on the dashboard
		// verifies the address as well.
		email, _ := auth.NormalizeEmail(req.Email) // Register accepted it
		if err := s.Dashboard.SendVerification(c.UserContext(), reg.AccountID, email); err != nil {
			s.Log.Error("registration: verification e-mail not sent", "account_id", reg.AccountID, "err", err)
		}
	}
	return c.Status(fiber.StatusCreated).JSON(fiber.Map{"success": true, "data": fiber.Map{
		"api_key":    reg.Key,
		"key_prefix": auth.DisplayPrefix(reg.Key),
		"plan":       reg.Plan.Name,
		"credits":    reg.Credits,
		"rate_limit": plan.RateLimitText(reg.Plan.RateLimit),
		"warning":    keyWarning,
	}})
}

// usage answers from the replica's cache while the account's state version is unchanged and
// no grant has expired since; any credit or plan change (a renewed period too) gives the
// account a new version.
func (s *server) usage(c *fiber.Ctx) error {
	p := principalOf(c)
	now := s.Clock.Now()
	if e, ok := s.usageCache.Get(p.AccountID); ok && e.version == p.StateVersion && p.StateVersion != "" &&
		(e.validUntil.IsZero() || now.Before(e.validUntil)) {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(e.body)
	}
	u, err := s.Ledger.Usage(c.UserContext(), p.AccountID)
	if err != nil {
		return err
	}
	body, err := json.Marshal(fiber.Map{"success": true, "data": fiber.Map{
		"plan":              u.Plan,
		"credits_used":      u.Used,
		"credits_limit":     u.Limit(),
		"credits_remaining": u.Balance,
		"period_start":      u.PeriodStart.UTC(),
		"period_end":        u.PeriodEnd.UTC(),
		"rate_limit":        u.RateLimit,
		"recent_calls":      u.Recent,
		"upgrade_url":       s.DashboardURL + "/billing",
	}})
	if err != nil {
		return err
	}
	e := usageEntry{version: p.StateVersion, body: body}
	if u.NextExpiry != nil {
		e.validUntil = *u.NextExpiry
	}
	s.usageCache.Add(p.AccountID, e)
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(body)
}

type usageEntry struct {
	version    string
	validUntil time.Time
	body       []byte
}

func (s *server) account(c *fiber.Ctx) error {
	a, err := s.Accounts.Get(c.UserContext(), principalOf(c).AccountID)
	if err != nil {
		return err
	}
	secret, err := s.Accounts.CallbackSecret(c.UserContext(), a.ID)
	if err != nil {
		return err
	}
	var pending any
	if a.PendingChangeAt != nil {
		pending = fiber.Map{"plan": a.PendingPlan, "billing_cycle": a.PendingBillingCycle, "effective_at": a.PendingChangeAt}
	}
	return c.JSON(fiber.Map{"success": true, "data": fiber.Map{
		"id":                   a.ID,
		"email":                a.Email,
		"plan":                 a.Plan,
		"billing_cycle":        a.BillingCycle,
		"rate_limit":           a.RateLimit,
		"credits_monthly":      a.CreditsMonthly,
		"current_period_start": a.PeriodStart,
		"current_period_end":   a.PeriodEnd,
		"pending_change":       pending,
		"created_at":           a.CreatedAt,
		"callbacks": fiber.Map{
			"signing_secret":   secret,
			"signature_header": "X-ContentAPI-Signature",
			"verification": "Compute HMAC-SHA256 of the raw request body with signing_secret as the key; " +
				"the header is \"sha256=\" followed by its hex digest. Compare in constant time, and drop " +
				"deliveries whose sent_at is old or whose job_id you already processed.",
			"retries": "Non-2xx answers are retried with growing delays for 24 hours.",
		},
	}})
}

type keyView struct {
	auth.Key
	Status string `json:"status"`
}

func (s *server) listKeys(c *fiber.Ctx) error {
	// This replica's buffered last-use times go out first so the list is current.
	_ = s.Gate.FlushLastUsed(c.UserContext())
	keys, err := s.Accounts.ListKeys(c.UserContext(), principalOf(c).AccountID)
	if err != nil {
		return err
	}
	now := s.Clock.Now()
	out := make([]keyView, len(keys))
	for i, k := range keys {
		out[i] = keyView{Key: k, Status: k.Status(now)}
	}
	return c.JSON(fiber.Map{"success": true, "data": fiber.Map{"keys": out, "total": len(out)}})
}

type createKeyRequest struct {
	Name          string `json:"name"`
	ExpiresInDays *int   `json:"expires_in_days"`
}

func (s *server) createKey(c *fiber.Ctx) error {
	var req createKeyRequest
	if err := decodeOptionalJSON(c, &req); err != nil { // every field is optional: no body is {}
		return err
	}
	days := 0
	if req.ExpiresInDays != nil {
		if *req.ExpiresInDays < 1 || *req.ExpiresInDays > 3650 {
			return apperr.Invalid("expires_in_days must be from 1 to 3650")
		}
		days = *req.ExpiresInDays
	}
	k, key, err := s.Accounts.CreateKey(c.UserContext(), principalOf(c).AccountID, strings.TrimSpace(req.Name), days)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(fiber.Map{"success": true, "data": fiber.Map{
		"id": k.ID, "name": k.Name, "api_key": key, "key_prefix": k.KeyPrefix,
		"created_at": k.CreatedAt, "expires_at": k.ExpiresAt, "warning": keyWarning,
	}})
}

func (s *server) revokeKey(c *fiber.Ctx) error {
	id, err := uuid.Parse(c.Params("id"))
	if err != nil {
		return apperr.New(apperr.NotFound, "API key not found")
	}
	k, err := s.Accounts.RevokeKey(c.UserContext(), principalOf(c).AccountID, id)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"success": true, "data": keyView{Key: k, Status: k.Status(s.Clock.Now())}})
}
