-- +goose Up
-- The dashboard: e-mail verification, one-time sign-in links and browser sessions. Links and
-- sessions are stored only as SHA-256 digests of their random secrets.
ALTER TABLE accounts ADD COLUMN email_verified_at timestamptz;

-- How many authenticated calls each key made (flushed with last_used_at).
ALTER TABLE api_keys ADD COLUMN calls bigint NOT NULL DEFAULT 0;

CREATE TABLE dashboard_links (
    digest     bytea PRIMARY KEY,
    account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    -- 'verify' is sent on registration, 'signin' on request; either proves the address.
    purpose    text NOT NULL CHECK (purpose IN ('verify', 'signin')),
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);
CREATE INDEX dashboard_links_expires_idx ON dashboard_links (expires_at);

CREATE TABLE dashboard_sessions (
    digest       bytea PRIMARY KEY,
    account_id   uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    user_agent   text NOT NULL DEFAULT ''
);
CREATE INDEX dashboard_sessions_account_idx ON dashboard_sessions (account_id);
CREATE INDEX dashboard_sessions_expires_idx ON dashboard_sessions (expires_at);

-- +goose Down
DROP TABLE dashboard_sessions;
DROP TABLE dashboard_links;
ALTER TABLE api_keys DROP COLUMN calls;
ALTER TABLE accounts DROP COLUMN email_verified_at;
