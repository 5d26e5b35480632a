-- +goose Up
-- The keys an import matches rows by — keyword_norm, and a ranking's url_hash — become plain
-- columns that the importer fills (internal/keywords/importer: Go computes the MD5 and the
-- norm of an ASCII keyword, after checking that it agrees with keyword_normalize on this
-- server; PostgreSQL computes the others). As generated columns they cost a regular
-- expression (1.1 µs) and an MD5 round trip through hex text (0.9 µs) per row written: six
-- of the 30 seconds a 3-million-row ranking file took. A CHECK that they equal their
-- expression would cost the same, so there is none; instead a row written without them
-- (the sample set, tests, a hand-written INSERT) has them filled here, and a change of the
-- keyword or URL recomputes them. A trigger with a WHEN condition that is false costs
-- nothing like a call per row.
ALTER TABLE keyword_metrics ALTER COLUMN keyword_norm DROP EXPRESSION;
ALTER TABLE domain_rankings ALTER COLUMN keyword_norm DROP EXPRESSION;
ALTER TABLE domain_rankings ALTER COLUMN url_hash DROP EXPRESSION;

-- +goose StatementBegin
CREATE FUNCTION keyword_keys_fill() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.keyword_norm := keyword_normalize(NEW.keyword);
    IF TG_TABLE_NAME = 'domain_rankings' THEN
        NEW.url_hash := md5(coalesce(NEW.url, ''))::uuid;
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER keyword_metrics_keys_insert BEFORE INSERT ON keyword_metrics
    FOR EACH ROW WHEN (NEW.keyword_norm IS NULL) EXECUTE FUNCTION keyword_keys_fill();
CREATE TRIGGER keyword_metrics_keys_update BEFORE UPDATE OF keyword, keyword_norm ON keyword_metrics
    FOR EACH ROW WHEN (NEW.keyword IS DISTINCT FROM OLD.keyword OR NEW.keyword_norm IS DISTINCT FROM OLD.keyword_norm)
    EXECUTE FUNCTION keyword_keys_fill();
CREATE TRIGGER domain_rankings_keys_insert BEFORE INSERT ON domain_rankings
    FOR EACH ROW WHEN (NEW.keyword_norm IS NULL OR NEW.url_hash IS NULL) EXECUTE FUNCTION keyword_keys_fill();
CREATE TRIGGER domain_rankings_keys_update BEFORE UPDATE OF keyword, keyword_norm, url, url_hash ON domain_rankings
    FOR EACH ROW WHEN (NEW.keyword IS DISTINCT FROM OLD.keyword OR NEW.keyword_norm IS DISTINCT FROM OLD.keyword_norm
                       OR NEW.url IS DISTINCT FROM OLD.url OR NEW.url_hash IS DISTINCT FROM OLD.url_hash)
    EXECUTE FUNCTION keyword_keys_fill();

-- +goose Down
DROP TRIGGER domain_rankings_keys_update ON domain_rankings;
DROP TRIGGER domain_rankings_keys_insert ON domain_rankings;
DROP TRIGGER keyword_metrics_keys_update ON keyword_metrics;
DROP TRIGGER keyword_metrics_keys_insert ON keyword_metrics;
DROP FUNCTION keyword_keys_fill();
-- A column cannot become generated again: it is added anew, and the indexes over it with it.
ALTER TABLE domain_rankings DROP COLUMN keyword_norm, DROP COLUMN url_hash;
ALTER TABLE domain_rankings
    ADD COLUMN keyword_norm text GENERATED ALWAYS AS (keyword_normalize(keyword)) STORED,
    ADD COLUMN url_hash uuid GENERATED ALWAYS AS (md5(coalesce(url, ''))::uuid) STORED;
ALTER TABLE domain_rankings
    ADD CONSTRAINT domain_rankings_pkey PRIMARY KEY (domain, country, language, keyword_norm, url_hash)
    INCLUDE (position);
ALTER TABLE keyword_metrics DROP COLUMN keyword_norm;
ALTER TABLE keyword_metrics
    ADD COLUMN keyword_norm text GENERATED ALWAYS AS (keyword_normalize(keyword)) STORED;
ALTER TABLE keyword_metrics ADD PRIMARY KEY (country, language, keyword_norm);
CREATE INDEX keyword_metrics_volume_idx
    ON keyword_metrics (country, language, search_volume DESC NULLS LAST, keyword_norm);
