package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/app/apptest"
	"github.com/contentapi/contentapi/internal/app/worker"
	"github.com/contentapi/contentapi/internal/config"
	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/dataforseo"
	"github.com/contentapi/contentapi/internal/keywords/importer"
	"github.com/contentapi/contentapi/internal/keywords/local"
	"github.com/contentapi/contentapi/internal/postgres"
	"github.com/contentapi/contentapi/internal/testenv"
)

// TestDataForSEOFillWired builds the worker's DataForSEO client from the configuration and
// checks that the intent and difficulty fill-ins are called by default, and not when
// DATAFORSEO_FILL_MISSING=false.
func TestDataForSEOFillWired(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		var result any = []any{map[string]any{"total_count": 1, "items": []any{map[string]any{
			"keyword": "cold brew maker", "keyword_info": nil, "keyword_properties": nil, "search_intent_info": nil}}}}
		if r.URL.Path != dataforseo.PathKeywordIdeas {
			result = []any{map[string]any{"items": []any{}}}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"status_code": 20000, "status_message": "Ok.",
			"tasks": []any{map[string]any{"status_code": 20000, "status_message": "Ok.", "result": result}}})
	}))
	t.Cleanup(srv.Close)

	for _, tc := range []struct {
		fill  string
		calls int
	}{{"", 3}, {"false", 1}} {
		env := map[string]string{"KEYWORD_PROVIDER": "dataforseo", "DATAFORSEO_LOGIN": "l", "DATAFORSEO_PASSWORD": "p",
			"DATAFORSEO_BASE_URL": srv.URL, "DATAFORSEO_FILL_MISSING": tc.fill}
		cfg, err := config.LoadLookup(func(name string) (string, bool) { v, ok := env[name]; return v, ok })
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		paths = nil
		mu.Unlock()
		c := dataforseo.New(worker.DataForSEOConfig(cfg, nil))
		if _, err := c.Ideas(context.Background(), keywords.IdeasRequest{Topic: "cold brew"}); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		got := strings.Join(paths, " ")
		mu.Unlock()
		if len(paths) != tc.calls {
			t.Errorf("DATAFORSEO_FILL_MISSING=%q: calls %s, want %d", tc.fill, got, tc.calls)
		}
		if tc.calls == 3 && (!strings.Contains(got, dataforseo.PathSearchIntent) || !strings.Contains(got, dataforseo.PathBulkKeywordDifficulty)) {
			t.Errorf("fill-ins not called: %s", got)
		}
	}
}

// TestMarketDatabases: with KEYWORD_MARKET_DATABASES the worker creates and migrates a
// market's own database, sends that market's questions there and every other market's to
// DATABASE_URL's, and an import into either moves the answers the (cached) provider gives.
func TestMarketDatabases(t *testing.T) {
	ctx := context.Background()
	mainPool := testenv.Postgres(t)
	shardDSN := testenv.NewDatabaseDSN(t) // named, not created: the worker creates it
	a := apptest.New(t, apptest.Options{Pool: mainPool, Env: map[string]string{
		"KEYWORD_MARKET_DATABASES": "GB/en=" + shardDSN, "KEYWORD_CACHE_TTL": "1h"}})
	b, err := worker.ReportBuilder(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	shard, err := postgres.Connect(ctx, shardDSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(shard.Close)

	load := func(pool *pgxpool.Pool, country, rows string) {
		t.Helper()
		file := "domain,keyword,position,search volume\n" + rows
		if _, err := importer.ImportRankings(ctx, pool, strings.NewReader(file), importer.Options{Country: country, Language: "en"}); err != nil {
			t.Fatal(err)
		}
	}
	rankings := func(p keywords.Provider, country string) []string {
		t.Helper()
		list, err := p.Rankings(ctx, keywords.RankingsRequest{Domain: "shop.example", Country: country, Language: "en", Page: keywords.Page{Limit: 10}})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range list.Rankings {
			out = append(out, fmt.Sprintf("%s@%d", r.Keyword.Keyword, r.Position))
		}
		return out
	}
	load(mainPool, "us", "shop.example,espresso machine,3,1000\nshop.example,milk frother,7,300\n")
	load(shard, "gb", "shop.example,kettle,2,800\n")
	check := func(step string, us, gb []string) {
		t.Helper()
		for _, c := range []struct {
			country string
			want    []string
		}{{"us", us}, {"gb", gb}} {
			if got := rankings(b.Keywords, c.country); !slices.Equal(got, c.want) {
				t.Errorf("%s: %s/en rankings %v, want %v", step, c.country, got, c.want)
			}
		}
	}
	check("first", []string{"espresso machine@3", "milk frother@7"}, []string{"kettle@2"})
	// Each market's data stays in its own database.
	if got := rankings(local.New(mainPool), "gb"); len(got) != 0 {
		t.Errorf("DATABASE_URL's database holds gb/en rankings %v", got)
	}
	if got := rankings(local.New(shard), "us"); len(got) != 0 {
		t.Errorf("the gb/en database holds us/en rankings %v", got)
	}
	// An import into the market's database moves the cached answers (the router's data
	// version is every database's).
	load(shard, "gb", "shop.example,kettle,1,800\nshop.example,teapot,4,200\n")
	check("after the gb import", []string{"espresso machine@3", "milk frother@7"}, []string{"kettle@1", "teapot@4"})
	load(mainPool, "us", "shop.example,espresso machine,2,1000\n")
	check("after the us import", []string{"espresso machine@2", "milk frother@7"}, []string{"kettle@1", "teapot@4"})
}

// TestMarketDatabasesRefused: a market database that cannot be set up stops the worker's
// start with an error naming the market.
func TestMarketDatabasesRefused(t *testing.T) {
	a := apptest.New(t, apptest.Options{Env: map[string]string{
		"KEYWORD_MARKET_DATABASES": "de/de=postgres://nobody@127.0.0.1:1/nowhere?sslmode=disable&connect_timeout=2"}})
	_, err := worker.ReportBuilder(context.Background(), a)
	if err == nil || !strings.Contains(err.Error(), "de/de") {
		t.Fatalf("ReportBuilder: %v, want an error naming de/de", err)
	}
}

// TestColumnFilesBetweenWorkers: two workers on one machine share a market's keyword
// columns through KEYWORD_COLUMNS_DIR: the first reads them from the database and writes
// the file, the second maps it instead of reading them again, and both answer alike.
// KEYWORD_COLUMNS_DIR=off writes no file.
func TestColumnFilesBetweenWorkers(t *testing.T) {
	ctx := context.Background()
	pool := testenv.Postgres(t)
	file := "domain,keyword,position,search volume\n" +
		"shop.example,espresso machine,3,1000\nshop.example,milk frother,7,300\nshop.example,cold brew,12,90\nrival.example,cold brew,2,90\n"
	if _, err := importer.ImportRankings(ctx, pool, strings.NewReader(file), importer.Options{Country: "us", Language: "en"}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// A filtered question: answered from the columns.
	req := keywords.RankingsRequest{Domain: "shop.example", Country: "us", Language: "en", Page: keywords.Page{Limit: 10},
		Filters: keywords.Filters{Ranges: map[keywords.Field]keywords.Range{keywords.FieldSearchVolume: {Min: ptr(100.0)}}}}
	ask := func(columnsDir string) (keywords.RankingList, int64, int64) {
		t.Helper()
		db, files := local.ColumnLoadCounts() // before the worker's warm-up loads them
		a := apptest.New(t, apptest.Options{Pool: pool, Env: map[string]string{"KEYWORD_COLUMNS_DIR": columnsDir, "KEYWORD_CACHE_TTL": "0s"}})
		b, err := worker.ReportBuilder(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		l, err := b.Keywords.Rankings(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		db2, files2 := local.ColumnLoadCounts()
		return l, db2 - db, files2 - files
	}
	cols := func() []string {
		names, err := filepath.Glob(filepath.Join(dir, "*", "us-en-*.cols"))
		if err != nil {
			t.Fatal(err)
		}
		return names
	}
	first, db, files := ask(dir)
	if first.Total != 2 || db != 1 || files != 0 {
		t.Fatalf("first worker: total %d, %d loads from the database, %d files mapped; want 2, 1, 0", first.Total, db, files)
	}
	if n := cols(); len(n) != 1 {
		t.Fatalf("column files %v, want one", n)
	}
	second, db, files := ask(dir)
	if !reflect.DeepEqual(second, first) || db != 0 || files != 1 {
		t.Fatalf("second worker: %+v (want %+v), %d loads from the database, %d files mapped; want 0, 1", second, first, db, files)
	}
	off := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", off) // where the default would write
	if _, db, files := ask("off"); db != 1 || files != 0 {
		t.Fatalf("KEYWORD_COLUMNS_DIR=off: %d loads from the database, %d files mapped; want 1, 0", db, files)
	}
	if entries, _ := os.ReadDir(off); len(entries) != 0 {
		t.Fatalf("KEYWORD_COLUMNS_DIR=off wrote %v", entries)
	}
}

func ptr[T any](v T) *T { return &v }
