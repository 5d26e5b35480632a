-- +goose Up
-- The keyword sets' values (00029, 00038, 00043) are stored as they are, out of line, not
-- compressed: Roaring bitmaps, positions as 16-bit numbers and the keyword texts in
-- chunks gain nothing from PostgreSQL's pglz (10M keywords, 30M rankings: 42 MB of ids,
-- 56 MB of positions and 225 MB of texts, each stored at its own size), yet every value
-- was compressed before being stored whole. Without the attempt, writing them all, the
-- last step of a ranking import, took 2.1 s instead of 6.4 s (each table's rows copied
-- into a table of each kind, twice).
ALTER TABLE domain_keyword_sets
    ALTER COLUMN ids SET STORAGE EXTERNAL,
    ALTER COLUMN positions SET STORAGE EXTERNAL;
ALTER TABLE keyword_set_keywords ALTER COLUMN norms SET STORAGE EXTERNAL;

-- +goose Down
ALTER TABLE domain_keyword_sets
    ALTER COLUMN ids SET STORAGE EXTENDED,
    ALTER COLUMN positions SET STORAGE EXTENDED;
ALTER TABLE keyword_set_keywords ALTER COLUMN norms SET STORAGE EXTENDED;
