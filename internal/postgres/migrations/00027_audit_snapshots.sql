-- +goose Up
-- Each succeeded audit keeps its issues (type → severity, count, the listed URLs), so the
-- next audit of the same domain by the same account can say what got fixed or broke. A
-- snapshot lives as long as its job: the jobs purge (JOB_RETENTION) deletes it with the job.
CREATE TABLE audit_snapshots (
    job_id     uuid PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
    account_id uuid NOT NULL,
    domain     text NOT NULL,
    created_at timestamptz NOT NULL,
    issues     jsonb NOT NULL
);
CREATE INDEX audit_snapshots_account_domain_idx ON audit_snapshots (account_id, domain, created_at DESC);

-- +goose Down
DROP TABLE audit_snapshots;
