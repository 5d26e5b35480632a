-- +goose Up
-- Keyword ideas rank a bounded candidate set: matches are looked up by number of words, the
-- fewest first (a keyword holding the topic in fewer words is closer to it: higher
-- similarity, same full-text rank), until enough are found. Each GIN index carries the
-- word count (btree_gin) so that one index scan finds the matches of one word count.
CREATE EXTENSION IF NOT EXISTS btree_gin;
ALTER TABLE keyword_metrics
    ADD COLUMN words smallint GENERATED ALWAYS AS (
        least(array_length(regexp_split_to_array(btrim(keyword), '\s+'), 1), 32767)) STORED;
DROP INDEX keyword_metrics_tsv_idx;
DROP INDEX keyword_metrics_trgm_idx;
CREATE INDEX keyword_metrics_tsv_words_idx ON keyword_metrics USING gin (tsv, words);
CREATE INDEX keyword_metrics_trgm_words_idx ON keyword_metrics USING gin (keyword gin_trgm_ops, words);

-- +goose Down
DROP INDEX keyword_metrics_trgm_words_idx;
DROP INDEX keyword_metrics_tsv_words_idx;
ALTER TABLE keyword_metrics DROP COLUMN words;
CREATE INDEX keyword_metrics_tsv_idx ON keyword_metrics USING gin (tsv);
CREATE INDEX keyword_metrics_trgm_idx ON keyword_metrics USING gin (keyword gin_trgm_ops);
-- btree_gin stays: other objects may use it.
