-- +goose Up
-- The keywords the keyword sets number (00029): each market's ranked keywords in id order,
-- their normalised texts joined by NUL bytes (text never holds one), written by the same
-- build as the sets. The keyword columns (package local, columns.go) read them in one value
-- instead of grouping every ranking of the market again (seconds at 3M rankings). Stored
-- uncompressed: they are read whole, and compressing 20 MB costs more than it saves.
CREATE TABLE keyword_set_keywords (
    country  text COLLATE "C" NOT NULL,
    language text COLLATE "C" NOT NULL,
    keywords integer NOT NULL,
    norms    bytea NOT NULL,
    PRIMARY KEY (country, language)
);
ALTER TABLE keyword_set_keywords ALTER COLUMN norms SET STORAGE EXTERNAL;

-- +goose Down
DROP TABLE keyword_set_keywords;
