package local

import (
	"context"
	"fmt"

	"github.com/contentapi/contentapi/internal/keywords"
)

// syntheticDomainsSQL picks, of the domains $3, those with a made-up ranking row in the
// market: a probe each of the partial index of synthetic rankings (migration 00042), which
// holds nothing once only imported data is left.
const syntheticDomainsSQL = `
SELECT d.domain FROM unnest($3::text[]) AS d(domain)
WHERE EXISTS (
    SELECT 1 FROM domain_rankings r
    WHERE r.country = $1 AND r.language = $2 AND r.domain = d.domain AND r.synthetic)`

// labelCompetitors marks the competitor list as counted on made-up rows where it is: the
// asked domain's rankings (then every competitor's shared keywords are), and each
// competitor's of the page. Competitor discovery reads positions alone, so without this
// an answer on the sample set would pass for imported data.
func (p *Provider) labelCompetitors(ctx context.Context, country, language, domain string, out *keywords.CompetitorList, page []keywords.Competitor) error {
	domains := make([]string, 0, len(page)+1)
	domains = append(domains, domain)
	for _, c := range page {
		domains = append(domains, c.Domain)
	}
	made, err := collectKeys(p.pool.Query(ctx, syntheticDomainsSQL, country, language, domains))
	if err != nil {
		return fmt.Errorf("local: competitor labels: %w", err)
	}
	set := make(map[string]bool, len(made))
	for _, d := range made {
		set[d] = true
	}
	out.Synthetic = set[domain]
	for i := range page {
		page[i].Synthetic = out.Synthetic || set[page[i].Domain]
	}
	return nil
}
