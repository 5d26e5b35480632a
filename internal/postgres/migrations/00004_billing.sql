-- +goose Up
-- Stripe events applied to accounts. The event id is the key: a delivery inserts its row in
-- the same transaction as the event's effects, so a repeated or concurrent delivery of the
-- same event waits on that insert and then does nothing.
CREATE TABLE processed_stripe_events (
    id            text PRIMARY KEY,
    type          text NOT NULL,
    event_created timestamptz NOT NULL,
    processed_at  timestamptz NOT NULL,
    account_id    uuid,
    -- What the event did ('applied', or why it changed nothing), for support.
    outcome       text NOT NULL DEFAULT ''
);

-- The latest known state of each Stripe subscription, kept even before the subscription can
-- be tied to an account, so events that arrive out of order end in the right state.
-- event_created is the creation time of the newest event applied; older events are stale.
CREATE TABLE stripe_subscriptions (
    id                   text PRIMARY KEY,
    account_id           uuid REFERENCES accounts (id) ON DELETE SET NULL,
    customer_id          text,
    plan                 text,
    billing_cycle        text,
    status               text NOT NULL,
    cancel_at_period_end boolean NOT NULL DEFAULT false,
    current_period_start timestamptz,
    current_period_end   timestamptz,
    subscription_created timestamptz,
    event_created        timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL
);
CREATE INDEX stripe_subscriptions_account_idx ON stripe_subscriptions (account_id);

-- +goose Down
DROP TABLE stripe_subscriptions;
DROP TABLE processed_stripe_events;
