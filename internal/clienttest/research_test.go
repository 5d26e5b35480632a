package clienttest

import (
	"context"
	"testing"

	"github.com/contentapi/contentapi/client"
	"github.com/contentapi/contentapi/internal/keywords/sample"
)

// Research page by page through the client: every keyword once, as many as Total.
func TestClientResearchPaging(t *testing.T) {
	s := startService(t, serviceConfig{})
	ctx := context.Background()
	c := client.New(s.registerKey(t, false), client.WithBaseURL(s.URL))
	req := client.ResearchRequest{Domain: sample.Domains()[0], Topic: "coffee", Limit: 9,
		Query: client.Query{OrderBy: []string{"search_volume.desc"}}}
	seen := map[string]bool{}
	total, pages := -1, 0
	for page, err := range c.KeywordResearchPages(ctx, req) {
		if err != nil || pages > 10 {
			t.Fatalf("page %d: %v", pages, err)
		}
		pages++
		if total >= 0 && page.Total != total {
			t.Fatalf("page %d: total %d, was %d", pages, page.Total, total)
		}
		total = page.Total
		for _, cl := range page.Clusters {
			for _, k := range cl.Keywords {
				if seen[k.Keyword] {
					t.Fatalf("%q twice", k.Keyword)
				}
				seen[k.Keyword] = true
			}
		}
	}
	if len(seen) != total || total <= 9 {
		t.Fatalf("paged %d keywords, total %d", len(seen), total)
	}
}
