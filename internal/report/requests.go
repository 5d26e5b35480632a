package report

// Defaults of the requests' optional fields (docs and the OpenAPI document state them).
const (
	defaultCountry        = "us"
	defaultLanguage       = "en"
	defaultResearchLimit  = 50
	defaultGapsLimit      = 50
	defaultMaxPages       = 100
	defaultRecommendLimit = 10
	defaultMapLimit       = 20
)

// ResearchRequest is the body of POST /v1/keywords/research.
type ResearchRequest struct {
	Domain   string   `json:"domain"`
	Topic    string   `json:"topic,omitempty"`
	Keywords []string `json:"keywords,omitempty"`
	Country  string   `json:"country"`
	Language string   `json:"language"`
	Limit    *int     `json:"limit,omitempty"`
	Query
	Callback
}

// PageLimit is the request's limit.
func (r *ResearchRequest) PageLimit() int { return *orDefault(r.Limit, defaultResearchLimit) }

func (r *ResearchRequest) defaults() {
	market(&r.Country, &r.Language)
	r.Limit = orDefault(r.Limit, defaultResearchLimit)
}

// Normalize checks the request and fills defaults.
func (r *ResearchRequest) Normalize(o Options) (err error) {
	if err := r.normalizeCallback(o); err != nil {
		return err
	}
	r.defaults()
	if r.Domain, err = NormalizeDomain("domain", r.Domain, o); err != nil {
		return err
	}
	if r.Topic, err = text("topic", r.Topic, 200); err != nil {
		return err
	}
	if r.Keywords, err = textList("keywords", r.Keywords, 100, 100); err != nil {
		return err
	}
	if r.Country, r.Language, err = checkMarket(r.Country, r.Language); err != nil {
		return err
	}
	if err := intRange("limit", *r.Limit, 1, MaxPageRows); err != nil {
		return err
	}
	return r.Query.normalize(r.Shape())
}

// Shape is what research's query may name.
func (r *ResearchRequest) Shape() QueryShape { return ResearchShape }

// GapsRequest is the body of POST /v1/keywords/gaps.
type GapsRequest struct {
	Domain      string   `json:"domain"`
	Competitors []string `json:"competitors"`
	Country     string   `json:"country"`
	Language    string   `json:"language,omitempty"`
	Limit       *int     `json:"limit,omitempty"`
	Query
	Callback
}

// PageLimit is the request's limit.
func (r *GapsRequest) PageLimit() int { return *orDefault(r.Limit, defaultGapsLimit) }

func (r *GapsRequest) defaults() {
	market(&r.Country, &r.Language)
	r.Limit = orDefault(r.Limit, defaultGapsLimit)
}

// Normalize checks the request and fills defaults.
func (r *GapsRequest) Normalize(o Options) (err error) {
	if err := r.normalizeCallback(o); err != nil {
		return err
	}
	r.defaults()
	if r.Domain, err = NormalizeDomain("domain", r.Domain, o); err != nil {
		return err
	}
	if r.Competitors, err = competitorList(r.Competitors, r.Domain, 1, 3, o); err != nil {
		return err
	}
	if r.Country, r.Language, err = checkMarket(r.Country, r.Language); err != nil {
		return err
	}
	if err := intRange("limit", *r.Limit, 1, MaxPageRows); err != nil {
		return err
	}
	return r.Query.normalize(r.Shape())
}

// Shape is what a gaps query may name.
func (r *GapsRequest) Shape() QueryShape { return GapsShape }

// AuditRequest is the body of POST /v1/content/audit.
type AuditRequest struct {
	Domain     string `json:"domain"`
	SitemapURL string `json:"sitemap_url,omitempty"`
	MaxPages   *int   `json:"max_pages,omitempty"`
	// CheckExternal asks for the site's links to other sites to be checked (status only, at
	// most 100 URLs).
	// Left out of the stored form when false, so requests without it keep their fingerprint.
	CheckExternal bool `json:"check_external,omitempty"`
	// Render is RenderJavaScript (every page rendered in headless Chromium too, at
	// RenderCost) or, once normalised, "" for RenderNone (the HTML as served).
	Render string `json:"render,omitempty"`
	Callback
}

// An audit's render modes.
const (
	RenderNone       = "none"
	RenderJavaScript = "javascript"
)

// RenderModes are the values of an audit's render field.
var RenderModes = []string{RenderNone, RenderJavaScript}

func (r *AuditRequest) defaults() { r.MaxPages = orDefault(r.MaxPages, defaultMaxPages) }

// Rendered reports whether the audit renders its pages' JavaScript.
func (r *AuditRequest) Rendered() bool { return r.Render == RenderJavaScript }

// Normalize checks the request and fills defaults.
func (r *AuditRequest) Normalize(o Options) (err error) {
	if err := r.normalizeCallback(o); err != nil {
		return err
	}
	r.defaults()
	if r.Domain, err = NormalizeDomain("domain", r.Domain, o); err != nil {
		return err
	}
	if r.SitemapURL, err = sitemapURL(r.SitemapURL, r.Domain, o); err != nil {
		return err
	}
	if r.Render, err = oneOf("render", r.Render, RenderNone, RenderModes); err != nil {
		return err
	}
	if r.Render == RenderNone {
		r.Render = "" // stored as before rendering existed: a plain audit's stored form is unchanged
	}
	return intRange("max_pages", *r.MaxPages, 1, 500)
}

// RecommendRequest is the body of POST /v1/content/recommend.
type RecommendRequest struct {
	Domain       string   `json:"domain"`
	FocusTopics  []string `json:"focus_topics,omitempty"`
	BrandContext string   `json:"brand_context,omitempty"`
	Competitors  []string `json:"competitors,omitempty"`
	Country      string   `json:"country"`
	Language     string   `json:"language,omitempty"`
	Limit        *int     `json:"limit,omitempty"`
	Callback
}

func (r *RecommendRequest) defaults() {
	r.Limit = planDefaults(&r.Country, &r.Language, r.Limit, defaultRecommendLimit)
}

// Normalize checks the request and fills defaults.
func (r *RecommendRequest) Normalize(o Options) error { return normalizePlan(r, o) }

// ItemLimit is the most recommendations the request asks for: its price (Analysis.CostOf).
func (r *RecommendRequest) ItemLimit() int { return *orDefault(r.Limit, defaultRecommendLimit) }

func (r *RecommendRequest) plan() planRequest {
	return planRequest{r.Domain, r.FocusTopics, r.BrandContext, r.Competitors, r.Country, r.Language,
		*orDefault(r.Limit, defaultRecommendLimit)}
}

func (r *RecommendRequest) setPlan(p planRequest) {
	r.Domain, r.FocusTopics, r.BrandContext, r.Competitors = p.Domain, p.FocusTopics, p.BrandContext, p.Competitors
	r.Country, r.Language = p.Country, p.Language
}

// ContentMapRequest is the body of POST /v1/content-map. Its fields are those of
// RecommendRequest, stored in its own order: the order of the stored JSON is part of the
// request's Idempotency-Key fingerprint.
type ContentMapRequest struct {
	Domain       string   `json:"domain"`
	FocusTopics  []string `json:"focus_topics,omitempty"`
	Competitors  []string `json:"competitors,omitempty"`
	BrandContext string   `json:"brand_context,omitempty"`
	Country      string   `json:"country"`
	Language     string   `json:"language,omitempty"`
	Limit        *int     `json:"limit,omitempty"`
	Callback
}

func (r *ContentMapRequest) defaults() {
	r.Limit = planDefaults(&r.Country, &r.Language, r.Limit, defaultMapLimit)
}

// Normalize checks the request and fills defaults.
func (r *ContentMapRequest) Normalize(o Options) error { return normalizePlan(r, o) }

func (r *ContentMapRequest) plan() planRequest {
	return planRequest{r.Domain, r.FocusTopics, r.BrandContext, r.Competitors, r.Country, r.Language,
		*orDefault(r.Limit, defaultMapLimit)}
}

func (r *ContentMapRequest) setPlan(p planRequest) {
	r.Domain, r.FocusTopics, r.BrandContext, r.Competitors = p.Domain, p.FocusTopics, p.BrandContext, p.Competitors
	r.Country, r.Language = p.Country, p.Language
}

// planBody is the body of a content plan's request: recommend or the content map. plan
// reads its fields (after defaults) and setPlan writes them back, normalised.
type planBody interface {
	Request
	normalizeCallback(o Options) error
	plan() planRequest
	setPlan(p planRequest)
}

// normalizePlan checks a content plan's request and fills its defaults.
func normalizePlan(r planBody, o Options) error {
	if err := r.normalizeCallback(o); err != nil {
		return err
	}
	r.defaults()
	p := r.plan()
	if err := p.normalize(o); err != nil {
		return err
	}
	r.setPlan(p)
	return nil
}

// planRequest is what content recommend and the content map ask alike: a plan for Domain.
type planRequest struct {
	Domain       string
	FocusTopics  []string
	BrandContext string
	Competitors  []string
	Country      string
	Language     string
	Limit        int
}

// normalize checks the plan's fields and normalises them, in the order their errors are
// reported.
func (p *planRequest) normalize(o Options) (err error) {
	if p.Domain, err = NormalizeDomain("domain", p.Domain, o); err != nil {
		return err
	}
	if p.FocusTopics, err = textList("focus_topics", p.FocusTopics, 20, 100); err != nil {
		return err
	}
	if p.BrandContext, err = text("brand_context", p.BrandContext, 2000); err != nil {
		return err
	}
	if p.Competitors, err = competitorList(p.Competitors, p.Domain, 0, 3, o); err != nil {
		return err
	}
	if p.Country, p.Language, err = checkMarket(p.Country, p.Language); err != nil {
		return err
	}
	return intRange("limit", p.Limit, 1, 50)
}

// planDefaults fills an empty country and language with their defaults and returns the
// limit, def when none is set.
func planDefaults(country, language *string, limit *int, def int) *int {
	market(country, language)
	return orDefault(limit, def)
}

// market fills an empty country and language with their defaults.
func market(country, language *string) {
	if *country == "" {
		*country = defaultCountry
	}
	if *language == "" {
		*language = defaultLanguage
	}
}

// orDefault is p, or a pointer to def when p is nil.
func orDefault(p *int, def int) *int {
	if p == nil {
		return &def
	}
	return p
}
