-- +goose Up
-- A domain's rankings are answered on the keyword columns (package local, columns.go: a
-- market's ranked keywords held in the worker, counted and sorted over the domain's keyword
-- set) and, while the keyword sets are stale, by joining the rankings to the keyword table.
-- The best-rankings table and its counts (00031) are no longer read; rebuilding them after
-- every import was most of a ranking import's time (2 min 41 s of a 3M-ranking import on a
-- loaded host). Their generation counter stays, renamed: it versions the keyword columns
-- (any write to the rankings or the keywords moves it on).
DROP TABLE domain_best_rankings;
DROP TABLE domain_best_counts;
ALTER TABLE best_rankings_state RENAME TO keyword_data_state;
ALTER TABLE keyword_data_state DROP COLUMN built;
ALTER FUNCTION best_rankings_changed() RENAME TO keyword_data_changed;
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION keyword_data_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE keyword_data_state SET generation = generation + 1;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
ALTER TRIGGER domain_rankings_best_changed ON domain_rankings RENAME TO domain_rankings_data_changed;
ALTER TRIGGER keyword_metrics_best_changed ON keyword_metrics RENAME TO keyword_metrics_data_changed;

-- +goose Down
ALTER TRIGGER keyword_metrics_data_changed ON keyword_metrics RENAME TO keyword_metrics_best_changed;
ALTER TRIGGER domain_rankings_data_changed ON domain_rankings RENAME TO domain_rankings_best_changed;
ALTER FUNCTION keyword_data_changed() RENAME TO best_rankings_changed;
ALTER TABLE keyword_data_state ADD COLUMN built bigint NOT NULL DEFAULT -1;
ALTER TABLE keyword_data_state RENAME TO best_rankings_state;
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION best_rankings_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE best_rankings_state SET generation = generation + 1;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
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
CREATE TABLE domain_best_counts (
    domain   text COLLATE "C" NOT NULL,
    country  text COLLATE "C" NOT NULL,
    language text COLLATE "C" NOT NULL,
    counts   integer[] NOT NULL,
    PRIMARY KEY (domain, country, language)
);
