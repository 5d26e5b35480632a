package cache_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/cache"
	"github.com/contentapi/contentapi/internal/testenv"
)

func TestMain(m *testing.M) { testenv.MainNoLeaks(m) }

// counting is a provider that answers fixed data and counts its calls.
type counting struct {
	mu    sync.Mutex
	calls map[string]int
	err   error
}

func (c *counting) Name() string { return "fake" }

func (c *counting) count(method string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls == nil {
		c.calls = map[string]int{}
	}
	c.calls[method]++
	return c.err
}

func (c *counting) n(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[method]
}

func i64(v int64) *int64     { return &v }
func f64(v float64) *float64 { return &v }

var ideas = []keywords.Keyword{
	{Keyword: "cold brew coffee", SearchVolume: i64(49500), Difficulty: f64(54), CPC: f64(1.52), Competition: f64(0),
		Intent: "informational", SERPURLs: []string{"https://a.example/", "https://b.example/"}, Relevance: 0.9},
	{Keyword: "cold brew tea", Relevance: 0.4, Synthetic: true}, // every metric unknown; made up
}

func (c *counting) Ideas(_ context.Context, req keywords.IdeasRequest) (keywords.IdeaList, error) {
	if err := c.count("ideas"); err != nil {
		return keywords.IdeaList{}, err
	}
	if req.Topic == "nothing" {
		return keywords.IdeaList{Ideas: []keywords.Keyword{}}, nil
	}
	return keywords.IdeaList{Ideas: ideas, Total: len(ideas)}, nil
}

func (c *counting) Ranked(context.Context, keywords.RankedRequest) ([]keywords.Ranking, error) {
	if err := c.count("ranked"); err != nil {
		return nil, err
	}
	return []keywords.Ranking{{Keyword: keywords.Keyword{Keyword: "brewshop", SearchVolume: i64(1600)}, Position: 1, URL: "https://brewshop.example/"},
		{Keyword: keywords.Keyword{Keyword: "unknown metrics", Synthetic: true}, Position: 14}}, nil
}

func (c *counting) Gaps(context.Context, keywords.GapsRequest) (keywords.GapList, error) {
	if err := c.count("gaps"); err != nil {
		return keywords.GapList{}, err
	}
	return keywords.GapList{Gaps: []keywords.Gap{{Keyword: keywords.Keyword{Keyword: "burr grinder", Difficulty: f64(61), Synthetic: true},
		CompetitorPositions: map[string]int{"a.example": 2, "b.example": 4}}}, Total: 1, Unranked: []string{"c.example"}}, nil
}

func TestRoundTrip(t *testing.T) {
	rdb := testenv.Redis(t)
	rdb.FlushDB(context.Background()) // each test starts from an empty cache, however often it runs
	ctx := context.Background()
	next := &counting{}
	p := cache.New(next, rdb, time.Minute)
	if p.Name() != "fake" {
		t.Errorf("Name() = %q, want the wrapped provider's", p.Name())
	}
	req := keywords.IdeasRequest{Topic: "cold brew", Country: "us", Language: "en", Limit: 10}
	first, err := ideasOf(p.Ideas(ctx, req))
	if err != nil {
		t.Fatal(err)
	}
	second, err := ideasOf(p.Ideas(ctx, req))
	if err != nil {
		t.Fatal(err)
	}
	if next.n("ideas") != 1 || p.Hits() != 1 || p.Misses() != 1 {
		t.Errorf("provider calls %d, hits %d, misses %d; want 1, 1, 1", next.n("ideas"), p.Hits(), p.Misses())
	}
	if !reflect.DeepEqual(first, ideas) || !reflect.DeepEqual(second, ideas) {
		t.Errorf("cached answer differs:\n got %#v\nwant %#v", second, ideas)
	}
	tea := second[1]
	if tea.SearchVolume != nil || tea.Difficulty != nil || tea.CPC != nil || tea.Competition != nil || tea.SERPURLs != nil {
		t.Errorf("nil metrics did not survive as nil: %+v", tea)
	}
	if second[0].Competition == nil || *second[0].Competition != 0 {
		t.Errorf("a known 0 must stay 0, not become unknown: %+v", second[0])
	}
	if second[0].Relevance != 0.9 {
		t.Errorf("relevance lost: %v", second[0].Relevance)
	}

	// The key names provider and method, and expires after the TTL.
	key, err := cache.Key("fake", "", "ideas", req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(key, "keywords:v3:fake:ideas:") {
		t.Errorf("key %q", key)
	}
	if ttl := rdb.TTL(ctx, key).Val(); ttl <= 50*time.Second || ttl > time.Minute {
		t.Errorf("TTL %v, want about a minute", ttl)
	}
	raw := rdb.Get(ctx, key).Val()
	if !strings.Contains(raw, `"search_volume":null`) {
		t.Errorf("stored %s: want unknown metrics as null", raw)
	}

	// Another request is another key.
	req.Limit = 20
	if _, err := ideasOf(p.Ideas(ctx, req)); err != nil {
		t.Fatal(err)
	}
	if next.n("ideas") != 2 || p.Misses() != 2 {
		t.Errorf("a different request was served from the cache")
	}

	// An empty answer is cached as an empty list.
	empty := keywords.IdeasRequest{Topic: "nothing"}
	for i := 0; i < 2; i++ {
		got, err := ideasOf(p.Ideas(ctx, empty))
		if err != nil || got == nil || len(got) != 0 {
			t.Errorf("empty answer %d: %#v, %v", i, got, err)
		}
	}
	if next.n("ideas") != 3 {
		t.Errorf("empty answer not cached: %d calls", next.n("ideas"))
	}
}

func TestRankedAndGaps(t *testing.T) {
	rdb := testenv.Redis(t)
	rdb.FlushDB(context.Background()) // each test starts from an empty cache, however often it runs
	ctx := context.Background()
	next := &counting{}
	p := cache.New(next, rdb, time.Minute)
	rreq := keywords.RankedRequest{Domain: "brewshop.example", Country: "uk"}
	want, _ := next.Ranked(ctx, rreq)
	for i := 0; i < 2; i++ {
		got, err := p.Ranked(ctx, rreq)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ranked %d: %#v, %v", i, got, err)
		}
	}
	greq := keywords.GapsRequest{Domain: "ourbrew.example", Competitors: []string{"a.example", "b.example"}}
	wantGaps, _ := next.Gaps(ctx, greq)
	for i := 0; i < 2; i++ {
		got, err := p.Gaps(ctx, greq)
		if err != nil || !reflect.DeepEqual(got, wantGaps) {
			t.Errorf("gaps %d: %#v, %v", i, got, err)
		}
	}
	if next.n("ranked") != 2 || next.n("gaps") != 2 { // one call each by the test itself
		t.Errorf("calls: %v", next.calls)
	}
	if p.Hits() != 2 || p.Misses() != 2 {
		t.Errorf("hits %d misses %d", p.Hits(), p.Misses())
	}
}

func TestErrorsAreNotCached(t *testing.T) {
	rdb := testenv.Redis(t)
	rdb.FlushDB(context.Background()) // each test starts from an empty cache, however often it runs
	ctx := context.Background()
	next := &counting{err: &keywords.ProviderError{Provider: "fake", Code: 50000, Message: "down"}}
	p := cache.New(next, rdb, time.Minute)
	req := keywords.GapsRequest{Domain: "errors.example", Competitors: []string{"x.example"}}
	for i := 0; i < 2; i++ {
		var pe *keywords.ProviderError
		if _, err := p.Gaps(ctx, req); !errors.As(err, &pe) {
			t.Fatalf("err = %v, want the provider's error", err)
		}
	}
	if next.n("gaps") != 2 {
		t.Errorf("provider called %d times, want 2: an error was cached", next.n("gaps"))
	}
	next.err = nil
	if _, err := p.Gaps(ctx, req); err != nil {
		t.Fatal(err)
	}
}

func TestDisabled(t *testing.T) {
	rdb := testenv.Redis(t)
	rdb.FlushDB(context.Background()) // each test starts from an empty cache, however often it runs
	ctx := context.Background()
	next := &counting{}
	p := cache.New(next, rdb, 0)
	req := keywords.RankedRequest{Domain: "disabled.example"}
	for i := 0; i < 3; i++ {
		if _, err := p.Ranked(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	key, _ := cache.Key("fake", "", "ranked", req)
	if next.n("ranked") != 3 || rdb.Exists(ctx, key).Val() != 0 || p.Hits() != 0 {
		t.Errorf("TTL 0 cached: calls %d, key exists %d, hits %d", next.n("ranked"), rdb.Exists(ctx, key).Val(), p.Hits())
	}
}

func TestCorruptEntry(t *testing.T) {
	rdb := testenv.Redis(t)
	rdb.FlushDB(context.Background()) // each test starts from an empty cache, however often it runs
	ctx := context.Background()
	next := &counting{}
	p := cache.New(next, rdb, time.Minute)
	req := keywords.IdeasRequest{Topic: "corrupt"}
	key, _ := cache.Key("fake", "", "ideas", req)
	rdb.Set(ctx, key, "{not json", time.Minute)
	got, err := ideasOf(p.Ideas(ctx, req))
	if err != nil || len(got) != 2 || next.n("ideas") != 1 {
		t.Fatalf("got %v, %v after %d calls", got, err, next.n("ideas"))
	}
	if _, err := ideasOf(p.Ideas(ctx, req)); err != nil || next.n("ideas") != 1 {
		t.Errorf("the corrupt entry was not replaced")
	}
}

// TestRedisDown: with Redis unreachable every call still answers, from the provider.
func TestRedisDown(t *testing.T) {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	var logs bytes.Buffer
	next := &counting{}
	p := cache.New(next, rdb, time.Minute, cache.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	for i := 0; i < 2; i++ {
		got, err := ideasOf(p.Ideas(ctx, keywords.IdeasRequest{Topic: "cold brew"}))
		if err != nil || !reflect.DeepEqual(got, ideas) {
			t.Fatalf("call %d: %v, %v", i, got, err)
		}
	}
	if next.n("ideas") != 2 || p.Misses() != 2 || p.Hits() != 0 {
		t.Errorf("calls %d misses %d hits %d", next.n("ideas"), p.Misses(), p.Hits())
	}
	if !strings.Contains(logs.String(), "redis get failed") {
		t.Errorf("failure not logged: %s", logs.String())
	}
}

// labelling is a provider whose ideas come unlabelled and are labelled in a second step, as
// the local provider's.
type labelling struct {
	counting
	labelled int
}

func (l *labelling) Ideas(ctx context.Context, req keywords.IdeasRequest) (keywords.IdeaList, error) {
	list, err := l.counting.Ideas(ctx, req)
	out := append([]keywords.Keyword(nil), list.Ideas...)
	for i := range out {
		out[i].Synthetic = false
	}
	list.Ideas = out
	return list, err
}

func (l *labelling) LabelSynthetic(_ context.Context, _, _ string, ks []keywords.Keyword) error {
	l.labelled++
	for i := range ks {
		ks[i].Synthetic = ks[i].Keyword == "cold brew coffee"
	}
	return nil
}

func TestIdeasStoredLabelled(t *testing.T) {
	rdb := testenv.Redis(t)
	rdb.FlushDB(context.Background())
	ctx := context.Background()
	next := &labelling{}
	p := cache.New(next, rdb, time.Minute)
	req := keywords.IdeasRequest{Topic: "cold brew", Country: "us", Language: "en", Limit: 5}
	for i := 0; i < 2; i++ {
		got, err := ideasOf(keywords.Ideas(ctx, p, req))
		if err != nil || len(got) != 2 || !got[0].Synthetic || got[1].Synthetic {
			t.Fatalf("answer %d: %+v, %v; want cold brew coffee labelled synthetic", i, got, err)
		}
	}
	if next.labelled != 1 || next.n("ideas") != 1 {
		t.Errorf("labelled %d times, provider asked %d times; want once each (the cache keeps the labels)", next.labelled, next.n("ideas"))
	}
	key, _ := cache.Key("fake", "", "ideas", req)
	if raw := rdb.Get(ctx, key).Val(); !strings.Contains(raw, `"synthetic":true`) {
		t.Errorf("stored %s: want the synthetic flag", raw)
	}
}

func (c *counting) Rankings(context.Context, keywords.RankingsRequest) (keywords.RankingList, error) {
	if err := c.count("rankings"); err != nil {
		return keywords.RankingList{}, err
	}
	return keywords.RankingList{Total: 1}, nil
}

func (c *counting) Competitors(context.Context, keywords.CompetitorsRequest) (keywords.CompetitorList, error) {
	if err := c.count("competitors"); err != nil {
		return keywords.CompetitorList{}, err
	}
	return keywords.CompetitorList{Total: 1}, nil
}

// ideasOf reads an IdeaList's ideas, for the tests written before Ideas answered one.
func ideasOf(l keywords.IdeaList, err error) ([]keywords.Keyword, error) { return l.Ideas, err }
