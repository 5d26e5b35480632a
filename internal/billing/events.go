package billing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stripe/stripe-go/v76"

	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/credits"
	"github.com/contentapi/contentapi/internal/plan"
)

// stateOf reads a subscription object: its plan and cycle come from its price, so a change
// made in the billing portal is seen even though the metadata set at checkout is not updated.
func (s *Service) stateOf(sub *stripe.Subscription) subState {
	st := subState{ID: sub.ID, Status: string(sub.Status), CancelAtPeriodEnd: sub.CancelAtPeriodEnd}
	if sub.Customer != nil {
		st.CustomerID = sub.Customer.ID
	}
	if sub.Created > 0 {
		st.Created = time.Unix(sub.Created, 0)
	}
	if sub.CurrentPeriodStart > 0 && sub.CurrentPeriodEnd > sub.CurrentPeriodStart {
		st.PeriodStart, st.PeriodEnd = time.Unix(sub.CurrentPeriodStart, 0), time.Unix(sub.CurrentPeriodEnd, 0)
	}
	if sub.Items != nil {
		for _, it := range sub.Items.Data {
			if it == nil || it.Price == nil {
				continue
			}
			if p, c, ok := s.cfg.Prices.Lookup(it.Price.ID); ok {
				st.Plan, st.Cycle = p, c
				break
			}
		}
	}
	return st
}

// checkoutCompleted upgrades the account that paid a checkout session, at once.
func (s *Service) checkoutCompleted(ctx context.Context, tx pgx.Tx, at time.Time, sess *stripe.CheckoutSession, sub *stripe.Subscription) (eventResult, error) {
	if sess.Mode != stripe.CheckoutSessionModeSubscription {
		return ignored("not a subscription checkout"), nil
	}
	if sess.PaymentStatus == stripe.CheckoutSessionPaymentStatusUnpaid {
		return ignored("payment not yet received"), nil
	}
	if sess.Subscription == nil || sess.Subscription.ID == "" {
		return ignored("session has no subscription"), nil
	}
	st := subState{ID: sess.Subscription.ID, Status: string(stripe.SubscriptionStatusActive)}
	if sess.Customer != nil {
		st.CustomerID = sess.Customer.ID
	}
	if sub != nil {
		known := s.stateOf(sub)
		st.PeriodStart, st.PeriodEnd, st.Created = known.PeriodStart, known.PeriodEnd, known.Created
		st.Plan, st.Cycle = known.Plan, known.Cycle
	}
	// The session's metadata names what was bought; it wins over a price we cannot map.
	if p, c := sess.Metadata["plan"], sess.Metadata["billing_cycle"]; (p == "pro" || p == "scale") && (c == Monthly || c == Annual) {
		st.Plan, st.Cycle = p, c
	}
	hint := parseAccountID(sess.ClientReferenceID)
	if hint == uuid.Nil {
		hint = parseAccountID(sess.Metadata["account_id"])
	}
	return s.applySubscription(ctx, tx, at, st, hint, true)
}

// applySubscription applies what an event created at `at` says about a subscription.
// Events of one subscription are ordered by their creation: a full state (partial false,
// from a subscription event) older than the stored one is stale and ignored; a partial one
// (a completed checkout, a first invoice) takes the newer stored state in its place. What
// cannot yet be tied to an account is stored for the event that can.
func (s *Service) applySubscription(ctx context.Context, tx pgx.Tx, at time.Time, st subState, hint uuid.UUID, partial bool) (eventResult, error) {
	now := s.clock.Now()
	accountID, found, err := resolveAccount(ctx, tx, hint, st.ID, st.CustomerID)
	if err != nil {
		return eventResult{}, err
	}
	var acct account
	if found {
		// The account is locked before the subscription row, by every event, so two events
		// of one account never wait on each other in opposite orders.
		if acct, err = lockAccount(ctx, tx, accountID); err != nil {
			return eventResult{}, err
		}
	}
	stored, err := lockSub(ctx, tx, st.ID, now)
	if err != nil {
		return eventResult{}, err
	}
	if !found && stored.AccountID != nil {
		if acct, err = lockAccount(ctx, tx, *stored.AccountID); err != nil {
			return eventResult{}, err
		}
		found = true
	}
	var link *uuid.UUID
	if found {
		link = &acct.ID
	}
	stale := stored.EventCreated.After(at)
	switch {
	case stale && !partial:
		if found {
			if err := linkSub(ctx, tx, st.ID, acct.ID); err != nil {
				return eventResult{}, err
			}
		}
		return ignored("stale: a newer event of this subscription was applied"), nil
	case partial:
		// What a partial event does not say comes from the stored state, and a newer stored
		// state wins over it.
		if stale && stored.Status != "unknown" {
			st.Status = stored.Status
		}
		if stored.Plan != "" && (stale || st.Plan == "") {
			st.Plan, st.Cycle = stored.Plan, stored.Cycle
		}
		if !stored.PeriodStart.IsZero() && !stored.PeriodEnd.IsZero() && (stale || st.PeriodStart.IsZero()) {
			st.PeriodStart, st.PeriodEnd = stored.PeriodStart, stored.PeriodEnd
		}
		st.CancelAtPeriodEnd = stored.CancelAtPeriodEnd
		if stale {
			if found {
				if err := linkSub(ctx, tx, st.ID, acct.ID); err != nil {
					return eventResult{}, err
				}
			}
		} else if err := saveSub(ctx, tx, st, link, at, now); err != nil {
			return eventResult{}, err
		}
	default:
		if err := saveSub(ctx, tx, st, link, at, now); err != nil {
			return eventResult{}, err
		}
	}
	if st.Created.IsZero() {
		st.Created = stored.Created
	}
	if !found {
		s.log.Warn("stripe event for an unknown account; stored for later events",
			"subscription_id", st.ID, "customer_id", st.CustomerID)
		return ignored("unknown account"), nil
	}
	res, err := s.applyState(ctx, tx, acct, st)
	res.account = acct.ID
	return res, err
}

// applyState moves the account to what its subscription now is.
func (s *Service) applyState(ctx context.Context, tx pgx.Tx, acct account, st subState) (eventResult, error) {
	current := acct.SubscriptionID != nil && *acct.SubscriptionID == st.ID
	switch stripe.SubscriptionStatus(st.Status) {
	case stripe.SubscriptionStatusCanceled, stripe.SubscriptionStatusIncompleteExpired:
		if !current {
			return ignored("ended subscription is not the account's current one"), nil
		}
		return s.toFree(ctx, tx, acct)
	case stripe.SubscriptionStatusActive, stripe.SubscriptionStatusTrialing, stripe.SubscriptionStatusPastDue:
	default:
		return ignored("subscription status " + st.Status), nil
	}
	if st.Plan == "" {
		return ignored("subscription price is not one of the configured plans"), nil
	}
	if acct.Plan == plan.Enterprise.Name {
		return ignored("account is on an enterprise arrangement"), nil
	}
	if !current {
		res := eventResult{}
		if acct.SubscriptionID != nil {
			// The account moved to a new subscription (pro to scale through a new checkout):
			// only a newer one replaces the current, and the old one is cancelled.
			var curCreated *time.Time
			if err := tx.QueryRow(ctx, `SELECT subscription_created FROM stripe_subscriptions WHERE id = $1`,
				*acct.SubscriptionID).Scan(&curCreated); err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return eventResult{}, fmt.Errorf("billing: current subscription: %w", err)
			}
			if curCreated != nil && !st.Created.IsZero() && curCreated.After(st.Created) {
				return ignored("subscription is older than the account's current one"), nil
			}
			res.cancel = *acct.SubscriptionID
		}
		return s.activate(ctx, tx, acct, st, res)
	}
	now := s.clock.Now()
	switch {
	case st.CancelAtPeriodEnd:
		return s.schedule(ctx, tx, acct, plan.Free.Name, Monthly, periodEndOf(st, acct, now))
	case st.Plan == acct.Plan && st.Cycle == acct.Cycle:
		if acct.PendingAt == nil {
			return ignored("no plan change"), nil
		}
		// A scheduled change was withdrawn.
		if err := setPending(ctx, tx, acct.ID, nil, nil, nil, now); err != nil {
			return eventResult{}, err
		}
		return eventResult{outcome: "pending change withdrawn", changed: true}, nil
	case isUpgrade(acct.Plan, acct.Cycle, st.Plan, st.Cycle):
		return s.upgrade(ctx, tx, acct, st)
	default:
		return s.schedule(ctx, tx, acct, st.Plan, st.Cycle, periodEndOf(st, acct, now))
	}
}

// isUpgrade reports whether moving between plans and cycles takes effect at once: a higher
// plan, or annual billing of the same plan. Lower plans and annual to monthly wait for the
// next billing period.
func isUpgrade(curPlan, curCycle, nextPlan, nextCycle string) bool {
	cur, _ := plan.Lookup(curPlan)
	next, _ := plan.Lookup(nextPlan)
	return next.Rank > cur.Rank || (next.Rank == cur.Rank && curCycle == Monthly && nextCycle == Annual)
}

// periodEndOf is when the subscription's current period ends: when a scheduled change
// takes effect.
func periodEndOf(st subState, acct account, now time.Time) time.Time {
	if st.PeriodEnd.After(now) {
		return st.PeriodEnd
	}
	return acct.PeriodEnd
}

// activate puts the account on a new subscription at once and grants its first allocation.
// The unused free credits stay until they expire.
func (s *Service) activate(ctx context.Context, tx pgx.Tx, acct account, st subState, res eventResult) (eventResult, error) {
	p, err := plan.Lookup(st.Plan)
	if err != nil {
		return eventResult{}, err
	}
	if held, err := heldByOther(ctx, tx, st.ID, acct.ID); err != nil {
		return eventResult{}, err
	} else if held {
		s.log.Error("subscription belongs to another account; not applied", "account_id", acct.ID, "subscription_id", st.ID)
		return ignored("subscription belongs to another account"), nil
	}
	now := s.clock.Now()
	start, end := st.PeriodStart, st.PeriodEnd
	if start.IsZero() || !end.After(start) {
		start, end = now, periodAfter(now, st.Cycle)
	}
	if err := setPlan(ctx, tx, acct.ID, p, st.Cycle, start, end, now); err != nil {
		return eventResult{}, err
	}
	if err := setStripeIDs(ctx, tx, acct.ID, st.CustomerID, &st.ID, now); err != nil {
		return eventResult{}, err
	}
	if st.CancelAtPeriodEnd {
		// Cancelled already (an event that arrived first said so): back to free at its end.
		free, monthly := plan.Free.Name, Monthly
		if err := setPending(ctx, tx, acct.ID, &free, &monthly, &end, now); err != nil {
			return eventResult{}, err
		}
	}
	n, err := s.grantPaid(ctx, tx, acct.ID, p, st.Cycle, st.ID)
	if err != nil {
		return eventResult{}, err
	}
	res.outcome = fmt.Sprintf("subscribed to %s (%s); %d credits granted", p.Name, st.Cycle, n)
	res.changed = true
	return res, nil
}

// upgrade moves the account's current subscription to a higher plan or to annual billing at
// once, granting the difference between the new and the old period allocation.
func (s *Service) upgrade(ctx context.Context, tx pgx.Tx, acct account, st subState) (eventResult, error) {
	old, err := plan.Lookup(acct.Plan)
	if err != nil {
		return eventResult{}, err
	}
	p, err := plan.Lookup(st.Plan)
	if err != nil {
		return eventResult{}, err
	}
	now := s.clock.Now()
	start, end := acct.PeriodStart, acct.PeriodEnd
	if st.Cycle != acct.Cycle && !st.PeriodStart.IsZero() {
		// Stripe starts a new billing period when the interval changes.
		start, end = st.PeriodStart, st.PeriodEnd
	}
	if err := setPlan(ctx, tx, acct.ID, p, st.Cycle, start, end, now); err != nil {
		return eventResult{}, err
	}
	n := 0
	if diff := allocation(p, st.Cycle) - allocation(old, acct.Cycle); diff > 0 {
		g := credits.Grant{AccountID: acct.ID, Amount: diff, IssuedAt: now, ExpiresAt: clock.AddMonths(now, credits.LifetimeMonths),
			Source: credits.SourcePaid, SourceRef: fmt.Sprintf("upgrade:%s:%s:%s:%d", st.ID, p.Name, st.Cycle, acct.PeriodStart.Unix())}
		if st.Cycle == Monthly {
			g.Cap = p.RolloverCap()
		}
		if n, err = s.ledger.GrantTx(ctx, tx, g); err != nil {
			return eventResult{}, err
		}
	}
	return eventResult{outcome: fmt.Sprintf("upgraded to %s (%s); %d credits granted", p.Name, st.Cycle, n), changed: true}, nil
}

// schedule records a change that takes effect at the next billing period.
func (s *Service) schedule(ctx context.Context, tx pgx.Tx, acct account, planName, cycle string, at time.Time) (eventResult, error) {
	if acct.PendingPlan != nil && *acct.PendingPlan == planName && acct.PendingCycle != nil && *acct.PendingCycle == cycle &&
		acct.PendingAt != nil && acct.PendingAt.Equal(at) {
		return ignored("change already scheduled"), nil
	}
	if err := setPending(ctx, tx, acct.ID, &planName, &cycle, &at, s.clock.Now()); err != nil {
		return eventResult{}, err
	}
	return eventResult{outcome: fmt.Sprintf("%s (%s) scheduled for %s", planName, cycle, at.UTC().Format(time.RFC3339)), changed: true}, nil
}

// toFree returns the account to the free plan when its subscription has ended: a new free
// period starts now with its monthly credits; paid credits stay until they expire.
func (s *Service) toFree(ctx context.Context, tx pgx.Tx, acct account) (eventResult, error) {
	now := s.clock.Now()
	if err := setPlan(ctx, tx, acct.ID, plan.Free, Monthly, now, clock.AddMonths(now, 1), now); err != nil {
		return eventResult{}, err
	}
	if err := setStripeIDs(ctx, tx, acct.ID, "", nil, now); err != nil {
		return eventResult{}, err
	}
	n, err := s.ledger.RestartFreePeriodTx(ctx, tx, acct.ID, now, plan.Free.CreditsMonthly)
	if err != nil {
		return eventResult{}, err
	}
	return eventResult{outcome: fmt.Sprintf("subscription ended; back to free with %d credits", n), changed: true}, nil
}

// grantPaid grants one billing period's allocation, expiring 12 months after issue. A
// monthly grant is cut so the balance stays within 3 monthly allocations; an annual one
// brings the year's credits upfront. ref (a subscription or invoice id) makes a repeat a
// no-op.
func (s *Service) grantPaid(ctx context.Context, tx pgx.Tx, accountID uuid.UUID, p plan.Plan, cycle, ref string) (int, error) {
	now := s.clock.Now()
	g := credits.Grant{AccountID: accountID, Amount: allocation(p, cycle), IssuedAt: now,
		ExpiresAt: clock.AddMonths(now, credits.LifetimeMonths), Source: credits.SourcePaid, SourceRef: ref}
	if cycle == Monthly {
		g.Cap = p.RolloverCap()
	}
	return s.ledger.GrantTx(ctx, tx, g)
}

// invoicePaid handles a paid subscription invoice: the first one can start the subscription
// (when it arrives before the checkout completion), a renewal grants the new period's
// credits and applies a change that became due.
func (s *Service) invoicePaid(ctx context.Context, tx pgx.Tx, at time.Time, inv *stripe.Invoice) (eventResult, error) {
	if inv.Subscription == nil || inv.Subscription.ID == "" {
		return ignored("not a subscription invoice"), nil
	}
	line := subscriptionLine(inv)
	var planName, cycle string
	var start, end time.Time
	if line != nil {
		if line.Price != nil {
			planName, cycle, _ = s.cfg.Prices.Lookup(line.Price.ID)
		}
		if line.Period != nil && line.Period.Start > 0 && line.Period.End > line.Period.Start {
			start, end = time.Unix(line.Period.Start, 0), time.Unix(line.Period.End, 0)
		}
	}
	var hint uuid.UUID
	if inv.SubscriptionDetails != nil {
		hint = parseAccountID(inv.SubscriptionDetails.Metadata[MetaAccountID])
	}
	customer := ""
	if inv.Customer != nil {
		customer = inv.Customer.ID
	}
	switch inv.BillingReason {
	case stripe.InvoiceBillingReasonSubscriptionCreate:
		st := subState{ID: inv.Subscription.ID, CustomerID: customer, Plan: planName, Cycle: cycle,
			Status: string(stripe.SubscriptionStatusActive), PeriodStart: start, PeriodEnd: end}
		return s.applySubscription(ctx, tx, at, st, hint, true)
	case stripe.InvoiceBillingReasonSubscriptionCycle:
		return s.renew(ctx, tx, at, inv, customer, hint, planName, cycle, start, end)
	}
	return ignored("invoice billing reason " + string(inv.BillingReason)), nil
}

// renew starts the subscription's next billing period.
func (s *Service) renew(ctx context.Context, tx pgx.Tx, at time.Time, inv *stripe.Invoice, customer string, hint uuid.UUID,
	planName, cycle string, start, end time.Time) (eventResult, error) {
	subID := inv.Subscription.ID
	now := s.clock.Now()
	accountID, found, err := resolveAccount(ctx, tx, hint, subID, customer)
	if err != nil {
		return eventResult{}, err
	}
	if !found {
		s.log.Warn("renewal invoice for an unknown account", "invoice_id", inv.ID, "subscription_id", subID)
		return ignored("unknown account"), nil
	}
	acct, err := lockAccount(ctx, tx, accountID)
	if err != nil {
		return eventResult{}, err
	}
	res := eventResult{account: acct.ID}
	if acct.SubscriptionID == nil || *acct.SubscriptionID != subID {
		res.outcome = "ignored: not the account's current subscription"
		return res, nil
	}
	stored, err := lockSub(ctx, tx, subID, now)
	if err != nil {
		return eventResult{}, err
	}
	if start.IsZero() {
		// An invoice's own period is the one that just ended; the new one starts at its end.
		start = now
		if inv.PeriodEnd > 0 {
			start = time.Unix(inv.PeriodEnd, 0)
		}
	}
	due := acct.PendingAt != nil && !acct.PendingAt.After(start.Add(time.Minute))
	if planName == "" {
		// A price we cannot map: the current plan, or the change that became due.
		planName, cycle = acct.Plan, acct.Cycle
		if due && acct.PendingPlan != nil && *acct.PendingPlan != plan.Free.Name {
			planName = *acct.PendingPlan
			if acct.PendingCycle != nil {
				cycle = *acct.PendingCycle
			}
		}
	}
	if end.IsZero() || !end.After(start) {
		end = periodAfter(start, cycle)
	}
	p, err := plan.Lookup(planName)
	if err != nil || p.Rank == plan.Free.Rank || p.Name == plan.Enterprise.Name {
		res.outcome = "ignored: renewal of plan " + planName
		return res, nil //nolint:nilerr // an invoice for no plan of ours is recorded and ignored
	}
	latest := !end.Before(acct.PeriodEnd)
	if latest {
		if err := setPlan(ctx, tx, acct.ID, p, cycle, start, end, now); err != nil {
			return eventResult{}, err
		}
		if !due && acct.PendingAt != nil {
			// A change scheduled for a later period stays scheduled.
			if err := setPending(ctx, tx, acct.ID, acct.PendingPlan, acct.PendingCycle, acct.PendingAt, now); err != nil {
				return eventResult{}, err
			}
		}
		if !stored.EventCreated.After(at) {
			st := subState{ID: subID, CustomerID: customer, Plan: planName, Cycle: cycle, CancelAtPeriodEnd: stored.CancelAtPeriodEnd,
				Status: string(stripe.SubscriptionStatusActive), PeriodStart: start, PeriodEnd: end}
			if err := saveSub(ctx, tx, st, &acct.ID, at, now); err != nil {
				return eventResult{}, err
			}
		}
	}
	n, err := s.grantPaid(ctx, tx, acct.ID, p, cycle, inv.ID)
	if err != nil {
		return eventResult{}, err
	}
	res.outcome = fmt.Sprintf("renewed %s (%s) until %s; %d credits granted", p.Name, cycle, end.UTC().Format(time.RFC3339), n)
	res.changed = true
	return res, nil
}

// subscriptionLine is the invoice line of the subscription's own price (not a proration).
func subscriptionLine(inv *stripe.Invoice) *stripe.InvoiceLineItem {
	if inv.Lines == nil {
		return nil
	}
	var found *stripe.InvoiceLineItem
	for _, l := range inv.Lines.Data {
		if l == nil || l.Proration || l.Price == nil {
			continue
		}
		if l.Type == stripe.InvoiceLineItemTypeSubscription {
			return l
		}
		if found == nil {
			found = l
		}
	}
	return found
}
