package job_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/clock"
)

// auditResult is a result that keeps a snapshot, as an audit's does.
type auditResult struct {
	Domain string         `json:"domain"`
	Issues map[string]int `json:"issues"`
}

func (r auditResult) Snapshot() (string, any) { return r.Domain, r.Issues }

// A succeeded audit keeps one snapshot, stored with its result: a second Complete (a second
// delivery) stores none, a failed job none. The previous snapshot of a job is the latest of
// the same account and domain other than its own; the purge deletes snapshots with their jobs.
func TestSnapshotsStoredOnceAndPurgedWithTheirJobs(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewManual(time.Now().UTC())
	h := newHarness(t, harnessOpts{clock: clk})
	acc, other := h.account(t, 100), h.account(t, 100)
	complete := func(acc uuid.UUID, domain string, issues map[string]int) uuid.UUID {
		t.Helper()
		j := h.submit(t, acc, "audit "+domain)
		clk.Advance(time.Minute)
		for range 2 {
			if _, err := h.jobs.Complete(ctx, j.ID, auditResult{Domain: domain, Issues: issues}); err != nil {
				t.Fatal(err)
			}
		}
		return j.ID
	}
	count := func() (n int) {
		t.Helper()
		if err := h.pool.QueryRow(ctx, `SELECT count(*) FROM audit_snapshots WHERE account_id IN ($1, $2)`, acc, other).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	first := complete(acc, "a.example", map[string]int{"missing_title": 2})
	second := complete(acc, "a.example", map[string]int{"missing_title": 1})
	complete(acc, "b.example", map[string]int{})
	complete(other, "a.example", map[string]int{"missing_h1": 4})
	failed := h.submit(t, acc, "audit that fails")
	if _, err := h.jobs.Fail(ctx, failed.ID, "PROVIDER_ERROR", "test"); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 4 {
		t.Fatalf("%d snapshots, want one per succeeded job (4)", n)
	}

	third := h.submit(t, acc, "running audit")
	snap, found, err := h.jobs.PreviousSnapshot(ctx, third.ID, "a.example")
	if err != nil || !found || snap.JobID != second {
		t.Fatalf("previous of a new job: %v %v %v, want the account's latest of a.example (%s)", snap.JobID, found, err, second)
	}
	var issues map[string]int
	if err := json.Unmarshal(snap.Issues, &issues); err != nil || issues["missing_title"] != 1 {
		t.Errorf("snapshot issues %s (%v), want missing_title 1", snap.Issues, err)
	}
	if snap, _, _ := h.jobs.PreviousSnapshot(ctx, second, "a.example"); snap.JobID != first {
		t.Errorf("previous of the second job: %v, want the first (%s), never its own", snap.JobID, first)
	}
	if _, found, err := h.jobs.PreviousSnapshot(ctx, third.ID, "c.example"); found || err != nil {
		t.Errorf("previous of a domain never audited: %v %v, want none", found, err)
	}

	clk.Advance(retention + time.Hour)
	purge(t, h)
	if n := count(); n != 0 {
		t.Errorf("%d snapshots left after their jobs were purged, want 0", n)
	}
}
