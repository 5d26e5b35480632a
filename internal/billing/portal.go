package billing

import (
	"context"
	"strings"

	"github.com/google/uuid"
	"github.com/stripe/stripe-go/v76"

	"github.com/contentapi/contentapi/internal/apperr"
)

// Portal is a Stripe customer portal session: where the account's owner changes plan or
// billing cycle, updates the payment method, reads invoices or cancels.
type Portal struct {
	PortalURL string `json:"portal_url"`
	SessionID string `json:"session_id"`
	ReturnURL string `json:"return_url"`
}

// Portal opens a customer portal session for the account. returnURL, when given, must be an
// absolute HTTPS URL; otherwise the dashboard address is used.
func (s *Service) Portal(ctx context.Context, accountID uuid.UUID, returnURL string) (*Portal, error) {
	if !s.Configured() {
		return nil, NotConfigured()
	}
	ret := s.cfg.DashboardURL
	if strings.TrimSpace(returnURL) != "" {
		var err error
		if ret, err = httpsURL("return_url", returnURL); err != nil {
			return nil, err
		}
	}
	acct, err := s.billingAccount(ctx, accountID)
	if err != nil {
		return nil, err
	}
	if acct.CustomerID == nil {
		return nil, apperr.New(apperr.NoBillingAccount,
			"This account has no billing account yet. Subscribe through POST /v1/billing/checkout first.")
	}
	params := &stripe.BillingPortalSessionParams{Customer: acct.CustomerID, ReturnURL: stripe.String(ret)}
	params.Context = ctx
	ps, err := s.portal.New(params)
	if err != nil {
		return nil, s.providerError("create portal session", err)
	}
	return &Portal{PortalURL: ps.URL, SessionID: ps.ID, ReturnURL: ret}, nil
}
