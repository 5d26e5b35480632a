package dataforseo

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/contentapi/contentapi/internal/keywords"
)

// Ideas asks keyword_ideas for keywords related to the seeds, or to the topic when there
// are none. DataForSEO orders them by relevance; Relevance falls from 1 in that order. With
// a Page, limit is the page's (at most 1,000), a later page continues with DataForSEO's
// offset_token, and total is its total_count: exact, except that the request's Keep rule
// leaves out items DataForSEO counts (Estimated is then set).
func (c *Client) Ideas(ctx context.Context, req keywords.IdeasRequest) (keywords.IdeaList, error) {
	loc, lang, err := market(req.Country, req.Language)
	if err != nil {
		return keywords.IdeaList{}, err
	}
	filters, err := ideasEndpoint.filters(req.Filters)
	if err != nil {
		return keywords.IdeaList{}, err
	}
	order, err := ideasEndpoint.orderBy(req.Order, nil)
	if err != nil {
		return keywords.IdeaList{}, err
	}
	seeds := make([]string, 0, len(req.Seeds))
	var short []string
	add := func(s string) {
		switch s = strings.Join(strings.Fields(s), " "); {
		case s == "":
		case utf8.RuneCountInString(s) < MinSeedChars:
			short = append(short, s)
		case len(seeds) < maxSeeds:
			seeds = append(seeds, s)
		}
	}
	for _, s := range req.Seeds {
		add(s)
	}
	if len(seeds) == 0 {
		add(req.Topic)
	}
	if len(short) > 0 {
		c.log.WarnContext(ctx, "dataforseo: seeds shorter than the 3 characters keyword_ideas accepts left out", "seeds", short)
	}
	out := []keywords.Keyword{}
	if len(seeds) == 0 {
		return keywords.IdeaList{Ideas: out}, nil
	}
	limit := req.Limit
	if limit <= 0 {
		limit = DefaultIdeasLimit
	}
	task := map[string]any{
		"keywords":      seeds,
		"location_code": loc,
		"language_code": lang,
		"limit":         min(limit, maxLimit),
	}
	var pg at
	if req.Page.Limit > 0 {
		limit = min(req.Page.Limit, maxLimit)
		if pg, err = page(task, limit, req.Page.After); err != nil {
			return keywords.IdeaList{}, err
		}
	}
	if filters != nil {
		task["filters"] = filters
	}
	if order != nil {
		task["order_by"] = order
	}
	var results []struct {
		pageResult
		Items []keywordData `json:"items"`
	}
	if err := c.post(ctx, PathKeywordIdeas, task, &results); err != nil {
		return keywords.IdeaList{}, err
	}
	list := keywords.IdeaList{}
	seen := map[string]bool{}
	for _, r := range results {
		if req.Page.Limit > 0 {
			list.Total, list.Next = pg.walk(r.pageResult, len(r.Items), len(r.Items))
		}
		for _, it := range r.Items {
			k := it.keyword()
			if k.Keyword == "" || seen[strings.ToLower(k.Keyword)] {
				continue
			}
			seen[strings.ToLower(k.Keyword)] = true
			if !list.Keeps(req, k) {
				continue
			}
			out = append(out, k)
		}
	}
	if len(out) > limit {
		out = out[:limit]
	}
	if req.Page.Limit == 0 {
		list.Total = len(out)
	}
	// total_count counts what Keep leaves out, on this page or another.
	list.Estimated = req.Page.Limit > 0 && req.Keep != nil
	for i := range out {
		out[i].Relevance = 1 - float64(i)/float64(len(out))
	}
	ks := make([]*keywords.Keyword, len(out))
	for i := range out {
		ks[i] = &out[i]
	}
	c.fillMissing(ctx, loc, lang, ks, fillsFor(true, req.Filters, req.Order))
	list.Ideas = out
	return list, nil
}
