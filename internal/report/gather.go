package report

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/contentapi/contentapi/internal/crawler"
	"github.com/contentapi/contentapi/internal/keywords"
)

// gathered is everything a plan is built from, with the failure of each part.
type gathered struct {
	site    crawledSite
	siteErr error

	ranked    []keywords.Ranking
	rankedErr error

	// ideasTried says whether ideas were asked for (focus topics, or seeds from rankings).
	ideasTried bool
	ideas      []keywords.Keyword
	ideasErr   error    // set when every ideas request failed
	ideasWarn  []string // topics whose ideas failed while others worked

	gapsTried bool
	gaps      []keywords.Gap // the first planGaps gaps, highest search volume first
	gapsTotal int            // all of them
	gapsErr   error
	unranked  []string // named competitors without ranking data

	competitorPages []crawler.Page // content pages of every competitor crawled
	competitorWarn  []string

	// discoveryWarn says which competitors were discovered for a plan given none, or why
	// none were ("" when competitors were given).
	discoveryWarn string
}

// warnings says what the answer lacks because a part failed. Provider errors are named by
// part only: their text may carry the provider's internals.
func (g *gathered) warnings() []string {
	out := []string{}
	if g.discoveryWarn != "" {
		out = append(out, g.discoveryWarn)
	}
	if g.siteErr != nil {
		out = append(out, crawlWarning(domainOfErr(g.siteErr), g.siteErr)+"; the plan was made without its pages")
	}
	if g.rankedErr != nil {
		out = append(out, "ranking data is unavailable: current rankings are missing")
	}
	if g.ideasErr != nil {
		out = append(out, "keyword ideas are unavailable")
	}
	out = append(out, g.ideasWarn...)
	if g.gapsErr != nil {
		out = append(out, "competitor gap data is unavailable: competitor keywords are missing")
	}
	out = append(out, g.competitorWarn...)
	return out
}

// siteError carries the crawled domain with the crawl's error, for its warning.
type siteError struct {
	domain string
	err    error
}

func (e *siteError) Error() string { return fmt.Sprintf("crawl %s: %v", e.domain, e.err) }
func (e *siteError) Unwrap() error { return e.err }

func domainOfErr(err error) string {
	var se *siteError
	if errors.As(err, &se) {
		return se.domain
	}
	return "the site"
}

// gather runs the parts of a plan concurrently: the domain's crawl, its rankings (then, with
// no focus topic, ideas seeded from them), ideas for each focus topic, the competitor gaps
// and, when withCompetitorPages, a crawl of each competitor. A part's failure is recorded,
// not returned; only a cancelled ctx is an error.
func (b *Builder) gather(ctx context.Context, r planRequest, withCompetitorPages bool) (*gathered, error) {
	g := &gathered{}
	crawled := r.Competitors // discovered competitors are compared by keywords, not crawled
	if len(r.Competitors) == 0 {
		r.Competitors, g.discoveryWarn = b.discoverCompetitors(ctx, r)
	}
	var eg errgroup.Group
	eg.SetLimit(parallelParts)

	eg.Go(func() error {
		res, err := b.Crawler.Crawl(ctx, crawler.Request{Domain: r.Domain, MaxPages: sitePages})
		if err != nil {
			g.siteErr = &siteError{domain: r.Domain, err: err}
			return nil //nolint:nilerr // a failed part degrades the answer; warnings say so
		}
		g.site = splitPages(res)
		return nil
	})

	seeded := len(r.FocusTopics) == 0
	eg.Go(func() error {
		ranked, err := b.Keywords.Ranked(ctx, keywords.RankedRequest{Domain: stripWWW(r.Domain), Country: r.Country, Language: r.Language})
		if err != nil {
			g.rankedErr = err
			return nil //nolint:nilerr // a failed part degrades the answer; warnings say so
		}
		g.ranked = ranked
		if !seeded || len(ranked) == 0 {
			return nil
		}
		var seeds []string
		for _, rk := range seedRankings(ranked) {
			if len(seeds) == seedKeywords {
				break
			}
			if !slices.Contains(seeds, rk.Keyword.Keyword) {
				seeds = append(seeds, rk.Keyword.Keyword)
			}
		}
		ideas, err := keywords.Ideas(ctx, b.Keywords, keywords.IdeasRequest{Seeds: seeds, Country: r.Country, Language: r.Language, Limit: seedIdeas})
		g.ideasTried = true
		if err != nil {
			g.ideasErr = err
			return nil //nolint:nilerr // a failed part degrades the answer; warnings say so
		}
		g.ideas = ideas.Ideas
		return nil
	})

	if len(r.Competitors) > 0 {
		g.gapsTried = true
		eg.Go(func() error {
			list, err := b.gaps(ctx, r.Domain, r.Competitors, keywords.GapsRequest{Country: r.Country, Language: r.Language, Limit: planGaps})
			if err != nil {
				g.gapsErr = err
				return nil //nolint:nilerr // a failed part degrades the answer; warnings say so
			}
			g.gaps, g.gapsTotal, g.unranked = list.Gaps, list.Total, list.Unranked
			return nil
		})
	}

	topicIdeas := make([][]keywords.Keyword, len(r.FocusTopics))
	topicErrs := make([]error, len(r.FocusTopics))
	for i, topic := range r.FocusTopics {
		eg.Go(func() error {
			list, err := keywords.Ideas(ctx, b.Keywords, keywords.IdeasRequest{Topic: topic, Country: r.Country,
				Language: r.Language, Limit: ideasPerTopic})
			topicIdeas[i], topicErrs[i] = list.Ideas, err
			return nil
		})
	}

	var competitorResults []*crawler.Result
	var competitorErrs []error
	if withCompetitorPages {
		competitorResults = make([]*crawler.Result, len(crawled))
		competitorErrs = make([]error, len(crawled))
		for i, c := range crawled {
			eg.Go(func() error {
				competitorResults[i], competitorErrs[i] = b.Crawler.Crawl(ctx, crawler.Request{Domain: c, MaxPages: competitorPages})
				return nil
			})
		}
	}
	_ = eg.Wait() // every part records its own error
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("plan for %s: %w", r.Domain, err)
	}

	if !seeded {
		g.ideasTried = true
		var failed []error
		for i, topic := range r.FocusTopics {
			if topicErrs[i] != nil {
				failed = append(failed, topicErrs[i])
				g.ideasWarn = append(g.ideasWarn, fmt.Sprintf("keyword ideas for %q are unavailable", topic))
				continue
			}
			g.ideas = append(g.ideas, topicIdeas[i]...)
		}
		if len(failed) == len(r.FocusTopics) {
			g.ideasErr = errors.Join(failed...)
			g.ideasWarn = nil
		}
	}
	for i, c := range crawled {
		if !withCompetitorPages {
			break
		}
		if competitorErrs[i] != nil {
			g.competitorWarn = append(g.competitorWarn, crawlWarning("competitor "+c, competitorErrs[i])+"; its headings are not used")
			continue
		}
		cs := splitPages(competitorResults[i])
		for _, p := range cs.pages {
			if indexable(p) {
				g.competitorPages = append(g.competitorPages, p)
			}
		}
		if len(cs.pages) == 0 {
			g.competitorWarn = append(g.competitorWarn, fmt.Sprintf("competitor %s gave no page to read headings from", c))
		}
	}
	return g, nil
}

// seedRankings orders the domain's rankings for seeding ideas: striking distance (#4–20)
// first, where a page is close to page one and related topics pay most, then the others by
// position; each by search volume.
func seedRankings(ranked []keywords.Ranking) []keywords.Ranking {
	list := slices.Clone(ranked)
	slices.SortStableFunc(list, func(a, b keywords.Ranking) int {
		if c := cmp.Compare(beyondStriking(a.Position), beyondStriking(b.Position)); c != 0 {
			return c
		}
		if c := cmp.Compare(volume(b.Keyword), volume(a.Keyword)); c != 0 {
			return c
		}
		return cmp.Compare(a.Position, b.Position)
	})
	return list
}

// discoverCompetitors returns, for a plan given no competitors, the domains sharing the most
// ranked keywords with its domain (at most maxPlanCompetitors, as competitor discovery lists
// them) and the warning saying so, or why there are none.
func (b *Builder) discoverCompetitors(ctx context.Context, r planRequest) ([]string, string) {
	market := r.Country + "/" + r.Language
	list, err := b.Keywords.Competitors(ctx, keywords.CompetitorsRequest{Domain: stripWWW(r.Domain), Country: r.Country,
		Language: r.Language, Page: keywords.Page{Limit: maxPlanCompetitors}})
	switch {
	case errors.Is(err, keywords.ErrUnsupported):
		return nil, "no competitors were given and the keyword data source cannot discover them: the plan has no competitor gaps (name up to 3 competitors)"
	case err != nil:
		return nil, "no competitors were given and competitor discovery is unavailable: the plan has no competitor gaps (name up to 3 competitors)"
	case len(list.Competitors) == 0:
		return nil, fmt.Sprintf("no competitors were given and no domain shares a ranked keyword with %s in %s: the plan has no competitor gaps", r.Domain, market)
	}
	var out []string
	for _, c := range list.Competitors {
		out = append(out, c.Domain)
	}
	return out, fmt.Sprintf("no competitors were given: the plan compares %s with the %d domain(s) sharing the most ranked keywords with it in %s "+
		"(competitor discovery, as POST /v1/keywords/competitors lists them): %s", r.Domain, len(out), market, strings.Join(out, ", "))
}

// maxPlanCompetitors is how many competitors a plan compares with: the most a request may name.
const maxPlanCompetitors = 3
