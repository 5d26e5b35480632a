-- +goose Up
-- Job completion callbacks: where to POST the result, and how delivery went.
ALTER TABLE jobs
    ADD COLUMN callback_url          text,
    ADD COLUMN callback_status       text CHECK (callback_status IN ('pending', 'delivered', 'failed')),
    ADD COLUMN callback_attempts     integer NOT NULL DEFAULT 0,
    ADD COLUMN callback_error        text,
    ADD COLUMN callback_delivered_at timestamptz;
-- The secret each account's callbacks are signed with (HMAC-SHA256).
ALTER TABLE accounts ADD COLUMN callback_secret text;

-- +goose Down
ALTER TABLE accounts DROP COLUMN callback_secret;
ALTER TABLE jobs DROP COLUMN callback_url, DROP COLUMN callback_status, DROP COLUMN callback_attempts,
    DROP COLUMN callback_error, DROP COLUMN callback_delivered_at;
