package report

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/contentapi/contentapi/internal/analysis"
	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/keywords"
)

// Defaults and bounds of the rankings and competitors requests.
const (
	defaultRankingsLimit    = 100
	defaultCompetitorsLimit = 20
	maxCompetitorsLimit     = 100
)

// DomainQuery is the body of the keyword lists about one domain: its rankings and its
// competitors.
type DomainQuery struct {
	Domain   string `json:"domain"`
	Country  string `json:"country"`
	Language string `json:"language,omitempty"`
	Limit    *int   `json:"limit,omitempty"`
	Query
	Callback
}

func (r *DomainQuery) fill(limit int) {
	market(&r.Country, &r.Language)
	r.Limit = orDefault(r.Limit, limit)
}

// normalize checks the body (limit 1 to max, the query against shape) and fills defaults.
func (r *DomainQuery) normalize(o Options, limit, max int, shape QueryShape) (err error) {
	if err := r.normalizeCallback(o); err != nil {
		return err
	}
	r.fill(limit)
	if r.Domain, err = NormalizeDomain("domain", r.Domain, o); err != nil {
		return err
	}
	if r.Country, r.Language, err = checkMarket(r.Country, r.Language); err != nil {
		return err
	}
	if err := intRange("limit", *r.Limit, 1, max); err != nil {
		return err
	}
	return r.Query.normalize(shape)
}

// RankingsRequest is the body of POST /v1/keywords/rankings.
type RankingsRequest struct{ DomainQuery }

// PageLimit is the request's limit.
func (r *RankingsRequest) PageLimit() int { return *orDefault(r.Limit, defaultRankingsLimit) }

func (r *RankingsRequest) defaults() { r.fill(defaultRankingsLimit) }

// Normalize checks the request and fills defaults.
func (r *RankingsRequest) Normalize(o Options) error {
	return r.normalize(o, defaultRankingsLimit, MaxPageRows, r.Shape())
}

// Shape is what a rankings query may name.
func (r *RankingsRequest) Shape() QueryShape { return RankingsShape }

// RankingsShape is what a domain's rankings take: they filter and sort on the keyword's metrics, the
// domain's position and the estimated traffic.
var RankingsShape = QueryShape{
	Ranges: []keywords.Field{keywords.FieldSearchVolume, keywords.FieldDifficulty, keywords.FieldCPC, keywords.FieldPosition, keywords.FieldTraffic},
	Order: []keywords.Field{keywords.FieldPosition, keywords.FieldSearchVolume, keywords.FieldDifficulty, keywords.FieldCPC,
		keywords.FieldTraffic, keywords.FieldKeyword},
	Why: map[keywords.Field]string{
		keywords.FieldCompetitorPosition: "a domain's rankings name no competitor (competitor discovery and gaps do)",
		keywords.FieldOpportunity:        "rankings carry no opportunity score (research and recommendations do)",
	},
}

// RankingRecord is one keyword the domain ranks for: its best position and the URL holding
// it, the keyword's metrics (null when unknown) and the estimated monthly traffic.
type RankingRecord struct {
	Keyword      string   `json:"keyword"`
	Position     int      `json:"position"`
	URL          *string  `json:"url"`
	SearchVolume *int64   `json:"search_volume"`
	Difficulty   *float64 `json:"keyword_difficulty"`
	CPC          *float64 `json:"cpc"`
	SearchIntent string   `json:"search_intent"`
	// SearchIntentInferred is true when the data source gave no intent and SearchIntent is
	// the phrase classifier's guess.
	SearchIntentInferred bool   `json:"search_intent_inferred"`
	EstimatedTraffic     *int64 `json:"estimated_traffic"`
}

// PositionBands counts rankings by position band.
type PositionBands struct {
	Top3  int `json:"1-3"`
	Top10 int `json:"4-10"`
	Page2 int `json:"11-20"`
	To50  int `json:"21-50"`
	To100 int `json:"51-100"`
}

func bandsOf(m map[string]int) PositionBands {
	return PositionBands{m["1-3"], m["4-10"], m["11-20"], m["21-50"], m["51-100"]}
}

// RankingsResult is the data of a domain's rankings answer.
type RankingsResult struct {
	Domain   string          `json:"domain"`
	Country  string          `json:"country"`
	Language string          `json:"language"`
	Rankings []RankingRecord `json:"rankings"`
	// Total counts every keyword passing the filters; PositionBands counts them by band.
	Total         int           `json:"total"`
	PositionBands PositionBands `json:"position_bands"`
	NextCursor    *string       `json:"next_cursor"`
	Source        string        `json:"source"`
	described
}

// Rankings lists the keywords the domain ranks for with their metrics and estimated
// traffic, best position first (or in the request's order), filtered, one page at a time;
// total and position_bands count every ranking passing the filters. A domain the provider holds no ranking for in the market
// is NO_DATA, refunded.
func (b *Builder) Rankings(ctx context.Context, r RankingsRequest) (RankingsResult, error) {
	after, err := b.pageToken(ctx, KindRankings, &r)
	if err != nil {
		return RankingsResult{}, err
	}
	req := keywords.RankingsRequest{Domain: stripWWW(r.Domain), Country: r.Country, Language: r.Language,
		Filters: r.KeywordFilters(), Order: r.KeywordOrder(), Page: keywords.Page{Limit: *r.Limit, After: after}}
	list, err := b.Keywords.Rankings(ctx, req)
	if err != nil {
		return RankingsResult{}, queryError("rankings", err)
	}
	next, err := b.nextCursor(ctx, KindRankings, &r, list.Next)
	if err != nil {
		return RankingsResult{}, err
	}
	if list.Total == 0 && req.Filters.Empty() && req.Page.After == "" {
		return RankingsResult{}, noRankingData(r.Domain, r.Country, r.Language)
	}
	res := RankingsResult{Domain: r.Domain, Country: r.Country, Language: r.Language, Rankings: []RankingRecord{},
		Total: list.Total, PositionBands: bandsOf(list.Bands), NextCursor: next, Source: b.Keywords.Name()}
	for _, k := range list.Rankings {
		intent, inferred := analysis.IntentOf(k.Keyword)
		rec := RankingRecord{Keyword: k.Keyword.Keyword, Position: k.Position, SearchVolume: k.SearchVolume,
			Difficulty: k.Difficulty, CPC: k.CPC, SearchIntent: intent, SearchIntentInferred: inferred, EstimatedTraffic: k.EstimatedTraffic}
		if rec.EstimatedTraffic == nil {
			rec.EstimatedTraffic = keywords.EstimatedTraffic(k.SearchVolume, k.Position)
		}
		if k.URL != "" {
			u := k.URL
			rec.URL = &u
		}
		res.Rankings = append(res.Rankings, rec)
	}
	var used rows
	used.addRankings(list.Rankings)
	res.meta = b.meta(used, nil)
	res.settle(KindRankings, &r, len(res.Rankings))
	return res, nil
}

// queryError turns a provider's refusal of a query part into a 400 naming it (before any
// charge: the API asks the provider only when the job runs, and a failed job is refunded).
func queryError(what string, err error) error {
	if errors.Is(err, keywords.ErrUnsupported) {
		return apperr.Invalid("%v", err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// noRankingData is the NO_DATA error of a domain without rankings in the market.
func noRankingData(domain, country, language string) error {
	return apperr.New(apperr.NoData, "This service holds no ranking data for %q in %s/%s. Check the spelling of the "+
		"domain, choose the market it ranks in, or have the operator import its rankings with `ctl import rankings FILE.csv`. "+
		"Nothing was charged.", domain, country, language)
}

// CSVRows are the answer's rows for CSV, the header first.
func (res RankingsResult) CSVRows() [][]string {
	var rows [][]string
	rows = append(rows, []string{"keyword", "position", "url", "search_volume", "keyword_difficulty", "cpc", "search_intent", "estimated_traffic",
		"search_intent_inferred"})
	for _, k := range res.Rankings {
		u := ""
		if k.URL != nil {
			u = *k.URL
		}
		rows = append(rows, []string{k.Keyword, strconv.Itoa(k.Position), u, intCell(k.SearchVolume), floatCell(k.Difficulty),
			floatCell(k.CPC), k.SearchIntent, intCell(k.EstimatedTraffic), strconv.FormatBool(k.SearchIntentInferred)})
	}
	return rows
}
