-- +goose Up
-- The keywords' own version beside the keyword data's: keywords_generation and
-- keywords_token move only when keyword_metrics is written (or an import switches a new
-- keyword table in), not when the rankings are. Research's word index (package local,
-- wordindex.go) holds keywords only, so it is built again after a keyword import and kept
-- across ranking imports, which used to rebuild it (a 580 MB file at ten million keywords)
-- and leave research on the slower SQL look-ups meanwhile.
ALTER TABLE keyword_data_state
    ADD COLUMN keywords_generation bigint NOT NULL DEFAULT 0,
    ADD COLUMN keywords_token uuid NOT NULL DEFAULT gen_random_uuid();

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION keyword_data_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'keyword_metrics' THEN
        UPDATE keyword_data_state SET generation = generation + 1, keywords_generation = keywords_generation + 1;
    ELSE
        UPDATE keyword_data_state SET generation = generation + 1;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION keyword_table_replaced(tbl text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF tbl NOT IN ('domain_rankings', 'keyword_metrics') THEN
        RAISE EXCEPTION 'keyword_table_replaced: % holds no keyword data', tbl;
    END IF;
    IF tbl = 'keyword_metrics' THEN
        UPDATE keyword_data_state SET generation = generation + 1, keywords_generation = keywords_generation + 1;
    ELSE
        UPDATE keyword_data_state SET generation = generation + 1;
        UPDATE keyword_sets_state SET generation = generation + 1;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION keywords_token() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.keywords_token := gen_random_uuid();
    RETURN NEW;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER keyword_data_state_keywords_token BEFORE UPDATE OF keywords_generation ON keyword_data_state
    FOR EACH ROW WHEN (NEW.keywords_generation IS DISTINCT FROM OLD.keywords_generation) EXECUTE FUNCTION keywords_token();

-- +goose Down
DROP TRIGGER keyword_data_state_keywords_token ON keyword_data_state;
DROP FUNCTION keywords_token();
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION keyword_table_replaced(tbl text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF tbl NOT IN ('domain_rankings', 'keyword_metrics') THEN
        RAISE EXCEPTION 'keyword_table_replaced: % holds no keyword data', tbl;
    END IF;
    UPDATE keyword_data_state SET generation = generation + 1;
    IF tbl = 'domain_rankings' THEN
        UPDATE keyword_sets_state SET generation = generation + 1;
    END IF;
END
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION keyword_data_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE keyword_data_state SET generation = generation + 1;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
ALTER TABLE keyword_data_state DROP COLUMN keywords_token, DROP COLUMN keywords_generation;
