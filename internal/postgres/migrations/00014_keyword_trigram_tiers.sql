-- +goose Up
-- Keyword ideas rank a bounded candidate set, read in order of trigram similarity to the term
-- (internal/keywords/local/ideas.go). A keyword of m distinct trigrams is at most
-- min(n, m) / max(n, m) similar to a term of n (similarity = shared / (n + m - shared)), and
-- one holding the term's words is about that similar. So the full-text and the trigram
-- index are split by m into tiers, one partial GIN index per tier and kind: a look-up in a
-- tier's index returns that tier's matches only, and the tiers nearest the term are read
-- first, until enough are found. One GIN index cannot do this: it returns every match (a
-- common word: 50,000 of a million keywords) in table order, and the trigram index cannot
-- tell a long keyword from a short one, so the most similar were found by rechecking tens of
-- thousands of rows. The tier bounds are ideasTiers in ideas.go (a test checks that each
-- tier's look-up uses its two indexes). The word count of 00011 gives way to the trigram
-- count, which bounds similarity.
DROP INDEX keyword_metrics_tsv_words_idx;
DROP INDEX keyword_metrics_trgm_words_idx;
ALTER TABLE keyword_metrics DROP COLUMN words;
ALTER TABLE keyword_metrics
    ADD COLUMN ntrgm smallint GENERATED ALWAYS AS (
        least(coalesce(array_length(show_trgm(keyword), 1), 0), 32767)) STORED;
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

-- +goose Down
DROP INDEX keyword_metrics_tsv_t00_idx;
DROP INDEX keyword_metrics_trgm_t00_idx;
DROP INDEX keyword_metrics_tsv_t01_idx;
DROP INDEX keyword_metrics_trgm_t01_idx;
DROP INDEX keyword_metrics_tsv_t02_idx;
DROP INDEX keyword_metrics_trgm_t02_idx;
DROP INDEX keyword_metrics_tsv_t03_idx;
DROP INDEX keyword_metrics_trgm_t03_idx;
DROP INDEX keyword_metrics_tsv_t04_idx;
DROP INDEX keyword_metrics_trgm_t04_idx;
DROP INDEX keyword_metrics_tsv_t05_idx;
DROP INDEX keyword_metrics_trgm_t05_idx;
DROP INDEX keyword_metrics_tsv_t06_idx;
DROP INDEX keyword_metrics_trgm_t06_idx;
DROP INDEX keyword_metrics_tsv_t07_idx;
DROP INDEX keyword_metrics_trgm_t07_idx;
DROP INDEX keyword_metrics_tsv_t08_idx;
DROP INDEX keyword_metrics_trgm_t08_idx;
DROP INDEX keyword_metrics_tsv_t09_idx;
DROP INDEX keyword_metrics_trgm_t09_idx;
DROP INDEX keyword_metrics_tsv_t10_idx;
DROP INDEX keyword_metrics_trgm_t10_idx;
DROP INDEX keyword_metrics_tsv_t11_idx;
DROP INDEX keyword_metrics_trgm_t11_idx;
DROP INDEX keyword_metrics_tsv_t12_idx;
DROP INDEX keyword_metrics_trgm_t12_idx;
DROP INDEX keyword_metrics_tsv_t13_idx;
DROP INDEX keyword_metrics_trgm_t13_idx;
ALTER TABLE keyword_metrics DROP COLUMN ntrgm;
ALTER TABLE keyword_metrics
    ADD COLUMN words smallint GENERATED ALWAYS AS (
        least(array_length(regexp_split_to_array(btrim(keyword), '\s+'), 1), 32767)) STORED;
CREATE INDEX keyword_metrics_tsv_words_idx ON keyword_metrics USING gin (tsv, words);
CREATE INDEX keyword_metrics_trgm_words_idx ON keyword_metrics USING gin (keyword gin_trgm_ops, words);
