// Package keywords defines keyword data and the provider interface every keyword data
// source implements, and the one rule for keying a domain. Providers live in sub-packages.
package keywords

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/net/idna"
)

// Keyword is one keyword with the metrics a provider knows. A metric the provider does not
// have is nil, never a made-up zero.
type Keyword struct {
	Keyword      string   `json:"keyword"`
	SearchVolume *int64   `json:"search_volume"`
	Difficulty   *float64 `json:"keyword_difficulty"`
	CPC          *float64 `json:"cpc"`
	// Competition is the paid-search competition index in [0,1], when known.
	Competition *float64 `json:"competition,omitempty"`
	// Intent is the provider's search intent (informational, navigational, commercial,
	// transactional) or "" when the provider has none.
	Intent string `json:"search_intent,omitempty"`
	// SERPURLs are the top organic result URLs, best first, when the provider knows them.
	SERPURLs []string `json:"serp_urls,omitempty"`
	// Relevance orders ideas: higher is more relevant to the request. Providers fill it.
	Relevance float64 `json:"-"`
	// Synthetic marks a made-up row (the generated sample set): its numbers are not search
	// data. A ranking or gap is synthetic when its keyword row or a ranking row behind it is.
	Synthetic bool `json:"synthetic,omitempty"`
	// MonthlySearches are the monthly search volumes the data source gives, oldest first;
	// nil when it gives none (see Trend).
	MonthlySearches []MonthlyVolume `json:"monthly_searches,omitempty"`
	// Trend is the data source's trend when it gives one without monthly volumes
	// (Semrush's relative Trend); with MonthlySearches, Trend(MonthlySearches) rules.
	Trend string `json:"trend,omitempty"`
}

// MonthlyVolume is one month's search volume.
type MonthlyVolume struct {
	Year         int   `json:"year"`
	Month        int   `json:"month"`
	SearchVolume int64 `json:"search_volume"`
}

// Ranking is a keyword a domain ranks for, with its position and ranking URL.
type Ranking struct {
	Keyword
	Position int    `json:"position"`
	URL      string `json:"url,omitempty"`
	// EstimatedTraffic is the monthly visits the ranking earns by the CTR curve
	// (EstimatedTraffic in traffic.go); set by Rankings, nil where the volume is unknown.
	EstimatedTraffic *int64 `json:"estimated_traffic,omitempty"`
}

// Gap is a keyword at least one competitor ranks for and the domain does not.
type Gap struct {
	Keyword
	// CompetitorPositions maps each named competitor that ranks to its position.
	CompetitorPositions map[string]int `json:"competitor_positions"`
}

// IdeasRequest asks for keywords about a topic or a list of seed keywords.
type IdeasRequest struct {
	Topic    string
	Seeds    []string
	Country  string // lower-case two-letter code, e.g. "us"
	Language string // lower-case two-letter code, e.g. "en"
	Limit    int
	// Filters narrow the ideas; Order, when set, replaces relevance order (see query.go).
	Filters Filters
	Order   []OrderKey
	// Page, when its Limit is set, asks for one page of the ideas (Limit is then unused):
	// the list continues after Page.After, a previous IdeaList.Next, and the answer counts
	// every idea the pages walk (IdeaList.Total).
	Page Page
	// Keep, when set, is a rule every idea must pass (research's relevance rule), applied
	// before ideas are counted and paged, so that Total counts what the pages hold. KeepRule
	// names it: a request's cache key and a page token are made of its fields, and a
	// function is not one.
	Keep     func(Keyword) bool `json:"-"`
	KeepRule string             `json:",omitempty"`
}

// IdeaList is a provider's answer to an IdeasRequest: the ideas (one page of them when the
// request has a Page), how many ideas the pages walk in all, and the token of the next page.
type IdeaList struct {
	Ideas []Keyword `json:"ideas"`
	// Total counts the ideas passing the filters (and Keep) that the pages walk, before
	// paging; without a Page, the ideas returned.
	Total int `json:"total"`
	// Next is the provider's token for the next page; "" on the last page.
	Next string `json:"next,omitempty"`
	// Estimated is set when Total is not exact (DataForSEO's total_count counts the ideas
	// Keep leaves out too).
	Estimated bool `json:"estimated,omitempty"`
	// Dropped are the first few ideas Keep left out, for the advice of an answer that
	// kept none.
	Dropped []Keyword `json:"dropped,omitempty"`
}

// Keeps reports whether k passes req's Keep rule, noting the first few it leaves out in
// l.Dropped.
func (l *IdeaList) Keeps(req IdeasRequest, k Keyword) bool {
	if req.Keep == nil || req.Keep(k) {
		return true
	}
	if len(l.Dropped) < 3 {
		l.Dropped = append(l.Dropped, k)
	}
	return false
}

// RankedRequest asks for the keywords a domain ranks for.
type RankedRequest struct {
	Domain   string
	Country  string
	Language string
	Limit    int // 0 means the provider's maximum
	// PositionsOnly says the caller reads only each keyword and its position (research's
	// positions): a provider then fills no missing metric, which costs calls.
	PositionsOnly bool `json:",omitempty"`
	// Keywords, when not empty, asks a KeywordRanked provider for the rankings of these
	// keywords only (compared as it normalises keywords): research's positions for the
	// ideas it answers, without reading every ranking of a domain that may hold millions.
	Keywords []string `json:",omitempty"`
}

// RankingsRequest asks for one page of the keywords a domain ranks for, filtered and
// ordered (default: best position first, then highest volume).
type RankingsRequest struct {
	Domain   string
	Country  string
	Language string
	Filters  Filters
	Order    []OrderKey
	Page     Page
}

// RankingList is one page of a domain's rankings.
type RankingList struct {
	Rankings []Ranking `json:"rankings"`
	// Total counts every ranking that passes the filters, before paging.
	Total int `json:"total"`
	// Bands counts the domain's rankings (passing the filters) by position band: "1-3",
	// "4-10", "11-20", "21-50", "51-100".
	Bands map[string]int `json:"bands"`
	// Next is the provider's token for the next page; "" on the last page.
	Next string `json:"next,omitempty"`
}

// CompetitorsRequest asks for the domains sharing the most ranked keywords with Domain.
type CompetitorsRequest struct {
	Domain   string
	Country  string
	Language string
	Filters  Filters // applied to the shared keywords
	Order    []OrderKey
	Page     Page
}

// Competitor is a domain sharing ranked keywords with the asked domain.
type Competitor struct {
	Domain string `json:"domain"`
	// Shared counts the keywords both rank for.
	Shared int `json:"shared_keywords"`
	// AvgPosition is the competitor's average position over the shared keywords;
	// DomainAvgPosition the asked domain's.
	AvgPosition       float64 `json:"avg_position"`
	DomainAvgPosition float64 `json:"domain_avg_position"`
	// Total counts every keyword the competitor ranks for in the market.
	Total int `json:"total_keywords"`
	// Synthetic marks a competitor counted on made-up rows: its rankings, or the asked
	// domain's, include rows of the generated sample set.
	Synthetic bool `json:"synthetic,omitempty"`
	// Unknown names the numbers above the provider does not know (CompetitorShared …):
	// they are 0 here and null in answers. A provider counting its own rankings knows all.
	Unknown []string `json:"unknown,omitempty"`
}

// The numbers of a Competitor, by their names in answers, as Competitor.Unknown lists them.
const (
	CompetitorShared            = "shared_keywords"
	CompetitorAvgPosition       = "avg_position"
	CompetitorDomainAvgPosition = "domain_avg_position"
	CompetitorTotal             = "total_keywords"
)

// Knows reports whether the provider knows the number named (CompetitorShared …).
func (c Competitor) Knows(number string) bool { return !slices.Contains(c.Unknown, number) }

// CompetitorList is one page of competitors, most shared keywords first.
type CompetitorList struct {
	Competitors []Competitor `json:"competitors"`
	Total       int          `json:"total"`
	Next        string       `json:"next,omitempty"`
	// Synthetic marks the asked domain's rankings as including made-up rows (the sample
	// set): every competitor is then counted on them.
	Synthetic bool `json:"synthetic,omitempty"`
}

// GapsRequest asks for the keywords competitors rank for and the domain does not.
type GapsRequest struct {
	Domain      string
	Competitors []string
	Country     string
	Language    string
	Limit       int // at most this many gaps; 0 means all of them
	// Filters narrow the gaps; Order replaces the default order (highest volume first);
	// After continues from a previous GapList.Next (see query.go).
	Filters Filters
	Order   []OrderKey
	After   string
}

// GapList is a provider's answer to a GapsRequest: the first Limit gaps in the providers'
// order (highest search volume first, unknown volumes last, then by keyword) and the number
// of all gaps, counted before the limit.
type GapList struct {
	Gaps  []Gap `json:"gaps"`
	Total int   `json:"total"`
	// Unranked lists the named competitors the provider holds no ranking data for in the
	// market (keyed by Domain); nil when there is none or the provider cannot tell.
	Unranked []string `json:"unranked,omitempty"`
	// Next is the provider's token for the page after this one; "" on the last page.
	Next string `json:"next,omitempty"`
	// Estimated is set when Total is not an exact count: the provider counts each
	// competitor's gaps exactly but cannot count the overlap of several beyond the gaps it
	// fetched (DataForSEO with more than one competitor), so Total is an upper bound.
	Estimated bool `json:"estimated,omitempty"`
}

// LocalName is the Name of the provider over this service's own keyword database (package
// local): its rows were imported, or are the synthetic sample set, never the external
// provider's. Answers name their data source by it without depending on that package.
const LocalName = "local"

// Provider is a source of keyword data.
type Provider interface {
	// Name is the provider's short name ("local", "dataforseo").
	Name() string
	// Ideas returns keywords about the topic or seeds, most relevant first (or in the
	// request's order), at most Limit, or one page of them when the request has a Page.
	Ideas(ctx context.Context, req IdeasRequest) (IdeaList, error)
	// Ranked returns keywords the domain ranks for, best position first.
	Ranked(ctx context.Context, req RankedRequest) ([]Ranking, error)
	// Gaps returns the first req.Limit gaps (all with 0), highest search volume first, and
	// how many gaps there are in all.
	Gaps(ctx context.Context, req GapsRequest) (GapList, error)
	// Rankings returns one page of the domain's rankings, filtered and ordered.
	Rankings(ctx context.Context, req RankingsRequest) (RankingList, error)
	// Competitors returns one page of the domains sharing the most keywords with the
	// domain.
	Competitors(ctx context.Context, req CompetitorsRequest) (CompetitorList, error)
}

// Versioned is implemented by a provider whose answers come from data this service writes
// (the local provider: imports, the sample set). DataVersion names the data as it stands
// now and changes with every write that could change an answer, in the transaction of the
// write; an answer read after DataVersion returned v is of data at v or newer. The answer
// cache keys its entries by it, so no entry outlives the data it was built on.
type Versioned interface {
	DataVersion(ctx context.Context) (string, error)
}

// Suggester is implemented by providers that can name keywords they hold for a market: a
// call that found no data advises the caller with them.
type Suggester interface {
	// Popular returns up to n keywords of the market, highest search volume first; none
	// when the provider holds no data for it.
	Popular(ctx context.Context, country, language string, n int) ([]string, error)
}

// SyntheticLabeler is implemented by a provider whose Ideas leave Keyword.Synthetic unset
// and which reads it in a second step (the local provider: its ideas query is tuned for
// speed on its own). Callers get labelled ideas through the package function Ideas.
type SyntheticLabeler interface {
	// LabelSynthetic sets Synthetic on the keywords of the market that are made up.
	LabelSynthetic(ctx context.Context, country, language string, ks []Keyword) error
}

// TrendLabeler is implemented by a provider that keeps monthly volumes and trends apart
// from its answers' queries (the local provider: they are read for the few keywords of an
// answer). Callers get them through the package functions Ideas and Gaps.
type TrendLabeler interface {
	// LabelTrends sets MonthlySearches and Trend on the keywords of the market it has
	// them for.
	LabelTrends(ctx context.Context, country, language string, ks []*Keyword) error
}

// Ideas asks p for ideas and, when p is a SyntheticLabeler, labels the synthetic ones, so
// every idea carries its flag whichever provider answered; when p is a TrendLabeler, it
// reads their trends.
func Ideas(ctx context.Context, p Provider, req IdeasRequest) (IdeaList, error) {
	list, err := p.Ideas(ctx, req)
	ks := list.Ideas
	if err != nil || len(ks) == 0 {
		return list, err
	}
	if l, ok := p.(SyntheticLabeler); ok {
		if err := l.LabelSynthetic(ctx, req.Country, req.Language, ks); err != nil {
			return IdeaList{}, err
		}
	}
	if l, ok := p.(TrendLabeler); ok {
		ptrs := make([]*Keyword, len(ks))
		for i := range ks {
			ptrs[i] = &ks[i]
		}
		if err := l.LabelTrends(ctx, req.Country, req.Language, ptrs); err != nil {
			return IdeaList{}, err
		}
	}
	return list, nil
}

// Gaps asks p for gaps and, when p is a TrendLabeler, reads their trends.
func Gaps(ctx context.Context, p Provider, req GapsRequest) (GapList, error) {
	list, err := p.Gaps(ctx, req)
	if err != nil || len(list.Gaps) == 0 {
		return list, err
	}
	if l, ok := p.(TrendLabeler); ok {
		ptrs := make([]*Keyword, len(list.Gaps))
		for i := range list.Gaps {
			ptrs[i] = &list.Gaps[i].Keyword
		}
		if err := l.LabelTrends(ctx, req.Country, req.Language, ptrs); err != nil {
			return GapList{}, err
		}
	}
	return list, nil
}

// ErrPermanent marks provider failures that retrying cannot fix (bad credentials, a request
// the provider refuses). Other errors are treated as temporary.
var ErrPermanent = errors.New("permanent provider error")

// ErrRateLimited marks a provider refusing because the account's request rate is used up:
// retrying at once cannot help, retrying after RetryAfter can.
var ErrRateLimited = errors.New("provider rate limit exceeded")

// ProviderError is an error reported by a provider, with its own status code.
type ProviderError struct {
	Provider  string
	Code      int
	Message   string
	Permanent bool
	// RateLimited is set when the provider refused for its rate limit; RetryAfter then says
	// when to try again (0: unknown).
	RateLimited bool
	RetryAfter  time.Duration
}

func (e *ProviderError) Error() string {
	return fmt.Sprintf("%s: status %d: %s", e.Provider, e.Code, e.Message)
}

// Is lets errors.Is(err, ErrPermanent) report permanent provider errors and
// errors.Is(err, ErrRateLimited) rate-limit refusals.
func (e *ProviderError) Is(target error) bool {
	return (target == ErrPermanent && e.Permanent) || (target == ErrRateLimited && e.RateLimited)
}

// SeedMinimum is implemented by providers that refuse seed keywords shorter than some
// number of characters (DataForSEO: 3). Callers leave such seeds out, and say so, rather
// than have the whole call refused.
type SeedMinimum interface {
	// MinSeedChars is the fewest characters (runes) a seed keyword must have; 0: any.
	MinSeedChars() int
}

// KeywordRanked is implemented by providers whose Ranked reads only RankedRequest.Keywords'
// rankings when they are given (the local provider: a key probe each). A provider that
// answers Ranked with one priced call whatever is asked (DataForSEO) is not one: its
// callers ask for all the rankings once, an answer the cache keeps for every page.
type KeywordRanked interface {
	RanksKeywords() bool
}

// Competitors are the competitor domains of a question about domain as keyword data is keyed
// (Domain), in the order given: each once, without the domain itself and without any that
// has no host. Every provider cleans a request's competitors with it.
func Competitors(domain string, competitors []string) []string {
	domain = Domain(domain)
	var out []string
	for _, c := range competitors {
		if c = Domain(c); c != "" && c != domain && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// Domain reduces a domain, host or URL to the form keyword data is keyed by: the lower-case
// ASCII (IDNA) host without a port, a trailing dot or a leading "www." —
// "https://WWW.Example.com/path" is "example.com". "" when s has no host.
func Domain(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if ascii, err := idna.Lookup.ToASCII(host); err == nil {
		host = ascii
	}
	for strings.HasPrefix(host, "www.") {
		host = strings.TrimPrefix(host, "www.")
	}
	return host
}
