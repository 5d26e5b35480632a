package jobs

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/job"
	"github.com/contentapi/contentapi/internal/report"
)

// AuditHistory reads the snapshots the job store keeps of succeeded audits, for the report
// builder's audit changes (it implements report.AuditHistory).
type AuditHistory struct {
	Jobs *job.Service
}

// PreviousAudit returns the latest audit of domain kept for the account owning job jobID,
// other than jobID's own.
func (h AuditHistory) PreviousAudit(ctx context.Context, jobID, domain string) (report.AuditSnapshot, bool, error) {
	id, err := uuid.Parse(jobID)
	if err != nil {
		return report.AuditSnapshot{}, false, fmt.Errorf("audit history: job id %q: %w", jobID, err)
	}
	snap, found, err := h.Jobs.PreviousSnapshot(ctx, id, domain)
	if err != nil || !found {
		return report.AuditSnapshot{}, false, err
	}
	out := report.AuditSnapshot{JobID: snap.JobID.String(), At: snap.At}
	if err := json.Unmarshal(snap.Issues, &out.Issues); err != nil {
		return report.AuditSnapshot{}, false, fmt.Errorf("audit history: snapshot of job %s: %w", snap.JobID, err)
	}
	return out, true, nil
}
