-- +goose Up
-- Competitor discovery names its data source from the rankings it counted: made-up rows
-- (the sample set) make the answer synthetic or mixed. Positions carry no keyword metrics,
-- so the domains with a synthetic ranking are looked up here: a partial index that holds
-- the sample set's rows only, empty once only imported data is left, so each domain's
-- probe costs one index lookup whatever the size of the imported rankings. (A bulk import
-- builds it again with the other indexes, see internal/keywords/importer/swap.go.)
CREATE INDEX domain_rankings_synthetic_idx ON domain_rankings (country, language, domain) WHERE synthetic;

-- A job's cost is what it was charged: a later page of a keyword list that returns no row
-- succeeds at no cost (its reservation is refunded), so a cost may be 0.
ALTER TABLE jobs DROP CONSTRAINT jobs_cost_check, ADD CONSTRAINT jobs_cost_check CHECK (cost >= 0);

-- +goose Down
ALTER TABLE jobs DROP CONSTRAINT jobs_cost_check, ADD CONSTRAINT jobs_cost_check CHECK (cost > 0) NOT VALID;
DROP INDEX domain_rankings_synthetic_idx;
