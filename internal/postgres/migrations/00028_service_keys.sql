-- +goose Up
-- Keys the service signs with, made once per database so that every API and worker process
-- on it signs alike without configuration. "cursor" signs the cursors of keyword answers
-- (unless CURSOR_SECRET is set): 32 random bytes from gen_random_uuid's strong random source.
CREATE TABLE service_keys (
    name       text PRIMARY KEY,
    key        bytea NOT NULL CHECK (length(key) >= 32),
    created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO service_keys (name, key)
VALUES ('cursor', decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'));

-- +goose Down
DROP TABLE service_keys;
