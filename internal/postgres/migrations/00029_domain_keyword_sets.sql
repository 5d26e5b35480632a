-- +goose Up
-- Each domain's ranked keywords in a market as a set (a Roaring bitmap of keyword ids,
-- the rank of the keyword among the market's ranked keywords), so that a gaps answer counts
-- its exact total (the keywords of up to three competitors, less the domain's) by set
-- operations instead of walking every ranking of its competitors: a competitor holding
-- 43% of the rankings was 1.3M index entries per answer. The importer rebuilds the sets
-- after each ranking import (package local, sets.go). Any other write to domain_rankings
-- moves generation on (a statement trigger), and sets built at an older generation are not
-- read: the answers count in SQL until the next build.
CREATE TABLE domain_keyword_sets (
    country  text COLLATE "C" NOT NULL,
    language text COLLATE "C" NOT NULL,
    domain   text COLLATE "C" NOT NULL,
    keywords integer NOT NULL,
    ids      bytea NOT NULL,
    PRIMARY KEY (country, language, domain)
);
CREATE TABLE keyword_sets_state (
    one        boolean PRIMARY KEY DEFAULT true CHECK (one),
    generation bigint NOT NULL DEFAULT 0,
    built      bigint NOT NULL DEFAULT -1
);
INSERT INTO keyword_sets_state DEFAULT VALUES;

-- +goose StatementBegin
CREATE FUNCTION keyword_sets_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE keyword_sets_state SET generation = generation + 1;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER domain_rankings_sets_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON domain_rankings
    FOR EACH STATEMENT EXECUTE FUNCTION keyword_sets_changed();

-- Gaps in an order other than by volume read the keyword table in that order, as they do
-- by volume (keyword_metrics_volume_idx, 00013): by difficulty, easiest first, and by CPC,
-- highest first (package local, gaps.go: walkMetric).
CREATE INDEX keyword_metrics_difficulty_idx
    ON keyword_metrics (keyword_difficulty ASC NULLS LAST, keyword_norm, country, language);
CREATE INDEX keyword_metrics_cpc_idx
    ON keyword_metrics (cpc DESC NULLS LAST, keyword_norm, country, language);

-- +goose Down
DROP INDEX keyword_metrics_cpc_idx;
DROP INDEX keyword_metrics_difficulty_idx;
DROP TRIGGER domain_rankings_sets_changed ON domain_rankings;
DROP FUNCTION keyword_sets_changed();
DROP TABLE keyword_sets_state;
DROP TABLE domain_keyword_sets;
