-- +goose Up
-- Keyword data of the local provider: keyword metrics and which domain ranks where.
-- Rows come from the CSV importers (cmd/ctl) and from the generated sample set
-- (synthetic = true, source = 'sample').
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- keyword_normalize is the one definition of "the same keyword": lower-cased, trimmed,
-- runs of white space collapsed to one space. Keys and look-ups both use it.
-- +goose StatementBegin
CREATE FUNCTION keyword_normalize(k text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN lower(btrim(regexp_replace(k, '\s+', ' ', 'g')));
-- +goose StatementEnd

-- keyword_ts_config maps a language code to the text-search configuration that stems it;
-- languages without one are matched word for word ('simple'). Both functions are plain
-- SQL expressions, not STRICT, so that PostgreSQL inlines them (a bulk import computes them
-- for every row).
-- +goose StatementBegin
CREATE FUNCTION keyword_ts_config(lang text) RETURNS regconfig
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE lang
        WHEN 'en' THEN 'pg_catalog.english'::regconfig
        WHEN 'de' THEN 'pg_catalog.german'::regconfig
        WHEN 'fr' THEN 'pg_catalog.french'::regconfig
        WHEN 'es' THEN 'pg_catalog.spanish'::regconfig
        WHEN 'it' THEN 'pg_catalog.italian'::regconfig
        WHEN 'pt' THEN 'pg_catalog.portuguese'::regconfig
        WHEN 'nl' THEN 'pg_catalog.dutch'::regconfig
        WHEN 'tr' THEN 'pg_catalog.turkish'::regconfig
        ELSE 'pg_catalog.simple'::regconfig
    END;
-- +goose StatementEnd

CREATE TABLE keyword_metrics (
    keyword            text NOT NULL CHECK (btrim(keyword) <> ''),
    keyword_norm       text GENERATED ALWAYS AS (keyword_normalize(keyword)) STORED,
    country            text NOT NULL CHECK (country ~ '^[a-z]{2}$'),
    language           text NOT NULL CHECK (language ~ '^[a-z]{2}$'),
    -- A metric the source does not know is NULL, never 0.
    search_volume      bigint CHECK (search_volume >= 0),
    keyword_difficulty double precision CHECK (keyword_difficulty BETWEEN 0 AND 100),
    cpc                double precision CHECK (cpc >= 0),
    competition        double precision CHECK (competition BETWEEN 0 AND 1),
    search_intent      text CHECK (search_intent IN ('informational', 'navigational', 'commercial', 'transactional')),
    -- Top organic result URLs, best first.
    serp_urls          text[],
    source             text NOT NULL,
    synthetic          boolean NOT NULL DEFAULT false,
    updated_at         timestamptz NOT NULL DEFAULT now(),
    tsv                tsvector GENERATED ALWAYS AS (to_tsvector(keyword_ts_config(language), keyword)) STORED,
    PRIMARY KEY (country, language, keyword_norm)
);
CREATE INDEX keyword_metrics_tsv_idx ON keyword_metrics USING gin (tsv);
CREATE INDEX keyword_metrics_trgm_idx ON keyword_metrics USING gin (keyword gin_trgm_ops);

CREATE TABLE domain_rankings (
    -- Lower-case host without a leading "www.".
    domain       text NOT NULL CHECK (domain <> '' AND domain = lower(domain) AND domain NOT LIKE 'www.%'),
    keyword      text NOT NULL CHECK (btrim(keyword) <> ''),
    keyword_norm text GENERATED ALWAYS AS (keyword_normalize(keyword)) STORED,
    country      text NOT NULL CHECK (country ~ '^[a-z]{2}$'),
    language     text NOT NULL CHECK (language ~ '^[a-z]{2}$'),
    position     integer NOT NULL CHECK (position >= 1),
    url          text,
    source       text NOT NULL,
    synthetic    boolean NOT NULL DEFAULT false,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (domain, country, language, keyword_norm)
);
-- Gaps look up every domain ranking for a keyword.
CREATE INDEX domain_rankings_keyword_idx ON domain_rankings (country, language, keyword_norm);

-- +goose Down
DROP TABLE IF EXISTS domain_rankings;
DROP TABLE IF EXISTS keyword_metrics;
DROP FUNCTION IF EXISTS keyword_ts_config(text);
DROP FUNCTION IF EXISTS keyword_normalize(text);
-- pg_trgm stays: other objects may use it.
