package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Snapshotter is a result that leaves a trace for the next analysis of its kind (an audit's
// issues): Complete stores it in the same statement as the result, so a job has a snapshot
// exactly when it succeeded, and a second delivery cannot store a second one.
type Snapshotter interface {
	// Snapshot returns the domain the result is about and what to keep of it.
	Snapshot() (domain string, issues any)
}

// Snapshot is a succeeded audit's kept issues.
type Snapshot struct {
	JobID  uuid.UUID
	At     time.Time // when the audit finished
	Issues json.RawMessage
}

// PreviousSnapshot returns the latest snapshot of domain kept by the account that owns job
// id, other than that job's own: what the job's audit is compared with. It reports false
// when there is none (the account's first audit of the domain, or the earlier ones purged).
func (s *Service) PreviousSnapshot(ctx context.Context, id uuid.UUID, domain string) (Snapshot, bool, error) {
	var snap Snapshot
	err := s.pool.QueryRow(ctx, `
		SELECT a.job_id, a.created_at, a.issues FROM audit_snapshots a
		WHERE a.account_id = (SELECT account_id FROM jobs WHERE id = $1) AND a.domain = $2 AND a.job_id <> $1
		ORDER BY a.created_at DESC, a.job_id DESC LIMIT 1`, id, domain).Scan(&snap.JobID, &snap.At, &snap.Issues)
	if errors.Is(err, pgx.ErrNoRows) {
		return Snapshot{}, false, nil
	}
	if err != nil {
		return Snapshot{}, false, fmt.Errorf("job: previous snapshot: %w", err)
	}
	return snap, true, nil
}

// snapshotArgs are the domain and encoded issues Complete stores for a Snapshotter, nil
// for other results.
func snapshotArgs(result any) (domain *string, issues []byte, err error) {
	sn, ok := result.(Snapshotter)
	if !ok {
		return nil, nil, nil
	}
	d, v := sn.Snapshot()
	if issues, err = json.Marshal(v); err != nil {
		return nil, nil, fmt.Errorf("job: encode snapshot: %w", err)
	}
	return &d, issues, nil
}
