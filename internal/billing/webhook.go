package billing

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stripe/stripe-go/v76"
	"github.com/stripe/stripe-go/v76/webhook"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/postgres"
)

// Event types the service acts on; every other type is recorded and ignored.
const (
	EventCheckoutCompleted      = "checkout.session.completed"
	EventCheckoutAsyncSucceeded = "checkout.session.async_payment_succeeded"
	EventInvoicePaid            = "invoice.paid"
	EventSubscriptionCreated    = "customer.subscription.created"
	EventSubscriptionUpdated    = "customer.subscription.updated"
	EventSubscriptionDeleted    = "customer.subscription.deleted"
)

// eventResult is what applying one event did.
type eventResult struct {
	outcome string
	account uuid.UUID
	// changed: the account's plan, period or credits changed, so replicas must be told.
	changed bool
	// cancel is a subscription the account no longer needs (it moved to a newer one),
	// cancelled at Stripe after the commit.
	cancel string
}

func ignored(why string) eventResult { return eventResult{outcome: "ignored: " + why} }

// eventHandler applies a decoded event inside the transaction that records it.
type eventHandler func(ctx context.Context, tx pgx.Tx) (eventResult, error)

// HandleWebhook verifies a Stripe webhook delivery (payload and its Stripe-Signature header)
// and applies the event at most once. A missing or bad signature is a VALIDATION_ERROR and
// changes nothing. Events that cannot be tied to an account are recorded and answered as
// handled, so Stripe does not retry them forever; a database failure returns an error, so
// Stripe delivers the event again.
func (s *Service) HandleWebhook(ctx context.Context, payload []byte, signature string) error {
	if !s.Configured() {
		return NotConfigured()
	}
	ev, err := webhook.ConstructEventWithOptions(payload, signature, s.cfg.WebhookSecret,
		webhook.ConstructEventOptions{IgnoreAPIVersionMismatch: true})
	if err != nil {
		s.log.Warn("stripe webhook rejected", "err", err)
		return apperr.Invalid("The Stripe-Signature header is missing or does not match the payload.")
	}
	if ev.ID == "" || ev.Data == nil {
		return apperr.Invalid("The event has no id or no data.")
	}
	return s.apply(ctx, ev)
}

func (s *Service) apply(ctx context.Context, ev stripe.Event) error {
	var seen bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM processed_stripe_events WHERE id = $1)`, ev.ID).
		Scan(&seen); err != nil {
		return fmt.Errorf("billing: look up event: %w", err)
	}
	if seen {
		s.log.Info("stripe event already processed", "event_id", ev.ID, "type", ev.Type)
		return nil
	}
	handle := s.prepare(ctx, ev)
	now := s.clock.Now()
	created := eventTime(ev, now)
	var res eventResult
	var duplicate bool
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		// A concurrent delivery of the same event waits here until the first commits, then
		// inserts nothing and changes nothing.
		tag, err := tx.Exec(ctx, `
			INSERT INTO processed_stripe_events (id, type, event_created, processed_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (id) DO NOTHING`, ev.ID, string(ev.Type), created, now)
		if err != nil {
			return fmt.Errorf("billing: record event: %w", err)
		}
		if tag.RowsAffected() == 0 {
			duplicate = true
			return nil
		}
		if res, err = handle(ctx, tx); err != nil {
			return err
		}
		if res.outcome == "" {
			res.outcome = "applied"
		}
		var acct *uuid.UUID
		if res.account != uuid.Nil {
			acct = &res.account
		}
		_, err = tx.Exec(ctx, `UPDATE processed_stripe_events SET account_id = $2, outcome = $3 WHERE id = $1`,
			ev.ID, acct, res.outcome)
		if err != nil {
			return fmt.Errorf("billing: record outcome: %w", err)
		}
		return nil
	})
	if err != nil {
		s.log.Error("stripe event failed; Stripe will retry", "event_id", ev.ID, "type", ev.Type, "err", err)
		return err
	}
	if duplicate {
		s.log.Info("stripe event already processed", "event_id", ev.ID, "type", ev.Type)
		return nil
	}
	attrs := []any{"event_id", ev.ID, "type", ev.Type, "outcome", res.outcome}
	if res.account != uuid.Nil {
		attrs = append(attrs, "account_id", res.account)
	}
	s.log.Info("stripe event processed", attrs...)
	s.afterCommit(ctx, res)
	return nil
}

// afterCommit tells every replica of a plan or credit change, and cancels a subscription the
// account moved away from.
func (s *Service) afterCommit(ctx context.Context, res eventResult) {
	if res.changed && res.account != uuid.Nil {
		if err := s.accounts.AccountChanged(ctx, res.account); err != nil {
			s.log.Warn("plan change not pushed; replicas apply it within a minute", "account_id", res.account, "err", err)
		}
		s.ledger.Notify(ctx, res.account)
	}
	if res.cancel != "" {
		params := &stripe.SubscriptionCancelParams{Prorate: stripe.Bool(true), InvoiceNow: stripe.Bool(true)}
		params.Context = ctx
		if _, err := s.subscriptions.Cancel(res.cancel, params); err != nil {
			s.log.Error("previous subscription not cancelled; cancel it in the Stripe dashboard",
				"account_id", res.account, "subscription_id", res.cancel, "err", err)
		} else {
			s.log.Info("previous subscription cancelled", "account_id", res.account, "subscription_id", res.cancel)
		}
	}
}

// prepare decodes the event's object and does any reading from Stripe before the
// transaction, so no lock is held over a network call.
func (s *Service) prepare(ctx context.Context, ev stripe.Event) eventHandler {
	at := eventTime(ev, s.clock.Now())
	decode := func(v any) bool {
		if err := json.Unmarshal(ev.Data.Raw, v); err != nil {
			s.log.Error("stripe event object not decodable", "event_id", ev.ID, "type", ev.Type, "err", err)
			return false
		}
		return true
	}
	undecodable := func(context.Context, pgx.Tx) (eventResult, error) { return ignored("object not decodable"), nil }
	switch string(ev.Type) {
	case EventCheckoutCompleted, EventCheckoutAsyncSucceeded:
		var sess stripe.CheckoutSession
		if !decode(&sess) {
			return undecodable
		}
		var sub *stripe.Subscription
		if sess.Subscription != nil && sess.Subscription.ID != "" {
			params := &stripe.SubscriptionParams{}
			params.Context = ctx
			got, err := s.subscriptions.Get(sess.Subscription.ID, params)
			switch {
			case err != nil:
				s.log.Warn("subscription not retrievable; its period is taken from now", "subscription_id", sess.Subscription.ID, "err", err)
			case got.ID == sess.Subscription.ID:
				sub = got
			}
		}
		return func(ctx context.Context, tx pgx.Tx) (eventResult, error) {
			return s.checkoutCompleted(ctx, tx, at, &sess, sub)
		}
	case EventSubscriptionCreated, EventSubscriptionUpdated, EventSubscriptionDeleted:
		var sub stripe.Subscription
		if !decode(&sub) {
			return undecodable
		}
		st := s.stateOf(&sub)
		if string(ev.Type) == EventSubscriptionDeleted {
			st.Status = string(stripe.SubscriptionStatusCanceled)
		}
		hint := parseAccountID(sub.Metadata[MetaAccountID])
		return func(ctx context.Context, tx pgx.Tx) (eventResult, error) {
			return s.applySubscription(ctx, tx, at, st, hint, false)
		}
	case EventInvoicePaid:
		var inv stripe.Invoice
		if !decode(&inv) {
			return undecodable
		}
		return func(ctx context.Context, tx pgx.Tx) (eventResult, error) {
			return s.invoicePaid(ctx, tx, at, &inv)
		}
	}
	return func(context.Context, pgx.Tx) (eventResult, error) { return ignored("event type not handled"), nil }
}

// eventTime is when Stripe created the event (its order among a subscription's events).
func eventTime(ev stripe.Event, now time.Time) time.Time {
	if ev.Created <= 0 {
		return now
	}
	return time.Unix(ev.Created, 0)
}

func parseAccountID(s string) uuid.UUID {
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil
	}
	return id
}
