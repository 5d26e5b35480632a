package report

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/crawler"
	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/local"
	"github.com/contentapi/contentapi/internal/keywords/sample"
	"github.com/contentapi/contentapi/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// testNow is the builders' clock in every test.
var testNow = time.Date(2026, 3, 14, 9, 30, 0, 0, time.UTC)

var (
	seedOnce sync.Once
	seedErr  error
)

// db is the package's database, with the synthetic sample set loaded (market us/en).
func db(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool := testenv.Postgres(t)
	seedOnce.Do(func() { _, _, seedErr = sample.Seed(context.Background(), pool) })
	if seedErr != nil {
		t.Fatalf("sample seed: %v", seedErr)
	}
	return pool
}

// newBuilder is a builder over the real local provider and a crawler allowed to reach the
// tests' loopback sites.
func newBuilder(t *testing.T) *Builder {
	t.Helper()
	return &Builder{
		Keywords:  local.New(db(t)),
		Crawler:   crawler.New(crawler.Config{AllowPrivate: true, Timeout: 15 * time.Second, RequestTimeout: 5 * time.Second}),
		Clock:     clock.NewManual(testNow),
		ThinWords: 300,
	}
}

// nextIP hands every test site its own loopback address, so keyword data (keyed by host
// without port) of one test never mixes with another's, even with -count.
var lastIP atomic.Int32

func nextIP() string {
	n := lastIP.Add(1)
	return fmt.Sprintf("127.1.%d.%d", n/250, n%250+1)
}

// testSite is a web site on a loopback address of its own. Its routes are exact paths
// (anything else is a 404) and may be replaced between crawls.
type testSite struct {
	*httptest.Server
	ip     string
	mu     sync.Mutex
	routes map[string]http.HandlerFunc
}

func (s *testSite) handle(path string, h http.HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.routes[path] = h
}

func (s *testSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	h := s.routes[r.URL.Path]
	s.mu.Unlock()
	if h == nil {
		http.NotFound(w, r)
		return
	}
	h(w, r)
}

func newTestSite(t *testing.T) *testSite {
	t.Helper()
	ip := nextIP()
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatalf("listen on %s: %v", ip, err)
	}
	s := &testSite{ip: ip, routes: make(map[string]http.HandlerFunc)}
	s.Server = httptest.NewUnstartedServer(s)
	s.Server.Listener.Close()
	s.Server.Listener = l
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// domain is the site's host:port, as requests name it.
func (s *testSite) domain() string { return strings.TrimPrefix(s.URL, "http://") }

// key is the site's domain as keyword data stores it (no port).
func (s *testSite) key() string { return s.ip }

func (s *testSite) abs(path string) string { return s.URL + path }

// page describes an HTML page of a test site.
type page struct {
	title, h1, description string
	h2s                    []string
	words                  int // words of body text, besides the headings
	noindex                bool
	canonical              string
}

func (p page) html() string {
	var b strings.Builder
	b.WriteString("<!doctype html><html><head><title>" + html.EscapeString(p.title) + "</title>")
	if p.description != "" {
		b.WriteString(`<meta name="description" content="` + html.EscapeString(p.description) + `">`)
	}
	if p.noindex {
		b.WriteString(`<meta name="robots" content="noindex">`)
	}
	if p.canonical != "" {
		b.WriteString(`<link rel="canonical" href="` + p.canonical + `">`)
	}
	b.WriteString("</head><body><nav>Home Blog Shop About</nav><main>")
	if p.h1 != "" {
		b.WriteString("<h1>" + html.EscapeString(p.h1) + "</h1>")
	}
	b.WriteString("<p>" + words(p.words) + "</p>")
	for _, h := range p.h2s {
		b.WriteString("<h2>" + html.EscapeString(h) + "</h2><p>" + words(20) + "</p>")
	}
	b.WriteString("</main><footer>Copyright Acme</footer></body></html>")
	return b.String()
}

// wordCount is what the crawler counts for the page.
func (p page) wordCount() int { return crawler.CountWords([]byte(p.html())) }

func words(n int) string {
	vocab := []string{"water", "grind", "bloom", "kettle", "filter", "paper", "roast", "aroma", "cup", "morning"}
	out := make([]string, n)
	for i := range out {
		out[i] = vocab[i%len(vocab)]
	}
	return strings.Join(out, " ")
}

func (s *testSite) page(path string, p page) {
	body := p.html()
	s.handle(path, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, body)
	})
}

func (s *testSite) serve(path, contentType, body string) {
	s.handle(path, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = io.WriteString(w, body)
	})
}

// sitemap serves robots.txt naming /sitemap.xml, which lists paths.
func (s *testSite) sitemap(paths ...string) {
	s.serve("/robots.txt", "text/plain", "User-agent: *\nAllow: /\n\nSitemap: "+s.URL+"/sitemap.xml\n")
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, p := range paths {
		b.WriteString("<url><loc>" + s.URL + p + "</loc></url>")
	}
	b.WriteString("</urlset>")
	s.serve("/sitemap.xml", "application/xml", b.String())
}

// deadDomain is a loopback host:port nothing listens on.
func deadDomain(t *testing.T) (domain, key string) {
	t.Helper()
	ip := nextIP()
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr, ip
}

// kw is a keyword_metrics row; a zero metric is stored as NULL (unknown).
type kw struct {
	keyword string
	volume  int64
	kd      float64
	cpc     float64
	intent  string
}

func addKeywords(t *testing.T, country string, rows ...kw) {
	t.Helper()
	for _, r := range rows {
		var vol *int64
		var kd, cpc *float64
		var intent *string
		if r.volume > 0 {
			vol = &r.volume
		}
		if r.kd > 0 {
			kd = &r.kd
		}
		if r.cpc > 0 {
			cpc = &r.cpc
		}
		if r.intent != "" {
			intent = &r.intent
		}
		_, err := db(t).Exec(context.Background(), `
			INSERT INTO keyword_metrics (keyword, country, language, search_volume, keyword_difficulty, cpc, search_intent, source)
			VALUES ($1, $2, 'en', $3, $4, $5, $6, 'test')
			ON CONFLICT DO NOTHING`, r.keyword, country, vol, kd, cpc, intent)
		if err != nil {
			t.Fatalf("insert keyword %q: %v", r.keyword, err)
		}
	}
}

// addRanking stores that domain (a key without port) ranks at pos for keyword.
func addRanking(t *testing.T, domain, country, keyword string, pos int, url string) {
	t.Helper()
	var u *string
	if url != "" {
		u = &url
	}
	_, err := db(t).Exec(context.Background(), `
		INSERT INTO domain_rankings (domain, keyword, country, language, position, url, source)
		VALUES ($1, $2, $3, 'en', $4, $5, 'test')`, domain, keyword, country, pos, u)
	if err != nil {
		t.Fatalf("insert ranking %s %q: %v", domain, keyword, err)
	}
}

// failingProvider is the real provider with some of its methods failing.
type failingProvider struct {
	keywords.Provider
	ideas, ranked, gaps error
}

func (p failingProvider) Ideas(ctx context.Context, r keywords.IdeasRequest) (keywords.IdeaList, error) {
	if p.ideas != nil {
		return keywords.IdeaList{}, p.ideas
	}
	return p.Provider.Ideas(ctx, r)
}

func (p failingProvider) Ranked(ctx context.Context, r keywords.RankedRequest) ([]keywords.Ranking, error) {
	if p.ranked != nil {
		return nil, p.ranked
	}
	return p.Provider.Ranked(ctx, r)
}

func (p failingProvider) Gaps(ctx context.Context, r keywords.GapsRequest) (keywords.GapList, error) {
	if p.gaps != nil {
		return keywords.GapList{}, p.gaps
	}
	return p.Provider.Gaps(ctx, r)
}

// extraRankings is the real provider reporting some rankings more, as a provider that
// knows several URLs per keyword would.
type extraRankings struct {
	keywords.Provider
	extra []keywords.Ranking
}

func (p extraRankings) Ranked(ctx context.Context, r keywords.RankedRequest) ([]keywords.Ranking, error) {
	got, err := p.Provider.Ranked(ctx, r)
	if err != nil {
		return nil, err
	}
	return append(got, p.extra...), nil
}

var (
	errOutage  = fmt.Errorf("provider timed out")
	errRefused = &keywords.ProviderError{Provider: "test", Code: 401, Message: "bad credentials", Permanent: true}
)

// normalized runs a request's Normalize as the API does (private targets allowed).
func normalized[R Request](t *testing.T, r R) R {
	t.Helper()
	if err := r.Normalize(Options{AllowPrivate: true}); err != nil {
		t.Fatalf("normalize %T: %v", r, err)
	}
	return r
}

// jsonKeys returns the keys of a JSON object, sorted.
func jsonKeys(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("not a JSON object: %s", raw)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// toJSON marshals v and decodes it into a generic map.
func toJSON(t *testing.T, v any) map[string]json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// hasKeys fails unless the object has every key of want (extras are allowed).
func hasKeys(t *testing.T, what string, raw json.RawMessage, want ...string) {
	t.Helper()
	got := jsonKeys(t, raw)
	for _, k := range want {
		if !slices.Contains(got, k) {
			t.Errorf("%s: key %q missing; keys %v", what, k, got)
		}
	}
}

// containsAny reports whether any string of list contains sub (case-insensitive).
func containsAny(list []string, sub string) bool {
	return slices.ContainsFunc(list, func(s string) bool { return strings.Contains(strings.ToLower(s), strings.ToLower(sub)) })
}
