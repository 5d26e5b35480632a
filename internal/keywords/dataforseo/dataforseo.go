// Package dataforseo is the keyword provider backed by the DataForSEO v3 API: the Labs
// endpoints keyword_ideas, ranked_keywords, domain_intersection and competitors_domain, and
// optionally search_intent and bulk_keyword_difficulty to fill metrics the first answer
// lacks. The shared query shape (filters, order, pages) maps onto Labs' filters, order_by
// and offset/offset_token (query.go). Each endpoint's methods have a file of their own
// (ideas.go, rankings.go, gaps.go, competitors.go); fills.go asks for missing metrics.
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
	"strconv"
	"strings"
	"time"

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
