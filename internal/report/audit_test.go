package report

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/crawler"
	"github.com/contentapi/contentapi/internal/keywords"
)

// auditSite is a sitemap site with thin pages, a duplicate-title pair, two pages ranking
// for one keyword, a noindex page, a 404, a PDF and a redirect to a listed page.
func auditSite(t *testing.T) (*testSite, map[string]page) {
	s := newTestSite(t)
	pages := map[string]page{
		"/":                  {title: "Acme Coffee Roasters", h1: "Fresh coffee", words: 340, description: "Roasted weekly."},
		"/guides/cold-brew":  {title: "Cold Brew Coffee Guide | Acme", h1: "Cold brew coffee guide", words: 1200, h2s: []string{"Ratio"}},
		"/blog/cold-brew":    {title: "Cold Brew Coffee Guide | Acme", h1: "Cold brew, the easy way", words: 640},
		"/thin":              {title: "Shipping | Acme", h1: "Shipping", words: 40, description: "How we ship."},
		"/hidden":            {title: "Draft | Acme", h1: "Draft", words: 10, noindex: true},
		"/espresso":          {title: "Espresso Basics | Acme", h1: "Espresso basics", words: 500},
		"/grinders/burr":     {title: "Burr Grinder Review | Acme", h1: "Our burr grinder review", words: 420},
		"/grinders/compared": {title: "Burr Grinder Reviews | Acme", h1: "Burr grinders reviewed", words: 250},
		"/brew/french-press": {title: "French Press Basics | Acme", h1: "French press basics", words: 700},
		"/brew/plunger":      {title: "Plunger Coffee at Home | Acme", h1: "Plunger coffee", words: 600},
		"/variant":           {title: "Espresso Basics (print) | Acme", h1: "Espresso basics", words: 100, canonical: "/espresso"},
	}
	for path, p := range pages {
		s.page(path, p)
	}
	s.handle("/old-espresso", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/espresso", http.StatusMovedPermanently)
	})
	s.serve("/price-list.pdf", "application/pdf", "%PDF-1.4 not a page")
	s.sitemap("/", "/guides/cold-brew", "/blog/cold-brew", "/thin", "/hidden", "/espresso", "/grinders/burr",
		"/grinders/compared", "/brew/french-press", "/brew/plunger", "/variant", "/missing", "/price-list.pdf", "/old-espresso")
	return s, pages
}

func TestAuditSitemapSite(t *testing.T) {
	t.Parallel()
	b := newBuilder(t)
	s, pages := auditSite(t)
	// Ranking data (audits read us/en): the less complete of the two review pages ranks,
	// so it is the one to keep.
	addRanking(t, s.key(), "us", "burr grinder review", 5, s.abs("/grinders/compared"))
	addRanking(t, s.key(), "us", "espresso", 9, s.abs("/espresso"))
	// A provider may report several URLs for one keyword (the local tables hold one per
	// domain): two pages ranking for "french press" compete; a 404 ranking does not.
	b.Keywords = extraRankings{Provider: b.Keywords, extra: []keywords.Ranking{
		{Keyword: keywords.Keyword{Keyword: "french press"}, Position: 6, URL: s.abs("/brew/french-press")},
		{Keyword: keywords.Keyword{Keyword: "french press"}, Position: 22, URL: s.abs("/brew/plunger")},
		{Keyword: keywords.Keyword{Keyword: "espresso"}, Position: 30, URL: s.abs("/missing")},
	}}

	res, err := b.Audit(context.Background(), normalized(t, &AuditRequest{Domain: s.domain()}).deref())
	if err != nil {
		t.Fatal(err)
	}

	wantPages := []string{"/", "/blog/cold-brew", "/brew/french-press", "/brew/plunger", "/espresso", "/grinders/burr", "/grinders/compared", "/guides/cold-brew", "/hidden", "/thin", "/variant"}
	var got []string
	total := 0
	for _, p := range res.Pages {
		got = append(got, strings.TrimPrefix(p.URL, s.URL))
		want := pages[strings.TrimPrefix(p.URL, s.URL)]
		if p.Title != want.title || p.WordCount != want.wordCount() || p.MetaDescription != want.description || p.Status != 200 {
			t.Errorf("page %s = %+v, want title %q, %d words, description %q, status 200", p.URL, p, want.title, want.wordCount(), want.description)
		}
		total += p.WordCount
	}
	if !slices.Equal(got, wantPages) {
		t.Errorf("pages = %v, want %v (redirect counted once, 404 and PDF not counted)", got, wantPages)
	}
	if res.PagesCrawled != len(wantPages) {
		t.Errorf("pages_crawled = %d, want %d", res.PagesCrawled, len(wantPages))
	}

	// Errors: the 404 and the PDF are reported, not counted.
	if len(res.Errors) != 2 {
		t.Fatalf("errors = %+v, want the 404 and the PDF", res.Errors)
	}
	if e := res.Errors[0]; e.URL != s.abs("/missing") || e.Status == nil || *e.Status != 404 || !strings.Contains(e.Error, "404") {
		t.Errorf("errors[0] = %+v, want the 404 of /missing", e)
	}
	if e := res.Errors[1]; e.URL != s.abs("/price-list.pdf") || !strings.Contains(e.Error, "application/pdf") {
		t.Errorf("errors[1] = %+v, want the PDF", e)
	}

	// Thin: under 300 words, thinnest first; noindex and canonicalised pages left out.
	var thin []string
	for _, p := range res.ThinContent {
		thin = append(thin, strings.TrimPrefix(p.URL, s.URL))
		if want := pages[strings.TrimPrefix(p.URL, s.URL)]; p.WordCount != want.wordCount() || p.Title != want.title {
			t.Errorf("thin %+v, want %d words, title %q", p, want.wordCount(), want.title)
		}
	}
	if want := []string{"/thin", "/grinders/compared"}; !slices.Equal(thin, want) {
		t.Errorf("thin_content = %v, want %v", thin, want)
	}

	// Cannibalization: the duplicate titles and the two pages ranking for "coffee grinder".
	type risk struct {
		keyword string
		urls    string
	}
	var risks []risk
	for _, r := range res.CannibalizationRisks {
		risks = append(risks, risk{r.Keyword, strings.Join(r.URLs, " ")})
		if r.Recommendation == "" {
			t.Errorf("risk %q has no recommendation", r.Keyword)
		}
	}
	wantRisks := []risk{
		{"burr grinder review", s.abs("/grinders/burr") + " " + s.abs("/grinders/compared")},
		{"cold brew coffee guide", s.abs("/blog/cold-brew") + " " + s.abs("/guides/cold-brew")},
		{"french press", s.abs("/brew/french-press") + " " + s.abs("/brew/plunger")},
	}
	if !slices.Equal(risks, wantRisks) {
		t.Fatalf("cannibalization_risks = %+v, want %+v", risks, wantRisks)
	}
	if r := res.CannibalizationRisks[0]; !strings.HasPrefix(r.Recommendation, "Keep /grinders/compared (ranks #5") {
		t.Errorf("advice = %q, want to keep the page ranking #5", r.Recommendation)
	}
	if r := res.CannibalizationRisks[1]; !strings.HasPrefix(r.Recommendation, "Keep /guides/cold-brew (") {
		t.Errorf("advice = %q, want to keep the longer page", r.Recommendation)
	}

	// Summary agrees with the lists.
	avg := math.Round(float64(total)/float64(len(res.Pages))*10) / 10
	if sm := res.Summary; sm.Total != res.PagesCrawled || sm.Thin != len(res.ThinContent) ||
		sm.CannibalizationIssues != len(res.CannibalizationRisks) || sm.AvgWords == nil || *sm.AvgWords != avg {
		t.Errorf("summary = %+v (avg %v), want total %d, thin %d, issues %d, avg_words %v", sm, deref(sm.AvgWords),
			res.PagesCrawled, len(res.ThinContent), len(res.CannibalizationRisks), avg)
	}
	if len(res.Sitemaps) != 1 || res.Sitemaps[0] != s.abs("/sitemap.xml") {
		t.Errorf("sitemaps = %v", res.Sitemaps)
	}
	if !containsAny(res.Warnings, "already audited") {
		t.Errorf("warnings = %v, want a note on the redirect to a listed page", res.Warnings)
	}
}

func TestAuditJSONShape(t *testing.T) {
	t.Parallel()
	b := newBuilder(t)
	s := newTestSite(t)
	s.sitemap("/gone")
	res, err := b.Audit(context.Background(), normalized(t, &AuditRequest{Domain: s.domain()}).deref())
	if err != nil {
		t.Fatal(err)
	}
	m := toJSON(t, res)
	for _, k := range []string{"domain", "pages_crawled", "pages", "thin_content", "cannibalization_risks", "summary", "issues", "errors", "sitemaps", "sitemap_errors", "warnings"} {
		if _, ok := m[k]; !ok {
			t.Errorf("key %q missing", k)
		}
	}
	for _, k := range []string{"pages", "thin_content", "cannibalization_risks", "sitemap_errors"} {
		if string(m[k]) != "[]" {
			t.Errorf("%s = %s, want []", k, m[k])
		}
	}
	if got := jsonKeys(t, m["summary"]); !slices.Equal(got, []string{"avg_words", "cannibalization_issues", "excluded", "health_score", "indexable", "issues", "pages_from_links", "pages_from_sitemap", "thin", "total"}) {
		t.Errorf("summary keys = %v", got)
	}
	var sum map[string]any
	_ = json.Unmarshal(m["summary"], &sum)
	if sum["avg_words"] != nil || sum["total"] != float64(0) || sum["health_score"] != nil || sum["indexable"] != float64(0) {
		t.Errorf("summary = %v, want total 0, indexable 0, avg_words and health_score null (no page counted)", sum)
	}
	var errs []map[string]any
	_ = json.Unmarshal(m["errors"], &errs)
	// The home page, crawled after the sitemap's URLs, is missing too.
	if len(errs) != 2 || errs[1]["url"] != s.abs("/gone") || errs[1]["status"] != float64(404) || errs[0]["url"] != s.abs("/") {
		t.Errorf("errors = %v, want the two 404s", errs)
	}

	// Pages carry the documented fields (docs/api.md).
	s.page("/here", page{title: "Here", words: 5})
	s.sitemap("/here")
	res, err = b.Audit(context.Background(), normalized(t, &AuditRequest{Domain: s.domain()}).deref())
	if err != nil {
		t.Fatal(err)
	}
	m = toJSON(t, res)
	var pagesRaw []json.RawMessage
	_ = json.Unmarshal(m["pages"], &pagesRaw)
	if len(pagesRaw) != 1 {
		t.Fatalf("pages = %s", m["pages"])
	}
	hasKeys(t, "page", pagesRaw[0], "url", "title", "word_count", "meta_description")
	var thinRaw []json.RawMessage
	_ = json.Unmarshal(m["thin_content"], &thinRaw)
	if len(thinRaw) != 1 {
		t.Fatalf("thin_content = %s", m["thin_content"])
	}
	if got := jsonKeys(t, thinRaw[0]); !slices.Equal(got, []string{"title", "url", "word_count"}) {
		t.Errorf("thin item keys = %v", got)
	}
}

func TestAuditRefusedDomain(t *testing.T) {
	t.Parallel()
	b := newBuilder(t)
	b.Crawler = crawler.New(crawler.Config{}) // production rules: no loopback, no ports
	s := newTestSite(t)
	s.sitemap()
	for _, domain := range []string{s.domain(), s.ip} {
		_, err := b.Audit(context.Background(), AuditRequest{Domain: domain})
		e, ok := apperr.As(err)
		if !ok || e.Code != apperr.Validation || !strings.Contains(e.Message, domain) {
			t.Errorf("audit of %s: err = %v, want a VALIDATION_ERROR naming the domain", domain, err)
		}
	}
}

func TestAuditUnreachableSite(t *testing.T) {
	t.Parallel()
	b := newBuilder(t)
	domain, _ := deadDomain(t)
	_, err := b.Audit(context.Background(), normalized(t, &AuditRequest{Domain: domain}).deref())
	e, ok := apperr.As(err)
	if !ok || e.Code != apperr.SiteUnreachable || !strings.Contains(e.Message, domain) {
		t.Errorf("err = %v, want SITE_UNREACHABLE naming %s", err, domain)
	}
}

func TestAuditThinThresholdAndMaxPages(t *testing.T) {
	t.Parallel()
	b := newBuilder(t)
	b.ThinWords = 50
	s := newTestSite(t)
	s.page("/a", page{title: "A", words: 40})
	s.page("/b", page{title: "B", words: 100})
	s.page("/c", page{title: "C", words: 10})
	s.sitemap("/a", "/b", "/c")
	max := 2
	res, err := b.Audit(context.Background(), normalized(t, &AuditRequest{Domain: s.domain(), MaxPages: &max}).deref())
	if err != nil {
		t.Fatal(err)
	}
	if res.PagesCrawled != 2 || res.ThinThreshold != 50 {
		t.Errorf("pages_crawled = %d, thin_threshold = %d; want 2 and 50", res.PagesCrawled, res.ThinThreshold)
	}
	for _, p := range res.ThinContent {
		if p.WordCount >= 50 {
			t.Errorf("thin item %+v is not under 50 words", p)
		}
	}
	if !containsAny(res.Warnings, "page limit") {
		t.Errorf("warnings = %v, want the crawler's page-limit note", res.Warnings)
	}
}

func TestRunAudit(t *testing.T) {
	t.Parallel()
	b := newBuilder(t)
	s := newTestSite(t)
	s.page("/", page{title: "Home", words: 400})
	s.sitemap("/")
	out, err := b.Run(context.Background(), string(KindAudit), "job-1", []byte(`{"domain":"`+s.domain()+`","max_pages":10}`))
	if err != nil {
		t.Fatal(err)
	}
	if res, ok := out.(AuditResult); !ok || res.PagesCrawled != 1 {
		t.Errorf("Run = %#v, want an AuditResult with one page", out)
	}
}

func TestSplitPages(t *testing.T) {
	res := &crawler.Result{Pages: []crawler.Page{
		{URL: "https://x.com/b", FinalURL: "https://x.com/b", Status: 200, ContentType: "text/html", Title: "B"},
		{URL: "https://x.com/old-b", FinalURL: "https://x.com/b/", Status: 200, ContentType: "text/html", Title: "B"},
		{URL: "https://x.com/a", FinalURL: "https://x.com/a", Status: 200, ContentType: "application/xhtml+xml"},
		{URL: "https://x.com/out", FinalURL: "https://y.com/", Status: 200, ContentType: "text/html", OffSite: true},
		{URL: "https://x.com/big", FinalURL: "https://x.com/big", Status: 200, ContentType: "text/html", Error: "body larger than 2097152 bytes"},
		{URL: "https://x.com/down", Error: "connection reset"},
		{URL: "https://x.com/500", FinalURL: "https://x.com/500", Status: 503},
	}}
	s := splitPages(res)
	if got := s.urls(); !slices.Equal(got, []string{"https://x.com/a", "https://x.com/b"}) || s.duplicates != 1 {
		t.Errorf("pages = %v (duplicates %d), want a and b once", got, s.duplicates)
	}
	var errs []string
	for _, p := range s.failed {
		e := pageError(p)
		status := "null"
		if e.Status != nil {
			status = strconv.Itoa(*e.Status)
		}
		errs = append(errs, e.URL+" "+status+" "+e.Error)
	}
	want := []string{
		"https://x.com/500 503 HTTP 503 Service Unavailable",
		"https://x.com/big 200 body larger than 2097152 bytes",
		"https://x.com/down null connection reset",
		"https://x.com/out 200 redirects to another site: https://y.com/",
	}
	if !slices.Equal(errs, want) {
		t.Errorf("errors =\n%s\nwant\n%s", strings.Join(errs, "\n"), strings.Join(want, "\n"))
	}
	if got := splitPages(nil); len(got.pages) != 0 || len(got.titles()) != 0 {
		t.Errorf("splitPages(nil) = %+v", got)
	}
}

func TestIndexable(t *testing.T) {
	for _, c := range []struct {
		p    crawler.Page
		want bool
	}{
		{crawler.Page{FinalURL: "https://x.com/a"}, true},
		{crawler.Page{FinalURL: "https://x.com/a", Noindex: true}, false},
		{crawler.Page{FinalURL: "https://x.com/a/", Canonical: "https://www.x.com/a"}, true},
		{crawler.Page{FinalURL: "https://x.com/a?print=1", Canonical: "https://x.com/a"}, false},
	} {
		if got := indexable(c.p); got != c.want {
			t.Errorf("indexable(%+v) = %v, want %v", c.p, got, c.want)
		}
	}
}

func TestMean1(t *testing.T) {
	if mean1(10, 0) != nil {
		t.Error("mean of nothing is not null")
	}
	if v := mean1(1000, 3); v == nil || *v != 333.3 {
		t.Errorf("mean1(1000, 3) = %v", deref(v))
	}
}

func (r *AuditRequest) deref() AuditRequest { return *r }

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
