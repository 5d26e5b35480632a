package report

// AuditRequest is the body of POST /v1/content/audit.
type AuditRequest struct {
	Domain     string `json:"domain"`
	SitemapURL string `json:"sitemap_url,omitempty"`
	MaxPages   *int   `json:"max_pages,omitempty"`
	Callback
}

// Normalize checks the request and fills defaults.
func (r *AuditRequest) Normalize(o Options) (err error) {
	if err := r.normalizeCallback(o); err != nil {
		return err
	}
	if r.Domain, err = NormalizeDomain("domain", r.Domain, o); err != nil {
		return err
	}
	if r.SitemapURL, err = sitemapURL(r.SitemapURL, r.Domain, o); err != nil {
		return err
	}
	n, err := intRange("max_pages", r.MaxPages, 100, 1, 500)
	r.MaxPages = &n
	return err
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

// Normalize checks the request and fills defaults.
func (r *RecommendRequest) Normalize(o Options) error {
	if err := r.normalizeCallback(o); err != nil {
		return err
	}
	return normalizeStrategy(&r.Domain, &r.FocusTopics, &r.BrandContext, &r.Competitors, &r.Country, &r.Language, &r.Limit, 10, o)
}

// ContentMapRequest is the body of POST /v1/content-map.
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

// Normalize checks the request and fills defaults.
func (r *ContentMapRequest) Normalize(o Options) error {
	if err := r.normalizeCallback(o); err != nil {
		return err
	}
	return normalizeStrategy(&r.Domain, &r.FocusTopics, &r.BrandContext, &r.Competitors, &r.Country, &r.Language, &r.Limit, 20, o)
}

func normalizeStrategy(domain *string, topics *[]string, brand *string, competitors *[]string, country, language *string, limit **int, defLimit int, o Options) (err error) {
	if *domain, err = NormalizeDomain("domain", *domain, o); err != nil {
		return err
	}
	if *topics, err = textList("focus_topics", *topics, 20, 100); err != nil {
		return err
	}
	if *brand, err = text("brand_context", *brand, 2000); err != nil {
		return err
	}
	if *competitors, err = competitorList(*competitors, *domain, 0, 3, o); err != nil {
		return err
	}
	if *country, err = oneOf("country", *country, "us", Countries); err != nil {
		return err
	}
	if *language, err = oneOf("language", *language, "en", Languages); err != nil {
		return err
	}
	n, err := intRange("limit", *limit, defLimit, 1, 50)
	*limit = &n
	return err
}
