package billing

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stripe/stripe-go/v76"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/plan"
)

// Limits of the checkout request (docs/api.md).
const (
	maxPromoCode     = 64
	maxMetadataKeys  = 20
	maxMetadataKey   = 40
	maxMetadataValue = 500
	maxURL           = 2048
)

// MetaAccountID is the subscription metadata key naming the account, so subscription events
// can be tied to it even before the checkout completion arrives. Callers may not use it.
const MetaAccountID = "contentapi_account_id"

// CheckoutRequest is the body of POST /v1/billing/checkout.
type CheckoutRequest struct {
	Plan         string         `json:"plan"`
	BillingCycle string         `json:"billing_cycle"`
	SuccessURL   string         `json:"success_url"`
	CancelURL    string         `json:"cancel_url"`
	PromoCode    string         `json:"promo_code"`
	Metadata     map[string]any `json:"metadata"`
}

// Checkout is the answer to a checkout request.
type Checkout struct {
	CheckoutURL string      `json:"checkout_url"`
	SessionID   string      `json:"session_id"`
	PlanDetails PlanDetails `json:"plan_details"`
	ExpiryTime  time.Time   `json:"expiry_time"`
}

// PlanDetails describes what is being bought.
type PlanDetails struct {
	PlanName       string    `json:"plan_name"`
	CreditsMonthly int       `json:"credits_monthly"`
	RateLimit      int       `json:"rate_limit"`
	Price          Price     `json:"price"`
	BillingCycle   string    `json:"billing_cycle"`
	Discount       *Discount `json:"discount,omitempty"`
}

// Price is an amount in cents of a currency.
type Price struct {
	Amount    int64  `json:"amount"`
	Currency  string `json:"currency"`
	Formatted string `json:"formatted"`
}

// Discount is what an applied promotion code takes off the first payment.
type Discount struct {
	Code               string  `json:"code"`
	DiscountAmount     int64   `json:"discount_amount"`
	DiscountPercentage float64 `json:"discount_percentage"`
}

type checkoutInput struct {
	plan     plan.Plan
	cycle    string
	success  string
	cancel   string
	promo    string
	metadata map[string]string
}

// validate checks the request and normalises it; the first problem found is returned.
func (r CheckoutRequest) validate() (checkoutInput, error) {
	var in checkoutInput
	name := strings.ToLower(strings.TrimSpace(r.Plan))
	switch name {
	case "pro", "scale":
		in.plan, _ = plan.Lookup(name)
	case "":
		return in, apperr.New(apperr.InvalidPlan, "plan is required and must be pro or scale.")
	default:
		return in, apperr.New(apperr.InvalidPlan, "plan must be pro or scale.")
	}
	switch in.cycle = strings.ToLower(strings.TrimSpace(r.BillingCycle)); in.cycle {
	case "":
		in.cycle = Monthly
	case Monthly, Annual:
	default:
		return in, apperr.Invalid("billing_cycle must be monthly or annual")
	}
	var err error
	if in.success, err = httpsURL("success_url", r.SuccessURL); err != nil {
		return in, err
	}
	if in.cancel, err = httpsURL("cancel_url", r.CancelURL); err != nil {
		return in, err
	}
	in.promo = strings.TrimSpace(r.PromoCode)
	if utf8.RuneCountInString(in.promo) > maxPromoCode {
		return in, apperr.Invalid("promo_code must be at most %d characters", maxPromoCode)
	}
	if in.metadata, err = checkMetadata(r.Metadata); err != nil {
		return in, err
	}
	return in, nil
}

// httpsURL accepts an absolute https URL with a host.
func httpsURL(field, raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", apperr.New(apperr.InvalidURL, "%s is required and must be an absolute HTTPS URL.", field)
	}
	if len(raw) > maxURL {
		return "", apperr.New(apperr.InvalidURL, "%s must be at most %d characters.", field, maxURL)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Hostname() == "" || u.User != nil || u.Opaque != "" {
		return "", apperr.New(apperr.InvalidURL, "%s must be an absolute HTTPS URL like https://example.com/done.", field)
	}
	return raw, nil
}

func checkMetadata(m map[string]any) (map[string]string, error) {
	if len(m) > maxMetadataKeys {
		return nil, apperr.Invalid("metadata must have at most %d keys", maxMetadataKeys)
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		switch {
		case k == "" || strings.TrimSpace(k) == "":
			return nil, apperr.Invalid("metadata keys must not be empty")
		case utf8.RuneCountInString(k) > maxMetadataKey:
			return nil, apperr.Invalid("metadata keys must be at most %d characters", maxMetadataKey)
		case strings.ContainsAny(k, "[]"):
			return nil, apperr.Invalid("metadata keys must not contain square brackets")
		case k == MetaAccountID:
			return nil, apperr.Invalid("metadata key %s is reserved", MetaAccountID)
		}
		s, ok := v.(string)
		if !ok {
			return nil, apperr.Invalid("metadata values must be strings (metadata.%s)", k)
		}
		if utf8.RuneCountInString(s) > maxMetadataValue {
			return nil, apperr.Invalid("metadata values must be at most %d characters (metadata.%s)", maxMetadataValue, k)
		}
		out[k] = s
	}
	return out, nil
}

// billingAccount is what checkout and the portal need to know of an account.
type billingAccount struct {
	ID             uuid.UUID
	Email          string
	Plan           string
	Cycle          string
	CustomerID     *string
	SubscriptionID *string
}

func (s *Service) billingAccount(ctx context.Context, id uuid.UUID) (billingAccount, error) {
	var a billingAccount
	err := s.pool.QueryRow(ctx, `
		SELECT id, email, plan, billing_cycle, stripe_customer_id, stripe_subscription_id FROM accounts WHERE id = $1`,
		id).Scan(&a.ID, &a.Email, &a.Plan, &a.Cycle, &a.CustomerID, &a.SubscriptionID)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, apperr.New(apperr.NotFound, "account not found")
	}
	if err != nil {
		return a, fmt.Errorf("billing: read account: %w", err)
	}
	return a, nil
}

// Checkout creates a Stripe Checkout session for the account to subscribe to a paid plan.
func (s *Service) Checkout(ctx context.Context, accountID uuid.UUID, req CheckoutRequest) (*Checkout, error) {
	if !s.Configured() {
		return nil, NotConfigured()
	}
	in, err := req.validate()
	if err != nil {
		return nil, err
	}
	acct, err := s.billingAccount(ctx, accountID)
	if err != nil {
		return nil, err
	}
	if err := checkNotSubscribed(acct, in.plan); err != nil {
		return nil, err
	}
	priceID := s.cfg.Prices.ID(in.plan.Name, in.cycle)
	if priceID == "" {
		return nil, apperr.New(apperr.BillingNotConfigured, "The %s plan with %s billing is not offered on this deployment.", in.plan.Name, in.cycle)
	}
	amount := price(in.plan, in.cycle)
	details := PlanDetails{
		PlanName: in.plan.Name, CreditsMonthly: in.plan.CreditsMonthly, RateLimit: in.plan.RateLimit,
		Price:        Price{Amount: amount, Currency: "usd", Formatted: formatUSD(amount)},
		BillingCycle: in.cycle,
	}
	now := s.clock.Now()
	expires := now.Add(CheckoutLifetime).Truncate(time.Second)
	subMeta := make(map[string]string, len(in.metadata)+1)
	for k, v := range in.metadata {
		subMeta[k] = v
	}
	subMeta[MetaAccountID] = acct.ID.String()
	params := &stripe.CheckoutSessionParams{
		Params:            stripe.Params{Context: ctx},
		Mode:              stripe.String(string(stripe.CheckoutSessionModeSubscription)),
		LineItems:         []*stripe.CheckoutSessionLineItemParams{{Price: stripe.String(priceID), Quantity: stripe.Int64(1)}},
		SuccessURL:        stripe.String(in.success),
		CancelURL:         stripe.String(in.cancel),
		ClientReferenceID: stripe.String(acct.ID.String()),
		Metadata:          map[string]string{"account_id": acct.ID.String(), "plan": in.plan.Name, "billing_cycle": in.cycle},
		SubscriptionData:  &stripe.CheckoutSessionSubscriptionDataParams{Metadata: subMeta},
		ExpiresAt:         stripe.Int64(expires.Unix()),
	}
	if acct.CustomerID != nil {
		params.Customer = acct.CustomerID
	} else {
		params.CustomerEmail = stripe.String(acct.Email)
	}
	if in.promo != "" {
		pc, d, err := s.promotion(ctx, in.promo, amount, acct, now)
		if err != nil {
			return nil, err
		}
		params.Discounts = []*stripe.CheckoutSessionDiscountParams{{PromotionCode: stripe.String(pc.ID)}}
		details.Discount = &d
	}
	sess, err := s.sessions.New(params)
	if err != nil {
		return nil, s.providerError("create checkout session", err)
	}
	if sess.ExpiresAt > 0 {
		expires = time.Unix(sess.ExpiresAt, 0)
	}
	s.log.Info("checkout session created", "account_id", acct.ID, "session_id", sess.ID, "plan", in.plan.Name, "billing_cycle", in.cycle)
	return &Checkout{CheckoutURL: sess.URL, SessionID: sess.ID, PlanDetails: details, ExpiryTime: expires.UTC()}, nil
}

// checkNotSubscribed refuses a checkout that would give the account a second subscription
// it cannot want: the plan it already has, or a lower one (which the billing portal changes
// at the next billing period). Moving up from pro to scale is allowed.
func checkNotSubscribed(acct billingAccount, want plan.Plan) error {
	cur, err := plan.Lookup(acct.Plan)
	if err != nil {
		return fmt.Errorf("billing: account %s: %w", acct.ID, err)
	}
	if cur.Name == plan.Enterprise.Name {
		return apperr.New(apperr.AlreadySubscribed, "This account is on an enterprise arrangement; contact support to change it.")
	}
	if acct.SubscriptionID == nil || cur.Rank == plan.Free.Rank {
		return nil
	}
	if cur.Name == want.Name {
		return apperr.New(apperr.AlreadySubscribed,
			"This account already has an active %s subscription. Change its billing cycle in the billing portal (POST /v1/billing/portal).", cur.Name)
	}
	if want.Rank < cur.Rank {
		return apperr.New(apperr.AlreadySubscribed,
			"This account has an active %s subscription. Move to a lower plan in the billing portal (POST /v1/billing/portal); it takes effect at the next billing period.", cur.Name)
	}
	return nil
}

// promotion finds the active Stripe promotion code named code and what it takes off amount.
func (s *Service) promotion(ctx context.Context, code string, amount int64, acct billingAccount, now time.Time) (*stripe.PromotionCode, Discount, error) {
	params := &stripe.PromotionCodeListParams{Code: stripe.String(code), Active: stripe.Bool(true)}
	params.Context = ctx
	params.Limit = stripe.Int64(10)
	params.Single = true
	it := s.promos.List(params)
	for it.Next() {
		pc := it.PromotionCode()
		// Stripe matches codes case-insensitively; a fake may not filter at all.
		if !strings.EqualFold(pc.Code, code) {
			continue
		}
		if d, ok := usablePromotion(pc, amount, acct, now); ok {
			return pc, d, nil
		}
	}
	if err := it.Err(); err != nil {
		return nil, Discount{}, s.providerError("list promotion codes", err)
	}
	return nil, Discount{}, apperr.New(apperr.PromoCodeInvalid, "promo_code is not a valid, active promotion code.")
}

// usablePromotion checks a promotion code can be redeemed now for amount cents of USD by the
// account, and returns the discount it gives.
func usablePromotion(pc *stripe.PromotionCode, amount int64, acct billingAccount, now time.Time) (Discount, bool) {
	c := pc.Coupon
	switch {
	case !pc.Active || c == nil || !c.Valid || c.Deleted:
		return Discount{}, false
	case pc.ExpiresAt > 0 && !now.Before(time.Unix(pc.ExpiresAt, 0)):
		return Discount{}, false
	case c.RedeemBy > 0 && !now.Before(time.Unix(c.RedeemBy, 0)):
		return Discount{}, false
	case pc.MaxRedemptions > 0 && pc.TimesRedeemed >= pc.MaxRedemptions:
		return Discount{}, false
	case pc.Customer != nil && pc.Customer.ID != "" && (acct.CustomerID == nil || *acct.CustomerID != pc.Customer.ID):
		return Discount{}, false
	}
	if r := pc.Restrictions; r != nil && r.MinimumAmount > 0 &&
		(r.MinimumAmountCurrency == "" || strings.EqualFold(string(r.MinimumAmountCurrency), "usd")) && amount < r.MinimumAmount {
		return Discount{}, false
	}
	d := Discount{Code: pc.Code}
	switch {
	case c.PercentOff > 0:
		d.DiscountPercentage = c.PercentOff
		d.DiscountAmount = int64(math.Round(float64(amount) * c.PercentOff / 100))
	case c.AmountOff > 0:
		if c.Currency != "" && !strings.EqualFold(string(c.Currency), "usd") {
			return Discount{}, false
		}
		d.DiscountAmount = min(c.AmountOff, amount)
		d.DiscountPercentage = math.Round(float64(d.DiscountAmount)*10000/float64(amount)) / 100
	default:
		return Discount{}, false
	}
	return d, true
}
