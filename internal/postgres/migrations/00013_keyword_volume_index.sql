-- +goose Up
-- Competitor gaps against a large competitor read the keyword table in search-volume order
-- and stop at the page's last gap (internal/keywords/local/gaps.go).
CREATE INDEX keyword_metrics_volume_idx
    ON keyword_metrics (country, language, search_volume DESC NULLS LAST, keyword_norm);

-- +goose Down
DROP INDEX keyword_metrics_volume_idx;
