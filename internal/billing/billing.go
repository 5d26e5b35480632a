// Package billing sells the paid plans through Stripe: Checkout sessions for upgrades, the
// customer portal, and the signed webhook events that move accounts between plans and grant
// their credits. Only stripe-go talks to Stripe; its base URL is configurable so tests run
// against stripe-mock.
package billing

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stripe/stripe-go/v76"
	portalsession "github.com/stripe/stripe-go/v76/billingportal/session"
	checkoutsession "github.com/stripe/stripe-go/v76/checkout/session"
	"github.com/stripe/stripe-go/v76/promotioncode"
	"github.com/stripe/stripe-go/v76/subscription"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/credits"
	"github.com/contentapi/contentapi/internal/plan"
)

// Billing cycles.
const (
	Monthly = "monthly"
	Annual  = "annual"
)

// CheckoutLifetime is how long a checkout session can be paid (docs/api.md: 24 hours).
const CheckoutLifetime = 24 * time.Hour

// Prices are the Stripe price ids of each paid plan and cycle.
type Prices struct {
	ProMonthly, ProAnnual, ScaleMonthly, ScaleAnnual string
}

// ID returns the price id of a plan and cycle, "" when not configured.
func (p Prices) ID(planName, cycle string) string {
	switch planName + "/" + cycle {
	case "pro/monthly":
		return p.ProMonthly
	case "pro/annual":
		return p.ProAnnual
	case "scale/monthly":
		return p.ScaleMonthly
	case "scale/annual":
		return p.ScaleAnnual
	}
	return ""
}

// Lookup returns the plan and cycle a price id sells.
func (p Prices) Lookup(priceID string) (planName, cycle string, ok bool) {
	if priceID == "" {
		return "", "", false
	}
	for _, pc := range [...][2]string{{"pro", Monthly}, {"pro", Annual}, {"scale", Monthly}, {"scale", Annual}} {
		if p.ID(pc[0], pc[1]) == priceID {
			return pc[0], pc[1], true
		}
	}
	return "", "", false
}

// Config is what the billing service needs to reach Stripe.
type Config struct {
	SecretKey     string
	WebhookSecret string
	// APIBase is Stripe's API address (STRIPE_API_BASE); stripe-mock's in tests.
	APIBase      string
	Prices       Prices
	DashboardURL string
	// HTTPClient, when set, is used for Stripe calls (default: 30 s timeout).
	HTTPClient *http.Client
}

// Configured reports whether both Stripe keys are present.
func (c Config) Configured() bool { return c.SecretKey != "" && c.WebhookSecret != "" }

// AccountNotifier is told after a committed plan change, so every replica applies the new
// rate limit on the account's next request (auth.Accounts).
type AccountNotifier interface {
	AccountChanged(ctx context.Context, id uuid.UUID) error
}

// Service is the billing service.
type Service struct {
	cfg      Config
	pool     *pgxpool.Pool
	ledger   *credits.Ledger
	accounts AccountNotifier
	clock    clock.Clock
	log      *slog.Logger

	sessions      checkoutsession.Client
	portal        portalsession.Client
	promos        promotioncode.Client
	subscriptions subscription.Client
}

// New returns the billing service. Without Stripe keys it still answers, with
// BILLING_NOT_CONFIGURED.
func New(cfg Config, pool *pgxpool.Pool, ledger *credits.Ledger, accounts AccountNotifier, clk clock.Clock, log *slog.Logger) *Service {
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	bc := &stripe.BackendConfig{HTTPClient: hc, MaxNetworkRetries: stripe.Int64(2),
		LeveledLogger: stripeLogger{log: log}}
	if cfg.APIBase != "" {
		bc.URL = stripe.String(cfg.APIBase)
	}
	b := stripe.GetBackendWithConfig(stripe.APIBackend, bc)
	return &Service{
		cfg: cfg, pool: pool, ledger: ledger, accounts: accounts, clock: clk, log: log,
		sessions:      checkoutsession.Client{B: b, Key: cfg.SecretKey},
		portal:        portalsession.Client{B: b, Key: cfg.SecretKey},
		promos:        promotioncode.Client{B: b, Key: cfg.SecretKey},
		subscriptions: subscription.Client{B: b, Key: cfg.SecretKey},
	}
}

// Configured reports whether the deployment has Stripe keys.
func (s *Service) Configured() bool { return s != nil && s.cfg.Configured() }

// NotConfigured is the BILLING_NOT_CONFIGURED error.
func NotConfigured() error {
	return apperr.New(apperr.BillingNotConfigured, "Billing is not configured on this deployment.")
}

// allocation is the credits one paid billing period brings: a month's, or twelve months'
// upfront on annual billing (docs/api.md's credit rules).
func allocation(p plan.Plan, cycle string) int {
	if cycle == Annual {
		return 12 * p.CreditsMonthly
	}
	return p.CreditsMonthly
}

// periodAfter is the end of a billing period of the cycle starting at start.
func periodAfter(start time.Time, cycle string) time.Time {
	if cycle == Annual {
		return clock.AddMonths(start, 12)
	}
	return clock.AddMonths(start, 1)
}

// price is the plan's list price in cents for the cycle.
func price(p plan.Plan, cycle string) int64 {
	if cycle == Annual {
		return p.PriceAnnual
	}
	return p.PriceMonthly
}

// formatUSD writes cents as "$1,990.00".
func formatUSD(cents int64) string {
	neg := cents < 0
	if neg {
		cents = -cents
	}
	whole := fmt.Sprint(cents / 100)
	for i := len(whole) - 3; i > 0; i -= 3 {
		whole = whole[:i] + "," + whole[i:]
	}
	out := fmt.Sprintf("$%s.%02d", whole, cents%100)
	if neg {
		out = "-" + out
	}
	return out
}

// providerError logs a failed Stripe call and answers 503: the caller may retry.
func (s *Service) providerError(op string, err error) error {
	s.log.Error("stripe call failed", "op", op, "err", err)
	return apperr.New(apperr.ServiceUnavailable, "The payment provider could not be reached. Retry shortly.")
}

// stripeLogger sends stripe-go's own log lines to the service log, quietly.
type stripeLogger struct{ log *slog.Logger }

func (l stripeLogger) Debugf(format string, v ...any) {
	l.log.Debug("stripe: " + fmt.Sprintf(format, v...))
}
func (l stripeLogger) Infof(format string, v ...any) {
	l.log.Debug("stripe: " + fmt.Sprintf(format, v...))
}
func (l stripeLogger) Warnf(format string, v ...any) {
	l.log.Warn("stripe: " + fmt.Sprintf(format, v...))
}
func (l stripeLogger) Errorf(format string, v ...any) {
	l.log.Warn("stripe: " + fmt.Sprintf(format, v...))
}
