-- +goose Up
-- The meta of a job's answer besides its result (where its keyword data came from, warnings):
-- GET /v1/jobs/{id} and callbacks answer with it as the synchronous call did.
ALTER TABLE jobs ADD COLUMN meta jsonb;

-- +goose Down
ALTER TABLE jobs DROP COLUMN meta;
