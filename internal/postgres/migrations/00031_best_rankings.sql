-- +goose Up
-- A domain's rankings (POST /v1/keywords/rankings) list one row per keyword: the domain's
-- best ranking with the keyword's metrics. Read from domain_rankings joined to
-- keyword_metrics, every page of a big domain (720k keywords among 3M rankings) joined,
-- filtered and sorted all of them: seconds a page. This table holds those rows, metrics
-- and estimated traffic included (not the SERP URLs: a page reads them from the keyword
-- table), one per (market, domain, keyword), so that filters, order,
-- keyset and counts run on one table, and pages in the most asked orders walk an index
-- (package local, best.go): the default order (position, then volume), by volume, by
-- traffic (most first) and by difficulty (easiest first); their expressions are those of
-- package local's order keys (pages.go), or the planner would not match them. The importer
-- rebuilds the table after each import of keywords or rankings; any other write to either
-- source moves generation on (statement triggers), and a table built at an older generation
-- is not read: answers join the sources until the next build.
CREATE TABLE domain_best_rankings (
    domain             text COLLATE "C" NOT NULL,
    country            text COLLATE "C" NOT NULL,
    language           text COLLATE "C" NOT NULL,
    keyword_norm       text COLLATE "C" NOT NULL,
    keyword            text NOT NULL,
    position           integer NOT NULL,
    url                text,
    synthetic          boolean NOT NULL,
    search_volume      bigint,
    keyword_difficulty double precision,
    cpc                double precision,
    competition        double precision,
    search_intent      text,
    metrics_synthetic  boolean,
    traffic            double precision
);
CREATE UNIQUE INDEX domain_best_rankings_pkey ON domain_best_rankings (domain, country, language, keyword_norm);
CREATE INDEX domain_best_rankings_position_idx ON domain_best_rankings
    (domain, country, language, (coalesce(position::float8, 'Infinity')), (coalesce(search_volume::float8, '-Infinity')) DESC, keyword_norm);
CREATE INDEX domain_best_rankings_volume_idx ON domain_best_rankings
    (domain, country, language, (coalesce(search_volume::float8, '-Infinity')) DESC, keyword_norm);
CREATE INDEX domain_best_rankings_traffic_idx ON domain_best_rankings
    (domain, country, language, (coalesce(traffic::float8, '-Infinity')) DESC, keyword_norm);
CREATE INDEX domain_best_rankings_difficulty_idx ON domain_best_rankings
    (domain, country, language, (coalesce(keyword_difficulty::float8, 'Infinity')), keyword_norm);

-- The counts of an unfiltered question (every keyword, by position band: package
-- keywords' Bands), per market and domain, built with the table: a first page without
-- filters reads them instead of counting the domain's rows.
CREATE TABLE domain_best_counts (
    domain   text COLLATE "C" NOT NULL,
    country  text COLLATE "C" NOT NULL,
    language text COLLATE "C" NOT NULL,
    counts   integer[] NOT NULL,
    PRIMARY KEY (domain, country, language)
);

CREATE TABLE best_rankings_state (
    one        boolean PRIMARY KEY DEFAULT true CHECK (one),
    generation bigint NOT NULL DEFAULT 0,
    built      bigint NOT NULL DEFAULT -1
);
INSERT INTO best_rankings_state DEFAULT VALUES;

-- +goose StatementBegin
CREATE FUNCTION best_rankings_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE best_rankings_state SET generation = generation + 1;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER domain_rankings_best_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON domain_rankings
    FOR EACH STATEMENT EXECUTE FUNCTION best_rankings_changed();
CREATE TRIGGER keyword_metrics_best_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON keyword_metrics
    FOR EACH STATEMENT EXECUTE FUNCTION best_rankings_changed();

-- Competitor discovery of a big domain counts the keywords it shares with every other
-- domain on the keyword sets (00029) and reads the average positions of a page's
-- competitors from their best positions, kept beside each set: the position of each keyword
-- of the set, in id order, as little-endian 16-bit integers (package local, sets.go).
ALTER TABLE domain_keyword_sets ADD COLUMN positions bytea;

-- +goose Down
ALTER TABLE domain_keyword_sets DROP COLUMN positions;
DROP TRIGGER keyword_metrics_best_changed ON keyword_metrics;
DROP TRIGGER domain_rankings_best_changed ON domain_rankings;
DROP FUNCTION best_rankings_changed();
DROP TABLE best_rankings_state;
DROP TABLE domain_best_counts;
DROP TABLE domain_best_rankings;
