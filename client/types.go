package client

import (
	"encoding/json"
	"time"
)

// Meta describes an analysis answer: what it cost, the balance after it, and the request,
// job and rate limit it belongs to.
type Meta struct {
	CreditsUsed      int
	CreditsRemaining int
	RequestID        string
	JobID            string
	// Replayed is true when the answer repeats an earlier call with the same
	// Idempotency-Key (nothing was charged again).
	Replayed  bool
	RateLimit RateLimit
	// DataSource says where the answer's data came from: "synthetic" (made-up sample
	// data), "mixed", "imported", "provider" or "crawl" (meta.data_source, or the
	// X-Data-Source header of CSV answers).
	DataSource string
	// Warnings are what the caller should know about the answer (meta.warnings).
	Warnings []string
}

// RateLimit is the account's rate-limit state after a call (X-RateLimit-* headers).
type RateLimit struct {
	Limit     int           // requests allowed per minute
	Remaining int           // requests left in the window
	Reset     time.Duration // until a slot frees
}

// RegisterRequest is the body of Register.
type RegisterRequest struct {
	Email string `json:"email"`
	// Name names the first key; "Default" when empty.
	Name string `json:"name,omitempty"`
}

// Registration is a new account with its first key, shown only this once.
type Registration struct {
	APIKey    string `json:"api_key"`
	KeyPrefix string `json:"key_prefix"`
	Plan      string `json:"plan"`
	Credits   int    `json:"credits"`
	RateLimit string `json:"rate_limit"` // "10 requests/minute"
	Warning   string `json:"warning"`
}

// Usage is the account's plan, credits and recent calls.
type Usage struct {
	Plan             string `json:"plan"`
	CreditsUsed      int    `json:"credits_used"`
	CreditsLimit     int    `json:"credits_limit"`
	CreditsRemaining int    `json:"credits_remaining"`
	// PeriodStart and PeriodEnd bound the current credit period: credits_used counts from
	// PeriodStart, and the next monthly allocation comes at PeriodEnd.
	PeriodStart time.Time `json:"period_start"`
	PeriodEnd   time.Time `json:"period_end"`
	RateLimit   int       `json:"rate_limit"` // requests per minute
	RecentCalls []Call    `json:"recent_calls"`
	UpgradeURL  string    `json:"upgrade_url"`
}

// Call is one settled call in Usage.
type Call struct {
	Endpoint    string    `json:"endpoint"`
	CreditsUsed int       `json:"credits_used"`
	CreatedAt   time.Time `json:"created_at"`
}

// Account describes the account.
type Account struct {
	ID                 string            `json:"id"`
	Email              string            `json:"email"`
	Plan               string            `json:"plan"`
	BillingCycle       string            `json:"billing_cycle"`
	RateLimit          int               `json:"rate_limit"`
	CreditsMonthly     int               `json:"credits_monthly"`
	CurrentPeriodStart time.Time         `json:"current_period_start"`
	CurrentPeriodEnd   time.Time         `json:"current_period_end"`
	PendingChange      *PendingChange    `json:"pending_change"`
	CreatedAt          time.Time         `json:"created_at"`
	Callbacks          *CallbackSettings `json:"callbacks,omitempty"`
}

// PendingChange is a plan or billing-cycle change that takes effect at EffectiveAt.
type PendingChange struct {
	Plan         string    `json:"plan"`
	BillingCycle string    `json:"billing_cycle"`
	EffectiveAt  time.Time `json:"effective_at"`
}

// CallbackSettings tells how job callbacks sent to a callback URL are signed.
type CallbackSettings struct {
	SigningSecret   string `json:"signing_secret"`
	SignatureHeader string `json:"signature_header"`
	Verification    string `json:"verification"`
	Retries         string `json:"retries"`
}

// APIKey is a key as listed: never the key itself.
type APIKey struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	KeyPrefix  string     `json:"key_prefix"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	Status     string     `json:"status"` // active, expired or revoked
}

// CreateKeyRequest is the body of CreateKey.
type CreateKeyRequest struct {
	Name string `json:"name,omitempty"`
	// ExpiresInDays (1 to 3650) makes the key expire; 0 never.
	ExpiresInDays int `json:"expires_in_days,omitempty"`
}

// NewAPIKey is a created key, shown only this once.
type NewAPIKey struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	APIKey    string     `json:"api_key"`
	KeyPrefix string     `json:"key_prefix"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at"`
	Warning   string     `json:"warning"`
}

// ResearchRequest is the body of KeywordResearch. Zero fields take the API's defaults
// (country us, language en, limit 50).
type ResearchRequest struct {
	Domain   string   `json:"domain"`
	Topic    string   `json:"topic,omitempty"`
	Keywords []string `json:"keywords,omitempty"`
	Country  string   `json:"country,omitempty"`
	Language string   `json:"language,omitempty"`
	Limit    int      `json:"limit,omitempty"` // 1 to 1000; above 100 costs 5 per started 100
	Query
	CallbackURL string `json:"callback_url,omitempty"`
}

// Range bounds a metric, both ends inclusive; set at least one.
type Range struct {
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
}

// Filters narrow a keyword list. Each endpoint takes the ranges that apply to it (research:
// no positions; gaps: competitor_position, no position or opportunity_score).
type Filters struct {
	SearchVolume       *Range   `json:"search_volume,omitempty"`
	KeywordDifficulty  *Range   `json:"keyword_difficulty,omitempty"`
	CPC                *Range   `json:"cpc,omitempty"`
	OpportunityScore   *Range   `json:"opportunity_score,omitempty"`
	CompetitorPosition *Range   `json:"competitor_position,omitempty"`
	Position           *Range   `json:"position,omitempty"`
	EstimatedTraffic   *Range   `json:"estimated_traffic,omitempty"`
	Intent             []string `json:"intent,omitempty"`
	Include            []string `json:"include,omitempty"` // single words that must all appear
	Exclude            []string `json:"exclude,omitempty"` // single words none of which may appear
}

// Query is the filters, order and cursor of a keyword request. OrderBy holds up to three
// "<field>.asc" or "<field>.desc" keys; Cursor is the NextCursor of the previous page, sent
// with the same request fields (only Limit may change), "" for the first page. The
// ...Pages methods send it for each page.
type Query struct {
	Filters *Filters `json:"filters,omitempty"`
	OrderBy []string `json:"order_by,omitempty"`
	Cursor  Cursor   `json:"cursor,omitempty"`
}

// Keyword is a keyword record. Unknown metrics are nil.
type Keyword struct {
	Keyword           string   `json:"keyword"`
	SearchVolume      *int64   `json:"search_volume"`
	KeywordDifficulty *float64 `json:"keyword_difficulty"`
	CPC               *float64 `json:"cpc"`
	SearchIntent      string   `json:"search_intent"`
	// SearchIntentInferred is true when the data source gave no intent and SearchIntent is
	// the service's phrase classifier's guess.
	SearchIntentInferred bool `json:"search_intent_inferred"`
	OpportunityScore     *int `json:"opportunity_score"`
	// Position is the domain's ranking position, when it ranks.
	Position *int `json:"position,omitempty"`
	// MonthlySearches are the monthly search volumes, oldest first; nil when unknown.
	MonthlySearches []MonthlySearch `json:"monthly_searches,omitempty"`
	// Trend is "increasing", "stable" or "decreasing" (the last 3 months against the 3
	// before, ±10%); "" when unknown (null).
	Trend string `json:"trend,omitempty"`
}

// MonthlySearch is one month's search volume.
type MonthlySearch struct {
	Year         int   `json:"year"`
	Month        int   `json:"month"`
	SearchVolume int64 `json:"search_volume"`
}

// Cluster is a group of related keywords.
type Cluster struct {
	ClusterName   string    `json:"cluster_name"`
	TotalVolume   int64     `json:"total_volume"`
	AvgDifficulty *float64  `json:"avg_difficulty"`
	Keywords      []Keyword `json:"keywords"`
}

// ResearchResult is the answer of KeywordResearch.
type ResearchResult struct {
	Domain   string    `json:"domain"`
	Topic    string    `json:"topic"`
	Country  string    `json:"country"`
	Clusters []Cluster `json:"clusters"`
	// TotalKeywords counts this page's keywords; Total every keyword the pages walk, and
	// NextCursor, sent as Query.Cursor, continues them ("" on the last page).
	TotalKeywords int    `json:"total_keywords"`
	Total         int    `json:"total"`
	NextCursor    Cursor `json:"next_cursor"`
	Source        string `json:"source"`
	Meta          Meta   `json:"-"`
}

// GapsRequest is the body of KeywordGaps.
type GapsRequest struct {
	Domain      string   `json:"domain"`
	Competitors []string `json:"competitors"` // 1 to 3
	Country     string   `json:"country,omitempty"`
	Language    string   `json:"language,omitempty"`
	Limit       int      `json:"limit,omitempty"` // 1 to 1000; above 200 costs 10 per started 200
	Query
	CallbackURL string `json:"callback_url,omitempty"`
}

// Gap is a keyword competitors rank for and the domain does not.
type Gap struct {
	Keyword             string         `json:"keyword"`
	SearchVolume        *int64         `json:"search_volume"`
	KeywordDifficulty   *float64       `json:"keyword_difficulty"`
	CompetitorPositions map[string]int `json:"competitor_positions"`
	// MonthlySearches and Trend are as in Keyword.
	MonthlySearches []MonthlySearch `json:"monthly_searches,omitempty"`
	Trend           string          `json:"trend,omitempty"`
}

// GapsResult is the answer of KeywordGaps.
type GapsResult struct {
	Domain      string   `json:"domain"`
	Competitors []string `json:"competitors"`
	Gaps        []Gap    `json:"gaps"`
	TotalGaps   int      `json:"total_gaps"`
	// Total equals TotalGaps; NextCursor continues the list ("" on its last page).
	Total      int    `json:"total"`
	NextCursor Cursor `json:"next_cursor"`
	Source     string `json:"source"`
	Meta       Meta   `json:"-"`
}

// RankingsRequest is the body of KeywordRankings.
type RankingsRequest struct {
	Domain   string `json:"domain"`
	Country  string `json:"country,omitempty"`
	Language string `json:"language,omitempty"`
	Limit    int    `json:"limit,omitempty"` // 1 to 1000; 100 when 0; above 200 costs 5 per started 200
	Query
	CallbackURL string `json:"callback_url,omitempty"`
}

// Ranking is a keyword the domain ranks for: its best position and URL, the keyword's
// metrics (nil when unknown) and the estimated monthly traffic.
type Ranking struct {
	Keyword           string   `json:"keyword"`
	Position          int      `json:"position"`
	URL               *string  `json:"url"`
	SearchVolume      *int64   `json:"search_volume"`
	KeywordDifficulty *float64 `json:"keyword_difficulty"`
	CPC               *float64 `json:"cpc"`
	SearchIntent      string   `json:"search_intent"`
	// SearchIntentInferred is true when SearchIntent is the service's guess from the phrase.
	SearchIntentInferred bool   `json:"search_intent_inferred"`
	EstimatedTraffic     *int64 `json:"estimated_traffic"`
}

// RankingsResult is the answer of KeywordRankings.
type RankingsResult struct {
	Domain   string    `json:"domain"`
	Country  string    `json:"country"`
	Language string    `json:"language"`
	Rankings []Ranking `json:"rankings"`
	Total    int       `json:"total"`
	// PositionBands counts the rankings by band: "1-3", "4-10", "11-20", "21-50", "51-100".
	PositionBands map[string]int `json:"position_bands"`
	// NextCursor continues the list ("" on its last page).
	NextCursor Cursor `json:"next_cursor"`
	Source     string `json:"source"`
	Meta       Meta   `json:"-"`
}

// CompetitorsRequest is the body of KeywordCompetitors.
type CompetitorsRequest struct {
	Domain   string `json:"domain"`
	Country  string `json:"country,omitempty"`
	Language string `json:"language,omitempty"`
	Limit    int    `json:"limit,omitempty"` // 1 to 100; 20 when 0
	// Filters and Cursor as in Query; competitors are listed by shared keywords, and take
	// no order_by.
	Filters     *Filters `json:"filters,omitempty"`
	Cursor      Cursor   `json:"cursor,omitempty"`
	CallbackURL string   `json:"callback_url,omitempty"`
}

// Competitor is a domain sharing ranked keywords with the asked domain; a number the data
// source does not know is nil.
type Competitor struct {
	Domain            string   `json:"domain"`
	SharedKeywords    *int     `json:"shared_keywords"`
	AvgPosition       *float64 `json:"avg_position"`
	DomainAvgPosition *float64 `json:"domain_avg_position"`
	TotalKeywords     *int     `json:"total_keywords"`
}

// CompetitorsResult is the answer of KeywordCompetitors.
type CompetitorsResult struct {
	Domain      string       `json:"domain"`
	Country     string       `json:"country"`
	Language    string       `json:"language"`
	Competitors []Competitor `json:"competitors"`
	Total       int          `json:"total"`
	NextCursor  Cursor       `json:"next_cursor"` // "" on the last page
	Source      string       `json:"source"`
	Meta        Meta         `json:"-"`
}

// AuditRequest is the body of ContentAudit.
type AuditRequest struct {
	Domain     string `json:"domain"`
	SitemapURL string `json:"sitemap_url,omitempty"`
	MaxPages   int    `json:"max_pages,omitempty"` // 1 to 500; 100 when 0
	// CheckExternal asks for links to other sites to be checked too (at most 100 URLs).
	CheckExternal bool `json:"check_external,omitempty"`
	// Render is "none" (the default) or "javascript": every page also rendered in headless
	// Chromium, at 30 credits instead of 15.
	Render      string `json:"render,omitempty"`
	CallbackURL string `json:"callback_url,omitempty"`
}

// AuditPage is a page of the audited site.
type AuditPage struct {
	URL             string `json:"url"`
	Title           string `json:"title"`
	WordCount       int    `json:"word_count"`
	MetaDescription string `json:"meta_description"`
	Status          int    `json:"status"`
	Noindex         bool   `json:"noindex"`
	Canonical       string `json:"canonical"`
	// Depth is the click depth from the home page; nil when no chain of links reaches it.
	Depth *int `json:"depth"`
	// Source is how the crawl came to the page: "sitemap", "links" or "both".
	Source string `json:"source"`
	// Rendered is the page once its JavaScript ran (audits with Render "javascript").
	Rendered *RenderedPage `json:"rendered,omitempty"`
}

// RenderedPage is a page as headless Chromium showed it, beside the HTML as served.
type RenderedPage struct {
	Title              string   `json:"title"`
	H1                 string   `json:"h1"`
	H1Count            int      `json:"h1_count"`
	WordCount          int      `json:"word_count"`
	Links              int      `json:"links"`     // distinct links of the rendered DOM
	RawLinks           int      `json:"raw_links"` // of the HTML as served
	NewLinks           []string `json:"new_links,omitempty"`
	NewLinksTotal      int      `json:"new_links_total"`
	ConsoleErrors      []string `json:"console_errors,omitempty"`
	ConsoleErrorsTotal int      `json:"console_errors_total"`
	Error              string   `json:"error,omitempty"` // why it did not render
}

// ThinPage is a page with too little main content.
type ThinPage struct {
	URL       string `json:"url"`
	WordCount int    `json:"word_count"`
	Title     string `json:"title"`
}

// CannibalizationRisk is a keyword several pages of the site compete for.
type CannibalizationRisk struct {
	Keyword        string   `json:"keyword"`
	URLs           []string `json:"urls"`
	Recommendation string   `json:"recommendation"`
}

// AuditSummary sums an audit up.
type AuditSummary struct {
	Total                 int      `json:"total"`
	Thin                  int      `json:"thin"`
	CannibalizationIssues int      `json:"cannibalization_issues"`
	AvgWords              *float64 `json:"avg_words"`
	// Issues counts the URLs of every audit issue type (0 when none).
	Issues map[string]int `json:"issues"`
	// PagesFromSitemap counts the pages a sitemap lists, PagesFromLinks those found by
	// following links alone.
	PagesFromSitemap int `json:"pages_from_sitemap"`
	PagesFromLinks   int `json:"pages_from_links"`
	// HealthScore is 0-100 (docs/audit-checks.md gives the formula); nil when no page was
	// counted.
	HealthScore *int `json:"health_score"`
	// Indexable counts the pages meant to rank.
	Indexable int `json:"indexable"`
	// Excluded counts, by reason, the pages left out of the checks of indexable pages.
	Excluded map[string]int `json:"excluded"`
}

// AuditIssue is one type of problem the audit found (missing_title, broken_internal_link,
// ...): Count URLs have it, URLs lists the first 100 of them, Items the same URLs with
// their detail.
type AuditIssue struct {
	Type     string `json:"type"`
	Severity string `json:"severity"` // error, warning or notice
	Category string `json:"category"` // titles, content, links, ... (docs/audit-checks.md)
	Count    int    `json:"count"`
	// Pages is how many pages of the site the issue is held against; Impact is Pages times
	// the severity's weight (error 9, warning 3, notice 1), the order issues are listed in.
	Pages  int `json:"pages"`
	Impact int `json:"impact"`
	// Canonicalised and Noindex count the issue's URLs on pages canonicalised elsewhere and
	// on noindex pages, which the content checks judge too.
	Canonicalised int              `json:"canonicalised"`
	Noindex       int              `json:"noindex"`
	URLs          []string         `json:"urls"`
	Items         []AuditItem      `json:"items"`
	Links         []BrokenLink     `json:"links,omitempty"`     // broken_internal_link only
	Redirects     []IssueRedirect  `json:"redirects,omitempty"` // sitemap_redirect only
	Fragments     []BrokenFragment `json:"fragments,omitempty"` // broken_fragment only
}

// AuditItem is one URL with an audit issue and what makes it actionable: the page linking
// to it (Source), where it leads (Target), its duplicate (Twin), the measured Value.
type AuditItem struct {
	URL    string `json:"url"`
	Source string `json:"source,omitempty"`
	Target string `json:"target,omitempty"`
	Twin   string `json:"twin,omitempty"`
	Value  string `json:"value,omitempty"`
	// InSitemap: a broken link's URL a sitemap lists too.
	InSitemap bool `json:"in_sitemap,omitempty"`
}

// BrokenLink is a linked URL of the site that answered 4xx/5xx (Status) or not at all (nil
// Status, Error), with the first pages linking to it.
type BrokenLink struct {
	URL             string   `json:"url"`
	Status          *int     `json:"status"`
	Error           string   `json:"error,omitempty"`
	LinkedFrom      []string `json:"linked_from"`
	LinkedFromTotal int      `json:"linked_from_total"`
	InSitemap       bool     `json:"in_sitemap"` // a sitemap lists the URL too
}

// BrokenFragment is a link to #Fragment of a page of the site (Target) that has no such
// element, with the first pages linking to it.
type BrokenFragment struct {
	URL             string   `json:"url"`
	Target          string   `json:"target"`
	Fragment        string   `json:"fragment"`
	LinkedFrom      []string `json:"linked_from"`
	LinkedFromTotal int      `json:"linked_from_total"`
}

// IssueRedirect is a sitemap URL that redirected, where it ended and the final status.
type IssueRedirect struct {
	URL      string `json:"url"`
	FinalURL string `json:"final_url"`
	Status   int    `json:"status"`
}

// PageError is a URL of the site that gave no HTML page. Status is nil when no HTTP answer
// came.
type PageError struct {
	URL    string `json:"url"`
	Status *int   `json:"status"`
	Error  string `json:"error"`
}

// SitemapError is a sitemap that could not be used.
type SitemapError struct {
	URL   string `json:"url"`
	Error string `json:"error"`
}

// AuditResult is the answer of ContentAudit.
type AuditResult struct {
	Domain               string                `json:"domain"`
	PagesCrawled         int                   `json:"pages_crawled"`
	Pages                []AuditPage           `json:"pages"`
	ThinContent          []ThinPage            `json:"thin_content"`
	CannibalizationRisks []CannibalizationRisk `json:"cannibalization_risks"`
	Summary              AuditSummary          `json:"summary"`
	Issues               []AuditIssue          `json:"issues"`
	Errors               []PageError           `json:"errors"`
	Sitemaps             []string              `json:"sitemaps"`
	SitemapErrors        []SitemapError        `json:"sitemap_errors"`
	Warnings             []string              `json:"warnings"`
	Changes              *AuditChanges         `json:"changes"` // since this account's previous audit of the domain; nil on the first
	ThinThreshold        int                   `json:"thin_threshold"`
	Render               string                `json:"render"` // none or javascript
	Meta                 Meta                  `json:"-"`
}

// AuditChanges compares an audit with the account's previous audit of the same domain:
// issue types new, fixed, grown or shrunk, and per type the listed URLs that appeared or
// disappeared (at most 100 each). URLsNotCompared names types whose lists were too long to
// compare.
type AuditChanges struct {
	PreviousJobID   string              `json:"previous_job_id"`
	PreviousAt      time.Time           `json:"previous_at"`
	New             []string            `json:"new"`
	Fixed           []string            `json:"fixed"`
	Grown           []IssueCountChange  `json:"grown"`
	Shrunk          []IssueCountChange  `json:"shrunk"`
	URLsAppeared    map[string][]string `json:"urls_appeared"`
	URLsDisappeared map[string][]string `json:"urls_disappeared"`
	URLsNotCompared []string            `json:"urls_not_compared"`
}

// IssueCountChange is an issue type found by both audits with another number of URLs.
type IssueCountChange struct {
	Type string `json:"type"`
	From int    `json:"from"`
	To   int    `json:"to"`
}

// RecommendRequest is the body of ContentRecommend.
type RecommendRequest struct {
	Domain       string   `json:"domain"`
	FocusTopics  []string `json:"focus_topics,omitempty"`
	BrandContext string   `json:"brand_context,omitempty"`
	Competitors  []string `json:"competitors,omitempty"`
	Country      string   `json:"country,omitempty"`
	Language     string   `json:"language,omitempty"`
	Limit        int      `json:"limit,omitempty"`
	CallbackURL  string   `json:"callback_url,omitempty"`
}

// OutlineSection is an H2 of a recommended article with its talking points.
type OutlineSection struct {
	H2            string   `json:"h2"`
	TalkingPoints []string `json:"talking_points"`
}

// Recommendation is a recommended article or page improvement.
type Recommendation struct {
	Priority int `json:"priority"`
	// Action is "improve" (the domain's page at URL) or "create" (a new article).
	Action              string           `json:"action"`
	URL                 *string          `json:"url"`
	Title               string           `json:"title"`
	TargetKeyword       string           `json:"target_keyword"`
	SearchVolume        *int64           `json:"search_volume"`
	KeywordDifficulty   *float64         `json:"keyword_difficulty"`
	OpportunityScore    *int             `json:"opportunity_score"`
	SearchIntent        string           `json:"search_intent"`
	Outline             []OutlineSection `json:"outline"`
	RelatedKeywords     []string         `json:"related_keywords"`
	CPC                 *float64         `json:"cpc"`
	CurrentPosition     *int             `json:"current_position"`
	CompetitorPositions map[string]int   `json:"competitor_positions"`
}

// CannibalizationEntry is a keyword several pages compete for (site-relative paths).
type CannibalizationEntry struct {
	Keyword        string   `json:"keyword"`
	URLs           []string `json:"urls"`
	Recommendation string   `json:"recommendation"`
}

// RecommendResult is the answer of ContentRecommend.
type RecommendResult struct {
	PlanID               string                 `json:"plan_id"`
	Domain               string                 `json:"domain"`
	ExistingKeywords     int                    `json:"existing_keywords"`
	SitemapPages         int                    `json:"sitemap_pages"`
	Recommendations      []Recommendation       `json:"recommendations"`
	Cannibalization      []CannibalizationEntry `json:"cannibalization"`
	TotalRecommendations int                    `json:"total_recommendations"`
	Warnings             []string               `json:"warnings"`
	Source               string                 `json:"source"`
	Meta                 Meta                   `json:"-"`
}

// ContentMapRequest is the body of ContentMap.
type ContentMapRequest struct {
	Domain       string   `json:"domain"`
	FocusTopics  []string `json:"focus_topics,omitempty"`
	Competitors  []string `json:"competitors,omitempty"`
	BrandContext string   `json:"brand_context,omitempty"`
	Country      string   `json:"country,omitempty"`
	Language     string   `json:"language,omitempty"`
	Limit        int      `json:"limit,omitempty"`
	CallbackURL  string   `json:"callback_url,omitempty"`
}

// MapRecommendation is a recommendation in a content map.
type MapRecommendation struct {
	Priority          int      `json:"priority"`
	Action            string   `json:"action"` // "improve" (the page at URL) or "create"
	URL               *string  `json:"url"`
	TargetKeyword     string   `json:"target_keyword"`
	SearchVolume      *int64   `json:"search_volume"`
	KeywordDifficulty *float64 `json:"keyword_difficulty"`
	OpportunityScore  *int     `json:"opportunity_score"`
	SearchIntent      string   `json:"search_intent"`
	CPC               *float64 `json:"cpc"`
}

// ContentMapResult is the answer of ContentMap.
type ContentMapResult struct {
	Domain      string    `json:"domain"`
	GeneratedAt time.Time `json:"generated_at"`
	Audit       struct {
		PagesFound int `json:"pages_found"`
		Pages      []struct {
			URL string `json:"url"`
		} `json:"pages"`
	} `json:"audit"`
	CurrentRankings struct {
		Count    int       `json:"count"`
		Keywords []Keyword `json:"keywords"`
	} `json:"current_rankings"`
	CompetitorGaps struct {
		Count int   `json:"count"`
		Gaps  []Gap `json:"gaps"`
	} `json:"competitor_gaps"`
	Recommendations []MapRecommendation `json:"recommendations"`
	Summary         struct {
		PagesFound           int `json:"pages_found"`
		CurrentRankings      int `json:"current_rankings"`
		KeywordOpportunities int `json:"keyword_opportunities"`
		CompetitorGaps       int `json:"competitor_gaps"`
		Recommendations      int `json:"recommendations"`
	} `json:"summary"`
	Warnings []string `json:"warnings"`
	Meta     Meta     `json:"-"`
}

// DryRunResult is what a call would cost, checked without running it.
type DryRunResult struct {
	DryRun   bool   `json:"dry_run"`
	Endpoint string `json:"endpoint"`
	Valid    bool   `json:"valid"`
	// CreditsCost is what the call reserves, the most it can cost; CreditsRule says what
	// of it the answer is charged (keyword lists by the rows returned, plans by the
	// recommendations delivered), the rest given back.
	CreditsCost      int    `json:"credits_cost"`
	CreditsRemaining int    `json:"credits_remaining"`
	BalanceAfter     int    `json:"balance_after"`
	CreditsRule      string `json:"credits_rule"`
}

// Job is an analysis job: still running (Status queued or running) or succeeded, with its
// result in Data. A failed job is returned as an *Error instead.
type Job struct {
	ID        string    `json:"job_id"`
	Status    string    `json:"status"`
	StatusURL string    `json:"status_url"`
	CreatedAt time.Time `json:"created_at"`
	// Data is the result, once the job succeeded; decode it with Decode.
	Data json.RawMessage `json:"-"`
	Meta Meta            `json:"-"`
}

// ListJobsOptions selects a page of ListJobs; zero fields take the API's defaults.
type ListJobsOptions struct {
	Limit  int    // jobs per page, 1 to 100; 0 is the API's 20
	Status string // only jobs in this status (JobQueued, ...); "" for all
	Cursor Cursor // NextCursor of the previous page; "" for the first page
}

// JobList is a page of the account's jobs, newest first.
type JobList struct {
	Jobs []JobSummary
	// NextCursor is ListJobsOptions.Cursor for the next page; "" on the last page.
	NextCursor Cursor
}

// JobSummary is a job as ListJobs lists it.
type JobSummary struct {
	ID         string     `json:"job_id"`
	Kind       string     `json:"kind"`     // keywords:research, ...
	Endpoint   string     `json:"endpoint"` // /v1/keywords/research, ...
	Status     string     `json:"status"`
	CreatedAt  time.Time  `json:"created_at"`
	FinishedAt *time.Time `json:"finished_at"`
	Credits    JobCredits `json:"credits"`
	StatusURL  string     `json:"status_url"`
}

// JobCredits is a job's price and what became of it.
type JobCredits struct {
	Cost   int    `json:"cost"`
	Status string `json:"status"` // reserved (still running), charged or refunded
}

// Job statuses.
const (
	JobQueued    = "queued"
	JobRunning   = "running"
	JobSucceeded = "succeeded"
	JobFailed    = "failed"
)

// Done reports whether the job succeeded and Data holds its result.
func (j *Job) Done() bool { return j.Status == JobSucceeded }

// Decode reads the result of a succeeded job into v (a *ResearchResult, *GapsResult, ...).
func (j *Job) Decode(v any) error {
	if !j.Done() {
		return &Error{Code: "JOB_NOT_DONE", Message: "job " + j.ID + " is " + j.Status}
	}
	return json.Unmarshal(j.Data, v)
}

// CheckoutRequest is the body of Checkout.
type CheckoutRequest struct {
	Plan         string            `json:"plan"`                    // pro or scale
	BillingCycle string            `json:"billing_cycle,omitempty"` // monthly (default) or annual
	SuccessURL   string            `json:"success_url"`
	CancelURL    string            `json:"cancel_url"`
	PromoCode    string            `json:"promo_code,omitempty"`
	Metadata     map[string]string `json:"metadata,omitempty"`
}

// CheckoutSession is a hosted checkout to send the payer to.
type CheckoutSession struct {
	CheckoutURL string      `json:"checkout_url"`
	SessionID   string      `json:"session_id"`
	PlanDetails PlanDetails `json:"plan_details"`
	ExpiryTime  time.Time   `json:"expiry_time"`
}

// PlanDetails describes what is being bought.
type PlanDetails struct {
	PlanName       string `json:"plan_name"`
	CreditsMonthly int    `json:"credits_monthly"`
	RateLimit      int    `json:"rate_limit"`
	Price          struct {
		Amount    int64  `json:"amount"` // cents
		Currency  string `json:"currency"`
		Formatted string `json:"formatted"`
	} `json:"price"`
	BillingCycle string    `json:"billing_cycle"`
	Discount     *Discount `json:"discount,omitempty"`
}

// Discount is what a promotion code takes off the first payment.
type Discount struct {
	Code               string  `json:"code"`
	DiscountAmount     int64   `json:"discount_amount"` // cents
	DiscountPercentage float64 `json:"discount_percentage"`
}

// PortalRequest is the body of BillingPortal.
type PortalRequest struct {
	ReturnURL string `json:"return_url,omitempty"`
}

// PortalSession is a billing portal session.
type PortalSession struct {
	PortalURL string `json:"portal_url"`
	SessionID string `json:"session_id"`
	ReturnURL string `json:"return_url"`
}

// ServiceInfo is the service information document.
type ServiceInfo struct {
	Name          string            `json:"name"`
	Version       string            `json:"version"`
	Documentation string            `json:"documentation"`
	BaseURL       string            `json:"base_url"`
	Endpoints     map[string]string `json:"endpoints"`
	Status        string            `json:"status"`
}
