-- +goose Up
-- The language columns of the keyword tables compare byte by byte (collation "C"), as
-- their other key columns do since 00017. Under the database's collation (C.UTF-8 here)
-- PostgreSQL 15 compares them through strcoll, without abbreviated keys, and language is
-- the third column of domain_rankings' primary key and of its by-keyword index: a large
-- import builds both, and rows of one domain and market, or of one keyword and market,
-- reach the language on every comparison (docs/keyword-data-at-scale.md measured the key
-- built with language under "C" in 62.7 s against 79.7 s). The three tables change
-- together: a join of keyword_metrics and domain_rankings on language compares under "C"
-- when only one is (a column's collation wins over the default), which the other's
-- indexes cannot serve (the reason 00020 put domain_rankings' back).
--
-- Languages are two lower-case ASCII letters (the tables' CHECK constraints), whose byte
-- order is their order under any collation: no answer's order changes. The tables are not
-- rewritten (the type stays text); their indexes that hold language are rebuilt once.
-- +goose StatementBegin
SELECT keyword_tables_alter($$
    ALTER TABLE keyword_metrics ALTER COLUMN language TYPE text COLLATE "C";
    ALTER TABLE domain_rankings ALTER COLUMN language TYPE text COLLATE "C"$$);
-- +goose StatementEnd
ALTER TABLE keyword_words ALTER COLUMN language TYPE text COLLATE "C";

-- +goose Down
-- +goose StatementBegin
SELECT keyword_tables_alter($$
    ALTER TABLE keyword_metrics ALTER COLUMN language TYPE text COLLATE pg_catalog."default";
    ALTER TABLE domain_rankings ALTER COLUMN language TYPE text COLLATE pg_catalog."default"$$);
-- +goose StatementEnd
ALTER TABLE keyword_words ALTER COLUMN language TYPE text COLLATE pg_catalog."default";
