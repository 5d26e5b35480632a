-- +goose Up
-- Read-only links to one job's report, made in the dashboard: the link's token is kept only
-- as its SHA-256 digest. A link ends at expires_at (1 to 30 days after it was made) or when
-- revoked, and goes with its job (the jobs purge, JOB_RETENTION).
CREATE TABLE report_shares (
    id           uuid PRIMARY KEY,
    job_id       uuid NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    account_id   uuid NOT NULL,
    token_digest bytea NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    revoked_at   timestamptz
);
CREATE INDEX report_shares_job_idx ON report_shares (job_id, created_at DESC);

-- +goose Down
DROP TABLE report_shares;
