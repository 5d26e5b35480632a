// Package credits is the credit ledger: grants of credits with expiry, and reservations drawn
// from them that end settled or refunded exactly once.
package credits

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/postgres"
)

// Sources of grants.
const (
	SourceFreeMonthly = "free_monthly"
	SourcePaid        = "subscription"
	SourceOperator    = "operator"
	// SourceOperatorMonthly is the monthly allocation of a plan an operator set (an
	// enterprise arrangement, or a plan without a Stripe subscription).
	SourceOperatorMonthly = "operator_monthly"
)

// LifetimeMonths is the longest credits last: they expire at most 12 months after issue
// (product credit rule 3). GrantTx refuses a grant that would outlive it.
const LifetimeMonths = 12

// Ledger reads and writes credits. Every change to an account's grants first locks the
// account row, so reservations, refunds and grants of one account are serialised and the
// balance can never go negative or be spent twice.
type Ledger struct {
	pool     *pgxpool.Pool
	clock    clock.Clock
	onChange []func(ctx context.Context, accountID uuid.UUID)
}

// OnChange adds a function called after the ledger commits a change to an account's credits
// in its own transaction (Reserve, Settle, Refund, Grant, RenewPeriod, SetPlan), after those
// added before it. Callers of the Tx variants call Notify after their commit. Add them while
// the graph is built, before any call.
func (l *Ledger) OnChange(fn func(ctx context.Context, accountID uuid.UUID)) {
	l.onChange = append(l.onChange, fn)
}

// Notify reports a committed change to the account's credits.
func (l *Ledger) Notify(ctx context.Context, accountID uuid.UUID) {
	for _, fn := range l.onChange {
		fn(ctx, accountID)
	}
}

// NewLedger returns a ledger over pool that tells time by clk.
func NewLedger(pool *pgxpool.Pool, clk clock.Clock) *Ledger {
	return &Ledger{pool: pool, clock: clk}
}

// Now is the ledger's time.
func (l *Ledger) Now() time.Time { return l.clock.Now() }

// Grant is credits given to an account.
type Grant struct {
	AccountID uuid.UUID
	Amount    int
	IssuedAt  time.Time
	ExpiresAt time.Time
	Source    string
	SourceRef string
	// Cap, when positive, cuts the grant so the balance does not exceed it.
	Cap int
}

// GrantTx adds a grant inside tx and returns the credits actually granted (less than asked
// when cut by Cap, 0 when the same source and reference were granted before). A grant that
// would expire more than LifetimeMonths after its issue is refused with VALIDATION_ERROR.
func (l *Ledger) GrantTx(ctx context.Context, tx pgx.Tx, g Grant) (int, error) {
	if g.Amount <= 0 {
		return 0, fmt.Errorf("credits: grant of %d", g.Amount)
	}
	if latest := clock.AddMonths(g.IssuedAt, LifetimeMonths); g.ExpiresAt.After(latest) {
		return 0, apperr.Invalid("credits expire at most %d months after issue: a grant issued %s can expire %s at the latest, not %s",
			LifetimeMonths, g.IssuedAt.UTC().Format(time.RFC3339), latest.UTC().Format(time.RFC3339), g.ExpiresAt.UTC().Format(time.RFC3339))
	}
	if err := lockAccount(ctx, tx, g.AccountID); err != nil {
		return 0, err
	}
	amount := g.Amount
	if g.Cap > 0 {
		bal, err := balance(ctx, tx, g.AccountID, l.clock.Now())
		if err != nil {
			return 0, err
		}
		if room := g.Cap - bal; room < amount {
			amount = room
		}
	}
	if amount <= 0 {
		return 0, nil
	}
	tag, err := tx.Exec(ctx, `
		INSERT INTO credit_grants (account_id, amount, remaining, issued_at, expires_at, source, source_ref)
		VALUES ($1, $2, $2, $3, $4, $5, $6)
		ON CONFLICT (account_id, source, source_ref) DO NOTHING`,
		g.AccountID, amount, g.IssuedAt, g.ExpiresAt, g.Source, g.SourceRef)
	if err != nil {
		return 0, fmt.Errorf("credits: grant: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return 0, nil
	}
	return amount, nil
}

// Grant adds a grant in its own transaction.
func (l *Ledger) Grant(ctx context.Context, g Grant) (int, error) {
	var n int
	err := postgres.InTx(ctx, l.pool, func(tx pgx.Tx) error {
		var err error
		n, err = l.GrantTx(ctx, tx, g)
		return err
	})
	if err == nil && n > 0 {
		l.Notify(ctx, g.AccountID)
	}
	return n, err
}

// Balance is the sum of the account's unexpired remaining credits.
func (l *Ledger) Balance(ctx context.Context, accountID uuid.UUID) (int, error) {
	return balance(ctx, l.pool, accountID, l.clock.Now())
}

// ReserveTx takes amount credits for a call inside tx, from the grants that expire first. It
// takes all of them or none: with too few it returns INSUFFICIENT_CREDITS.
//
// Spend order: soonest expiry first, ties to the grant recorded first. Every plan grant
// (paid, annual, operator monthly) lasts LifetimeMonths from issue, so among them this is
// the oldest first, as the product's credit rules say. The orders differ only for a grant
// that lives shorter than 12 months (the free month's credits kept after an upgrade, an
// operator grant with a short --expires-in); spending it first is what keeps it from
// expiring unused while credits that would last longer are spent, so the caller never loses
// credits to the order.
//
// The account lock and the reservation go to the server as one pipelined batch (one round
// trip); they still run in order, and the reservation statement reads the grants with a
// snapshot taken after the lock was granted, so concurrent reservations never see stale
// balances.
func (l *Ledger) ReserveTx(ctx context.Context, tx pgx.Tx, id, accountID uuid.UUID, amount int, endpoint string) error {
	if amount <= 0 {
		return fmt.Errorf("credits: reserve %d", amount)
	}
	now := l.clock.Now()
	batch := &pgx.Batch{}
	batch.Queue(`SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE`, accountID)
	// Walk the spendable grants in expiry order, taking from each what is still needed, but
	// only when together they hold enough (the reservation row is the gate).
	batch.Queue(`
		WITH avail AS (
			SELECT id, remaining, sum(remaining) OVER (ORDER BY expires_at, id) - remaining AS before
			FROM credit_grants
			WHERE account_id = $1::uuid AND remaining > 0 AND expires_at > $2::timestamptz
		), total AS (
			SELECT COALESCE(sum(remaining), 0) AS n FROM avail
		), res AS (
			INSERT INTO reservations (id, account_id, amount, endpoint, created_at)
			SELECT $4::uuid, $1::uuid, $3::integer, $5::text, $2::timestamptz FROM total WHERE total.n >= $3::integer
			RETURNING id
		), take AS (
			SELECT avail.id, LEAST(avail.remaining, $3 - avail.before) AS amount FROM avail, res WHERE avail.before < $3
		), spent AS (
			UPDATE credit_grants g SET remaining = g.remaining - take.amount
			FROM take WHERE g.id = take.id
			RETURNING g.id, take.amount
		), drawn AS (
			INSERT INTO reservation_draws (reservation_id, grant_id, amount) SELECT $4, id, amount FROM spent
			RETURNING amount
		)
		SELECT (SELECT n FROM total), (SELECT count(*) FROM res), (SELECT COALESCE(sum(amount), 0) FROM drawn)`,
		accountID, now, amount, id, endpoint)
	br := tx.SendBatch(ctx, batch)
	var one int
	err := br.QueryRow().Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		_ = br.Close()
		return fmt.Errorf("credits: account %s not found", accountID)
	}
	if err != nil {
		_ = br.Close()
		return fmt.Errorf("credits: lock account: %w", err)
	}
	var balance, reserved, drawn int
	if err := br.QueryRow().Scan(&balance, &reserved, &drawn); err != nil {
		_ = br.Close()
		return fmt.Errorf("credits: reserve: %w", err)
	}
	if err := br.Close(); err != nil {
		return fmt.Errorf("credits: reserve: %w", err)
	}
	if reserved == 0 {
		return &apperr.Error{Code: apperr.InsufficientCredits,
			Message: fmt.Sprintf("This call costs %d credits and the balance is %d. Upgrade your plan or wait for the next credit period.", amount, balance)}
	}
	if drawn != amount {
		return fmt.Errorf("credits: reserve drew %d of %d", drawn, amount)
	}
	return nil
}

// Reserve is ReserveTx in its own transaction; it returns the reservation id.
func (l *Ledger) Reserve(ctx context.Context, accountID uuid.UUID, amount int, endpoint string) (uuid.UUID, error) {
	id := uuid.New()
	err := postgres.InTx(ctx, l.pool, func(tx pgx.Tx) error {
		return l.ReserveTx(ctx, tx, id, accountID, amount, endpoint)
	})
	if err == nil {
		l.Notify(ctx, accountID)
	}
	return id, err
}

// SettleTx marks a reservation spent and returns its account. It reports false, changing
// nothing, when the reservation was already settled or refunded.
func (l *Ledger) SettleTx(ctx context.Context, q postgres.Querier, id uuid.UUID) (uuid.UUID, bool, error) {
	var accountID uuid.UUID
	err := q.QueryRow(ctx, `
		UPDATE reservations SET status = 'settled', finished_at = $2 WHERE id = $1 AND status = 'reserved'
		RETURNING account_id`, id, l.clock.Now()).Scan(&accountID)
	if errors.Is(err, pgx.ErrNoRows) {
		return accountID, false, nil
	}
	if err != nil {
		return accountID, false, fmt.Errorf("credits: settle: %w", err)
	}
	return accountID, true, nil
}

// Settle is SettleTx on its own.
func (l *Ledger) Settle(ctx context.Context, id uuid.UUID) (bool, error) {
	acc, ok, err := l.SettleTx(ctx, l.pool, id)
	if ok {
		l.Notify(ctx, acc)
	}
	return ok, err
}

// RefundTx returns a reservation's credits to the grants they were drawn from, and the
// reservation's account. It reports false, changing nothing, when the reservation was
// already settled or refunded. Credits go back to their own grants, so they keep their
// expiry; a grant that expired meanwhile keeps them expired.
func (l *Ledger) RefundTx(ctx context.Context, tx pgx.Tx, id uuid.UUID) (uuid.UUID, bool, error) {
	var accountID uuid.UUID
	err := tx.QueryRow(ctx, `
		UPDATE reservations SET status = 'refunded', finished_at = $2 WHERE id = $1 AND status = 'reserved'
		RETURNING account_id`, id, l.clock.Now()).Scan(&accountID)
	if errors.Is(err, pgx.ErrNoRows) {
		return accountID, false, nil
	}
	if err != nil {
		return accountID, false, fmt.Errorf("credits: refund: %w", err)
	}
	if err := lockAccount(ctx, tx, accountID); err != nil {
		return accountID, false, err
	}
	if _, err := tx.Exec(ctx, `
		UPDATE credit_grants g SET remaining = g.remaining + d.amount
		FROM reservation_draws d WHERE d.reservation_id = $1 AND g.id = d.grant_id`, id); err != nil {
		return accountID, false, fmt.Errorf("credits: refund draws: %w", err)
	}
	return accountID, true, nil
}

// Refund is RefundTx in its own transaction.
func (l *Ledger) Refund(ctx context.Context, id uuid.UUID) (bool, error) {
	var ok bool
	var acc uuid.UUID
	err := postgres.InTx(ctx, l.pool, func(tx pgx.Tx) error {
		var err error
		acc, ok, err = l.RefundTx(ctx, tx, id)
		return err
	})
	if ok {
		l.Notify(ctx, acc)
	}
	return ok, err
}

// KeepTx ends a reservation that was settled for keep credits of what it drew (a job
// charged for less than it reserved) by giving the rest back inside tx: to the grants that
// expire last first, so what the call spends stays what it would have drawn for keep alone.
// The reservation's draws shrink to keep; with keep 0 they stay as drawn, as a refund leaves
// them. The caller has already set the reservation's status and amount and locked its job;
// KeepTx locks the account. It returns the credits given back.
func (l *Ledger) KeepTx(ctx context.Context, tx pgx.Tx, id, accountID uuid.UUID, keep int) (int, error) {
	if keep < 0 {
		return 0, fmt.Errorf("credits: keep %d", keep)
	}
	if err := lockAccount(ctx, tx, accountID); err != nil {
		return 0, err
	}
	var back int
	err := tx.QueryRow(ctx, `
		WITH d AS (
			SELECT d.grant_id, d.amount, sum(d.amount) OVER (ORDER BY g.expires_at DESC, g.id DESC) - d.amount AS before,
				sum(d.amount) OVER () - $2 AS excess
			FROM reservation_draws d JOIN credit_grants g ON g.id = d.grant_id WHERE d.reservation_id = $1
		), back AS (
			SELECT grant_id, amount, LEAST(amount, excess - before) AS give FROM d WHERE before < excess
		), grants AS (
			UPDATE credit_grants g SET remaining = g.remaining + back.give FROM back WHERE g.id = back.grant_id
			RETURNING g.id
		), cut AS (
			UPDATE reservation_draws x SET amount = x.amount - back.give
			FROM back WHERE $2 > 0 AND x.reservation_id = $1 AND x.grant_id = back.grant_id AND back.give < back.amount
			RETURNING x.grant_id
		), gone AS (
			DELETE FROM reservation_draws x USING back
			WHERE $2 > 0 AND x.reservation_id = $1 AND x.grant_id = back.grant_id AND back.give = back.amount
			RETURNING x.grant_id
		)
		SELECT COALESCE(sum(give), 0) FROM back`, id, keep).Scan(&back)
	if err != nil {
		return 0, fmt.Errorf("credits: keep %d of reservation %s: %w", keep, id, err)
	}
	return back, nil
}

// Call is one settled call, for usage reports.
type Call struct {
	Endpoint    string    `json:"endpoint"`
	CreditsUsed int       `json:"credits_used"`
	CreatedAt   time.Time `json:"created_at"`
}

// Usage is an account's credit position in its current period.
type Usage struct {
	Plan           string
	BillingCycle   string
	RateLimit      int
	CreditsMonthly int
	PeriodStart    time.Time
	PeriodEnd      time.Time
	Used           int
	Balance        int
	Recent         []Call
	// NextExpiry is when the earliest spendable grant expires (the balance changes then
	// without any event); zero when none will.
	NextExpiry *time.Time
}

// Limit is the current period's allocation: the monthly credits, or twelve months' worth on
// annual billing, whose period is a year and whose credits come upfront.
func (u Usage) Limit() int {
	if u.BillingCycle == "annual" {
		return 12 * u.CreditsMonthly
	}
	return u.CreditsMonthly
}

// Usage reads the account's usage in one round trip.
func (l *Ledger) Usage(ctx context.Context, accountID uuid.UUID) (Usage, error) {
	var u Usage
	err := l.pool.QueryRow(ctx, `
		SELECT a.plan, a.billing_cycle, a.rate_limit, a.credits_monthly, a.period_start, a.period_end,
			(SELECT COALESCE(sum(amount), 0) FROM reservations
				WHERE account_id = a.id AND status = 'settled' AND created_at >= a.period_start),
			`+BalanceSQL("a.id", "$2")+`,
			(SELECT COALESCE(json_agg(json_build_object('endpoint', r.endpoint, 'credits_used', r.amount,
				'created_at', r.created_at) ORDER BY r.created_at DESC), '[]')
				FROM (SELECT endpoint, amount, created_at FROM reservations
					WHERE account_id = a.id AND status = 'settled' ORDER BY created_at DESC LIMIT 20) r),
			(SELECT min(expires_at) FROM credit_grants WHERE account_id = a.id AND remaining > 0 AND expires_at > $2)
		FROM accounts a WHERE a.id = $1`, accountID, l.clock.Now()).
		Scan(&u.Plan, &u.BillingCycle, &u.RateLimit, &u.CreditsMonthly, &u.PeriodStart, &u.PeriodEnd, &u.Used, &u.Balance, &u.Recent, &u.NextExpiry)
	if err != nil {
		return u, fmt.Errorf("credits: usage: %w", err)
	}
	return u, nil
}

func lockAccount(ctx context.Context, tx pgx.Tx, accountID uuid.UUID) error {
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE`, accountID).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("credits: account %s not found", accountID)
	}
	if err != nil {
		return fmt.Errorf("credits: lock account: %w", err)
	}
	return nil
}

// BalanceSQL is the one definition of a balance, as a scalar subquery for embedding in other
// statements: the unexpired remaining credits of account (a column or parameter) at now.
func BalanceSQL(account, now string) string {
	return `(SELECT COALESCE(sum(remaining), 0) FROM credit_grants
		WHERE account_id = ` + account + ` AND remaining > 0 AND expires_at > ` + now + `)`
}

func balance(ctx context.Context, q postgres.Querier, accountID uuid.UUID, now time.Time) (int, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT `+BalanceSQL("$1", "$2"), accountID, now).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("credits: balance: %w", err)
	}
	return n, nil
}
