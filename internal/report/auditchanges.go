package report

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"
)

// AuditChanges is what changed since the previous audit of the same domain by the same
// account: issue types that appeared (new), went away (fixed), or whose URL count grew or
// shrank, and the listed URLs that appeared or disappeared per type. Every list is sorted and
// bounded: URLs per type by MaxIssueURLs, since a snapshot keeps the URLs an answer lists.
type AuditChanges struct {
	PreviousJobID string             `json:"previous_job_id"`
	PreviousAt    time.Time          `json:"previous_at"`
	New           []string           `json:"new"`
	Fixed         []string           `json:"fixed"`
	Grown         []IssueCountChange `json:"grown"`
	Shrunk        []IssueCountChange `json:"shrunk"`
	// URLsAppeared lists, per type, the URLs with the issue now that did not have it before.
	URLsAppeared map[string][]string `json:"urls_appeared"`
	// URLsDisappeared lists, per type, the URLs that had the issue and no longer do.
	URLsDisappeared map[string][]string `json:"urls_disappeared"`
	// URLsNotCompared names the types found both times whose URLs were not compared: one of
	// the two audits had more URLs than it lists, so a URL missing from a list proves nothing.
	URLsNotCompared []string `json:"urls_not_compared"`
}

// IssueCountChange is an issue type found both times with another count of URLs.
type IssueCountChange struct {
	Type string `json:"type"`
	From int    `json:"from"`
	To   int    `json:"to"`
}

// SnapshotIssue is what an audit keeps of one issue type for the next one to compare with.
type SnapshotIssue struct {
	Severity string   `json:"severity"`
	Count    int      `json:"count"`
	URLs     []string `json:"urls"`
}

// AuditSnapshot is a previous audit's kept issues, by type.
type AuditSnapshot struct {
	JobID  string
	At     time.Time
	Issues map[string]SnapshotIssue
}

// AuditHistory finds what an audit is compared with.
type AuditHistory interface {
	// PreviousAudit returns the latest audit of domain kept for the account that owns job
	// jobID, other than jobID's own; false when there is none.
	PreviousAudit(ctx context.Context, jobID, domain string) (AuditSnapshot, bool, error)
}

// Snapshot is what the job store keeps of an audit (see job.Snapshotter): its domain and
// its issues by type.
func (r AuditResult) Snapshot() (string, any) { return r.Domain, snapshotIssues(r.Issues) }

// snapshotIssues keys the issues found by type.
func snapshotIssues(issues []AuditIssue) map[string]SnapshotIssue {
	out := make(map[string]SnapshotIssue, len(issues))
	for _, is := range issues {
		if is.Count > 0 {
			out[is.Type] = SnapshotIssue{Severity: is.Severity, Count: is.Count, URLs: nonNil(is.URLs)}
		}
	}
	return out
}

// withChanges sets the audit's changes against the account's previous audit of its domain.
// Without History, or on the account's first audit of the domain, changes stay null; when
// the history cannot be read the audit is still answered, with a warning saying why changes
// is null.
func (b *Builder) withChanges(ctx context.Context, res AuditResult, jobID string) (AuditResult, error) {
	if b.History == nil || jobID == "" {
		return res, nil
	}
	prev, found, err := b.History.PreviousAudit(ctx, jobID, res.Domain)
	switch {
	case ctx.Err() != nil:
		return res, fmt.Errorf("audit %s: previous audit: %w", res.Domain, ctx.Err())
	case err != nil:
		res.Warnings = append(res.Warnings, "the previous audit could not be read; changes are not given")
	case found:
		res.Changes = compareAudits(prev, snapshotIssues(res.Issues))
	}
	return res, nil
}

// compareAudits says what changed from prev to cur.
func compareAudits(prev AuditSnapshot, cur map[string]SnapshotIssue) *AuditChanges {
	c := &AuditChanges{PreviousJobID: prev.JobID, PreviousAt: prev.At.UTC(), New: []string{}, Fixed: []string{},
		Grown: []IssueCountChange{}, Shrunk: []IssueCountChange{}, URLsAppeared: map[string][]string{},
		URLsDisappeared: map[string][]string{}, URLsNotCompared: []string{}}
	types := slices.Sorted(maps.Keys(cur))
	for t := range prev.Issues {
		if _, ok := cur[t]; !ok {
			types = append(types, t)
		}
	}
	slices.Sort(types)
	for _, t := range types {
		was, now := prev.Issues[t], cur[t]
		switch {
		case was.Count == 0 && now.Count > 0:
			c.New = append(c.New, t)
		case was.Count > 0 && now.Count == 0:
			c.Fixed = append(c.Fixed, t)
		case now.Count > was.Count:
			c.Grown = append(c.Grown, IssueCountChange{Type: t, From: was.Count, To: now.Count})
		case now.Count < was.Count:
			c.Shrunk = append(c.Shrunk, IssueCountChange{Type: t, From: was.Count, To: now.Count})
		}
		if was.Count > 0 && now.Count > 0 && (len(was.URLs) < was.Count || len(now.URLs) < now.Count) {
			c.URLsNotCompared = append(c.URLsNotCompared, t)
			continue
		}
		if in := missingFrom(now.URLs, was.URLs); len(in) > 0 {
			c.URLsAppeared[t] = in
		}
		if out := missingFrom(was.URLs, now.URLs); len(out) > 0 {
			c.URLsDisappeared[t] = out
		}
	}
	return c
}

// missingFrom returns the URLs of list that are not in other, sorted, at most MaxIssueURLs.
func missingFrom(list, other []string) []string {
	var out []string
	for _, u := range list {
		if !slices.Contains(other, u) {
			out = append(out, u)
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	return out[:min(len(out), MaxIssueURLs)]
}
