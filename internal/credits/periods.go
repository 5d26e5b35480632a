package credits

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/plan"
	"github.com/contentapi/contentapi/internal/postgres"
)

// Credit periods. Who starts an account's next period and grants its credits depends on
// how its plan is managed, so nothing is granted twice and nothing is left ungranted:
//
//   - free: the ledger, monthly from period_anchor; each month's grant expires when the
//     month ends (no rollover).
//   - operator-managed, a plan other than free set by an operator (`ctl plan set`:
//     enterprise terms, or pro/scale without Stripe), which the account has when it has
//     no Stripe subscription: the ledger, monthly from period_anchor, by paid monthly
//     billing's rules: each grant expires LifetimeMonths after issue and is cut so the
//     balance stays within three monthly allocations.
//   - Stripe, the account has a subscription: billing, on each paid invoice; the ledger
//     never renews it.
//
// The worker's periodic task (RenewDuePeriods) renews the first two; the request gate also
// renews a free account on its first request of a new month.

// PlanChange is what SetPlan did.
type PlanChange struct {
	// Granted is the credits granted at once: a new period's allocation, or the rise of a
	// higher allocation within the current period.
	Granted     int
	PeriodStart time.Time
	PeriodEnd   time.Time
}

// SetPlan puts an account without a Stripe subscription on p, with p's rate limit and
// monthly credits (an operator's terms), and grants what the change brings:
//
//   - moving between free and any other plan starts a new run of monthly periods now, with
//     the new plan's first allocation (the credits already held stay until they expire);
//   - staying free, or staying operator-managed, keeps the current period (renewed first
//     if it has ended); a higher allocation is granted its difference at once (once per
//     period and allocation, so repeating the command grants nothing more), a lower one
//     applies from the next period.
//
// An account with a Stripe subscription is refused (ALREADY_SUBSCRIBED): its plan follows
// the subscription, whose next invoice would undo the change.
func (l *Ledger) SetPlan(ctx context.Context, accountID uuid.UUID, p plan.Plan) (PlanChange, error) {
	var ch PlanChange
	err := postgres.InTx(ctx, l.pool, func(tx pgx.Tx) error {
		a, err := lockPeriodAccount(ctx, tx, accountID)
		if err != nil {
			return err
		}
		if a.Subscribed {
			return apperr.New(apperr.AlreadySubscribed, "The account pays through a Stripe subscription and its plan follows it: "+
				"change the plan in Stripe (the billing portal), or cancel the subscription and set the plan once it has ended.")
		}
		now := l.clock.Now()
		free := p.Name == plan.Free.Name
		oldMonthly := a.Monthly
		if _, err := tx.Exec(ctx, `
			UPDATE accounts SET plan = $2, rate_limit = $3, credits_monthly = $4, billing_cycle = 'monthly',
				pending_plan = NULL, pending_billing_cycle = NULL, pending_change_at = NULL, updated_at = $5
			WHERE id = $1`, accountID, p.Name, p.RateLimit, p.CreditsMonthly, now); err != nil {
			return fmt.Errorf("credits: set plan: %w", err)
		}
		if free != a.free() {
			ch.Granted, err = l.startRunTx(ctx, tx, accountID, now, free, p.CreditsMonthly)
			ch.PeriodStart, ch.PeriodEnd = now, clock.AddMonths(now, 1)
			return err
		}
		// The ended period is renewed under the old terms: they were the terms in force.
		if _, err := l.renewTx(ctx, tx, &a, now); err != nil {
			return err
		}
		ch.PeriodStart, ch.PeriodEnd = a.Start, a.End
		if rise := p.CreditsMonthly - oldMonthly; rise > 0 {
			g := monthlyGrant(accountID, free, p.CreditsMonthly, now, a.End,
				PeriodGrantRef(a.Anchor, a.Index)+"+"+strconv.Itoa(p.CreditsMonthly))
			g.Amount = rise
			ch.Granted, err = l.GrantTx(ctx, tx, g)
		}
		return err
	})
	if err == nil {
		l.Notify(ctx, accountID)
	}
	return ch, err
}

// RestartFreePeriodTx starts a new run of free monthly periods anchored at `at`, for an
// account returning to the free plan (a paid subscription ended), and grants the first
// period's monthly credits, expiring when that period ends. It returns the credits granted.
// Grants are named by anchor and period (PeriodGrantRef), so the new run's grants never
// collide with an earlier run's.
func (l *Ledger) RestartFreePeriodTx(ctx context.Context, tx pgx.Tx, accountID uuid.UUID, at time.Time, monthly int) (int, error) {
	if err := lockAccount(ctx, tx, accountID); err != nil {
		return 0, err
	}
	return l.startRunTx(ctx, tx, accountID, at, true, monthly)
}

// startRunTx starts a new run of monthly periods at `at` and grants its first allocation.
func (l *Ledger) startRunTx(ctx context.Context, tx pgx.Tx, accountID uuid.UUID, at time.Time, free bool, monthly int) (int, error) {
	end := clock.AddMonths(at, 1)
	if _, err := tx.Exec(ctx, `
		UPDATE accounts SET period_anchor = $2, period_index = 0, period_start = $2, period_end = $3, updated_at = $4
		WHERE id = $1`, accountID, at, end, l.clock.Now()); err != nil {
		return 0, fmt.Errorf("credits: start periods: %w", err)
	}
	if monthly <= 0 {
		return 0, nil
	}
	return l.GrantTx(ctx, tx, monthlyGrant(accountID, free, monthly, at, end, PeriodGrantRef(at, 0)))
}

// RenewPeriod starts the account's current monthly period when the stored one has ended and
// the ledger renews the account (free or operator-managed, see above), granting the
// period's allocation. It reports whether it renewed, and the period's end; an account on
// a Stripe subscription, or within its period, changes nothing.
func (l *Ledger) RenewPeriod(ctx context.Context, accountID uuid.UUID) (bool, time.Time, error) {
	var renewed bool
	var end time.Time
	err := postgres.InTx(ctx, l.pool, func(tx pgx.Tx) error {
		a, err := lockPeriodAccount(ctx, tx, accountID)
		if err != nil {
			return err
		}
		renewed, err = l.renewTx(ctx, tx, &a, l.clock.Now())
		end = a.End
		return err
	})
	if renewed {
		l.Notify(ctx, accountID)
	}
	return renewed, end, err
}

// RenewDuePeriods renews every free or operator-managed account whose period has ended; the
// worker runs it every minute so balances and usage are right even for accounts that make
// no request. Accounts on a Stripe subscription are renewed by their paid invoices instead.
func (l *Ledger) RenewDuePeriods(ctx context.Context) (int, error) {
	rows, err := l.pool.Query(ctx, `
		SELECT id FROM accounts WHERE period_end <= $1 AND (plan = 'free' OR stripe_subscription_id IS NULL)
		ORDER BY period_end LIMIT 1000`, l.clock.Now())
	if err != nil {
		return 0, fmt.Errorf("credits: due periods: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return 0, fmt.Errorf("credits: due periods: %w", err)
	}
	n := 0
	for _, id := range ids {
		ok, _, err := l.RenewPeriod(ctx, id)
		if err != nil {
			return n, err
		}
		if ok {
			n++
		}
	}
	return n, nil
}

// periodAccount is an account's period state, read under its row lock.
type periodAccount struct {
	ID         uuid.UUID
	Plan       string
	Monthly    int
	Anchor     time.Time
	Index      int
	Start, End time.Time
	Subscribed bool
}

func (a *periodAccount) free() bool { return a.Plan == plan.Free.Name }

func lockPeriodAccount(ctx context.Context, tx pgx.Tx, id uuid.UUID) (periodAccount, error) {
	a := periodAccount{ID: id}
	err := tx.QueryRow(ctx, `
		SELECT plan, credits_monthly, period_anchor, period_index, period_start, period_end, stripe_subscription_id IS NOT NULL
		FROM accounts WHERE id = $1 FOR UPDATE`, id).
		Scan(&a.Plan, &a.Monthly, &a.Anchor, &a.Index, &a.Start, &a.End, &a.Subscribed)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, apperr.New(apperr.NotFound, "account not found")
	}
	if err != nil {
		return a, fmt.Errorf("credits: lock account: %w", err)
	}
	return a, nil
}

// renewTx moves a (locked) to the period containing now when its stored period has ended and
// the ledger renews it, and grants the allocation. A free account gets the current period's
// only: earlier months' credits would already have expired. An operator-managed one gets
// every period it missed (the worker was stopped), each issued at its period's start and so
// expiring 12 months after it, within the rollover cap, as paid invoices would have.
func (l *Ledger) renewTx(ctx context.Context, tx pgx.Tx, a *periodAccount, now time.Time) (bool, error) {
	if now.Before(a.End) || (a.Subscribed && !a.free()) {
		return false, nil
	}
	k, start, end := MonthlyPeriodAt(a.Anchor, now)
	if _, err := tx.Exec(ctx, `
		UPDATE accounts SET period_index = $2, period_start = $3, period_end = $4, updated_at = $5 WHERE id = $1`,
		a.ID, k, start, end, now); err != nil {
		return false, fmt.Errorf("credits: renew period: %w", err)
	}
	first := k
	if !a.free() {
		first = a.Index + 1
		for first < k && !clock.AddMonths(clock.AddMonths(a.Anchor, first), LifetimeMonths).After(now) {
			first++ // that period's credits would already have expired
		}
	}
	a.Index, a.Start, a.End = k, start, end
	for j := first; j <= k && a.Monthly > 0; j++ {
		g := monthlyGrant(a.ID, a.free(), a.Monthly, clock.AddMonths(a.Anchor, j), clock.AddMonths(a.Anchor, j+1),
			PeriodGrantRef(a.Anchor, j))
		if _, err := l.GrantTx(ctx, tx, g); err != nil {
			return false, err
		}
	}
	return true, nil
}

// monthlyGrant is one period's allocation of monthly credits issued at issued: on the free
// plan it expires when the period ends (no rollover); on an operator-managed plan it
// follows paid monthly billing, lasting LifetimeMonths and cut at three allocations.
func monthlyGrant(accountID uuid.UUID, free bool, monthly int, issued, periodEnd time.Time, ref string) Grant {
	g := Grant{AccountID: accountID, Amount: monthly, IssuedAt: issued, SourceRef: ref}
	if free {
		g.ExpiresAt, g.Source = periodEnd, SourceFreeMonthly
		return g
	}
	g.ExpiresAt, g.Source = clock.AddMonths(issued, LifetimeMonths), SourceOperatorMonthly
	g.Cap = plan.Plan{CreditsMonthly: monthly}.RolloverCap()
	return g
}

// PeriodGrantRef names the monthly grant of period k of the run of periods starting at
// anchor, so a repeated renewal cannot grant twice and a new run (an account back on free,
// or newly on an operator's plan) never collides with an earlier one.
func PeriodGrantRef(anchor time.Time, k int) string {
	return strconv.FormatInt(anchor.Unix(), 10) + ":" + strconv.Itoa(k)
}

// MonthlyPeriodAt returns the index, start and end of the monthly period containing now,
// for periods counted in calendar months from anchor.
func MonthlyPeriodAt(anchor, now time.Time) (int, time.Time, time.Time) {
	if now.Before(anchor) {
		return 0, anchor, clock.AddMonths(anchor, 1)
	}
	y1, m1, _ := anchor.Date()
	y2, m2, _ := now.Date()
	k := (y2-y1)*12 + int(m2-m1)
	for k > 0 && clock.AddMonths(anchor, k).After(now) {
		k--
	}
	for !clock.AddMonths(anchor, k+1).After(now) {
		k++
	}
	return k, clock.AddMonths(anchor, k), clock.AddMonths(anchor, k+1)
}
