// Package dataforseo is the keyword provider backed by the DataForSEO v3 API: the Labs
// endpoints keyword_ideas, ranked_keywords, domain_intersection and competitors_domain, and
// optionally search_intent and bulk_keyword_difficulty to fill metrics the first answer
// lacks. The shared query shape (filters, order, pages) maps onto Labs' filters, order_by
// and offset/offset_token (query.go).
//
// Every call is a POST of a JSON array holding one task, with HTTP Basic auth. DataForSEO
// answers HTTP 200 for most failures and reports them in status_code, at the top level and
// in each task; both are checked. Errors are *keywords.ProviderError, permanent when
// retrying cannot help (see permanent).
package dataforseo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"

	"github.com/contentapi/contentapi/internal/keywords"
)

// Name is the provider's name.
const Name = "dataforseo"

// DefaultBaseURL is DataForSEO's API address.
const DefaultBaseURL = "https://api.dataforseo.com"

// DefaultMaxConcurrent is DataForSEO Labs' limit of simultaneous requests per account.
const DefaultMaxConcurrent = 30

// DefaultIdeasLimit is the number of ideas asked for when a request sets no limit.
const DefaultIdeasLimit = 50

// maxLimit is the most items a Labs endpoint returns in one call.
const maxLimit = 1000

// maxSeeds is the most keywords keyword_ideas accepts in one task.
const maxSeeds = 200

// MinSeedChars is the fewest characters a keyword_ideas seed may have: DataForSEO refuses
// a task holding a shorter one, so such seeds are never sent.
const MinSeedChars = 3

// Endpoint paths.
const (
	PathKeywordIdeas          = "/v3/dataforseo_labs/google/keyword_ideas/live"
	PathRankedKeywords        = "/v3/dataforseo_labs/google/ranked_keywords/live"
	PathDomainIntersection    = "/v3/dataforseo_labs/google/domain_intersection/live"
	PathSearchIntent          = "/v3/dataforseo_labs/google/search_intent/live"
	PathBulkKeywordDifficulty = "/v3/dataforseo_labs/google/bulk_keyword_difficulty/live"
	PathCompetitorsDomain     = "/v3/dataforseo_labs/google/competitors_domain/live"
)

// Config configures a Client.
type Config struct {
	BaseURL  string // default DefaultBaseURL
	Login    string
	Password string
	// HTTPClient sends the requests; default a client with a 150 s timeout (a live Labs
	// task may take up to 120 s before DataForSEO gives up on it).
	HTTPClient *http.Client
	// MaxConcurrent bounds the requests in flight; default DefaultMaxConcurrent.
	MaxConcurrent int
	// FillMissing asks search_intent and bulk_keyword_difficulty for the intent and
	// difficulty of keywords the main answer left without (one extra call each, at most).
	FillMissing bool
	// Logger receives failures of the optional fill calls; nil discards them.
	Logger *slog.Logger
}

// Client calls DataForSEO. It is safe for concurrent use.
type Client struct {
	base     string
	login    string
	password string
	http     *http.Client
	sem      chan struct{}
	fill     bool
	log      *slog.Logger
}

var _ keywords.Provider = (*Client)(nil)

// New returns a client for the configuration.
func New(cfg Config) *Client {
	c := &Client{
		base:     strings.TrimRight(cfg.BaseURL, "/"),
		login:    cfg.Login,
		password: cfg.Password,
		http:     cfg.HTTPClient,
		fill:     cfg.FillMissing,
		log:      cfg.Logger,
	}
	if c.base == "" {
		c.base = DefaultBaseURL
	}
	if c.http == nil {
		c.http = &http.Client{Timeout: 150 * time.Second}
	}
	n := cfg.MaxConcurrent
	if n <= 0 {
		n = DefaultMaxConcurrent
	}
	c.sem = make(chan struct{}, n)
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c
}

// Name reports "dataforseo".
func (c *Client) Name() string { return Name }

// MinSeedChars reports MinSeedChars: the client is a keywords.SeedMinimum.
func (c *Client) MinSeedChars() int { return MinSeedChars }

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
	var at at
	if req.Page.Limit > 0 {
		limit = min(req.Page.Limit, maxLimit)
		if at, err = page(task, limit, req.Page.After); err != nil {
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
			list.Total, list.Next = at.walk(r.pageResult, len(r.Items), len(r.Items))
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

// Ranked asks ranked_keywords for the domain's organic positions, best first. Limit 0 asks
// for the most one call returns (1,000).
func (c *Client) Ranked(ctx context.Context, req keywords.RankedRequest) ([]keywords.Ranking, error) {
	loc, lang, err := market(req.Country, req.Language)
	if err != nil {
		return nil, err
	}
	out := []keywords.Ranking{}
	target := keywords.Domain(req.Domain)
	if target == "" {
		return out, nil
	}
	limit := req.Limit
	if limit <= 0 || limit > maxLimit {
		limit = maxLimit
	}
	task := map[string]any{
		"target":        target,
		"location_code": loc,
		"language_code": lang,
		"item_types":    []string{"organic"},
		"limit":         limit,
		"order_by":      []string{"ranked_serp_element.serp_item.rank_group,asc"},
	}
	var results []struct {
		Items []rankedItem `json:"items"`
	}
	if err := c.post(ctx, PathRankedKeywords, task, &results); err != nil {
		return nil, err
	}
	best := map[string]int{} // keyword → index in out; a keyword may rank with several pages
	for _, r := range results {
		for _, it := range r.Items {
			k := it.KeywordData.keyword()
			pos := it.RankedSERPElement.SERPItem.position()
			if k.Keyword == "" || pos < 1 {
				continue
			}
			key := strings.ToLower(k.Keyword)
			if i, ok := best[key]; ok {
				if pos < out[i].Position {
					out[i].Position, out[i].URL = pos, it.RankedSERPElement.SERPItem.URL
				}
				continue
			}
			best[key] = len(out)
			out = append(out, keywords.Ranking{Keyword: k, Position: pos, URL: it.RankedSERPElement.SERPItem.URL})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Position != out[j].Position {
			return out[i].Position < out[j].Position
		}
		return volume(out[i].Keyword) > volume(out[j].Keyword)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	ks := make([]*keywords.Keyword, len(out))
	for i := range out {
		ks[i] = &out[i].Keyword
	}
	if !req.PositionsOnly {
		c.fillMissing(ctx, loc, lang, ks, fills{intent: true, difficulty: true})
	}
	return out, nil
}

// Gaps asks domain_intersection, once per competitor and concurrently, for the keywords
// the competitor (target1) ranks for and the domain (target2) does not
// (intersections: false), with the query's filters and order, and merges the answers so
// each keyword lists every competitor that ranks with its position.
//
// One competitor is one call: total is DataForSEO's total_count and the page continues with
// its offset_token. Several are merged in the query's order, so each call returns at most
// the page's limit and the next page continues each competitor where this one stopped; the
// total is then the sum of their total_counts less the overlaps seen, exact only when every
// competitor's gaps were all fetched (else GapList.Estimated). An order on the competitor's
// position differs per competitor, so it takes one competitor (ascending with several).
func (c *Client) Gaps(ctx context.Context, req keywords.GapsRequest) (keywords.GapList, error) {
	loc, lang, err := market(req.Country, req.Language)
	if err != nil {
		return keywords.GapList{}, err
	}
	domain := keywords.Domain(req.Domain)
	var competitors []string
	for _, comp := range req.Competitors {
		comp = keywords.Domain(comp)
		if comp != "" && comp != domain && !slices.Contains(competitors, comp) {
			competitors = append(competitors, comp)
		}
	}
	if _, ok := req.Filters.Ranges[keywords.FieldPosition]; ok {
		return keywords.GapList{}, unsupported("filters.position: DataForSEO's gaps are keywords the domain does not rank for")
	}
	filters, err := gapsEndpoint.filters(req.Filters)
	if err != nil {
		return keywords.GapList{}, err
	}
	order, err := gapsEndpoint.orderBy(req.Order, []string{"keyword_data.keyword_info.search_volume,desc", "keyword_data.keyword,asc"})
	if err != nil {
		return keywords.GapList{}, err
	}
	less, err := gapOrder(req.Order, len(competitors))
	if err != nil {
		return keywords.GapList{}, err
	}
	out := []keywords.Gap{}
	if domain == "" || len(competitors) == 0 {
		return keywords.GapList{Gaps: out}, nil
	}
	var starts []int
	pages := make([]at, len(competitors))
	if len(competitors) == 1 {
		starts = []int{0}
	} else if starts, err = offsets(req.After, len(competitors)); err != nil {
		return keywords.GapList{}, err
	}
	type compItem struct {
		KeywordData keywordData `json:"keyword_data"`
		First       serpItem    `json:"first_domain_serp_element"`
	}
	type answer struct {
		pageResult
		Items []compItem `json:"items"`
	}
	answers := make([]answer, len(competitors))
	g, gctx := errgroup.WithContext(ctx)
	for i, comp := range competitors {
		task := map[string]any{
			"target1":       comp,
			"target2":       domain,
			"intersections": false,
			"location_code": loc,
			"language_code": lang,
			"item_types":    []string{"organic"},
			"order_by":      order,
		}
		if filters != nil {
			task["filters"] = filters
		}
		after := ""
		switch {
		case len(competitors) == 1:
			after = req.After
		case starts[i] > 0:
			after = tokenOffset + strconv.Itoa(starts[i])
		}
		p, err := page(task, req.Limit, after)
		if err != nil {
			return keywords.GapList{}, err
		}
		pages[i], starts[i] = p, p.offset
		g.Go(func() error {
			var results []answer
			if err := c.post(gctx, PathDomainIntersection, task, &results); err != nil {
				return err
			}
			for _, r := range results {
				answers[i].pageResult = r.pageResult
				answers[i].Items = append(answers[i].Items, r.Items...)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return keywords.GapList{}, err
	}
	index := map[string]int{}
	seen := 0 // items fetched, counting a keyword once per competitor
	for i, a := range answers {
		for _, it := range a.Items {
			k := it.KeywordData.keyword()
			pos := it.First.position()
			if k.Keyword == "" || pos < 1 {
				continue
			}
			key := strings.ToLower(k.Keyword)
			j, ok := index[key]
			if !ok {
				j = len(out)
				index[key] = j
				out = append(out, keywords.Gap{Keyword: k, CompetitorPositions: map[string]int{}})
			}
			if p, ok := out[j].CompetitorPositions[competitors[i]]; !ok || pos < p {
				if !ok {
					seen++
				}
				out[j].CompetitorPositions[competitors[i]] = pos
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return less(out[i], out[j]) })
	list := keywords.GapList{}
	if len(competitors) == 1 {
		if req.Limit > 0 && len(out) > req.Limit {
			out = out[:req.Limit]
		}
		list.Total, list.Next = pages[0].walk(answers[0].pageResult, min(len(answers[0].Items), limitOf(req.Limit)), len(answers[0].Items))
	} else {
		complete := true
		reach := make([]int, len(answers)) // each competitor's gaps: total_count, or where its items ended
		for i, a := range answers {
			reach[i] = a.TotalCount
			if len(a.Items) < pages[i].limit {
				reach[i] = starts[i] + len(a.Items)
			}
			list.Total += reach[i]
			complete = complete && starts[i] == 0 && len(a.Items) >= reach[i]
		}
		list.Total -= seen - len(out) // keywords several competitors rank for, counted once
		list.Estimated = !complete
		if req.Limit > 0 && len(out) > req.Limit {
			out = out[:req.Limit]
		}
		// Each competitor continues after the items this page used: its answer is in the
		// same order, so they are the first ones.
		used := make(map[string]bool, len(out))
		for _, gp := range out {
			used[strings.ToLower(gp.Keyword.Keyword)] = true
		}
		more := false
		for i, a := range answers {
			n := 0
			for n < len(a.Items) {
				it := a.Items[n]
				if it.KeywordData.Keyword != "" && it.First.position() >= 1 && !used[strings.ToLower(it.KeywordData.Keyword)] {
					break
				}
				n++
			}
			starts[i] += n
			more = more || starts[i] < reach[i]
		}
		if more && len(out) > 0 {
			list.Next = offsetsToken(starts)
		}
	}
	if list.Total < len(out) {
		list.Total = len(out)
	}
	ks := make([]*keywords.Keyword, len(out))
	for i := range out {
		ks[i] = &out[i].Keyword
	}
	c.fillMissing(ctx, loc, lang, ks, fillsFor(false, req.Filters, req.Order)) // gaps show no intent
	list.Gaps = out
	return list, nil
}

// gapOrder is the order merged gaps are listed in: the query's, or the highest volume
// first; unknown values last, then by keyword. An order on competitor_position compares
// each gap's best position: one competitor, or ascending with several (each competitor's
// answer then lists its gaps in the merged order too).
func gapOrder(order []keywords.OrderKey, competitors int) (func(a, b keywords.Gap) bool, error) {
	if len(order) == 0 {
		order = []keywords.OrderKey{{Field: keywords.FieldSearchVolume, Desc: true}}
	}
	for i, k := range order {
		if k.Field == keywords.FieldCompetitorPosition && k.Desc && competitors > 1 {
			return nil, unsupported("order_by[%d]: competitor_position.desc over several competitors: DataForSEO answers per competitor", i)
		}
	}
	if competitors > 1 && len(order) >= MaxOrderRules && order[len(order)-1].Field != keywords.FieldKeyword {
		return nil, unsupported("order_by: over several competitors DataForSEO takes at most %d keys besides the keyword", MaxOrderRules-1)
	}
	return func(a, b keywords.Gap) bool {
		for _, k := range order {
			if c := compareGap(a, b, k); c != 0 {
				return c < 0
			}
		}
		return a.Keyword.Keyword < b.Keyword.Keyword
	}, nil
}

// compareGap compares two gaps on one key, unknown values last in either direction.
func compareGap(a, b keywords.Gap, k keywords.OrderKey) int {
	var va, vb *float64
	switch k.Field {
	case keywords.FieldKeyword:
		c := strings.Compare(a.Keyword.Keyword, b.Keyword.Keyword)
		if k.Desc {
			c = -c
		}
		return c
	case keywords.FieldSearchVolume:
		va, vb = intPtr(a.SearchVolume), intPtr(b.SearchVolume)
	case keywords.FieldDifficulty:
		va, vb = a.Difficulty, b.Difficulty
	case keywords.FieldCPC:
		va, vb = a.CPC, b.CPC
	case keywords.FieldCompetitorPosition:
		va, vb = bestPosition(a), bestPosition(b)
	}
	switch {
	case va == nil && vb == nil:
		return 0
	case va == nil:
		return 1
	case vb == nil:
		return -1
	case *va == *vb:
		return 0
	case (*va < *vb) != k.Desc:
		return -1
	}
	return 1
}

func intPtr(p *int64) *float64 {
	if p == nil {
		return nil
	}
	f := float64(*p)
	return &f
}

func bestPosition(g keywords.Gap) *float64 {
	var best *float64
	for _, p := range g.CompetitorPositions {
		if f := float64(p); best == nil || f < *best {
			best = &f
		}
	}
	return best
}

// fills names the metrics a fill may supply to an answer: those it shows.
type fills struct{ intent, difficulty bool }

// fillsFor is the fills of an answer showing the intent (when intent) and the difficulty,
// less a metric the query filters or orders on: DataForSEO filtered and ordered the pages by
// its own value, and a value filled after that would put rows out of the order the pages
// promise (unknown last).
func fillsFor(intent bool, f keywords.Filters, order []keywords.OrderKey) fills {
	fl := fills{intent: intent && len(f.Intents) == 0, difficulty: true}
	if _, ok := f.Ranges[keywords.FieldDifficulty]; ok {
		fl.difficulty = false
	}
	for _, k := range order {
		if k.Field == keywords.FieldDifficulty {
			fl.difficulty = false
		}
	}
	return fl
}

// fillMissing, when configured, asks search_intent for keywords without an intent and
// bulk_keyword_difficulty for those without a difficulty (at most 1,000 each, each keyword
// once), for the metrics want names. The fill is best effort: a failure is logged and the
// keywords keep their gaps.
func (c *Client) fillMissing(ctx context.Context, loc int, lang string, ks []*keywords.Keyword, want fills) {
	if !c.fill || len(ks) == 0 {
		return
	}
	var noIntent, noDifficulty []string
	byKey := map[string][]*keywords.Keyword{}
	for _, k := range ks {
		key := strings.ToLower(k.Keyword)
		if _, ok := byKey[key]; !ok {
			if want.intent && k.Intent == "" && len(noIntent) < maxLimit {
				noIntent = append(noIntent, k.Keyword)
			}
			if want.difficulty && k.Difficulty == nil && len(noDifficulty) < maxLimit {
				noDifficulty = append(noDifficulty, k.Keyword)
			}
		}
		byKey[key] = append(byKey[key], k)
	}
	if len(noIntent) > 0 {
		var results []struct {
			Items []struct {
				Keyword       string `json:"keyword"`
				KeywordIntent *struct {
					Label string `json:"label"`
				} `json:"keyword_intent"`
			} `json:"items"`
		}
		err := c.post(ctx, PathSearchIntent, map[string]any{"keywords": noIntent, "language_code": lang}, &results)
		if err != nil {
			c.log.WarnContext(ctx, "dataforseo: search intent fill failed", "error", err)
		}
		for _, r := range results {
			for _, it := range r.Items {
				if it.KeywordIntent == nil {
					continue
				}
				for _, k := range byKey[strings.ToLower(it.Keyword)] {
					if k.Intent == "" {
						k.Intent = it.KeywordIntent.Label
					}
				}
			}
		}
	}
	if len(noDifficulty) > 0 {
		var results []struct {
			Items []struct {
				Keyword           string   `json:"keyword"`
				KeywordDifficulty optFloat `json:"keyword_difficulty"`
			} `json:"items"`
		}
		err := c.post(ctx, PathBulkKeywordDifficulty, map[string]any{"keywords": noDifficulty, "location_code": loc, "language_code": lang}, &results)
		if err != nil {
			c.log.WarnContext(ctx, "dataforseo: keyword difficulty fill failed", "error", err)
		}
		for _, r := range results {
			for _, it := range r.Items {
				if it.KeywordDifficulty.v == nil {
					continue
				}
				for _, k := range byKey[strings.ToLower(it.Keyword)] {
					if k.Difficulty == nil {
						d := *it.KeywordDifficulty.v
						k.Difficulty = &d
					}
				}
			}
		}
	}
}

// envelope is the part of every DataForSEO response the client reads.
type envelope struct {
	StatusCode    int    `json:"status_code"`
	StatusMessage string `json:"status_message"`
	Tasks         []struct {
		StatusCode    int             `json:"status_code"`
		StatusMessage string          `json:"status_message"`
		Result        json.RawMessage `json:"result"`
	} `json:"tasks"`
}

// Status codes with a meaning of their own.
const (
	statusOK        = 20000
	statusNoResults = 40102 // "No Search Results.": an empty answer, not a failure
)

// post sends one task to path and decodes the first task's result array into out.
func (c *Client) post(ctx context.Context, path string, task any, out any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // ">=" as written in DataForSEO's documentation, not "\u003e="
	if err := enc.Encode([]any{task}); err != nil {
		return fmt.Errorf("dataforseo: %s: encode: %w", path, err)
	}
	body := buf.Bytes()
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("dataforseo: %s: %w", path, ctx.Err())
	}
	defer func() { <-c.sem }()

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("dataforseo: %s: %w", path, err)
	}
	req.SetBasicAuth(c.login, c.password)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("dataforseo: %s: %w", path, err) // network failure or timeout: temporary
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("dataforseo: %s: read: %w", path, err)
	}
	var env envelope
	jsonErr := json.Unmarshal(raw, &env)
	// DataForSEO's 401 and 402 still carry an envelope with the precise status code.
	if jsonErr == nil && env.StatusCode != 0 && env.StatusCode != statusOK {
		return statusError(path, env.StatusCode, env.StatusMessage)
	}
	if resp.StatusCode != http.StatusOK {
		return httpError(path, resp.StatusCode, raw, retryAfterHeader(resp.Header.Get("Retry-After")))
	}
	if jsonErr != nil {
		return &keywords.ProviderError{Provider: Name, Code: resp.StatusCode,
			Message: fmt.Sprintf("%s: undecodable response: %v", path, jsonErr)}
	}
	if env.StatusCode == 0 {
		return &keywords.ProviderError{Provider: Name, Code: resp.StatusCode, Message: path + ": response without status_code"}
	}
	if len(env.Tasks) == 0 {
		return &keywords.ProviderError{Provider: Name, Code: env.StatusCode, Message: path + ": response without tasks"}
	}
	t := env.Tasks[0]
	switch t.StatusCode {
	case statusOK:
	case statusNoResults:
		return nil
	default:
		return statusError(path, t.StatusCode, t.StatusMessage)
	}
	if len(t.Result) == 0 || string(t.Result) == "null" {
		return nil
	}
	if err := json.Unmarshal(t.Result, out); err != nil {
		return &keywords.ProviderError{Provider: Name, Code: t.StatusCode,
			Message: fmt.Sprintf("%s: undecodable result: %v", path, err)}
	}
	return nil
}

func statusError(path string, code int, msg string) error {
	e := &keywords.ProviderError{Provider: Name, Code: code, Message: path + ": " + msg, Permanent: permanent(code)}
	switch code {
	case statusRateLimit:
		e.RateLimited, e.RetryAfter = true, RateLimitRetryAfter
	case statusTooManySimultaneous:
		e.RateLimited, e.RetryAfter = true, SimultaneousRetryAfter
	}
	return e
}

// Rate-limit refusals, and how long to wait after each: the rate limit is per minute, the
// simultaneous-request limit frees a slot as soon as a request ends.
const (
	statusRateLimit           = 40202
	statusTooManySimultaneous = 40209
	RateLimitRetryAfter       = 60 * time.Second
	SimultaneousRetryAfter    = 5 * time.Second
)

// httpError reports a non-200 answer without a DataForSEO status: 5xx and 429 are
// temporary; 401, 402, 404 and other 4xx are permanent.
func httpError(path string, status int, body []byte, retryAfter time.Duration) error {
	msg := strings.TrimSpace(string(body))
	if len(msg) > 200 {
		msg = msg[:200]
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	perm := status >= 400 && status < 500 && status != http.StatusTooManyRequests && status != http.StatusRequestTimeout
	e := &keywords.ProviderError{Provider: Name, Code: status, Message: path + ": HTTP " + msg, Permanent: perm}
	if status == http.StatusTooManyRequests {
		e.RateLimited, e.RetryAfter = true, retryAfter
	}
	return e
}

// retryAfterHeader reads a Retry-After of whole seconds; RateLimitRetryAfter when it has
// none.
func retryAfterHeader(v string) time.Duration {
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 && n <= 3600 {
		return time.Duration(n) * time.Second
	}
	return RateLimitRetryAfter
}

// permanent reports whether a DataForSEO status code means retrying cannot help, after the
// documented list (docs.dataforseo.com/v3/appendix/errors). Temporary:
//   - 40202 rate limit per minute exceeded, 40209 too many simultaneous requests;
//   - 40101 the search engine answered with an error, 40103 task execution failed
//     ("try to resubmit");
//   - 406xx task not ready yet;
//   - 5xxxx DataForSEO or third-party failure and timeouts, except 50100 "not implemented"
//     (a non-existing task or parameter).
//
// Permanent: every other 4xxxx, among them 40100 not authorized, 40104 account not
// verified, 40200/40210 payment required or insufficient funds, 40201 account paused,
// 40203 daily cost limit reached, 40204 no subscription, 40207 IP not whitelisted,
// 404xx not found, 40501 invalid field and the other request errors.
func permanent(code int) bool {
	switch {
	case code == statusRateLimit, code == statusTooManySimultaneous, code == 40101, code == 40103:
		return false
	case code >= 40600 && code < 40700:
		return false
	case code == 50100:
		return true
	case code >= 50000:
		return false
	}
	return code >= 40000 && code < 50000
}

// locations maps the API's country codes to DataForSEO location codes.
var locations = map[string]int{
	"us": 2840, "uk": 2826, "gb": 2826, "ca": 2124, "au": 2036, "de": 2276, "fr": 2250,
	"es": 2724, "it": 2380, "br": 2076, "pt": 2620, "nl": 2528, "in": 2356,
}

// languages are the language codes DataForSEO Labs accepts that the API offers.
var languages = map[string]bool{"en": true, "de": true, "fr": true, "es": true, "it": true, "pt": true, "nl": true, "tr": true}

// LocationCode returns the DataForSEO location code of a country code ("us" → 2840).
func LocationCode(country string) (int, bool) {
	code, ok := locations[strings.ToLower(strings.TrimSpace(country))]
	return code, ok
}

// market validates a request's country and language (defaults us, en) before any paid call.
func market(country, language string) (int, string, error) {
	country = strings.ToLower(strings.TrimSpace(country))
	language = strings.ToLower(strings.TrimSpace(language))
	if country == "" {
		country = "us"
	}
	if language == "" {
		language = "en"
	}
	loc, ok := locations[country]
	if !ok {
		return 0, "", &keywords.ProviderError{Provider: Name, Code: 40501, Message: fmt.Sprintf("country %q has no DataForSEO location", country), Permanent: true}
	}
	if !languages[language] {
		return 0, "", &keywords.ProviderError{Provider: Name, Code: 40501, Message: fmt.Sprintf("language %q is not supported", language), Permanent: true}
	}
	return loc, language, nil
}

func volume(k keywords.Keyword) int64 {
	if k.SearchVolume == nil {
		return -1
	}
	return *k.SearchVolume
}

// Rankings asks ranked_keywords for one page of the domain's organic rankings, with the
// query's filters and order (default: best position first, then the highest volume), and
// counts them by position band from DataForSEO's metrics.organic. total is its
// total_count; the next page continues with its offset_token.
func (c *Client) Rankings(ctx context.Context, req keywords.RankingsRequest) (keywords.RankingList, error) {
	loc, lang, err := market(req.Country, req.Language)
	if err != nil {
		return keywords.RankingList{}, err
	}
	if _, ok := req.Filters.Ranges[keywords.FieldCompetitorPosition]; ok {
		return keywords.RankingList{}, unsupported("filters.competitor_position: a domain's rankings have no competitor")
	}
	filters, err := rankingsEndpoint.filters(req.Filters)
	if err != nil {
		return keywords.RankingList{}, err
	}
	order, err := rankingsEndpoint.orderBy(req.Order, []string{"ranked_serp_element.serp_item.rank_group,asc",
		"keyword_data.keyword_info.search_volume,desc", "keyword_data.keyword,asc"})
	if err != nil {
		return keywords.RankingList{}, err
	}
	list := keywords.RankingList{Rankings: []keywords.Ranking{}, Bands: map[string]int{}}
	target := keywords.Domain(req.Domain)
	if target == "" {
		return list, nil
	}
	task := map[string]any{
		"target":        target,
		"location_code": loc,
		"language_code": lang,
		"item_types":    []string{"organic"},
		"order_by":      order,
	}
	if filters != nil {
		task["filters"] = filters
	}
	at, err := page(task, req.Page.Limit, req.Page.After)
	if err != nil {
		return keywords.RankingList{}, err
	}
	var results []struct {
		pageResult
		Metrics *struct {
			Organic map[string]optFloat `json:"organic"`
		} `json:"metrics"`
		Items []rankedItem `json:"items"`
	}
	if err := c.post(ctx, PathRankedKeywords, task, &results); err != nil {
		return keywords.RankingList{}, err
	}
	best := map[string]int{} // keyword → index in list.Rankings
	returned := 0
	for _, r := range results {
		returned += len(r.Items)
		list.Total, list.Next = at.walk(r.pageResult, len(r.Items), len(r.Items))
		if r.Metrics != nil {
			for key, v := range r.Metrics.Organic {
				if band := bandOf(key); band != "" && v.v != nil {
					list.Bands[band] += int(*v.v)
				}
			}
		}
		for _, it := range r.Items {
			k := it.KeywordData.keyword()
			pos := it.RankedSERPElement.SERPItem.position()
			if k.Keyword == "" || pos < 1 {
				continue
			}
			// A keyword the domain ranks for with several pages is one row: its best
			// position, with the URL holding it (the first listed on a tie).
			key := strings.ToLower(k.Keyword)
			if i, ok := best[key]; ok {
				if pos < list.Rankings[i].Position {
					list.Rankings[i].Position, list.Rankings[i].URL = pos, it.RankedSERPElement.SERPItem.URL
				}
				continue
			}
			best[key] = len(list.Rankings)
			list.Rankings = append(list.Rankings, keywords.Ranking{Keyword: k, Position: pos, URL: it.RankedSERPElement.SERPItem.URL})
		}
	}
	if returned < at.limit {
		// The last page: total counts its keywords, not DataForSEO's rows of them.
		list.Total = at.offset + len(list.Rankings)
	}
	for _, b := range Bands {
		if _, ok := list.Bands[b]; !ok {
			list.Bands[b] = 0
		}
	}
	ks := make([]*keywords.Keyword, len(list.Rankings))
	for i := range list.Rankings {
		ks[i] = &list.Rankings[i].Keyword
	}
	c.fillMissing(ctx, loc, lang, ks, fillsFor(true, req.Filters, req.Order))
	return list, nil
}

// Bands are the position bands of RankingList.Bands.
var Bands = []string{"1-3", "4-10", "11-20", "21-50", "51-100"}

// bandOf maps a key of ranked_keywords' metrics.organic (pos_1, pos_2_3, pos_4_10,
// pos_11_20, pos_21_30 … pos_91_100) to its band; "" for the other keys (etv, count …).
func bandOf(key string) string {
	switch key {
	case "pos_1", "pos_2_3":
		return "1-3"
	case "pos_4_10":
		return "4-10"
	case "pos_11_20":
		return "11-20"
	case "pos_21_30", "pos_31_40", "pos_41_50":
		return "21-50"
	case "pos_51_60", "pos_61_70", "pos_71_80", "pos_81_90", "pos_91_100":
		return "51-100"
	}
	return ""
}

// rankedItem is an item of ranked_keywords.
type rankedItem struct {
	KeywordData       keywordData `json:"keyword_data"`
	RankedSERPElement struct {
		SERPItem serpItem `json:"serp_item"`
	} `json:"ranked_serp_element"`
}

// Competitors asks competitors_domain for one page of the domains sharing the most
// organic keywords with the domain: shared keywords are its intersections, the
// competitor's average position its avg_position, its total full_domain_metrics.organic.count;
// what DataForSEO leaves null is named in Competitor.Unknown. DataForSEO does not give the
// domain's own average position over the shared keywords: it is always unknown. DataForSEO
// lists the domain itself among its competitors; it is left out, and out of every page's
// total. Its filters apply to the competitors, not to the shared
// keywords, and it sorts by its own fields: a query with filters or an order is
// unsupported.
func (c *Client) Competitors(ctx context.Context, req keywords.CompetitorsRequest) (keywords.CompetitorList, error) {
	loc, lang, err := market(req.Country, req.Language)
	if err != nil {
		return keywords.CompetitorList{}, err
	}
	if !req.Filters.Empty() {
		return keywords.CompetitorList{}, unsupported("filters: DataForSEO's competitors_domain cannot filter the shared keywords")
	}
	if len(req.Order) > 0 {
		return keywords.CompetitorList{}, unsupported("order_by: DataForSEO's competitors_domain lists the most shared keywords first only")
	}
	list := keywords.CompetitorList{Competitors: []keywords.Competitor{}}
	target := keywords.Domain(req.Domain)
	if target == "" {
		return list, nil
	}
	task := map[string]any{
		"target":        target,
		"location_code": loc,
		"language_code": lang,
		"item_types":    []string{"organic"},
		"order_by":      []string{"intersections,desc"},
	}
	at, err := page(task, req.Page.Limit, req.Page.After)
	if err != nil {
		return keywords.CompetitorList{}, err
	}
	var results []struct {
		pageResult
		Items []struct {
			Domain            string   `json:"domain"`
			AvgPosition       optFloat `json:"avg_position"`
			Intersections     optInt   `json:"intersections"`
			FullDomainMetrics *struct {
				Organic *struct {
					Count optInt `json:"count"`
				} `json:"organic"`
			} `json:"full_domain_metrics"`
		} `json:"items"`
	}
	if err := c.post(ctx, PathCompetitorsDomain, task, &results); err != nil {
		return keywords.CompetitorList{}, err
	}
	// The domain shares the most keywords with itself, so DataForSEO lists it first, on the
	// first page: every page's total leaves it out, so that all pages say the same.
	self := at.offset > 0
	for _, r := range results {
		list.Total, list.Next = at.walk(r.pageResult, len(r.Items), len(r.Items))
		for _, it := range r.Items {
			d := keywords.Domain(it.Domain)
			if d == "" || d == target {
				self = self || d == target
				continue
			}
			// What DataForSEO leaves null is unknown, never 0.
			comp := keywords.Competitor{Domain: d, Unknown: []string{keywords.CompetitorDomainAvgPosition}}
			if v := it.Intersections.v; v != nil {
				comp.Shared = int(*v)
			} else {
				comp.Unknown = append(comp.Unknown, keywords.CompetitorShared)
			}
			if v := it.AvgPosition.v; v != nil {
				comp.AvgPosition = *v
			} else {
				comp.Unknown = append(comp.Unknown, keywords.CompetitorAvgPosition)
			}
			if m := it.FullDomainMetrics; m != nil && m.Organic != nil && m.Organic.Count.v != nil {
				comp.Total = int(*m.Organic.Count.v)
			} else {
				comp.Unknown = append(comp.Unknown, keywords.CompetitorTotal)
			}
			list.Competitors = append(list.Competitors, comp)
		}
	}
	if self && list.Total > 0 {
		list.Total--
	}
	if list.Total < len(list.Competitors) {
		list.Total = len(list.Competitors)
	}
	return list, nil
}
