package credits

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contentapi/contentapi/internal/clock"
)

// RestartFreePeriodTx starts a new run of free monthly periods anchored at `at`, for an
// account returning to the free plan (a paid subscription ended), and grants the first
// period's monthly credits, expiring when that period ends. It returns the credits granted.
// Free grants are named by anchor and period (FreeGrantRef), so the new run's grants never
// collide with the earlier run's.
func (l *Ledger) RestartFreePeriodTx(ctx context.Context, tx pgx.Tx, accountID uuid.UUID, at time.Time, monthly int) (int, error) {
	if err := lockAccount(ctx, tx, accountID); err != nil {
		return 0, err
	}
	end := clock.AddMonths(at, 1)
	if _, err := tx.Exec(ctx, `
		UPDATE accounts SET period_anchor = $2, period_index = 0, period_start = $2, period_end = $3, updated_at = $4
		WHERE id = $1`, accountID, at, end, l.clock.Now()); err != nil {
		return 0, fmt.Errorf("credits: restart free period: %w", err)
	}
	if monthly <= 0 {
		return 0, nil
	}
	return l.GrantTx(ctx, tx, Grant{AccountID: accountID, Amount: monthly, IssuedAt: at, ExpiresAt: end,
		Source: SourceFreeMonthly, SourceRef: FreeGrantRef(at, 0)})
}
