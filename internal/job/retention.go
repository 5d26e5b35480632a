package job

import (
	"context"
	"fmt"
	"time"
)

// purgeBatch is how many job rows one purge statement deletes, so that no statement holds
// its locks or its WAL for long.
const purgeBatch = 5000

// Purge deletes the jobs that ended more than retention ago and returns how many it deleted.
// Cancelled between batches, it returns what it deleted and the context's error. Only jobs whose reservation is closed (settled or refunded) go, and their reservations
// stay: the ledger, the balance and GET /v1/usage read reservations and grants, never jobs,
// so the credit history is the same after a purge. A purged job's GET /v1/jobs/{id} is
// NOT_FOUND. retention must exceed the Idempotency-Key window and the callbacks' 24 h of
// retries, which both read the job row.
func (s *Service) Purge(ctx context.Context, retention time.Duration) (int64, error) {
	cutoff := s.clock.Now().Add(-retention)
	var total int64
	for {
		tag, err := s.pool.Exec(ctx, `
			DELETE FROM jobs WHERE id IN (
				SELECT j.id FROM jobs j JOIN reservations r ON r.id = j.reservation_id
				WHERE j.finished_at < $1 AND j.status IN ('succeeded', 'failed') AND r.status <> 'reserved'
				LIMIT $2 FOR UPDATE OF j SKIP LOCKED)`, cutoff, purgeBatch)
		if err != nil {
			return total, fmt.Errorf("job: purge: %w", err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < purgeBatch {
			return total, nil
		}
		// Stopped between batches (a worker shutting down): say so, so the task is run again.
		if err := ctx.Err(); err != nil {
			return total, fmt.Errorf("job: purge: %w", err)
		}
	}
}
