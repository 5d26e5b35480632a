-- +goose Up
-- The trigram count of a keyword (ntrgm, 00014) becomes a plain column that the importer
-- fills, like the keys of 00015: Go counts the trigrams of an ASCII keyword, after checking
-- that it agrees with show_trgm on this server (internal/keywords/importer/keys.go). As a
-- generated column it cost show_trgm's array of trigram strings per row written: 4.7 s of
-- CPU for a million keywords, more than a third of what writing them cost. A row written
-- without it (the sample set, a hand-written INSERT, a keyword not ASCII) has it computed
-- here, and a change of the keyword recomputes it.
ALTER TABLE keyword_metrics ALTER COLUMN ntrgm DROP EXPRESSION;

-- +goose StatementBegin
CREATE FUNCTION keyword_trigram_count_fill() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.ntrgm := least(coalesce(array_length(show_trgm(NEW.keyword), 1), 0), 32767);
    RETURN NEW;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER keyword_metrics_trgm_insert BEFORE INSERT ON keyword_metrics
    FOR EACH ROW WHEN (NEW.ntrgm IS NULL) EXECUTE FUNCTION keyword_trigram_count_fill();
CREATE TRIGGER keyword_metrics_trgm_update BEFORE UPDATE OF keyword, ntrgm ON keyword_metrics
    FOR EACH ROW WHEN (NEW.keyword IS DISTINCT FROM OLD.keyword OR NEW.ntrgm IS DISTINCT FROM OLD.ntrgm)
    EXECUTE FUNCTION keyword_trigram_count_fill();

-- +goose Down
DROP TRIGGER keyword_metrics_trgm_update ON keyword_metrics;
DROP TRIGGER keyword_metrics_trgm_insert ON keyword_metrics;
DROP FUNCTION keyword_trigram_count_fill();
-- A column cannot become generated again: it is added anew, and the tier indexes over it
-- made again from their definitions.
-- +goose StatementBegin
DO $$
DECLARE
    defs text[] := ARRAY(SELECT pg_get_indexdef(i.indexrelid) FROM pg_index i
                         WHERE i.indrelid = 'keyword_metrics'::regclass
                           AND pg_get_indexdef(i.indexrelid) LIKE '%ntrgm%');
    def text;
BEGIN
    ALTER TABLE keyword_metrics DROP COLUMN ntrgm;
    ALTER TABLE keyword_metrics
        ADD COLUMN ntrgm smallint GENERATED ALWAYS AS (
            least(coalesce(array_length(show_trgm(keyword), 1), 0), 32767)) STORED;
    FOREACH def IN ARRAY defs LOOP
        EXECUTE def;
    END LOOP;
END
$$;
-- +goose StatementEnd
