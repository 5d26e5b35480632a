-- +goose Up
CREATE TABLE accounts (
    id                     uuid PRIMARY KEY,
    email                  text NOT NULL,
    plan                   text NOT NULL DEFAULT 'free' CHECK (plan IN ('free', 'pro', 'scale', 'enterprise')),
    billing_cycle          text NOT NULL DEFAULT 'monthly' CHECK (billing_cycle IN ('monthly', 'annual')),
    rate_limit             integer NOT NULL CHECK (rate_limit > 0),
    credits_monthly        integer NOT NULL CHECK (credits_monthly >= 0),
    -- The current credit period: free plans renew monthly from period_anchor (the
    -- registration time); paid plans follow the subscription's billing period.
    period_anchor          timestamptz NOT NULL,
    period_index           integer NOT NULL DEFAULT 0,
    period_start           timestamptz NOT NULL,
    period_end             timestamptz NOT NULL,
    pending_plan           text CHECK (pending_plan IN ('free', 'pro', 'scale')),
    pending_billing_cycle  text CHECK (pending_billing_cycle IN ('monthly', 'annual')),
    pending_change_at      timestamptz,
    stripe_customer_id     text UNIQUE,
    stripe_subscription_id text UNIQUE,
    created_at             timestamptz NOT NULL,
    updated_at             timestamptz NOT NULL
);
-- E-mail addresses are unique whatever their case.
CREATE UNIQUE INDEX accounts_email_key ON accounts (lower(email));
CREATE INDEX accounts_period_end_idx ON accounts (period_end);

CREATE TABLE api_keys (
    id           uuid PRIMARY KEY,
    account_id   uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name         text NOT NULL,
    prefix       text NOT NULL,
    -- SHA-256 of the whole key; the key itself is never stored.
    digest       bytea NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL,
    last_used_at timestamptz,
    expires_at   timestamptz,
    revoked_at   timestamptz
);
CREATE INDEX api_keys_account_idx ON api_keys (account_id, created_at);

-- A grant of credits; spending draws from unexpired grants, earliest expiry first.
CREATE TABLE credit_grants (
    id         bigserial PRIMARY KEY,
    account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    amount     integer NOT NULL CHECK (amount > 0),
    remaining  integer NOT NULL CHECK (remaining >= 0 AND remaining <= amount),
    issued_at  timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    source     text NOT NULL,
    -- What caused the grant (a period index, an invoice id); unique per source so a
    -- repeated event cannot grant twice.
    source_ref text NOT NULL,
    UNIQUE (account_id, source, source_ref)
);
CREATE INDEX credit_grants_spendable_idx ON credit_grants (account_id, expires_at) WHERE remaining > 0;

-- Credits taken for one call; they end settled (spent) or refunded, exactly once.
CREATE TABLE reservations (
    id          uuid PRIMARY KEY,
    account_id  uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    amount      integer NOT NULL CHECK (amount > 0),
    endpoint    text NOT NULL,
    status      text NOT NULL DEFAULT 'reserved' CHECK (status IN ('reserved', 'settled', 'refunded')),
    created_at  timestamptz NOT NULL,
    finished_at timestamptz
);
CREATE INDEX reservations_account_idx ON reservations (account_id, status, created_at DESC);

CREATE TABLE reservation_draws (
    reservation_id uuid NOT NULL REFERENCES reservations (id) ON DELETE CASCADE,
    grant_id       bigint NOT NULL REFERENCES credit_grants (id) ON DELETE CASCADE,
    amount         integer NOT NULL CHECK (amount > 0),
    PRIMARY KEY (reservation_id, grant_id)
);

-- +goose Down
DROP TABLE reservation_draws;
DROP TABLE reservations;
DROP TABLE credit_grants;
DROP TABLE api_keys;
DROP TABLE accounts;
