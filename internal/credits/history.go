package credits

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// SpendableGrant is a grant with credits left that have not expired.
type SpendableGrant struct {
	Remaining int
	Amount    int
	ExpiresAt time.Time
	Source    string
}

// SpendableGrants lists the account's grants that make up its balance now, soonest expiry
// first (the order they are spent in).
func (l *Ledger) SpendableGrants(ctx context.Context, accountID uuid.UUID) ([]SpendableGrant, error) {
	rows, err := l.pool.Query(ctx, `
		SELECT remaining, amount, expires_at, source FROM credit_grants
		WHERE account_id = $1 AND remaining > 0 AND expires_at > $2 ORDER BY expires_at, id`, accountID, l.clock.Now())
	if err != nil {
		return nil, fmt.Errorf("credits: spendable grants: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[SpendableGrant])
	if err != nil {
		return nil, fmt.Errorf("credits: spendable grants: %w", err)
	}
	return out, nil
}

// DailySpend sums the credits of the account's settled calls per UTC day ("2006-01-02")
// from since on; days without a settled call are absent.
func (l *Ledger) DailySpend(ctx context.Context, accountID uuid.UUID, since time.Time) (map[string]int, error) {
	rows, err := l.pool.Query(ctx, `
		SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), sum(amount)::int FROM reservations
		WHERE account_id = $1 AND status = 'settled' AND created_at >= $2 GROUP BY 1`, accountID, since)
	if err != nil {
		return nil, fmt.Errorf("credits: daily spend: %w", err)
	}
	out := map[string]int{}
	var day string
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&day, &n}, func() error { out[day] = n; return nil }); err != nil {
		return nil, fmt.Errorf("credits: daily spend: %w", err)
	}
	return out, nil
}

// Spend is what one channel spent on one endpoint on one UTC day.
type Spend struct {
	Day      string // "2006-01-02"
	Endpoint string
	// Source is the channel: "api" (KeyID names the key when it was recorded) or
	// "dashboard".
	Source string
	KeyID  *uuid.UUID
	// KeyName and KeyPrefix name the key, when there is one.
	KeyName, KeyPrefix string
	Credits            int // of the settled calls
	Calls              int // accepted calls: settled, refunded or still reserved
}

// SpendSince lists the account's calls since since by UTC day, endpoint and channel, from
// the reservations (which outlive their jobs), oldest day first.
func (l *Ledger) SpendSince(ctx context.Context, accountID uuid.UUID, since time.Time) ([]Spend, error) {
	rows, err := l.pool.Query(ctx, `
		SELECT to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), r.endpoint, r.source, r.api_key_id,
			COALESCE(k.name, ''), COALESCE(k.prefix, ''),
			COALESCE(sum(r.amount) FILTER (WHERE r.status = 'settled'), 0)::int, count(*)::int
		FROM reservations r LEFT JOIN api_keys k ON k.id = r.api_key_id
		WHERE r.account_id = $1 AND r.created_at >= $2
		GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 5`, accountID, since)
	if err != nil {
		return nil, fmt.Errorf("credits: spend: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Spend, error) {
		var s Spend
		err := row.Scan(&s.Day, &s.Endpoint, &s.Source, &s.KeyID, &s.KeyName, &s.KeyPrefix, &s.Credits, &s.Calls)
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("credits: spend: %w", err)
	}
	return out, nil
}
