package dataforseo_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/dataforseo"
)

const (
	login    = "api-user@example.com"
	password = "s3cret"
)

// request is one call the fake server received.
type request struct {
	method, path string
	authOK       bool
	contentType  string
	body         string // as sent, to tell identical calls apart
	tasks        []map[string]any
}

// fake is a local DataForSEO: it answers each endpoint with a fixture from testdata, in
// the documented JSON shapes, and records what it was sent.
type fake struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	requests []request

	// answer, when set, replaces the fixtures: it returns the HTTP status and body.
	answer func(path string, task map[string]any) (int, []byte)
	// header, when set, is added to every answer.
	header map[string]string

	// When release is set, every request waits for a value from it; arrived receives one
	// value per request that reached the handler, and inflight counts those in it.
	release  chan struct{}
	arrived  chan struct{}
	inflight atomic.Int32
	maxSeen  atomic.Int32
}

func newFake(t *testing.T) *fake {
	f := &fake{t: t}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) client(cfg dataforseo.Config) *dataforseo.Client {
	cfg.BaseURL = f.srv.URL
	cfg.Login, cfg.Password = login, password
	cfg.HTTPClient = f.srv.Client()
	return dataforseo.New(cfg)
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return b
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	n := f.inflight.Add(1)
	defer f.inflight.Add(-1)
	for {
		m := f.maxSeen.Load()
		if n <= m || f.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	if f.arrived != nil {
		f.arrived <- struct{}{}
	}
	if f.release != nil {
		<-f.release
	}

	user, pass, ok := r.BasicAuth()
	body, _ := io.ReadAll(r.Body)
	var tasks []map[string]any
	_ = json.Unmarshal(body, &tasks)
	f.mu.Lock()
	f.requests = append(f.requests, request{
		method: r.Method, path: r.URL.Path, authOK: ok && user == login && pass == password,
		contentType: r.Header.Get("Content-Type"), body: string(body), tasks: tasks,
	})
	f.mu.Unlock()
	if !ok || user != login || pass != password {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write(fixture(f.t, "error_40100.json"))
		return
	}
	var task map[string]any
	if len(tasks) == 1 {
		task = tasks[0]
	}
	for k, v := range f.header {
		w.Header().Set(k, v)
	}
	if f.answer != nil {
		status, b := f.answer(r.URL.Path, task)
		w.WriteHeader(status)
		_, _ = w.Write(b)
		return
	}
	var name string
	switch r.URL.Path {
	case dataforseo.PathKeywordIdeas:
		name = "keyword_ideas.json"
	case dataforseo.PathRankedKeywords:
		name = "ranked_keywords.json"
	case dataforseo.PathDomainIntersection:
		target1, _ := task["target1"].(string)
		name = "domain_intersection_" + strings.TrimSuffix(target1, ".example") + ".json"
	case dataforseo.PathSearchIntent:
		name = "search_intent.json"
	case dataforseo.PathBulkKeywordDifficulty:
		name = "bulk_keyword_difficulty.json"
	case dataforseo.PathCompetitorsDomain:
		name = "competitors_domain.json"
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(fixture(f.t, name))
}

func (f *fake) recorded() []request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

// checkRequest asserts the common shape of a call: POST, Basic auth, JSON array of one task.
func checkRequest(t *testing.T, r request, path string) map[string]any {
	t.Helper()
	if r.method != http.MethodPost || r.path != path {
		t.Errorf("request %s %s, want POST %s", r.method, r.path, path)
	}
	if !r.authOK {
		t.Error("request without the configured Basic auth")
	}
	if r.contentType != "application/json" {
		t.Errorf("Content-Type %q", r.contentType)
	}
	if len(r.tasks) != 1 {
		t.Fatalf("body holds %d tasks, want an array of one", len(r.tasks))
	}
	return r.tasks[0]
}

func num(v any) float64 { f, _ := v.(float64); return f }

func eqF(p *float64, want float64) bool { return p != nil && *p == want }

func TestIdeas(t *testing.T) {
	f := newFake(t)
	c := f.client(dataforseo.Config{})
	got, err := ideasOf(c.Ideas(context.Background(), keywords.IdeasRequest{Topic: " cold  brew ", Country: "US", Language: "EN"}))
	if err != nil {
		t.Fatal(err)
	}
	reqs := f.recorded()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1 (no fill calls unless configured)", len(reqs))
	}
	task := checkRequest(t, reqs[0], dataforseo.PathKeywordIdeas)
	if kws, _ := task["keywords"].([]any); len(kws) != 1 || kws[0] != "cold brew" {
		t.Errorf("keywords %v, want [cold brew]", task["keywords"])
	}
	if num(task["location_code"]) != 2840 || task["language_code"] != "en" || num(task["limit"]) != dataforseo.DefaultIdeasLimit {
		t.Errorf("task %v", task)
	}

	if len(got) != 3 {
		t.Fatalf("got %d ideas: %+v", len(got), got)
	}
	full, bare, unknown := got[0], got[1], got[2]
	if full.Keyword != "cold brew coffee" || full.SearchVolume == nil || *full.SearchVolume != 49500 ||
		!eqF(full.CPC, 1.52) || !eqF(full.Competition, 0.31) || !eqF(full.Difficulty, 54) || full.Intent != "informational" {
		t.Errorf("full item: %+v", full)
	}
	if bare.Keyword != "cold brew maker" || bare.Difficulty != nil || bare.Intent != "" || !eqF(bare.Competition, 1) {
		t.Errorf("item without keyword_properties/search_intent_info: %+v", bare)
	}
	if unknown.SearchVolume != nil || unknown.CPC != nil || unknown.Competition != nil || !eqF(unknown.Difficulty, 0) || unknown.Intent != "commercial" {
		t.Errorf("null metrics must stay nil, a 0 difficulty must stay 0: %+v", unknown)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Relevance >= got[i-1].Relevance || got[i].Relevance <= 0 {
			t.Errorf("relevance not falling in DataForSEO's order: %v then %v", got[i-1].Relevance, got[i].Relevance)
		}
	}
}

func TestIdeasSeedsAndLimit(t *testing.T) {
	f := newFake(t)
	c := f.client(dataforseo.Config{})
	got, err := ideasOf(c.Ideas(context.Background(), keywords.IdeasRequest{Topic: "ignored", Seeds: []string{"cold brew", "iced coffee"}, Limit: 2}))
	if err != nil {
		t.Fatal(err)
	}
	task := checkRequest(t, f.recorded()[0], dataforseo.PathKeywordIdeas)
	if kws, _ := task["keywords"].([]any); len(kws) != 2 || kws[1] != "iced coffee" || num(task["limit"]) != 2 {
		t.Errorf("task %v: want the seeds and limit 2", task)
	}
	if len(got) != 2 {
		t.Errorf("got %d ideas, want the limit 2", len(got))
	}
}

func TestRanked(t *testing.T) {
	f := newFake(t)
	c := f.client(dataforseo.Config{})
	got, err := c.Ranked(context.Background(), keywords.RankedRequest{Domain: "https://www.BrewShop.example/shop", Country: "uk", Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	task := checkRequest(t, f.recorded()[0], dataforseo.PathRankedKeywords)
	if task["target"] != "brewshop.example" || num(task["location_code"]) != 2826 || num(task["limit"]) != 1000 {
		t.Errorf("task %v", task)
	}
	if types, _ := task["item_types"].([]any); len(types) != 1 || types[0] != "organic" {
		t.Errorf("item_types %v, want organic only", task["item_types"])
	}
	want := []struct {
		kw, url string
		pos     int
	}{
		{"brewshop", "https://brewshop.example/", 1},
		{"pour over kettle", "https://brewshop.example/guides/gooseneck-kettle", 3}, // best of its two pages
		{"best manual coffee grinder uk", "https://brewshop.example/grinders/manual", 14},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d rankings: %+v", len(got), got)
	}
	for i, w := range want {
		if got[i].Keyword.Keyword != w.kw || got[i].Position != w.pos || got[i].URL != w.url {
			t.Errorf("ranking %d = %q %d %s, want %q %d %s", i, got[i].Keyword.Keyword, got[i].Position, got[i].URL, w.kw, w.pos, w.url)
		}
	}
	if k := got[1].Keyword; k.SearchVolume == nil || *k.SearchVolume != 2900 || !eqF(k.Difficulty, 31) || k.Intent != "commercial" {
		t.Errorf("pour over kettle metrics: %+v", k)
	}
	if k := got[2].Keyword; k.SearchVolume != nil || k.Difficulty != nil || k.CPC != nil || k.Intent != "" {
		t.Errorf("item with null keyword_info: metrics must be nil: %+v", k)
	}
}

func TestGaps(t *testing.T) {
	f := newFake(t)
	c := f.client(dataforseo.Config{})
	list, err := c.Gaps(context.Background(), keywords.GapsRequest{
		Domain:      "www.ourbrew.example",
		Competitors: []string{"grindhouse.example", "https://www.beanery.example/", "ourbrew.example"},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := list.Gaps
	if list.Total != len(got) {
		t.Errorf("total %d, %d gaps listed without a limit", list.Total, len(got))
	}
	reqs := f.recorded()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want one per competitor", len(reqs))
	}
	var targets []string
	for _, r := range reqs {
		task := checkRequest(t, r, dataforseo.PathDomainIntersection)
		if task["target2"] != "ourbrew.example" || task["intersections"] != false || num(task["location_code"]) != 2840 {
			t.Errorf("task %v", task)
		}
		targets = append(targets, task["target1"].(string))
	}
	slices.Sort(targets)
	if !slices.Equal(targets, []string{"beanery.example", "grindhouse.example"}) {
		t.Errorf("target1 values %v", targets)
	}
	want := []struct {
		kw  string
		pos map[string]int
	}{
		{"burr grinder", map[string]int{"grindhouse.example": 2, "beanery.example": 4}},
		{"espresso beans", map[string]int{"beanery.example": 3}},      // 8100, alphabetical tie
		{"grind size chart", map[string]int{"grindhouse.example": 5}}, // 8100
		{"decaf beans", map[string]int{"beanery.example": 1}},         // unknown volume: last
	}
	if len(got) != len(want) {
		t.Fatalf("got %d gaps: %+v", len(got), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Keyword.Keyword != w.kw || len(g.CompetitorPositions) != len(w.pos) {
			t.Errorf("gap %d = %q %v, want %q %v", i, g.Keyword.Keyword, g.CompetitorPositions, w.kw, w.pos)
			continue
		}
		for d, p := range w.pos {
			if g.CompetitorPositions[d] != p {
				t.Errorf("gap %q positions %v, want %v", w.kw, g.CompetitorPositions, w.pos)
			}
		}
	}
	if got[3].SearchVolume != nil || !eqF(got[3].Difficulty, 20) {
		t.Errorf("decaf beans: %+v", got[3].Keyword)
	}
	if got[2].Difficulty != nil {
		t.Errorf("grind size chart has no keyword_properties: %+v", got[2].Keyword)
	}
}

func TestLocationCodes(t *testing.T) {
	want := map[string]int{"us": 2840, "uk": 2826, "ca": 2124, "au": 2036, "de": 2276, "fr": 2250,
		"es": 2724, "it": 2380, "br": 2076, "pt": 2620, "nl": 2528, "in": 2356}
	f := newFake(t)
	c := f.client(dataforseo.Config{})
	for country, code := range want {
		if got, ok := dataforseo.LocationCode(strings.ToUpper(country)); !ok || got != code {
			t.Errorf("LocationCode(%q) = %d, %v; want %d", country, got, ok, code)
		}
		if _, err := c.Ranked(context.Background(), keywords.RankedRequest{Domain: "brewshop.example", Country: country, Language: "de"}); err != nil {
			t.Fatal(err)
		}
		reqs := f.recorded()
		task := reqs[len(reqs)-1].tasks[0]
		if num(task["location_code"]) != float64(code) || task["language_code"] != "de" {
			t.Errorf("%s: sent location %v language %v, want %d de", country, task["location_code"], task["language_code"], code)
		}
	}
	n := len(f.recorded())
	_, err := ideasOf(c.Ideas(context.Background(), keywords.IdeasRequest{Topic: "x", Country: "xx"}))
	if !errors.Is(err, keywords.ErrPermanent) {
		t.Errorf("unknown country: err %v, want permanent", err)
	}
	_, err = ideasOf(c.Ideas(context.Background(), keywords.IdeasRequest{Topic: "x", Language: "ja"}))
	if !errors.Is(err, keywords.ErrPermanent) {
		t.Errorf("unsupported language: err %v, want permanent", err)
	}
	if len(f.recorded()) != n {
		t.Error("an invalid market was sent to DataForSEO")
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name      string
		status    int
		body      []byte
		code      int
		permanent bool
	}{
		{"top-level 40100 with HTTP 401", http.StatusUnauthorized, fixture(t, "error_40100.json"), 40100, true},
		{"top-level 40100 with HTTP 200", http.StatusOK, fixture(t, "error_40100.json"), 40100, true},
		{"task-level 40501", http.StatusOK, fixture(t, "task_error_40501.json"), 40501, true},
		{"rate limit 40202", http.StatusOK, fixture(t, "error_40202.json"), 40202, false},
		{"HTTP 500 without an envelope", http.StatusInternalServerError, []byte("<html><body>Internal Server Error</body></html>"), 500, false},
		{"HTTP 502 from a proxy", http.StatusBadGateway, nil, 502, false},
		{"HTTP 200 with a broken body", http.StatusOK, []byte(`{"status_code": 20000, "tasks": [`), 200, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			f.answer = func(string, map[string]any) (int, []byte) { return tc.status, tc.body }
			_, err := ideasOf(f.client(dataforseo.Config{}).Ideas(ctx, keywords.IdeasRequest{Topic: "cold brew"}))
			var pe *keywords.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a *keywords.ProviderError", err)
			}
			if pe.Provider != "dataforseo" || pe.Code != tc.code || pe.Permanent != tc.permanent {
				t.Errorf("err = %+v, want code %d permanent %v", pe, tc.code, tc.permanent)
			}
			if errors.Is(err, keywords.ErrPermanent) != tc.permanent {
				t.Errorf("errors.Is(err, ErrPermanent) = %v", !tc.permanent)
			}
		})
	}

	t.Run("wrong credentials", func(t *testing.T) {
		f := newFake(t)
		c := dataforseo.New(dataforseo.Config{BaseURL: f.srv.URL, Login: login, Password: "wrong", HTTPClient: f.srv.Client()})
		_, err := c.Gaps(ctx, keywords.GapsRequest{Domain: "ourbrew.example", Competitors: []string{"beanery.example"}})
		if !errors.Is(err, keywords.ErrPermanent) {
			t.Errorf("err = %v, want permanent", err)
		}
	})

	t.Run("40102 no results is an empty answer", func(t *testing.T) {
		f := newFake(t)
		f.answer = func(string, map[string]any) (int, []byte) {
			return http.StatusOK, fixture(t, "task_no_results_40102.json")
		}
		got, err := f.client(dataforseo.Config{}).Ranked(ctx, keywords.RankedRequest{Domain: "new-site.example"})
		if err != nil || got == nil || len(got) != 0 {
			t.Errorf("got %v, %v; want an empty list", got, err)
		}
	})

	t.Run("network failure is temporary", func(t *testing.T) {
		f := newFake(t)
		c := f.client(dataforseo.Config{})
		f.srv.Close()
		_, err := ideasOf(c.Ideas(ctx, keywords.IdeasRequest{Topic: "cold brew"}))
		if err == nil || errors.Is(err, keywords.ErrPermanent) {
			t.Errorf("err = %v, want a temporary error", err)
		}
	})
}

func TestFillMissing(t *testing.T) {
	f := newFake(t)
	c := f.client(dataforseo.Config{FillMissing: true})
	got, err := ideasOf(c.Ideas(context.Background(), keywords.IdeasRequest{Topic: "cold brew"}))
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]map[string]any{}
	for _, r := range f.recorded() {
		byPath[r.path] = checkRequest(t, r, r.path)
	}
	for _, p := range []string{dataforseo.PathSearchIntent, dataforseo.PathBulkKeywordDifficulty} {
		kws, _ := byPath[p]["keywords"].([]any)
		if len(kws) != 1 || kws[0] != "cold brew maker" {
			t.Errorf("%s asked for %v, want only the keyword lacking the metric", p, byPath[p]["keywords"])
		}
	}
	maker := got[1]
	if maker.Intent != "commercial" || !eqF(maker.Difficulty, 38) {
		t.Errorf("filled keyword: %+v", maker)
	}
	if got[2].SearchVolume != nil {
		t.Errorf("a fill must not invent volumes: %+v", got[2])
	}
}

// TestConcurrencyBound holds every request in the fake server until the test releases it,
// and checks that no more than MaxConcurrent are ever in flight.
func TestConcurrencyBound(t *testing.T) {
	const limit, calls = 3, 12
	f := newFake(t)
	f.release = make(chan struct{})
	f.arrived = make(chan struct{}, calls)
	t.Cleanup(func() { close(f.release) }) // on failure, let blocked handlers finish
	c := f.client(dataforseo.Config{MaxConcurrent: limit})

	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for i := 0; i < calls; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.Ranked(context.Background(), keywords.RankedRequest{Domain: "brewshop.example", Country: "uk"})
			errs <- err
		}()
	}
	// Let the first `limit` requests in, then admit one more per request released.
	for i := 0; i < limit; i++ {
		<-f.arrived
	}
	for i := limit; i < calls; i++ {
		if n := f.inflight.Load(); n > limit {
			t.Fatalf("%d requests in flight, limit %d", n, limit)
		}
		f.release <- struct{}{}
		<-f.arrived
	}
	for i := 0; i < limit; i++ {
		f.release <- struct{}{}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if m := f.maxSeen.Load(); m != limit {
		t.Errorf("at most %d requests were in flight at once, want exactly the limit %d", m, limit)
	}
}

func TestCancelWhileWaiting(t *testing.T) {
	f := newFake(t)
	f.release = make(chan struct{})
	f.arrived = make(chan struct{}, 2)
	t.Cleanup(func() { close(f.release) })
	c := f.client(dataforseo.Config{MaxConcurrent: 1})
	done := make(chan error, 1)
	go func() {
		_, err := c.Ranked(context.Background(), keywords.RankedRequest{Domain: "brewshop.example", Country: "uk"})
		done <- err
	}()
	<-f.arrived // the only slot is taken
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ideasOf(c.Ideas(ctx, keywords.IdeasRequest{Topic: "cold brew"})); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled while waiting for a slot", err)
	}
	f.release <- struct{}{}
	if err := <-done; err != nil {
		t.Error(err)
	}
}

// ideasOf reads an IdeaList's ideas, for the tests written before Ideas answered one.
func ideasOf(l keywords.IdeaList, err error) ([]keywords.Keyword, error) { return l.Ideas, err }
