-- +goose Up
-- Several pages of one domain may rank for one keyword (a Search Console export lists every
-- page of a query), and two such pages are what ranking-based cannibalization looks for: a
-- ranking is keyed by its URL too. The URL enters the key as its MD5 (16 bytes), so a long
-- URL cannot overflow a B-tree entry; a row without a URL has the hash of ''.
-- The key carries the position so that gaps read a competitor's rankings from the index
-- alone.
ALTER TABLE domain_rankings
    ADD COLUMN url_hash uuid GENERATED ALWAYS AS (md5(coalesce(url, ''))::uuid) STORED;
ALTER TABLE domain_rankings DROP CONSTRAINT domain_rankings_pkey;
ALTER TABLE domain_rankings
    ADD CONSTRAINT domain_rankings_pkey PRIMARY KEY (domain, country, language, keyword_norm, url_hash)
    INCLUDE (position);
-- Every query over rankings starts from a domain, which the key covers; the index by
-- keyword alone only slowed imports (random inserts into a second large B-tree).
DROP INDEX domain_rankings_keyword_idx;

-- +goose Down
-- One row per domain and keyword again: the best position (then the first URL) is kept.
DELETE FROM domain_rankings d
USING domain_rankings b
WHERE b.domain = d.domain AND b.country = d.country AND b.language = d.language
  AND b.keyword_norm = d.keyword_norm
  AND (b.position, coalesce(b.url, ''), b.url_hash) < (d.position, coalesce(d.url, ''), d.url_hash);
ALTER TABLE domain_rankings DROP CONSTRAINT domain_rankings_pkey;
ALTER TABLE domain_rankings DROP COLUMN url_hash;
ALTER TABLE domain_rankings ADD PRIMARY KEY (domain, country, language, keyword_norm);
CREATE INDEX domain_rankings_keyword_idx ON domain_rankings (country, language, keyword_norm);
