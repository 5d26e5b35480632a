package local

import (
	"context"
	"fmt"

	"github.com/contentapi/contentapi/internal/keywords"
)

// Competitors is not built yet.
func (p *Provider) Competitors(ctx context.Context, req keywords.CompetitorsRequest) (keywords.CompetitorList, error) {
	return keywords.CompetitorList{}, fmt.Errorf("competitors: %w", keywords.ErrUnsupported)
}
