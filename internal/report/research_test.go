package report

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/keywords"
)

// ideasFirst is the real provider whose Ranked answers only once Ideas has been called.
type ideasFirst struct {
	keywords.Provider
	asked chan struct{}
}

func (p ideasFirst) Ideas(ctx context.Context, r keywords.IdeasRequest) (keywords.IdeaList, error) {
	close(p.asked)
	return p.Provider.Ideas(ctx, r)
}

func (p ideasFirst) Ranked(ctx context.Context, r keywords.RankedRequest) ([]keywords.Ranking, error) {
	select {
	case <-p.asked:
		return p.Provider.Ranked(ctx, r)
	case <-ctx.Done():
		return nil, errors.New("ideas were not asked while the rankings were read")
	}
}

// With a topic, the ideas do not wait for the domain's rankings: both are read at once.
func TestResearchReadsIdeasWithRankings(t *testing.T) {
	b := newBuilder(t)
	b.Keywords = ideasFirst{Provider: b.Keywords, asked: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r := ResearchRequest{Domain: "coffee-sample.example", Topic: "cold brew"}
	if err := r.Normalize(Options{}); err != nil {
		t.Fatal(err)
	}
	res, err := b.Research(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if res.TotalKeywords == 0 {
		t.Errorf("no ideas: %+v", res)
	}
}

// A failure of either read fails the answer and names the read.
func TestResearchReadFails(t *testing.T) {
	b := newBuilder(t)
	r := ResearchRequest{Domain: "coffee-sample.example", Topic: "cold brew"}
	if err := r.Normalize(Options{}); err != nil {
		t.Fatal(err)
	}
	b.Keywords = failingProvider{Provider: newBuilder(t).Keywords, ranked: errOutage}
	if _, err := b.Research(context.Background(), r); !errors.Is(err, errOutage) || err.Error() != "ranked keywords: "+errOutage.Error() {
		t.Errorf("rankings failing: %v", err)
	}
	b.Keywords = failingProvider{Provider: newBuilder(t).Keywords, ideas: errOutage}
	if _, err := b.Research(context.Background(), r); !errors.Is(err, errOutage) || err.Error() != "keyword ideas: "+errOutage.Error() {
		t.Errorf("ideas failing: %v", err)
	}
}

// cannedIdeas is the real provider whose Ideas answer one fixed list.
type cannedIdeas struct {
	keywords.Provider
	list keywords.IdeaList
}

func (p cannedIdeas) Ideas(context.Context, keywords.IdeasRequest) (keywords.IdeaList, error) {
	return p.list, nil
}

// A provider whose total counts ideas the relevance rule left out (DataForSEO's
// total_count) and whose first page is left empty: NO_DATA naming them, not an empty answer;
// with ideas, the total is flagged as an upper bound.
func TestResearchEmptyFirstPageIsNoData(t *testing.T) {
	b := newBuilder(t)
	localData := b.Keywords
	b.Keywords = cannedIdeas{Provider: localData, list: keywords.IdeaList{Ideas: []keywords.Keyword{}, Total: 4, Estimated: true,
		Dropped: []keywords.Keyword{{Keyword: "remote work tools"}}}}
	r := ResearchRequest{Domain: "coffee-sample.example", Topic: "seo tools"}
	if err := r.Normalize(Options{}); err != nil {
		t.Fatal(err)
	}
	_, err := b.Research(context.Background(), r)
	if e, ok := apperr.As(err); !ok || e.Code != apperr.NoData || !strings.Contains(e.Message, "remote work tools") {
		t.Fatalf("empty first page: %v; want NO_DATA naming the keyword left out", err)
	}
	b.Keywords = cannedIdeas{Provider: localData, list: keywords.IdeaList{Ideas: []keywords.Keyword{{Keyword: "seo audit tools"}}, Total: 4,
		Estimated: true, Next: "t:1:x"}}
	res, err := b.Research(context.Background(), r)
	if err != nil || res.Total != 4 || res.TotalKeywords != 1 || len(res.meta.Warnings) == 0 ||
		!strings.Contains(strings.Join(res.meta.Warnings, " "), "upper bound") {
		t.Fatalf("estimated total: %+v, %v", res, err)
	}
}
