package auth

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/credits"
	"github.com/contentapi/contentapi/internal/hostname"
	"github.com/contentapi/contentapi/internal/plan"
	"github.com/contentapi/contentapi/internal/postgres"
)

// Accounts registers accounts and manages their keys.
type Accounts struct {
	pool   *pgxpool.Pool
	ledger *credits.Ledger
	clock  clock.Clock
	gate   *Gate
}

// NewAccounts returns the account service. gate, when not nil, is told of revocations and
// plan changes so every replica sees them on the next request.
func NewAccounts(pool *pgxpool.Pool, ledger *credits.Ledger, clk clock.Clock, gate *Gate) *Accounts {
	return &Accounts{pool: pool, ledger: ledger, clock: clk, gate: gate}
}

// Account is an account as GET /v1/account shows it.
type Account struct {
	ID                  uuid.UUID  `json:"id"`
	Email               string     `json:"email"`
	Plan                string     `json:"plan"`
	BillingCycle        string     `json:"billing_cycle"`
	RateLimit           int        `json:"rate_limit"`
	CreditsMonthly      int        `json:"credits_monthly"`
	PeriodStart         time.Time  `json:"current_period_start"`
	PeriodEnd           time.Time  `json:"current_period_end"`
	PendingPlan         *string    `json:"-"`
	PendingBillingCycle *string    `json:"-"`
	PendingChangeAt     *time.Time `json:"-"`
	StripeCustomerID    *string    `json:"-"`
	CreatedAt           time.Time  `json:"created_at"`
}

// Registration is what registering returns: the key, shown once.
type Registration struct {
	AccountID uuid.UUID
	Key       string
	Plan      plan.Plan
	Credits   int
}

// NormalizeEmail validates an address and returns it trimmed with its domain in lower-case
// ASCII (IDNA); uniqueness is case-insensitive on the whole address.
func NormalizeEmail(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", apperr.Invalid("email is required")
	}
	if utf8.RuneCountInString(s) > 254 {
		return "", apperr.Invalid("email must be at most 254 characters")
	}
	addr, err := mail.ParseAddress(s)
	if err != nil || addr.Address != s || addr.Name != "" {
		return "", apperr.Invalid("email must be a plain e-mail address like name@example.com")
	}
	at := strings.LastIndexByte(s, '@')
	local, domain := s[:at], s[at+1:]
	ascii, err := hostname.ToASCII(domain)
	if err != nil || !strings.Contains(ascii, ".") || strings.HasSuffix(domain, ".") {
		return "", apperr.Invalid("email must have a valid domain")
	}
	return local + "@" + ascii, nil
}

// Register creates a free account with its first key and the first month's credits.
func (a *Accounts) Register(ctx context.Context, email, keyName string) (Registration, error) {
	email, err := NormalizeEmail(email)
	if err != nil {
		return Registration{}, err
	}
	if _, err := KeyName(keyName); err != nil {
		return Registration{}, err
	}
	key, err := NewKey()
	if err != nil {
		return Registration{}, fmt.Errorf("auth: new key: %w", err)
	}
	now := a.clock.Now()
	reg := Registration{AccountID: uuid.New(), Key: key, Plan: plan.Free}
	_, start, end := credits.MonthlyPeriodAt(now, now)
	err = postgres.InTx(ctx, a.pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `
			INSERT INTO accounts (id, email, plan, rate_limit, credits_monthly, period_anchor, period_start, period_end, created_at, updated_at)
			VALUES ($1, $2, 'free', $3, $4, $5, $5, $6, $5, $5)`,
			reg.AccountID, email, plan.Free.RateLimit, plan.Free.CreditsMonthly, start, end)
		if postgres.IsUniqueViolation(err, "accounts_email_key") {
			return apperr.New(apperr.EmailTaken, "An account with this e-mail address already exists.")
		}
		if err != nil {
			return fmt.Errorf("auth: insert account: %w", err)
		}
		if err := insertKey(ctx, tx, reg.AccountID, keyName, key, nil, now); err != nil {
			return err
		}
		reg.Credits, err = a.ledger.GrantTx(ctx, tx, credits.Grant{AccountID: reg.AccountID,
			Amount: plan.Free.CreditsMonthly, IssuedAt: start, ExpiresAt: end,
			Source: credits.SourceFreeMonthly, SourceRef: credits.PeriodGrantRef(start, 0)})
		return err
	})
	return reg, err
}

// Get returns an account.
func (a *Accounts) Get(ctx context.Context, id uuid.UUID) (Account, error) {
	return getAccount(ctx, a.pool, `a.id = $1`, id)
}

// GetByEmail returns the account with this address, whatever its case.
func (a *Accounts) GetByEmail(ctx context.Context, email string) (Account, error) {
	return getAccount(ctx, a.pool, `lower(a.email) = lower($1)`, strings.TrimSpace(email))
}

func getAccount(ctx context.Context, q postgres.Querier, where string, arg any) (Account, error) {
	var ac Account
	err := q.QueryRow(ctx, `
		SELECT a.id, a.email, a.plan, a.billing_cycle, a.rate_limit, a.credits_monthly, a.period_start,
			a.period_end, a.pending_plan, a.pending_billing_cycle, a.pending_change_at, a.stripe_customer_id, a.created_at
		FROM accounts a WHERE `+where, arg).Scan(&ac.ID, &ac.Email, &ac.Plan, &ac.BillingCycle, &ac.RateLimit,
		&ac.CreditsMonthly, &ac.PeriodStart, &ac.PeriodEnd, &ac.PendingPlan, &ac.PendingBillingCycle,
		&ac.PendingChangeAt, &ac.StripeCustomerID, &ac.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return ac, apperr.New(apperr.NotFound, "account not found")
	}
	if err != nil {
		return ac, fmt.Errorf("auth: get account: %w", err)
	}
	return ac, nil
}

// SetPlan puts an account without a Stripe subscription on a plan with the given rate limit
// and monthly credits (operator terms), grants what the change brings (credits.Ledger.SetPlan)
// and makes every replica apply the new limit on the next request.
func (a *Accounts) SetPlan(ctx context.Context, id uuid.UUID, planName string, rateLimit, creditsMonthly int) error {
	p, err := plan.Lookup(planName)
	if err != nil {
		return apperr.Invalid("%v", err)
	}
	p.RateLimit, p.CreditsMonthly = rateLimit, creditsMonthly
	if _, err := a.ledger.SetPlan(ctx, id, p); err != nil {
		return err
	}
	return a.AccountChanged(ctx, id)
}

// AccountChanged pushes the account's current plan, limit and period to the gate.
func (a *Accounts) AccountChanged(ctx context.Context, id uuid.UUID) error {
	if a.gate == nil {
		return nil
	}
	return a.gate.Refresh(ctx, id)
}
