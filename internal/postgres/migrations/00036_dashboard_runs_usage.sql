-- +goose Up
-- Which channel made a charge: an API key (api_key_id set), or the dashboard (source
-- 'dashboard', no key). It is kept on the reservation, which outlives its job row (jobs are
-- purged after JOB_RETENTION; the ledger is not), so usage by key covers 90 days and more.
-- Reservations made before this migration say 'api' with no key: the key was not recorded
-- then. A deleted key leaves its reservations, anonymous.
ALTER TABLE reservations ADD COLUMN source text NOT NULL DEFAULT 'api' CHECK (source IN ('api', 'dashboard'));
ALTER TABLE reservations ADD COLUMN api_key_id uuid REFERENCES api_keys (id) ON DELETE SET NULL;

-- The low-balance e-mail: on unless turned off, and sent at most once per credit period
-- (low_balance_alerted_for holds the period_start it was sent for; a conditional UPDATE
-- claims it, so concurrent charges send one e-mail).
ALTER TABLE accounts ADD COLUMN low_balance_alerts boolean NOT NULL DEFAULT true;
ALTER TABLE accounts ADD COLUMN low_balance_alerted_for timestamptz;

-- +goose Down
ALTER TABLE accounts DROP COLUMN low_balance_alerted_for;
ALTER TABLE accounts DROP COLUMN low_balance_alerts;
ALTER TABLE reservations DROP COLUMN api_key_id;
ALTER TABLE reservations DROP COLUMN source;
