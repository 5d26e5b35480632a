-- +goose Up
-- A random token that changes with every move of the keyword data's generation (any write
-- to domain_rankings or keyword_metrics, and every table switch of an import). The
-- generation numbers the versions of one database; the token names one version among
-- every database and every restore of one (a backup restored brings back its own token, and
-- the writes after it draw new ones where the generation would count again from the
-- backup's). The workers name the files they share a market's keyword columns through by it
-- (package local, columnfile.go): a file is only ever read for the data it was written from.
ALTER TABLE keyword_data_state ADD COLUMN token uuid NOT NULL DEFAULT gen_random_uuid();

-- +goose StatementBegin
CREATE FUNCTION keyword_data_token() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.token := gen_random_uuid();
    RETURN NEW;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER keyword_data_state_token BEFORE UPDATE OF generation ON keyword_data_state
    FOR EACH ROW WHEN (NEW.generation IS DISTINCT FROM OLD.generation) EXECUTE FUNCTION keyword_data_token();

-- +goose Down
DROP TRIGGER keyword_data_state_token ON keyword_data_state;
DROP FUNCTION keyword_data_token();
ALTER TABLE keyword_data_state DROP COLUMN token;
