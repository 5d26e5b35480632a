package report

import "testing"

// What a call reserves (CostOf, the price of its limit) and what its answer is charged
// (Settle, by what it holds): keyword lists per started block of rows returned, at least one
// block, nothing for an empty later page; recommend per started 2 items, at most 15.
func TestReserveAndSettle(t *testing.T) {
	limit := func(n int) *int { return &n }
	research := func(n int, cursor string) Request {
		r := &ResearchRequest{}
		r.Limit, r.Cursor = limit(n), cursor
		return r
	}
	rankings := func(n int, cursor string) Request {
		r := &RankingsRequest{}
		r.Limit, r.Cursor = limit(n), cursor
		return r
	}
	gaps := func(n int) Request {
		r := &GapsRequest{}
		r.Limit = limit(n)
		return r
	}
	recommend := func(n int) Request { return &RecommendRequest{Limit: limit(n)} }
	cases := []struct {
		what              string
		kind              Kind
		req               Request
		rows              int
		reserved, settled int
	}{
		{"rankings 1000, none", KindRankings, rankings(1000, ""), 0, 25, 5},
		{"rankings 1000, 201", KindRankings, rankings(1000, ""), 201, 25, 10},
		{"rankings 1000, all", KindRankings, rankings(1000, ""), 1000, 25, 25},
		{"rankings later page, none", KindRankings, rankings(1000, "c"), 0, 25, 0},
		{"rankings later page, one", KindRankings, rankings(1000, "c"), 1, 25, 5},
		{"research 50, 7", KindResearch, research(50, ""), 7, 5, 5},
		{"research 1000, 101", KindResearch, research(1000, ""), 101, 50, 10},
		{"research later page, none", KindResearch, research(100, "c"), 0, 5, 0},
		{"gaps 1000, 0", KindGaps, gaps(1000), 0, 50, 10},
		{"gaps 1000, 399", KindGaps, gaps(1000), 399, 50, 20},
		{"recommend 5, 1", KindRecommend, recommend(5), 1, 9, 3},
		{"recommend 5, 5", KindRecommend, recommend(5), 5, 9, 9},
		{"recommend 10, 0", KindRecommend, recommend(10), 0, 15, 3},
		{"recommend 10, 10", KindRecommend, recommend(10), 10, 15, 15},
		{"recommend 50, 50", KindRecommend, recommend(50), 50, 15, 15},
		{"recommend 50, 3", KindRecommend, recommend(50), 3, 15, 6},
	}
	for _, c := range cases {
		a, _ := Lookup(string(c.kind))
		c.req.defaults()
		if got := a.CostOf(c.req); got != c.reserved {
			t.Errorf("%s: reserves %d, want %d", c.what, got, c.reserved)
		}
		if got := a.Settle(c.req, c.rows); got != c.settled {
			t.Errorf("%s: settles %d, want %d", c.what, got, c.settled)
		}
	}
	audit, _ := Lookup(string(KindAudit))
	if got := audit.Settle(&AuditRequest{}, 0); got != 15 {
		t.Errorf("audit settles %d, want its price 15", got)
	}
}
