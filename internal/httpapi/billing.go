package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/contentapi/contentapi/internal/billing"
)

// billingRoutes mounts /v1/billing. Its errors answer in the billing shape of docs/api.md, except the
// authentication and rate-limit errors, which keep theirs.
func (s *server) billingRoutes(v1 fiber.Router) {
	g := v1.Group("/billing", func(c *fiber.Ctx) error {
		c.Locals(localBilling, true)
		return c.Next()
	})
	g.Post("/checkout", s.authenticate, s.checkout)
	g.Post("/portal", s.authenticate, s.billingPortal)
	// Stripe calls the webhook; its signature, not an API key, authenticates it.
	g.Post("/webhook", s.stripeWebhook)
}

func (s *server) checkout(c *fiber.Ctx) error {
	if !s.Billing.Configured() {
		return billing.NotConfigured()
	}
	var req billing.CheckoutRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	out, err := s.Billing.Checkout(c.UserContext(), principalOf(c).AccountID, req)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"status": "success", "data": out})
}

type portalRequest struct {
	ReturnURL string `json:"return_url"`
}

func (s *server) billingPortal(c *fiber.Ctx) error {
	if !s.Billing.Configured() {
		return billing.NotConfigured()
	}
	var req portalRequest
	if err := decodeOptionalJSON(c, &req); err != nil {
		return err
	}
	out, err := s.Billing.Portal(c.UserContext(), principalOf(c).AccountID, req.ReturnURL)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"status": "success", "data": out})
}

func (s *server) stripeWebhook(c *fiber.Ctx) error {
	if !s.Billing.Configured() {
		return billing.NotConfigured()
	}
	// fasthttp reuses the body buffer after the handler returns; the service keeps nothing,
	// but the copy keeps that true whatever it does.
	payload := append([]byte(nil), c.Body()...)
	if err := s.Billing.HandleWebhook(c.UserContext(), payload, c.Get("Stripe-Signature")); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"received": true})
}
