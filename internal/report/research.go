package report

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"

	"github.com/contentapi/contentapi/internal/analysis"
	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/keywords"
)

// KeywordRecord is the API's keyword record (docs/api.md). Unknown metrics are null.
type KeywordRecord struct {
	Keyword      string   `json:"keyword"`
	SearchVolume *int64   `json:"search_volume"`
	Difficulty   *float64 `json:"keyword_difficulty"`
	CPC          *float64 `json:"cpc"`
	SearchIntent string   `json:"search_intent"`
	// SearchIntentInferred is true when the data source gave no intent and SearchIntent is
	// the phrase classifier's guess.
	SearchIntentInferred bool `json:"search_intent_inferred"`
	OpportunityScore     *int `json:"opportunity_score"` // null when no metric is known
	Position             *int `json:"position,omitempty"`
	Trends
}

// Trends are a keyword's monthly search volumes, oldest first, and their direction
// (keywords.Trend); both null when the data source has no monthly volumes.
type Trends struct {
	MonthlySearches []keywords.MonthlyVolume `json:"monthly_searches"`
	Trend           *string                  `json:"trend"`
}

// trendsOf reads k's trends: nothing made up, null where unknown.
func trendsOf(k keywords.Keyword) Trends {
	t := Trends{}
	if len(k.MonthlySearches) > 0 {
		t.MonthlySearches = k.MonthlySearches
		if tr := keywords.Trend(k.MonthlySearches); tr != "" {
			t.Trend = &tr
		}
	} else if k.Trend != "" {
		tr := k.Trend
		t.Trend = &tr
	}
	return t
}

// ClusterRecord is the API's cluster (docs/api.md).
type ClusterRecord struct {
	ClusterName   string          `json:"cluster_name"`
	TotalVolume   int64           `json:"total_volume"`
	AvgDifficulty *float64        `json:"avg_difficulty"`
	Keywords      []KeywordRecord `json:"keywords"`
}

// ResearchResult is the data of a keyword-research answer.
type ResearchResult struct {
	Domain   string          `json:"domain"`
	Topic    string          `json:"topic"`
	Country  string          `json:"country"`
	Clusters []ClusterRecord `json:"clusters"`
	// TotalKeywords counts this page's keywords; Total every keyword the pages walk (see
	// Research), and NextCursor continues them (null on the last page).
	TotalKeywords int     `json:"total_keywords"`
	Total         int     `json:"total"`
	NextCursor    *string `json:"next_cursor"`
	Source        string  `json:"source"`
	described
}

func record(k keywords.Keyword, position int) KeywordRecord {
	intent, inferred := analysis.IntentOf(k)
	r := KeywordRecord{Keyword: k.Keyword, SearchVolume: k.SearchVolume, Difficulty: k.Difficulty, CPC: k.CPC,
		SearchIntent: intent, SearchIntentInferred: inferred, OpportunityScore: analysis.OpportunityScore(k, position),
		Trends: trendsOf(k)}
	return r
}

// positions maps a normalised keyword to the domain's position for it.
func positions(rankings []keywords.Ranking) map[string]int {
	m := make(map[string]int, len(rankings))
	for _, r := range rankings {
		k := strings.ToLower(r.Keyword.Keyword)
		if p, ok := m[k]; !ok || r.Position < p {
			m[k] = r.Position
		}
	}
	return m
}

// bestRankings keeps one ranking per keyword (compared case-insensitively): its best
// position, the first listed on a tie. Ranking data may list a keyword once per URL of the
// domain ranking for it; counts of "keywords the domain ranks for" count keywords.
func bestRankings(ranked []keywords.Ranking) []keywords.Ranking {
	at := make(map[string]int, len(ranked))
	out := make([]keywords.Ranking, 0, len(ranked))
	for _, r := range ranked {
		k := strings.ToLower(r.Keyword.Keyword)
		i, ok := at[k]
		switch {
		case !ok:
			at[k] = len(out)
			out = append(out, r)
		case r.Position < out[i].Position:
			out[i] = r
		}
	}
	return out
}

// Research finds keywords about the topic (or seeds), groups them into clusters and scores
// each for the domain. With neither topic nor seeds, the domain's own best keywords are the
// seeds; otherwise the ideas are looked up while the domain's rankings are read. An answer
// is one page of the ideas, in relevance order (or the order_by); total counts every idea
// the pages walk and next_cursor continues them. The relevance rule (ideas sharing with a
// topic only generic words are not about it) is the provider's Keep rule, applied before
// the ideas are counted and paged, so that total counts what the pages hold.
func (b *Builder) Research(ctx context.Context, r ResearchRequest) (ResearchResult, error) {
	var ranked []keywords.Ranking
	var list keywords.IdeaList
	seeds, topic, warnings, err := b.usableSeeds(r)
	if err != nil {
		return ResearchResult{}, err
	}
	after, err := b.pageToken(ctx, KindResearch, &r)
	if err != nil {
		return ResearchResult{}, err
	}
	// readRanked reads the domain's rankings of the keywords only (all of them when nil):
	// research reads their keywords and positions only (seeds, scores, labels).
	readRanked := func(ctx context.Context, only []string) (err error) {
		ranked, err = b.Keywords.Ranked(ctx, keywords.RankedRequest{Domain: stripWWW(r.Domain), Country: r.Country, Language: r.Language,
			PositionsOnly: true, Keywords: only})
		if err != nil {
			return fmt.Errorf("ranked keywords: %w", err)
		}
		return nil
	}
	readIdeas := func(ctx context.Context) (err error) {
		q := keywords.IdeasRequest{Topic: topic, Seeds: seeds, Country: r.Country, Language: r.Language,
			Filters: r.KeywordFilters(), Order: r.KeywordOrder(), Page: keywords.Page{Limit: *r.Limit, After: after}}
		if keep := analysis.OnTopic(topic, r.Language); keep != nil && len(seeds) == 0 {
			q.Keep, q.KeepRule = keep, "on-topic"
		}
		list, err = keywords.Ideas(ctx, b.Keywords, q)
		if err != nil {
			return queryError("keyword ideas", err)
		}
		return nil
	}
	// The ideas' rankings: after the ideas, those of the answer's only, from a provider
	// that probes them (probe); else all of them, beside the ideas.
	kr, ok := b.Keywords.(keywords.KeywordRanked)
	probe := ok && kr.RanksKeywords()
	fromRankings := topic == "" && len(seeds) == 0
	switch {
	case fromRankings:
		if err := readRanked(ctx, nil); err != nil {
			return ResearchResult{}, err
		}
		best := bestRankings(ranked)
		for i := 0; i < len(best) && i < 5; i++ {
			seeds = append(seeds, best[i].Keyword.Keyword)
		}
		if len(seeds) == 0 {
			return ResearchResult{}, b.noData(ctx, r.Country, r.Language, "a topic or keywords",
				fmt.Sprintf("No topic or keywords were given and there is no ranking data for %s in %s/%s to start from.", r.Domain, r.Country, r.Language))
		}
		if err := readIdeas(ctx); err != nil {
			return ResearchResult{}, err
		}
	case probe:
		if err := readIdeas(ctx); err != nil {
			return ResearchResult{}, err
		}
	default:
		// One call for all the rankings (priced per call, cached for every page).
		eg, ctx := errgroup.WithContext(ctx)
		eg.Go(func() error { return readRanked(ctx, nil) })
		eg.Go(func() error { return readIdeas(ctx) })
		if err := eg.Wait(); err != nil {
			return ResearchResult{}, err
		}
	}
	ideas := list.Ideas
	if len(ideas) > *r.Limit {
		ideas = ideas[:*r.Limit]
	}
	// Nothing to answer: no idea at all, or a first page left empty (DataForSEO counts the
	// ideas the relevance rule leaves out). Relevance before volume: an answer whose matches
	// all share with the topic only generic words ("remote work tools" for "seo tools") is
	// NO_DATA, naming them.
	empty := list.Total == 0 || (len(ideas) == 0 && after == "")
	if empty && len(list.Dropped) > 0 {
		_, off, generic := analysis.SplitOffTopic(topic, r.Language, list.Dropped)
		names := make([]string, 0, min(len(off), 3))
		for _, k := range off[:min(len(off), 3)] {
			names = append(names, k.Keyword)
		}
		return ResearchResult{}, b.noData(ctx, r.Country, r.Language, "a more specific topic, or seed keywords",
			fmt.Sprintf("No keyword data was found for %q in %s/%s: the only matches (%s) share with it just the generic word %s, so they are not about it.",
				topic, r.Country, r.Language, quotedList(names), quotedList(generic)))
	}
	if empty {
		asked := seeds
		if topic != "" {
			asked = append([]string{topic}, seeds...)
		}
		return ResearchResult{}, b.noData(ctx, r.Country, r.Language, "another topic or other keywords",
			fmt.Sprintf("No keyword data was found for %s in %s/%s.", quotedList(asked), r.Country, r.Language))
	}
	next, err := b.nextCursor(ctx, KindResearch, &r, list.Next)
	if err != nil {
		return ResearchResult{}, err
	}
	if list.Estimated {
		warnings = append(warnings, fmt.Sprintf("total is an upper bound: %s counts the keywords it matched, "+
			"among them those left out as not about the topic.", providerLabel(b.Keywords.Name())))
	}
	if probe && !fromRankings && len(ideas) > 0 {
		// The positions of the answer's ideas only: a domain may rank for millions.
		only := make([]string, len(ideas))
		for i, k := range ideas {
			only[i] = k.Keyword
		}
		if err := readRanked(ctx, only); err != nil {
			return ResearchResult{}, err
		}
	}
	pos := positions(ranked)
	clusters := analysis.ClusterKeywords(ideas, analysis.ClusterOptions{Language: r.Language})
	res := ResearchResult{Domain: r.Domain, Topic: topic, Country: r.Country, Clusters: []ClusterRecord{},
		Total: list.Total, NextCursor: next, Source: b.Keywords.Name()}
	if res.Topic == "" {
		res.Topic = strings.Join(seeds, ", ")
	}
	for _, c := range clusters {
		cr := ClusterRecord{ClusterName: c.Name, TotalVolume: c.TotalVolume, AvgDifficulty: round1(c.AvgDifficulty)}
		for _, k := range c.Keywords {
			cr.Keywords = append(cr.Keywords, record(k, pos[strings.ToLower(k.Keyword)]))
		}
		// A keyword without any metric has no score and goes last, in the cluster's order.
		slices.SortStableFunc(cr.Keywords, func(a, b KeywordRecord) int {
			return analysis.UnscoredLast(a.OpportunityScore, b.OpportunityScore)
		})
		res.TotalKeywords += len(cr.Keywords)
		res.Clusters = append(res.Clusters, cr)
	}
	var used rows
	used.add(ideas...)
	used.addRankings(ranked)
	res.meta = b.meta(used, warnings)
	res.settle(KindResearch, &r, res.TotalKeywords)
	return res, nil
}

// usableSeeds leaves out the seed keywords (and the topic) shorter than the provider
// accepts (keywords.SeedMinimum: DataForSEO's 3 characters), with a warning naming them,
// rather than have the provider refuse the whole call. When something was asked and
// nothing usable is left, the request is a VALIDATION_ERROR naming the field (the job
// fails and is refunded).
func (b *Builder) usableSeeds(r ResearchRequest) (seeds []string, topic string, warnings []string, err error) {
	seeds, topic = r.Keywords, r.Topic
	m, ok := b.Keywords.(keywords.SeedMinimum)
	if !ok || m.MinSeedChars() <= 0 {
		return seeds, topic, nil, nil
	}
	least := m.MinSeedChars()
	short := func(s string) bool { return s != "" && utf8.RuneCountInString(s) < least }
	var dropped []string
	seeds = nil
	for _, s := range r.Keywords {
		if short(s) {
			dropped = append(dropped, s)
		} else {
			seeds = append(seeds, s)
		}
	}
	topicShort := short(topic)
	if topicShort {
		topic = ""
	}
	if len(seeds) == 0 && topic == "" && (len(dropped) > 0 || topicShort) {
		field := "keywords"
		if len(dropped) == 0 {
			field = "topic"
		}
		return nil, "", nil, apperr.Invalid("%s: %s looks up keywords of at least %d characters; give a longer topic or keywords. Nothing was charged.",
			field, providerLabel(b.Keywords.Name()), least)
	}
	if len(dropped) > 0 {
		warnings = append(warnings, fmt.Sprintf("The keywords %s were left out: %s looks up keywords of at least %d characters.",
			quotedList(dropped), providerLabel(b.Keywords.Name()), least))
	}
	if topicShort {
		warnings = append(warnings, fmt.Sprintf("The topic %q was left out: %s looks up keywords of at least %d characters.",
			r.Topic, providerLabel(b.Keywords.Name()), least))
	}
	return seeds, topic, warnings, nil
}

// providerLabel is a keyword provider's name as the caller reads it.
func providerLabel(name string) string {
	if name == "dataforseo" {
		return "DataForSEO"
	}
	return "the keyword data source"
}

func round1(p *float64) *float64 {
	if p == nil {
		return nil
	}
	v := float64(int64(*p*10+0.5)) / 10
	return &v
}

// CSVRows are the answer's rows for CSV, the header first.
func (res ResearchResult) CSVRows() [][]string {
	var rows [][]string
	rows = append(rows, []string{"cluster_name", "keyword", "search_volume", "keyword_difficulty", "cpc", "search_intent", "opportunity_score",
		"search_intent_inferred", "trend"})
	for _, c := range res.Clusters {
		for _, k := range c.Keywords {
			rows = append(rows, []string{c.ClusterName, k.Keyword, intCell(k.SearchVolume), floatCell(k.Difficulty),
				floatCell(k.CPC), k.SearchIntent, intCell(k.OpportunityScore), strconv.FormatBool(k.SearchIntentInferred),
				stringCell(k.Trend)})
		}
	}
	return rows
}
