package report

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/crawler"
	"github.com/contentapi/contentapi/internal/keywords"
)

// Builder builds analysis answers.
type Builder struct {
	Keywords keywords.Provider
	Crawler  *crawler.Crawler
	Clock    clock.Clock
	// ThinWords is the main-content word count under which a page is thin.
	ThinWords int
}

// Run builds the answer of a job from its stored request; jobID names the answer where
// SPEC.md gives it an id (a recommendation plan's plan_id).
func (b *Builder) Run(ctx context.Context, kind, jobID string, request []byte) (any, error) {
	switch kind {
	case KindResearch:
		var r ResearchRequest
		if err := decode(request, &r); err != nil {
			return nil, err
		}
		return b.Research(ctx, r)
	case KindGaps:
		var r GapsRequest
		if err := decode(request, &r); err != nil {
			return nil, err
		}
		return b.Gaps(ctx, r)
	case KindAudit:
		var r AuditRequest
		if err := decode(request, &r); err != nil {
			return nil, err
		}
		res, err := b.Audit(ctx, r)
		if err != nil {
			return nil, err
		}
		res.meta = Meta{DataSource: SourceCrawl, Warnings: []string{}}
		return res, nil
	case KindRecommend:
		var r RecommendRequest
		if err := decode(request, &r); err != nil {
			return nil, err
		}
		return b.Recommend(ctx, r, jobID)
	case KindContentMap:
		var r ContentMapRequest
		if err := decode(request, &r); err != nil {
			return nil, err
		}
		return b.ContentMap(ctx, r)
	}
	return nil, fmt.Errorf("report: unknown kind %q: %w", kind, ErrBadJob)
}

// ErrBadJob marks a job whose stored request cannot be run at all.
var ErrBadJob = fmt.Errorf("job cannot be run")

func decode(raw []byte, v Request) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("report: stored request: %w: %w", err, ErrBadJob)
	}
	// The API stored a normalised request; normalising again fills any default a request
	// written another way lacks (it is idempotent), so a run never meets a missing field.
	// Address rules were applied by the API and are enforced again when connecting.
	if err := v.Normalize(Options{AllowPrivate: true}); err != nil {
		return fmt.Errorf("report: stored request: %w: %w", err, ErrBadJob)
	}
	return nil
}
