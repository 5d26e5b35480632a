package client

import (
	"context"
	"iter"
)

// Cursor marks where a paged list goes on: a result's NextCursor, sent back as the next
// request's cursor (Query.Cursor, ListJobsOptions.Cursor) with the same other fields. The
// zero Cursor asks for the first page when sent, and means the last page when received.
type Cursor string

// pages walks a paged list: page asks for the page at *cursor (a field of the request it
// sends), next reads a page's NextCursor. Each walk starts at the cursor pages was given,
// and asks each next page with the previous page's NextCursor until a page without one (the
// last), the first error (yielded, then the walk ends), ctx ending or the loop's break.
// The request is the walk's own: one walk of a Seq at a time.
func pages[T any](ctx context.Context, cursor *Cursor, page func() (T, error), next func(T) Cursor) iter.Seq2[T, error] {
	first := *cursor
	return func(yield func(T, error) bool) {
		*cursor = first
		for {
			var zero T
			if err := ctx.Err(); err != nil {
				yield(zero, err)
				return
			}
			p, err := page()
			if err != nil {
				yield(zero, err)
				return
			}
			if !yield(p, nil) || next(p) == "" {
				return
			}
			*cursor = next(p)
		}
	}
}

// KeywordResearchPages walks KeywordResearch's pages from req.Cursor (the first page when
// ""): each page is a call, charged as one; break the loop to stop early. The walk ends at
// the first error, which it yields.
//
//	for page, err := range c.KeywordResearchPages(ctx, req) {
//		if err != nil {
//			return err
//		}
//		...
//	}
func (c *Client) KeywordResearchPages(ctx context.Context, req ResearchRequest) iter.Seq2[*ResearchResult, error] {
	return pages(ctx, &req.Cursor, func() (*ResearchResult, error) { return c.KeywordResearch(ctx, req) },
		func(r *ResearchResult) Cursor { return r.NextCursor })
}

// KeywordGapsPages walks KeywordGaps's pages as KeywordResearchPages walks research.
func (c *Client) KeywordGapsPages(ctx context.Context, req GapsRequest) iter.Seq2[*GapsResult, error] {
	return pages(ctx, &req.Cursor, func() (*GapsResult, error) { return c.KeywordGaps(ctx, req) },
		func(r *GapsResult) Cursor { return r.NextCursor })
}

// KeywordRankingsPages walks KeywordRankings's pages as KeywordResearchPages walks research.
func (c *Client) KeywordRankingsPages(ctx context.Context, req RankingsRequest) iter.Seq2[*RankingsResult, error] {
	return pages(ctx, &req.Cursor, func() (*RankingsResult, error) { return c.KeywordRankings(ctx, req) },
		func(r *RankingsResult) Cursor { return r.NextCursor })
}

// KeywordCompetitorsPages walks KeywordCompetitors's pages as KeywordResearchPages walks
// research.
func (c *Client) KeywordCompetitorsPages(ctx context.Context, req CompetitorsRequest) iter.Seq2[*CompetitorsResult, error] {
	return pages(ctx, &req.Cursor, func() (*CompetitorsResult, error) { return c.KeywordCompetitors(ctx, req) },
		func(r *CompetitorsResult) Cursor { return r.NextCursor })
}

// ListJobsPages walks ListJobs's pages from opts.Cursor (newest jobs first when ""), as
// KeywordResearchPages walks research; listing costs nothing.
func (c *Client) ListJobsPages(ctx context.Context, opts ListJobsOptions) iter.Seq2[*JobList, error] {
	return pages(ctx, &opts.Cursor, func() (*JobList, error) { return c.ListJobs(ctx, opts) },
		func(l *JobList) Cursor { return l.NextCursor })
}
