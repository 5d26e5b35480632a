package billing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contentapi/contentapi/internal/plan"
	"github.com/contentapi/contentapi/internal/postgres"
)

// account is an account's billing state, read under its row lock.
type account struct {
	ID             uuid.UUID
	Plan           string
	Cycle          string
	PeriodStart    time.Time
	PeriodEnd      time.Time
	PendingPlan    *string
	PendingCycle   *string
	PendingAt      *time.Time
	CustomerID     *string
	SubscriptionID *string
}

func lockAccount(ctx context.Context, tx pgx.Tx, id uuid.UUID) (account, error) {
	var a account
	err := tx.QueryRow(ctx, `
		SELECT id, plan, billing_cycle, period_start, period_end, pending_plan, pending_billing_cycle,
			pending_change_at, stripe_customer_id, stripe_subscription_id
		FROM accounts WHERE id = $1 FOR UPDATE`, id).
		Scan(&a.ID, &a.Plan, &a.Cycle, &a.PeriodStart, &a.PeriodEnd, &a.PendingPlan, &a.PendingCycle,
			&a.PendingAt, &a.CustomerID, &a.SubscriptionID)
	if err != nil {
		return a, fmt.Errorf("billing: lock account: %w", err)
	}
	return a, nil
}

// resolveAccount finds the account an event is about: the account id we put on the session
// or subscription, then the subscription id, then what an earlier event stored about the
// subscription, then the customer id.
func resolveAccount(ctx context.Context, q postgres.Querier, hint uuid.UUID, subID, customerID string) (uuid.UUID, bool, error) {
	try := func(sql string, arg any) (uuid.UUID, bool, error) {
		var id uuid.UUID
		err := q.QueryRow(ctx, sql, arg).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return id, false, nil
		}
		if err != nil {
			return id, false, fmt.Errorf("billing: find account: %w", err)
		}
		return id, true, nil
	}
	if hint != uuid.Nil {
		if id, ok, err := try(`SELECT id FROM accounts WHERE id = $1`, hint); ok || err != nil {
			return id, ok, err
		}
	}
	if subID != "" {
		if id, ok, err := try(`SELECT id FROM accounts WHERE stripe_subscription_id = $1`, subID); ok || err != nil {
			return id, ok, err
		}
		if id, ok, err := try(`SELECT account_id FROM stripe_subscriptions WHERE id = $1 AND account_id IS NOT NULL`, subID); ok || err != nil {
			return id, ok, err
		}
	}
	if customerID != "" {
		return try(`SELECT id FROM accounts WHERE stripe_customer_id = $1`, customerID)
	}
	return uuid.Nil, false, nil
}

// subState is what is known of a Stripe subscription. Plan and Cycle are "" when its price
// is not one of ours; times are zero when unknown.
type subState struct {
	ID                string
	CustomerID        string
	Plan              string
	Cycle             string
	Status            string
	CancelAtPeriodEnd bool
	PeriodStart       time.Time
	PeriodEnd         time.Time
	Created           time.Time
}

// storedSub is a subscription's row: its latest state and the event that set it.
type storedSub struct {
	subState
	AccountID    *uuid.UUID
	EventCreated time.Time
}

// lockSub returns the subscription's row, locked, creating an empty one (status 'unknown',
// older than any event) when the subscription was never seen.
func lockSub(ctx context.Context, tx pgx.Tx, id string, now time.Time) (storedSub, error) {
	if _, err := tx.Exec(ctx, `
		INSERT INTO stripe_subscriptions (id, status, event_created, updated_at)
		VALUES ($1, 'unknown', to_timestamp(0), $2) ON CONFLICT (id) DO NOTHING`, id, now); err != nil {
		return storedSub{}, fmt.Errorf("billing: subscription row: %w", err)
	}
	var s storedSub
	var customer, planName, cycle *string
	var start, end, created *time.Time
	err := tx.QueryRow(ctx, `
		SELECT id, account_id, customer_id, plan, billing_cycle, status, cancel_at_period_end,
			current_period_start, current_period_end, subscription_created, event_created
		FROM stripe_subscriptions WHERE id = $1 FOR UPDATE`, id).
		Scan(&s.ID, &s.AccountID, &customer, &planName, &cycle, &s.Status, &s.CancelAtPeriodEnd,
			&start, &end, &created, &s.EventCreated)
	if err != nil {
		return s, fmt.Errorf("billing: lock subscription: %w", err)
	}
	s.CustomerID, s.Plan, s.Cycle = deref(customer), deref(planName), deref(cycle)
	s.PeriodStart, s.PeriodEnd, s.Created = derefTime(start), derefTime(end), derefTime(created)
	return s, nil
}

// saveSub writes the subscription's state as of an event created at eventAt.
func saveSub(ctx context.Context, tx pgx.Tx, st subState, accountID *uuid.UUID, eventAt, now time.Time) error {
	_, err := tx.Exec(ctx, `
		UPDATE stripe_subscriptions SET
			account_id = COALESCE($2, account_id), customer_id = COALESCE($3, customer_id),
			plan = COALESCE($4, plan), billing_cycle = COALESCE($5, billing_cycle), status = $6,
			cancel_at_period_end = $7, current_period_start = COALESCE($8, current_period_start),
			current_period_end = COALESCE($9, current_period_end),
			subscription_created = COALESCE($10, subscription_created),
			event_created = GREATEST(event_created, $11), updated_at = $12
		WHERE id = $1`,
		st.ID, accountID, nullable(st.CustomerID), nullable(st.Plan), nullable(st.Cycle), st.Status,
		st.CancelAtPeriodEnd, nullableTime(st.PeriodStart), nullableTime(st.PeriodEnd), nullableTime(st.Created),
		eventAt, now)
	if err != nil {
		return fmt.Errorf("billing: save subscription: %w", err)
	}
	return nil
}

// linkSub ties a subscription's row to its account without changing its state.
func linkSub(ctx context.Context, tx pgx.Tx, subID string, accountID uuid.UUID) error {
	if _, err := tx.Exec(ctx, `UPDATE stripe_subscriptions SET account_id = $2 WHERE id = $1 AND account_id IS NULL`,
		subID, accountID); err != nil {
		return fmt.Errorf("billing: link subscription: %w", err)
	}
	return nil
}

// setPlan puts the account on a plan for a billing period and drops any pending change.
func setPlan(ctx context.Context, tx pgx.Tx, id uuid.UUID, p plan.Plan, cycle string, start, end, now time.Time) error {
	_, err := tx.Exec(ctx, `
		UPDATE accounts SET plan = $2, billing_cycle = $3, rate_limit = $4, credits_monthly = $5,
			period_start = $6, period_end = $7, pending_plan = NULL, pending_billing_cycle = NULL,
			pending_change_at = NULL, updated_at = $8
		WHERE id = $1`, id, p.Name, cycle, p.RateLimit, p.CreditsMonthly, start, end, now)
	if err != nil {
		return fmt.Errorf("billing: set plan: %w", err)
	}
	return nil
}

// setStripeIDs records the account's Stripe customer (when given and held by no other
// account) and subscription.
func setStripeIDs(ctx context.Context, tx pgx.Tx, id uuid.UUID, customerID string, subID *string, now time.Time) error {
	if customerID != "" {
		var other bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM accounts WHERE stripe_customer_id = $1 AND id <> $2)`,
			customerID, id).Scan(&other); err != nil {
			return fmt.Errorf("billing: check customer: %w", err)
		}
		if other {
			customerID = ""
		}
	}
	_, err := tx.Exec(ctx, `
		UPDATE accounts SET stripe_customer_id = COALESCE($2, stripe_customer_id), stripe_subscription_id = $3,
			updated_at = $4 WHERE id = $1`, id, nullable(customerID), subID, now)
	if err != nil {
		return fmt.Errorf("billing: set stripe ids: %w", err)
	}
	return nil
}

// heldByOther reports whether another account has the subscription.
func heldByOther(ctx context.Context, tx pgx.Tx, subID string, id uuid.UUID) (bool, error) {
	var held bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM accounts WHERE stripe_subscription_id = $1 AND id <> $2)`,
		subID, id).Scan(&held); err != nil {
		return false, fmt.Errorf("billing: check subscription: %w", err)
	}
	return held, nil
}

// setPending records a plan or cycle change that takes effect at `at`; nil clears it.
func setPending(ctx context.Context, tx pgx.Tx, id uuid.UUID, planName, cycle *string, at *time.Time, now time.Time) error {
	_, err := tx.Exec(ctx, `
		UPDATE accounts SET pending_plan = $2, pending_billing_cycle = $3, pending_change_at = $4, updated_at = $5
		WHERE id = $1`, id, planName, cycle, at, now)
	if err != nil {
		return fmt.Errorf("billing: set pending change: %w", err)
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func derefTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nullableTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
