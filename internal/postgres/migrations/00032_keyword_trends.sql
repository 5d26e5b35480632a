-- +goose Up
-- Monthly search volumes and their trend, where an import has them (issue 20): Keyword
-- Planner's "Searches: Mon YYYY" columns and DataForSEO's monthly_searches give volumes,
-- Semrush's "Trend" only relative interest (the trend, no volumes). monthly_volumes holds
-- consecutive months from monthly_from (the first day of the first month), NULL for a month
-- the export left blank; trend is the rule of keywords.Trend, computed at import. All NULL
-- when unknown: nothing is made up.
ALTER TABLE keyword_metrics
    ADD COLUMN monthly_from date,
    ADD COLUMN monthly_volumes bigint[],
    ADD COLUMN trend text CHECK (trend IN ('increasing', 'stable', 'decreasing')),
    ADD CONSTRAINT keyword_metrics_monthly_check CHECK ((monthly_from IS NULL) = (monthly_volumes IS NULL));

-- +goose Down
ALTER TABLE keyword_metrics
    DROP CONSTRAINT keyword_metrics_monthly_check,
    DROP COLUMN trend,
    DROP COLUMN monthly_volumes,
    DROP COLUMN monthly_from;
