package report

import (
	"context"
	"fmt"
	"net/http"
)

// Kind names an analysis. It is also its asynq task type and the kind of its job rows, so
// a kind once used is never renamed: queued jobs name it.
type Kind string

// The analyses.
const (
	KindResearch    Kind = "keywords:research"
	KindGaps        Kind = "keywords:gaps"
	KindRankings    Kind = "keywords:rankings"
	KindCompetitors Kind = "keywords:competitors"
	KindAudit       Kind = "content:audit"
	KindRecommend   Kind = "content:recommend"
	KindContentMap  Kind = "contentmap:build"
)

// Analysis is one paid analysis: its endpoint and price, its request, and how its answer is
// built. The API, the worker, the service information document and the dashboard all read
// Catalog, and the OpenAPI document's tests compare against it.
type Analysis struct {
	Kind   Kind
	Method string // of the endpoint
	Path   string // of the endpoint, with /v1
	Cost   int    // credits charged for an answer
	// RenderCost, when set, is charged instead of Cost for a request that asks for its
	// pages' JavaScript to be rendered (an audit's render: javascript): a browser renders
	// every page, several times the work of reading its HTML.
	RenderCost int
	// PageRows, when set, is the number of rows a call's price covers: a request whose limit
	// is larger costs the price once per started PageRows rows (a limit of 1,000 on gaps,
	// PageRows 200, costs 5 × 10 credits). Limits up to PageRows cost the price.
	PageRows int
	// ItemBlock and ItemCost, when set, price an answer by the items it delivers: ItemCost
	// per started ItemBlock items, at least one block and at most Cost (a plan of fewer
	// recommendations than asked costs less). A call reserves the price of its limit.
	ItemBlock, ItemCost int
	Summary             string // what it does, for the service information document
	// Rows, when set, returns an empty answer of the analysis to decode a stored one into:
	// its rows can be returned as CSV (see CSV).
	Rows func() Tabular
	// NewRequest returns an empty request, for the API to decode a body into and the worker
	// a stored request.
	NewRequest func() Request
	// Run builds the answer of a request of this analysis (one NewRequest returned). jobID
	// names the answer where it carries an id (a recommendation plan's plan_id).
	Run func(ctx context.Context, b *Builder, req Request, jobID string) (any, error)
}

// Catalog lists the analyses; one entry per endpoint.
var Catalog = []Analysis{
	{
		Kind: KindResearch, Method: http.MethodPost, Path: "/v1/keywords/research", Cost: 5, PageRows: 100, Rows: func() Tabular { return &ResearchResult{} },
		Summary:    "Keyword research with clusters, paged by cursor",
		NewRequest: func() Request { return &ResearchRequest{} },
		Run: func(ctx context.Context, b *Builder, req Request, _ string) (any, error) {
			return b.Research(ctx, *req.(*ResearchRequest))
		},
	},
	{
		Kind: KindGaps, Method: http.MethodPost, Path: "/v1/keywords/gaps", Cost: 10, PageRows: 200, Rows: func() Tabular { return &GapsResult{} },
		Summary:    "Competitor keyword gaps",
		NewRequest: func() Request { return &GapsRequest{} },
		Run: func(ctx context.Context, b *Builder, req Request, _ string) (any, error) {
			return b.Gaps(ctx, *req.(*GapsRequest))
		},
	},
	{
		Kind: KindRankings, Method: http.MethodPost, Path: "/v1/keywords/rankings", Cost: 5, PageRows: 200, Rows: func() Tabular { return &RankingsResult{} },
		Summary:    "A domain's rankings with estimated traffic",
		NewRequest: func() Request { return &RankingsRequest{} },
		Run: func(ctx context.Context, b *Builder, req Request, _ string) (any, error) {
			return b.Rankings(ctx, *req.(*RankingsRequest))
		},
	},
	{
		Kind: KindCompetitors, Method: http.MethodPost, Path: "/v1/keywords/competitors", Cost: 10, PageRows: 100, Rows: func() Tabular { return &CompetitorsResult{} },
		Summary:    "Competitor discovery: domains sharing the most ranked keywords",
		NewRequest: func() Request { return &CompetitorsRequest{} },
		Run: func(ctx context.Context, b *Builder, req Request, _ string) (any, error) {
			return b.Competitors(ctx, *req.(*CompetitorsRequest))
		},
	},
	{
		Kind: KindAudit, Method: http.MethodPost, Path: "/v1/content/audit", Cost: 15, RenderCost: 30, Rows: func() Tabular { return &AuditResult{} },
		Summary:    "Crawl and audit a site's content",
		NewRequest: func() Request { return &AuditRequest{} },
		Run: func(ctx context.Context, b *Builder, req Request, jobID string) (any, error) {
			res, err := b.Audit(ctx, *req.(*AuditRequest))
			if err != nil {
				return nil, err
			}
			return b.withChanges(ctx, res, jobID)
		},
	},
	{
		Kind: KindRecommend, Method: http.MethodPost, Path: "/v1/content/recommend", Cost: 15, ItemBlock: 2, ItemCost: 3,
		Summary:    "Content recommendations with outlines",
		NewRequest: func() Request { return &RecommendRequest{} },
		Run: func(ctx context.Context, b *Builder, req Request, jobID string) (any, error) {
			return b.Recommend(ctx, *req.(*RecommendRequest), jobID)
		},
	},
	{
		Kind: KindContentMap, Method: http.MethodPost, Path: "/v1/content-map", Cost: 25,
		Summary:    "Audit, rankings, gaps and recommendations in one call",
		NewRequest: func() Request { return &ContentMapRequest{} },
		Run: func(ctx context.Context, b *Builder, req Request, _ string) (any, error) {
			return b.ContentMap(ctx, *req.(*ContentMapRequest))
		},
	},
}

// Lookup returns the analysis of a kind (a job row's kind, or a task's type).
func Lookup(kind string) (Analysis, bool) {
	for _, a := range Catalog {
		if string(a.Kind) == kind {
			return a, true
		}
	}
	return Analysis{}, false
}

// renderedRequest is a request that may ask for JavaScript rendering.
type renderedRequest interface{ Rendered() bool }

// Renders reports whether req asks for its pages' JavaScript to be rendered.
func Renders(req Request) bool {
	r, ok := req.(renderedRequest)
	return ok && r.Rendered()
}

// CostOf is the credits a call of this request reserves, the most it can cost: RenderCost
// when it asks for rendering, else Cost, once per started PageRows rows of its limit, or
// ItemCost per started ItemBlock items of its limit, at most Cost.
func (a Analysis) CostOf(req Request) int {
	if a.RenderCost > 0 && Renders(req) {
		return a.RenderCost
	}
	if p, ok := req.(PagedRequest); ok && a.PageRows > 0 {
		return a.Cost * blocks(p.PageLimit(), a.PageRows)
	}
	if l, ok := req.(limitedRequest); ok && a.ItemBlock > 0 {
		return min(a.Cost, a.ItemCost*blocks(l.ItemLimit(), a.ItemBlock))
	}
	return a.Cost
}

// Settle is the credits an answer to req holding items rows (or items) costs, at most what
// the call reserved (CostOf): a keyword list is charged Cost per started PageRows rows it
// returns, at least once, except that a later page (sent with a cursor) holding no row
// costs nothing; an analysis priced by items is charged ItemCost per started ItemBlock items
// it delivers, at least once; any other answer costs its price.
func (a Analysis) Settle(req Request, items int) int {
	reserved := a.CostOf(req)
	if p, ok := req.(PagedRequest); ok && a.PageRows > 0 {
		if items == 0 && p.PageQuery().Cursor != "" {
			return 0
		}
		return min(reserved, a.Cost*blocks(items, a.PageRows))
	}
	if a.ItemBlock > 0 && !(a.RenderCost > 0 && Renders(req)) {
		return min(reserved, a.ItemCost*blocks(items, a.ItemBlock))
	}
	return reserved
}

// limitedRequest is a request asking for at most ItemLimit items (a plan's recommendations).
type limitedRequest interface{ ItemLimit() int }

// blocks is how many started blocks of size n hold items, at least one.
func blocks(items, n int) int {
	if items <= n {
		return 1
	}
	return (items + n - 1) / n
}

// SettleRule says, for a dry run's answer, what of its credits_cost (CostOf, the most the
// call can cost, reserved at the call) the answer is charged.
func (a Analysis) SettleRule(req Request) string {
	switch {
	case a.RenderCost > 0 && Renders(req):
	case a.PageRows > 0:
		return fmt.Sprintf("The price is the most this call can cost, reserved when it is accepted: the answer is charged %d credits "+
			"per started %d rows it returns (at least %d; a page sent with a cursor that returns no row costs nothing), "+
			"and the rest is given back.", a.Cost, a.PageRows, a.Cost)
	case a.ItemBlock > 0:
		return fmt.Sprintf("The price is the most this call can cost, reserved when it is accepted: the plan is charged %d credits "+
			"per started %d recommendations it delivers (at least %d), and the rest is given back.", a.ItemCost, a.ItemBlock, a.ItemCost)
	}
	return "The price is charged when the call succeeds; a call that fails costs nothing."
}

// CostText is the price as the service information document states it.
func (a Analysis) CostText() string {
	if a.RenderCost > 0 {
		return fmt.Sprintf("%d credits; %d with \"render\": \"javascript\"", a.Cost, a.RenderCost)
	}
	if a.PageRows > 0 {
		return fmt.Sprintf("%d credits per started %d rows returned, at least %d (a later page with no row: 0); "+
			"the call reserves the price of its limit and gives back the rest", a.Cost, a.PageRows, a.Cost)
	}
	if a.ItemBlock > 0 {
		return fmt.Sprintf("at most %d credits: %d per started %d items delivered, at least %d; "+
			"the call reserves the price of its limit and gives back the rest", a.Cost, a.ItemCost, a.ItemBlock, a.ItemCost)
	}
	return fmt.Sprintf("%d credits", a.Cost)
}
