package local_test

import (
	"context"
	"maps"
	"testing"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/local"
)

// A domain ranking for one keyword with two URLs: Ranked lists both, gaps see the keyword
// once with the domain's best position, and the domain's own second URL does not make a
// gap of it.
func TestSeveralURLsPerKeyword(t *testing.T) {
	pool := db(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `
		INSERT INTO domain_rankings (domain, keyword, country, language, position, url, source)
		VALUES ('ours.example',  'multi kettle', 'au', 'en', 4, 'https://ours.example/kettle', 'test'),
		       ('ours.example',  'multi kettle', 'au', 'en', 9, 'https://ours.example/blog/kettle', 'test'),
		       ('comp3.example', 'multi kettle', 'au', 'en', 2, 'https://comp3.example/a', 'test'),
		       ('comp3.example', 'solo kettle',  'au', 'en', 6, 'https://comp3.example/b', 'test'),
		       ('comp3.example', 'solo kettle',  'au', 'en', 3, 'https://comp3.example/c', 'test')`); err != nil {
		t.Fatal(err)
	}
	p := local.New(pool)
	ranked, err := p.Ranked(ctx, keywords.RankedRequest{Domain: "ours.example", Country: "au", Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ranked) != 2 || ranked[0].URL != "https://ours.example/kettle" || ranked[0].Position != 4 ||
		ranked[1].URL != "https://ours.example/blog/kettle" || ranked[1].Position != 9 {
		t.Errorf("ranked %+v; want both URLs, best first", ranked)
	}
	list, err := p.Gaps(ctx, keywords.GapsRequest{Domain: "ours.example", Competitors: []string{"comp3.example"}, Country: "au", Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	gaps := list.Gaps
	if list.Total != 1 {
		t.Errorf("total %d, want the keyword counted once", list.Total)
	}
	if len(gaps) != 1 || gaps[0].Keyword.Keyword != "solo kettle" ||
		!maps.Equal(gaps[0].CompetitorPositions, map[string]int{"comp3.example": 3}) {
		t.Errorf("gaps %+v; want solo kettle once at comp3's best position 3", gaps)
	}
}
