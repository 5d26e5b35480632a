-- +goose Up
-- Competitor discovery names its data source from the rankings it counted: made-up rows
-- (the sample set) make the answer synthetic or mixed. Positions carry no keyword metrics,
-- so the domains with a synthetic ranking are looked up here: a partial index that holds
-- the sample set's rows only, empty once only imported data is left, so each domain's
-- probe costs one index lookup whatever the size of the imported rankings. (A bulk import
-- builds it again with the other indexes, see internal/keywords/importer/swap.go.)
CREATE INDEX domain_rankings_synthetic_idx ON domain_rankings (country, language, domain) WHERE synthetic;

-- +goose Down
DROP INDEX domain_rankings_synthetic_idx;
