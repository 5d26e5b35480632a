-- +goose Up
-- Finished jobs by end time, for the retention purge (JOB_RETENTION).
CREATE INDEX jobs_finished_idx ON jobs (finished_at) WHERE finished_at IS NOT NULL;

-- +goose Down
DROP INDEX jobs_finished_idx;
