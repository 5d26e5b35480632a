-- +goose Up
-- An import that replaces domain_rankings or keyword_metrics by a new table (the importer's
-- switch: the new table's rows are written while it has no triggers, then it takes the old
-- one's name) writes every row without a statement the triggers see. The switch calls
-- keyword_table_replaced in its own transaction, so the versions the keyword sets, the
-- keyword columns and the answer cache are read at move on at the commit that makes the
-- new rows visible, as the statement triggers do for any other write.
-- +goose StatementBegin
CREATE FUNCTION keyword_table_replaced(tbl text) RETURNS void LANGUAGE plpgsql AS $$
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

-- +goose Down
DROP FUNCTION keyword_table_replaced(text);
