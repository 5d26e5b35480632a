package dashboard

import (
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/billing"
	"github.com/contentapi/contentapi/internal/plan"
)

func (d *Dashboard) billingRoutes(r fiber.Router) {
	r.Get("/billing", d.signedIn, d.billingPage)
	r.Post("/billing/checkout", d.signedIn, d.checkout)
	r.Post("/billing/portal", d.signedIn, d.portal)
}

// planOffer is a paid plan as the upgrade form shows it.
type planOffer struct {
	plan.Plan
	Monthly, Annual string // prices
}

type billingData struct {
	Configured  bool
	HasCustomer bool
	Offers      []planOffer
	Plan        string // the form's choices, kept after an error
	Cycle       string
	Promo       string
	Error       string
}

func usd(cents int64) string { return fmt.Sprintf("$%d.%02d", cents/100, cents%100) }

func (d *Dashboard) billingPage(c *fiber.Ctx) error {
	var notice string
	switch c.Query("checkout") {
	case "success":
		notice = "Thank you: your payment went through. Your new plan shows here as soon as the payment provider confirms it."
	case "cancelled":
		notice = "Checkout was cancelled; nothing was charged."
	}
	return d.renderBilling(c, fiber.StatusOK, notice, billingData{Plan: "pro", Cycle: billing.Monthly})
}

func (d *Dashboard) renderBilling(c *fiber.Ctx, status int, notice string, data billingData) error {
	s, _ := sessionOf(c)
	data.Configured = d.Billing.Configured()
	data.HasCustomer = s.Account.StripeCustomerID != nil
	for _, p := range []plan.Plan{plan.Pro, plan.Scale} {
		data.Offers = append(data.Offers, planOffer{Plan: p, Monthly: usd(p.PriceMonthly), Annual: usd(p.PriceAnnual)})
	}
	return d.render(c, status, "billing", view{Title: "Billing", Nav: "billing", Notice: notice, Data: data})
}

// checkout opens a Stripe Checkout session through the billing service and sends the
// browser there; refusals (promo code, plan already held) are shown on the form.
func (d *Dashboard) checkout(c *fiber.Ctx) error {
	s, _ := sessionOf(c)
	form := billingData{Plan: c.FormValue("plan"), Cycle: c.FormValue("billing_cycle"), Promo: c.FormValue("promo_code")}
	co, err := d.Billing.Checkout(c.UserContext(), s.Account.ID, billing.CheckoutRequest{
		Plan: form.Plan, BillingCycle: form.Cycle, PromoCode: form.Promo,
		SuccessURL: d.URL + "/billing?checkout=success", CancelURL: d.URL + "/billing?checkout=cancelled",
	})
	if e, ok := apperr.As(err); ok {
		form.Error = e.Message
		if e.Code == apperr.InvalidURL {
			form.Error = "Checkout needs the dashboard to be served over HTTPS (DASHBOARD_URL)."
		}
		return d.renderBilling(c, statusOf(e.Code), "", form)
	}
	if err != nil {
		return err
	}
	return c.Redirect(co.CheckoutURL, fiber.StatusSeeOther)
}

// portal opens the Stripe customer portal (cards, invoices, plan changes, cancellation).
func (d *Dashboard) portal(c *fiber.Ctx) error {
	s, _ := sessionOf(c)
	ret := ""
	if d.secure {
		ret = d.URL + "/billing"
	}
	p, err := d.Billing.Portal(c.UserContext(), s.Account.ID, ret)
	if err != nil {
		return err
	}
	return c.Redirect(p.PortalURL, fiber.StatusSeeOther)
}
