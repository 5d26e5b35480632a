-- +goose Up
-- A sign-in request for an address without an account stores a link too, with no account,
-- so that it costs the same database write as one for an address with an account: the
-- answer's timing no longer tells who has an account. Such a link is never sent and can
-- sign nobody in. "Sign out everywhere" voids an account's pending links, found by account.
ALTER TABLE dashboard_links ALTER COLUMN account_id DROP NOT NULL;
CREATE INDEX dashboard_links_account_idx ON dashboard_links (account_id);

-- +goose Down
DROP INDEX dashboard_links_account_idx;
DELETE FROM dashboard_links WHERE account_id IS NULL;
ALTER TABLE dashboard_links ALTER COLUMN account_id SET NOT NULL;
