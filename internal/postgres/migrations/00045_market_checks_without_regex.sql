-- +goose Up
-- The market codes of the keyword tables are checked without a regular expression: two
-- bytes, each a lower-case ASCII letter. "country ~ '^[a-z]{2}$'"
-- and the same for language ran the regex engine twice for every row written (text to
-- wide characters, then the automaton): 22% of the server's CPU in a ranking import's
-- COPY, which holds one core for most of the import (docs/keyword-data-at-scale.md).
-- The new condition accepts exactly the strings the regex accepted: two bytes can only be
-- two one-byte (ASCII) characters in UTF-8 when the first is one, and each one's code is
-- 97 ('a') to 122 ('z'). The constraints keep their names; adding them reads each table once.
ALTER TABLE domain_rankings
    DROP CONSTRAINT domain_rankings_country_check,
    DROP CONSTRAINT domain_rankings_language_check,
    ADD CONSTRAINT domain_rankings_country_check CHECK (octet_length(country) = 2
        AND ascii(country) BETWEEN 97 AND 122 AND ascii(right(country, 1)) BETWEEN 97 AND 122),
    ADD CONSTRAINT domain_rankings_language_check CHECK (octet_length(language) = 2
        AND ascii(language) BETWEEN 97 AND 122 AND ascii(right(language, 1)) BETWEEN 97 AND 122);

ALTER TABLE keyword_metrics
    DROP CONSTRAINT keyword_metrics_country_check,
    DROP CONSTRAINT keyword_metrics_language_check,
    ADD CONSTRAINT keyword_metrics_country_check CHECK (octet_length(country) = 2
        AND ascii(country) BETWEEN 97 AND 122 AND ascii(right(country, 1)) BETWEEN 97 AND 122),
    ADD CONSTRAINT keyword_metrics_language_check CHECK (octet_length(language) = 2
        AND ascii(language) BETWEEN 97 AND 122 AND ascii(right(language, 1)) BETWEEN 97 AND 122);

-- +goose Down
ALTER TABLE domain_rankings
    DROP CONSTRAINT domain_rankings_country_check,
    DROP CONSTRAINT domain_rankings_language_check,
    ADD CONSTRAINT domain_rankings_country_check CHECK (country ~ '^[a-z]{2}$'),
    ADD CONSTRAINT domain_rankings_language_check CHECK (language ~ '^[a-z]{2}$');
ALTER TABLE keyword_metrics
    DROP CONSTRAINT keyword_metrics_country_check,
    DROP CONSTRAINT keyword_metrics_language_check,
    ADD CONSTRAINT keyword_metrics_country_check CHECK (country ~ '^[a-z]{2}$'),
    ADD CONSTRAINT keyword_metrics_language_check CHECK (language ~ '^[a-z]{2}$');
