-- +goose Up
-- Each market's keyword texts (00038) in chunks, numbered from 0 in id order, each holding
-- whole keywords and its own count: the build writes them as it reads them back from disk,
-- without holding a market's whole list (hundreds of MB at ten million keywords) in one
-- value. The columns read them in chunk order and join them with a NUL.
ALTER TABLE keyword_set_keywords ADD COLUMN chunk integer NOT NULL DEFAULT 0;
ALTER TABLE keyword_set_keywords DROP CONSTRAINT keyword_set_keywords_pkey;
ALTER TABLE keyword_set_keywords ADD PRIMARY KEY (country, language, chunk);
ALTER TABLE keyword_set_keywords ALTER COLUMN chunk DROP DEFAULT;

-- +goose Down
-- A market's texts in several rows cannot be one row again without joining them; the
-- columns group the keywords from the rankings until the next build writes them.
TRUNCATE keyword_set_keywords;
ALTER TABLE keyword_set_keywords DROP CONSTRAINT keyword_set_keywords_pkey;
ALTER TABLE keyword_set_keywords DROP COLUMN chunk;
ALTER TABLE keyword_set_keywords ADD PRIMARY KEY (country, language);
