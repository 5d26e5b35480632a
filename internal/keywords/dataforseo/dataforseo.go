// Package dataforseo is the keyword provider backed by the DataForSEO v3 API: the Labs
// endpoints keyword_ideas, ranked_keywords and domain_intersection, and optionally
// search_intent and bulk_keyword_difficulty to fill metrics the first answer lacks.
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
	"strings"
	"time"

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

// Endpoint paths.
const (
	PathKeywordIdeas          = "/v3/dataforseo_labs/google/keyword_ideas/live"
	PathRankedKeywords        = "/v3/dataforseo_labs/google/ranked_keywords/live"
	PathDomainIntersection    = "/v3/dataforseo_labs/google/domain_intersection/live"
	PathSearchIntent          = "/v3/dataforseo_labs/google/search_intent/live"
	PathBulkKeywordDifficulty = "/v3/dataforseo_labs/google/bulk_keyword_difficulty/live"
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

// Ideas asks keyword_ideas for keywords related to the seeds, or to the topic when there
// are none. DataForSEO orders them by relevance; Relevance falls from 1 in that order.
func (c *Client) Ideas(ctx context.Context, req keywords.IdeasRequest) ([]keywords.Keyword, error) {
	loc, lang, err := market(req.Country, req.Language)
	if err != nil {
		return nil, err
	}
	seeds := make([]string, 0, len(req.Seeds))
	for _, s := range req.Seeds {
		if s = strings.Join(strings.Fields(s), " "); s != "" && len(seeds) < maxSeeds {
			seeds = append(seeds, s)
		}
	}
	if len(seeds) == 0 {
		if t := strings.Join(strings.Fields(req.Topic), " "); t != "" {
			seeds = []string{t}
		}
	}
	out := []keywords.Keyword{}
	if len(seeds) == 0 {
		return out, nil
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
	var results []struct {
		Items []keywordData `json:"items"`
	}
	if err := c.post(ctx, PathKeywordIdeas, task, &results); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, r := range results {
		for _, it := range r.Items {
			k := it.keyword()
			if k.Keyword == "" || seen[strings.ToLower(k.Keyword)] {
				continue
			}
			seen[strings.ToLower(k.Keyword)] = true
			out = append(out, k)
		}
	}
	if len(out) > limit {
		out = out[:limit]
	}
	for i := range out {
		out[i].Relevance = 1 - float64(i)/float64(len(out))
	}
	ks := make([]*keywords.Keyword, len(out))
	for i := range out {
		ks[i] = &out[i]
	}
	c.fillMissing(ctx, loc, lang, ks)
	return out, nil
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
		Items []struct {
			KeywordData       keywordData `json:"keyword_data"`
			RankedSERPElement struct {
				SERPItem serpItem `json:"serp_item"`
			} `json:"ranked_serp_element"`
		} `json:"items"`
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
	c.fillMissing(ctx, loc, lang, ks)
	return out, nil
}

// Gaps asks domain_intersection, once per competitor and concurrently, for the keywords
// the competitor (target1) ranks for and the domain (target2) does not
// (intersections: false), and merges the answers so each keyword lists every competitor
// that ranks with its position. Each call returns at most 1,000 keywords, the most
// searched first.
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
	out := []keywords.Gap{}
	if domain == "" || len(competitors) == 0 {
		return keywords.GapList{Gaps: out}, nil
	}
	type compItem struct {
		KeywordData keywordData `json:"keyword_data"`
		First       serpItem    `json:"first_domain_serp_element"`
	}
	answers := make([][]compItem, len(competitors))
	g, gctx := errgroup.WithContext(ctx)
	for i, comp := range competitors {
		g.Go(func() error {
			task := map[string]any{
				"target1":       comp,
				"target2":       domain,
				"intersections": false,
				"location_code": loc,
				"language_code": lang,
				"item_types":    []string{"organic"},
				"limit":         maxLimit,
				"order_by":      []string{"keyword_data.keyword_info.search_volume,desc"},
			}
			var results []struct {
				Items []compItem `json:"items"`
			}
			if err := c.post(gctx, PathDomainIntersection, task, &results); err != nil {
				return err
			}
			for _, r := range results {
				answers[i] = append(answers[i], r.Items...)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return keywords.GapList{}, err
	}
	index := map[string]int{}
	for i, items := range answers {
		for _, it := range items {
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
				out[j].CompetitorPositions[competitors[i]] = pos
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		vi, vj := out[i].SearchVolume, out[j].SearchVolume
		switch {
		case vi != nil && vj != nil && *vi != *vj:
			return *vi > *vj
		case (vi == nil) != (vj == nil):
			return vi != nil
		}
		return out[i].Keyword.Keyword < out[j].Keyword.Keyword
	})
	total := len(out)
	if req.Limit > 0 && len(out) > req.Limit {
		out = out[:req.Limit]
	}
	ks := make([]*keywords.Keyword, len(out))
	for i := range out {
		ks[i] = &out[i].Keyword
	}
	c.fillMissing(ctx, loc, lang, ks)
	return keywords.GapList{Gaps: out, Total: total}, nil
}

// fillMissing, when configured, asks search_intent for keywords without an intent and
// bulk_keyword_difficulty for those without a difficulty (at most 1,000 each). The fill
// is best effort: a failure is logged and the keywords keep their gaps.
func (c *Client) fillMissing(ctx context.Context, loc int, lang string, ks []*keywords.Keyword) {
	if !c.fill || len(ks) == 0 {
		return
	}
	var noIntent, noDifficulty []string
	byKey := map[string][]*keywords.Keyword{}
	for _, k := range ks {
		key := strings.ToLower(k.Keyword)
		byKey[key] = append(byKey[key], k)
		if k.Intent == "" && len(noIntent) < maxLimit {
			noIntent = append(noIntent, k.Keyword)
		}
		if k.Difficulty == nil && len(noDifficulty) < maxLimit {
			noDifficulty = append(noDifficulty, k.Keyword)
		}
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
	body, err := json.Marshal([]any{task})
	if err != nil {
		return fmt.Errorf("dataforseo: %s: encode: %w", path, err)
	}
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
		return httpError(path, resp.StatusCode, raw)
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
	return &keywords.ProviderError{Provider: Name, Code: code, Message: path + ": " + msg, Permanent: permanent(code)}
}

// httpError reports a non-200 answer without a DataForSEO status: 5xx and 429 are
// temporary; 401, 402, 404 and other 4xx are permanent.
func httpError(path string, status int, body []byte) error {
	msg := strings.TrimSpace(string(body))
	if len(msg) > 200 {
		msg = msg[:200]
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	perm := status >= 400 && status < 500 && status != http.StatusTooManyRequests && status != http.StatusRequestTimeout
	return &keywords.ProviderError{Provider: Name, Code: status, Message: path + ": HTTP " + msg, Permanent: perm}
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
	case code == 40202, code == 40209, code == 40101, code == 40103:
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

// Rankings is not built yet (issue 20): it says so rather than answer wrongly.
func (c *Client) Rankings(ctx context.Context, req keywords.RankingsRequest) (keywords.RankingList, error) {
	return keywords.RankingList{}, fmt.Errorf("rankings: %w", keywords.ErrUnsupported)
}

// Competitors is not built yet (issue 20): it says so rather than answer wrongly.
func (c *Client) Competitors(ctx context.Context, req keywords.CompetitorsRequest) (keywords.CompetitorList, error) {
	return keywords.CompetitorList{}, fmt.Errorf("competitors: %w", keywords.ErrUnsupported)
}
