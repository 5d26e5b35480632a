-- +goose Up
-- The key columns of the keyword tables compare byte by byte (collation "C"). Under the
-- database's collation every comparison of a B-tree build or look-up calls strcoll, and
-- PostgreSQL 15 sorts such text without abbreviated keys: building an index of a million
-- keyword_norm values took 6.3 s under C.UTF-8 and 2.2 s under "C" on this machine (the
-- importer builds the keys on every large load, see internal/keywords/importer/swap.go).
-- Equality is the same under both (byte equality); the order differs only where the
-- database's collation is not code point order (C.UTF-8 is), and the queries order by
-- these columns only to break ties. keyword_metrics.language keeps its collation: the
-- generated full-text column reads it, and PostgreSQL cannot change the type of such a
-- column (its values are equal within a market, which a comparison settles without
-- strcoll).
--
-- Nor can it change the type of a column a trigger's WHEN names (the key triggers of
-- 00015): keyword_tables_alter runs statements on the keyword tables with their triggers
-- dropped, then makes the triggers again as they were.
-- +goose StatementBegin
CREATE FUNCTION keyword_tables_alter(statements text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    tables regclass[] := ARRAY['keyword_metrics'::regclass, 'domain_rankings'::regclass];
    defs text[] := ARRAY(SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgrelid = ANY (tables) AND NOT tgisinternal);
    t record;
    def text;
BEGIN
    FOR t IN SELECT tgname, tgrelid::regclass AS rel FROM pg_trigger WHERE tgrelid = ANY (tables) AND NOT tgisinternal LOOP
        EXECUTE format('DROP TRIGGER %I ON %s', t.tgname, t.rel);
    END LOOP;
    EXECUTE statements;
    FOREACH def IN ARRAY defs LOOP
        EXECUTE def;
    END LOOP;
END
$$;
-- +goose StatementEnd
-- +goose StatementBegin
SELECT keyword_tables_alter($$
    ALTER TABLE keyword_metrics
        ALTER COLUMN country TYPE text COLLATE "C",
        ALTER COLUMN keyword_norm TYPE text COLLATE "C";
    ALTER TABLE domain_rankings
        ALTER COLUMN domain TYPE text COLLATE "C",
        ALTER COLUMN country TYPE text COLLATE "C",
        ALTER COLUMN language TYPE text COLLATE "C",
        ALTER COLUMN keyword_norm TYPE text COLLATE "C"$$);
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
SELECT keyword_tables_alter($$
    ALTER TABLE keyword_metrics
        ALTER COLUMN country TYPE text COLLATE pg_catalog."default",
        ALTER COLUMN keyword_norm TYPE text COLLATE pg_catalog."default";
    ALTER TABLE domain_rankings
        ALTER COLUMN domain TYPE text COLLATE pg_catalog."default",
        ALTER COLUMN country TYPE text COLLATE pg_catalog."default",
        ALTER COLUMN language TYPE text COLLATE pg_catalog."default",
        ALTER COLUMN keyword_norm TYPE text COLLATE pg_catalog."default"$$);
-- +goose StatementEnd
DROP FUNCTION keyword_tables_alter(text);
