package httpapi

import (
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/contentapi/contentapi/internal/report"
)

// endpoints is the service information document's map of free operations; the analyses,
// with their true costs, come from report.Catalog.
var endpoints = []struct{ route, text string }{
	{"POST /v1/auth/register", "Create a free account and its first API key (0 credits)"},
	{"GET /v1/usage", "Plan, credits and recent calls (0 credits)"},
	{"GET /v1/account", "Account details and any pending plan change (0 credits)"},
	{"GET /v1/keys", "List API keys (0 credits)"},
	{"POST /v1/keys", "Create an API key, shown once (0 credits)"},
	{"DELETE /v1/keys/{id}", "Revoke an API key (0 credits)"},
	{"GET /v1/jobs", "Your recent analysis jobs, newest first, with their credits (0 credits)"},
	{"GET /v1/jobs/{id}", "Status and result of an analysis job (0 credits)"},
	{"GET /v1/openapi.json", "The OpenAPI 3.1 description of this API (0 credits)"},
	{"GET /docs", "Human-readable API reference (0 credits)"},
	{"POST /v1/billing/checkout", "Create a checkout session to upgrade (0 credits)"},
	{"POST /v1/billing/portal", "Open the billing portal to change or cancel a plan (0 credits)"},
}

func (s *server) info(c *fiber.Ctx) error {
	m := make(map[string]string, len(endpoints)+len(report.Catalog))
	for _, e := range endpoints {
		m[e.route] = e.text
	}
	for _, a := range report.Catalog {
		m[a.Method+" "+a.Path] = fmt.Sprintf("%s (%s)", a.Summary, a.CostText())
	}
	return c.JSON(fiber.Map{
		"name":          "Content Strategy API",
		"version":       Version,
		"documentation": s.DocsURL,
		"base_url":      s.PublicBaseURL,
		"endpoints":     m,
		"status":        "operational",
	})
}
