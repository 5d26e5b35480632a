-- +goose Up
-- One row per credit-consuming call: the request, its reservation, and in the end its
-- result or failure. The row is the system of record; the asynq task only carries its id.
CREATE TABLE jobs (
    id              uuid PRIMARY KEY,
    account_id      uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    kind            text NOT NULL,
    endpoint        text NOT NULL,
    request         jsonb NOT NULL,
    request_hash    bytea NOT NULL,
    idempotency_key text,
    reservation_id  uuid NOT NULL REFERENCES reservations (id),
    cost            integer NOT NULL CHECK (cost > 0),
    status          text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
    attempts        integer NOT NULL DEFAULT 0,
    result          jsonb,
    error_code      text,
    error_message   text,
    request_id      text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL,
    started_at      timestamptz,
    heartbeat_at    timestamptz,
    finished_at     timestamptz
);
CREATE UNIQUE INDEX jobs_idempotency_key ON jobs (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX jobs_unfinished_idx ON jobs (created_at) WHERE status IN ('queued', 'running');
CREATE INDEX jobs_account_idx ON jobs (account_id, created_at DESC);

-- +goose Down
DROP TABLE jobs;
