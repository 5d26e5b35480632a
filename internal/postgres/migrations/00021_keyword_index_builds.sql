-- +goose Up
-- What a large import of keywords costs is mostly building this table's indexes again
-- (internal/keywords/importer/swap.go), so they are made cheaper to build, and keyword
-- ideas find trigram matches another way (internal/keywords/local/ideas.go). Measured on
-- the 2-core machine of make bench-scale, for a million keywords:
--
--   - the full-text vector is no longer a stored column: computing it for every row
--     written cost 2.4 s of the 4 s COPY of a million rows, one process while the other
--     core idled. The tier indexes of 00014 hold it as an expression instead, computed
--     when they are built (on two connections at a time), and the queries compute it for
--     the rows they rank.
--   - the tiers have no trigram index any more: the trigram half of the tier indexes was
--     4.5 of their 10 CPU-seconds. A keyword is similar to a term mostly through a word
--     similar to one of the term's words, so trigram matches are now looked up among the
--     words the keywords hold (keyword_words: 20,000 for the million keywords of the bench,
--     its trigram index built in 0.1 s), then in the full-text tiers by those words.
--   - the B-trees no longer lead with the market's two columns, nearly constant: every
--     comparison of a build compared them first, and no abbreviated key could be used.
--     The primary key leads with keyword_norm (2.7 s against 0.9 s without parallel
--     workers; every look-up of the key names all three columns), and the volume index,
--     which gaps and the popular keywords walk in volume order, with search_volume, the
--     market checked from the index entries (3.0 s against 1.0 s). In a table of one
--     large market nothing changes for the queries; in one of several, a walk of a small
--     market by volume reads the other markets' entries too.
--   - the queries that read a whole market (its keyword count, the ranking of every match
--     in a small market) read a BRIN index of the market columns, 0.17 s to build: an
--     import writes its rows together, so a market's rows lie in a few page ranges (the
--     ranges rows are added to later are summarised by autovacuum; until then a scan
--     reads them).
ALTER TABLE keyword_metrics DROP COLUMN tsv; -- and its 14 tier indexes
DROP INDEX keyword_metrics_trgm_t00_idx;
DROP INDEX keyword_metrics_trgm_t01_idx;
DROP INDEX keyword_metrics_trgm_t02_idx;
DROP INDEX keyword_metrics_trgm_t03_idx;
DROP INDEX keyword_metrics_trgm_t04_idx;
DROP INDEX keyword_metrics_trgm_t05_idx;
DROP INDEX keyword_metrics_trgm_t06_idx;
DROP INDEX keyword_metrics_trgm_t07_idx;
DROP INDEX keyword_metrics_trgm_t08_idx;
DROP INDEX keyword_metrics_trgm_t09_idx;
DROP INDEX keyword_metrics_trgm_t10_idx;
DROP INDEX keyword_metrics_trgm_t11_idx;
DROP INDEX keyword_metrics_trgm_t12_idx;
DROP INDEX keyword_metrics_trgm_t13_idx;
CREATE INDEX keyword_metrics_t00_idx ON keyword_metrics
    USING gin (to_tsvector(keyword_ts_config(language), keyword)) WHERE ntrgm BETWEEN 0 AND 6;
CREATE INDEX keyword_metrics_t01_idx ON keyword_metrics
    USING gin (to_tsvector(keyword_ts_config(language), keyword)) WHERE ntrgm BETWEEN 7 AND 8;
CREATE INDEX keyword_metrics_t02_idx ON keyword_metrics
    USING gin (to_tsvector(keyword_ts_config(language), keyword)) WHERE ntrgm BETWEEN 9 AND 10;
CREATE INDEX keyword_metrics_t03_idx ON keyword_metrics
    USING gin (to_tsvector(keyword_ts_config(language), keyword)) WHERE ntrgm BETWEEN 11 AND 12;
CREATE INDEX keyword_metrics_t04_idx ON keyword_metrics
    USING gin (to_tsvector(keyword_ts_config(language), keyword)) WHERE ntrgm BETWEEN 13 AND 14;
CREATE INDEX keyword_metrics_t05_idx ON keyword_metrics
    USING gin (to_tsvector(keyword_ts_config(language), keyword)) WHERE ntrgm BETWEEN 15 AND 16;
CREATE INDEX keyword_metrics_t06_idx ON keyword_metrics
    USING gin (to_tsvector(keyword_ts_config(language), keyword)) WHERE ntrgm BETWEEN 17 AND 19;
CREATE INDEX keyword_metrics_t07_idx ON keyword_metrics
    USING gin (to_tsvector(keyword_ts_config(language), keyword)) WHERE ntrgm BETWEEN 20 AND 22;
CREATE INDEX keyword_metrics_t08_idx ON keyword_metrics
    USING gin (to_tsvector(keyword_ts_config(language), keyword)) WHERE ntrgm BETWEEN 23 AND 26;
CREATE INDEX keyword_metrics_t09_idx ON keyword_metrics
    USING gin (to_tsvector(keyword_ts_config(language), keyword)) WHERE ntrgm BETWEEN 27 AND 31;
CREATE INDEX keyword_metrics_t10_idx ON keyword_metrics
    USING gin (to_tsvector(keyword_ts_config(language), keyword)) WHERE ntrgm BETWEEN 32 AND 37;
CREATE INDEX keyword_metrics_t11_idx ON keyword_metrics
    USING gin (to_tsvector(keyword_ts_config(language), keyword)) WHERE ntrgm BETWEEN 38 AND 44;
CREATE INDEX keyword_metrics_t12_idx ON keyword_metrics
    USING gin (to_tsvector(keyword_ts_config(language), keyword)) WHERE ntrgm BETWEEN 45 AND 53;
CREATE INDEX keyword_metrics_t13_idx ON keyword_metrics
    USING gin (to_tsvector(keyword_ts_config(language), keyword)) WHERE ntrgm >= 54;
ALTER TABLE keyword_metrics DROP CONSTRAINT keyword_metrics_pkey,
    ADD CONSTRAINT keyword_metrics_pkey PRIMARY KEY (keyword_norm, country, language);
DROP INDEX keyword_metrics_volume_idx;
CREATE INDEX keyword_metrics_volume_idx
    ON keyword_metrics (search_volume DESC NULLS LAST, keyword_norm, country, language);
CREATE INDEX keyword_metrics_market_idx ON keyword_metrics USING brin (country, language)
    WITH (autosummarize = on);

-- The words of a market's keywords: the space-separated words of keyword_norm. Words are
-- never removed (keywords are not either); a word no keyword holds any more only costs a
-- look-up that finds nothing. A statement that inserts keyword rows adds their words; an
-- import that writes keyword_metrics as a new table adds them beside its index builds,
-- since the new table has no triggers until it takes the old one's place.
CREATE TABLE keyword_words (
    word     text COLLATE "C" NOT NULL,
    country  text COLLATE "C" NOT NULL,
    language text NOT NULL,
    PRIMARY KEY (word, country, language)
);
-- GiST, not GIN: the look-up asks for the words nearest a word (ORDER BY <-> LIMIT), which a
-- GiST trigram index answers in about 2 ms among 20,000 words; GIN finds every word above the
-- threshold, 5 ms for a common first letter, and the planner preferred reading the key.
CREATE INDEX keyword_words_trgm_idx ON keyword_words USING gist (word gist_trgm_ops);
INSERT INTO keyword_words (word, country, language)
    SELECT w, country, language
    FROM (SELECT unnest(string_to_array(keyword_norm, ' ')) AS w, country, language FROM keyword_metrics) k
    WHERE w <> '' GROUP BY 1, 2, 3;

-- +goose StatementBegin
CREATE FUNCTION keyword_words_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- The same statement as the importer's (besideIndexes in internal/keywords/importer).
    INSERT INTO keyword_words (word, country, language)
        SELECT w, country, language
        FROM (SELECT unnest(string_to_array(keyword_norm, ' ')) AS w, country, language FROM new_rows) k
        WHERE w <> '' GROUP BY 1, 2, 3 ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER keyword_metrics_words AFTER INSERT ON keyword_metrics
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION keyword_words_add();
ANALYZE keyword_metrics, keyword_words;

-- +goose Down
DROP TRIGGER keyword_metrics_words ON keyword_metrics;
DROP FUNCTION keyword_words_add();
DROP TABLE keyword_words;
DROP INDEX keyword_metrics_market_idx;
DROP INDEX keyword_metrics_volume_idx;
CREATE INDEX keyword_metrics_volume_idx
    ON keyword_metrics (country, language, search_volume DESC NULLS LAST, keyword_norm);
ALTER TABLE keyword_metrics DROP CONSTRAINT keyword_metrics_pkey,
    ADD CONSTRAINT keyword_metrics_pkey PRIMARY KEY (country, language, keyword_norm);
DROP INDEX keyword_metrics_t00_idx;
DROP INDEX keyword_metrics_t01_idx;
DROP INDEX keyword_metrics_t02_idx;
DROP INDEX keyword_metrics_t03_idx;
DROP INDEX keyword_metrics_t04_idx;
DROP INDEX keyword_metrics_t05_idx;
DROP INDEX keyword_metrics_t06_idx;
DROP INDEX keyword_metrics_t07_idx;
DROP INDEX keyword_metrics_t08_idx;
DROP INDEX keyword_metrics_t09_idx;
DROP INDEX keyword_metrics_t10_idx;
DROP INDEX keyword_metrics_t11_idx;
DROP INDEX keyword_metrics_t12_idx;
DROP INDEX keyword_metrics_t13_idx;
ALTER TABLE keyword_metrics
    ADD COLUMN tsv tsvector GENERATED ALWAYS AS (to_tsvector(keyword_ts_config(language), keyword)) STORED;
CREATE INDEX keyword_metrics_tsv_t00_idx ON keyword_metrics USING gin (tsv) WHERE ntrgm BETWEEN 0 AND 6;
CREATE INDEX keyword_metrics_trgm_t00_idx ON keyword_metrics USING gin (keyword gin_trgm_ops) WHERE ntrgm BETWEEN 0 AND 6;
CREATE INDEX keyword_metrics_tsv_t01_idx ON keyword_metrics USING gin (tsv) WHERE ntrgm BETWEEN 7 AND 8;
CREATE INDEX keyword_metrics_trgm_t01_idx ON keyword_metrics USING gin (keyword gin_trgm_ops) WHERE ntrgm BETWEEN 7 AND 8;
CREATE INDEX keyword_metrics_tsv_t02_idx ON keyword_metrics USING gin (tsv) WHERE ntrgm BETWEEN 9 AND 10;
CREATE INDEX keyword_metrics_trgm_t02_idx ON keyword_metrics USING gin (keyword gin_trgm_ops) WHERE ntrgm BETWEEN 9 AND 10;
CREATE INDEX keyword_metrics_tsv_t03_idx ON keyword_metrics USING gin (tsv) WHERE ntrgm BETWEEN 11 AND 12;
CREATE INDEX keyword_metrics_trgm_t03_idx ON keyword_metrics USING gin (keyword gin_trgm_ops) WHERE ntrgm BETWEEN 11 AND 12;
CREATE INDEX keyword_metrics_tsv_t04_idx ON keyword_metrics USING gin (tsv) WHERE ntrgm BETWEEN 13 AND 14;
CREATE INDEX keyword_metrics_trgm_t04_idx ON keyword_metrics USING gin (keyword gin_trgm_ops) WHERE ntrgm BETWEEN 13 AND 14;
CREATE INDEX keyword_metrics_tsv_t05_idx ON keyword_metrics USING gin (tsv) WHERE ntrgm BETWEEN 15 AND 16;
CREATE INDEX keyword_metrics_trgm_t05_idx ON keyword_metrics USING gin (keyword gin_trgm_ops) WHERE ntrgm BETWEEN 15 AND 16;
CREATE INDEX keyword_metrics_tsv_t06_idx ON keyword_metrics USING gin (tsv) WHERE ntrgm BETWEEN 17 AND 19;
CREATE INDEX keyword_metrics_trgm_t06_idx ON keyword_metrics USING gin (keyword gin_trgm_ops) WHERE ntrgm BETWEEN 17 AND 19;
CREATE INDEX keyword_metrics_tsv_t07_idx ON keyword_metrics USING gin (tsv) WHERE ntrgm BETWEEN 20 AND 22;
CREATE INDEX keyword_metrics_trgm_t07_idx ON keyword_metrics USING gin (keyword gin_trgm_ops) WHERE ntrgm BETWEEN 20 AND 22;
CREATE INDEX keyword_metrics_tsv_t08_idx ON keyword_metrics USING gin (tsv) WHERE ntrgm BETWEEN 23 AND 26;
CREATE INDEX keyword_metrics_trgm_t08_idx ON keyword_metrics USING gin (keyword gin_trgm_ops) WHERE ntrgm BETWEEN 23 AND 26;
CREATE INDEX keyword_metrics_tsv_t09_idx ON keyword_metrics USING gin (tsv) WHERE ntrgm BETWEEN 27 AND 31;
CREATE INDEX keyword_metrics_trgm_t09_idx ON keyword_metrics USING gin (keyword gin_trgm_ops) WHERE ntrgm BETWEEN 27 AND 31;
CREATE INDEX keyword_metrics_tsv_t10_idx ON keyword_metrics USING gin (tsv) WHERE ntrgm BETWEEN 32 AND 37;
CREATE INDEX keyword_metrics_trgm_t10_idx ON keyword_metrics USING gin (keyword gin_trgm_ops) WHERE ntrgm BETWEEN 32 AND 37;
CREATE INDEX keyword_metrics_tsv_t11_idx ON keyword_metrics USING gin (tsv) WHERE ntrgm BETWEEN 38 AND 44;
CREATE INDEX keyword_metrics_trgm_t11_idx ON keyword_metrics USING gin (keyword gin_trgm_ops) WHERE ntrgm BETWEEN 38 AND 44;
CREATE INDEX keyword_metrics_tsv_t12_idx ON keyword_metrics USING gin (tsv) WHERE ntrgm BETWEEN 45 AND 53;
CREATE INDEX keyword_metrics_trgm_t12_idx ON keyword_metrics USING gin (keyword gin_trgm_ops) WHERE ntrgm BETWEEN 45 AND 53;
CREATE INDEX keyword_metrics_tsv_t13_idx ON keyword_metrics USING gin (tsv) WHERE ntrgm >= 54;
CREATE INDEX keyword_metrics_trgm_t13_idx ON keyword_metrics USING gin (keyword gin_trgm_ops) WHERE ntrgm >= 54;
ANALYZE keyword_metrics;
