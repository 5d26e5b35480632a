-- +goose Up
-- domain_rankings.language compares under the database's collation again, as
-- keyword_metrics.language does (00017 could not change that one): a join of the two tables
-- on language compared under "C", which the keyword table's primary key, built under the
-- database's collation, cannot serve, so a domain's rankings joined with their keywords'
-- metrics scanned the whole market's key (keyword research at 1M keywords: 50 to 500 ms).
-- +goose StatementBegin
SELECT keyword_tables_alter($$
    ALTER TABLE domain_rankings ALTER COLUMN language TYPE text COLLATE pg_catalog."default"$$);
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
SELECT keyword_tables_alter($$
    ALTER TABLE domain_rankings ALTER COLUMN language TYPE text COLLATE "C"$$);
-- +goose StatementEnd
