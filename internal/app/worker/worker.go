// Package worker builds the worker binary's own parts over the shared graph: the runner of
// analyses with its keyword provider, and the callback and housekeeping handlers. It is
// apart from internal/app so that the API binary, which runs no task, links none of them.
package worker

import (
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/app"
	"github.com/contentapi/contentapi/internal/config"
	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/cache"
	"github.com/contentapi/contentapi/internal/keywords/dataforseo"
	"github.com/contentapi/contentapi/internal/keywords/local"
	"github.com/contentapi/contentapi/internal/postgres"
	"github.com/contentapi/contentapi/internal/report"
	"github.com/contentapi/contentapi/jobs"
)

// ReportBuilder is the worker's runner of analyses: the configured keyword provider behind
// the Redis answer cache, the App's crawler, and the job store's audit snapshots. It
// registers the cache's counters in Metrics, so it is built once, by the worker. The local
// provider's keyword columns are kept loaded until ctx ends or the App closes. It fails
// when a market's own keyword database (KEYWORD_MARKET_DATABASES) cannot be set up.
func ReportBuilder(ctx context.Context, a *app.App) (*report.Builder, error) {
	kp, err := keywordProvider(ctx, a)
	if err != nil {
		return nil, err
	}
	return &report.Builder{Keywords: kp, Crawler: a.Crawler, Clock: a.Clock,
		ThinWords: a.Config.ThinContentWords, History: jobs.AuditHistory{Jobs: a.Jobs},
		Cursors: a.Cursors}, nil
}

// keywordProvider builds the configured keyword data source behind the Redis answer cache.
func keywordProvider(ctx context.Context, a *app.App) (keywords.Provider, error) {
	cfg := a.Config
	var p keywords.Provider
	switch cfg.KeywordProvider {
	case "dataforseo":
		p = dataforseo.New(DataForSEOConfig(cfg, a.Log))
	default:
		lp, err := localProvider(ctx, a)
		if err != nil {
			return nil, err
		}
		p = lp
		const loads = "contentapi_keyword_column_loads_total"
		const help = "Markets' keyword columns read from the database, or mapped from a column file another load wrote."
		a.Metrics.CounterFunc(loads, help, map[string]string{"from": "database"},
			func() float64 { db, _ := local.ColumnLoadCounts(); return float64(db) })
		a.Metrics.CounterFunc(loads, help, map[string]string{"from": "file"},
			func() float64 { _, file := local.ColumnLoadCounts(); return float64(file) })
	}
	c := cache.New(p, a.Redis, cfg.KeywordCacheTTL, cache.WithLogger(a.Log))
	labels := map[string]string{"provider": p.Name()}
	a.Metrics.CounterFunc("contentapi_keyword_cache_hits_total", "Keyword provider answers served from the Redis cache.", labels,
		func() float64 { return float64(c.Hits()) })
	a.Metrics.CounterFunc("contentapi_keyword_provider_calls_total", "Calls that reached the keyword provider (cache misses).", labels,
		func() float64 { return float64(c.Misses()) })
	return c, nil
}

// localProvider is the local provider over DATABASE_URL's keyword tables, or, with
// KEYWORD_MARKET_DATABASES, a router sending the markets listed there to local providers
// over their own databases (created and migrated here when missing) and every other market
// to DATABASE_URL's. The keyword columns' budget is shared out evenly between the
// databases, so that the worker's memory does not grow with them.
func localProvider(ctx context.Context, a *app.App) (keywords.Provider, error) {
	cfg := a.Config
	urls := []string{""} // "": the App's own pool
	pools := map[string]*pgxpool.Pool{"": a.Pool}
	for _, md := range cfg.KeywordMarketDatabases {
		if _, ok := pools[md.URL]; ok {
			continue
		}
		pool, err := marketDatabase(ctx, md.URL)
		if err != nil {
			return nil, fmt.Errorf("keyword database of %s/%s: %w", md.Country, md.Language, err)
		}
		a.OnClose(pool.Close) // after the columns' warm loops, registered below, have stopped
		urls = append(urls, md.URL)
		pools[md.URL] = pool
	}
	budget := int64(cfg.KeywordColumnsMB) << 20 / int64(len(urls))
	local.SetMappedMemoryLimit(int64(cfg.KeywordMappedMB) << 20)
	base := columnsDir(cfg, a.Log)
	providers := map[string]*local.Provider{}
	for _, u := range urls {
		opts := []local.Option{local.WithColumnsBudget(budget), local.WithWordIndexReport(func(b local.WordIndexBuild) {
			if b.Err == nil && b.Keywords > 0 {
				a.Log.Info("research word index ready", "market", b.Country+"/"+b.Language, "keywords", b.Keywords,
					"mb", b.Bytes>>20, "took", b.Took.Round(time.Millisecond).String(), "mapped", b.Mapped)
			}
		})}
		if !cfg.KeywordWordIndex {
			opts = append(opts, local.WithoutWordIndexes())
		}
		if dir, err := databaseColumnsDir(base, cmp.Or(u, cfg.DatabaseURL)); err != nil {
			a.Log.Warn("keyword columns: no column files, each worker loads its own", "err", err)
		} else if dir != "" {
			opts = append(opts, local.WithColumnFiles(dir, func(err error) { a.Log.Warn("keyword columns: file", "err", err) }))
		}
		lp := local.New(pools[u], opts...)
		warm, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			lp.KeepColumnsWarm(warm, columnsWarmInterval, func(err error) { a.Log.Warn("keyword columns: warm", "err", err) })
		}()
		a.OnClose(func() { stop(); <-done }) // before the pool closes
		providers[u] = lp
	}
	if len(urls) == 1 {
		return providers[""], nil
	}
	byMarket := map[keywords.Market]keywords.Provider{}
	for _, md := range cfg.KeywordMarketDatabases {
		byMarket[keywords.Market{Country: md.Country, Language: md.Language}] = providers[md.URL]
	}
	return keywords.NewMarkets(providers[""], byMarket), nil
}

// columnsDir is the directory the worker shares keyword columns through with the other
// workers of its machine (KEYWORD_COLUMNS_DIR, by default under the user's cache
// directory), "" for none.
func columnsDir(cfg *config.Config, log *slog.Logger) string {
	switch cfg.KeywordColumnsDir {
	case "off":
		return ""
	case "":
		base, err := os.UserCacheDir()
		if err != nil {
			log.Warn("keyword columns: no cache directory for column files, each worker loads its own", "err", err)
			return ""
		}
		return filepath.Join(base, "contentapi", "keyword-columns")
	}
	return cfg.KeywordColumnsDir
}

// databaseColumnsDir is the directory of the column files of the database at url under
// base, created if missing: one per database (its address, without credentials), so that
// the files of a market held by two databases do not replace each other.
func databaseColumnsDir(base, url string) (string, error) {
	if base == "" {
		return "", nil
	}
	pc, err := pgconn.ParseConfig(url)
	if err != nil {
		return "", err
	}
	id := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%s\x00%s", pc.Host, pc.Port, pc.Database, pc.User))
	dir := filepath.Join(base, fmt.Sprintf("%x", id[:8]))
	return dir, os.MkdirAll(dir, 0o700)
}

// marketDatabase creates and migrates the database at url when it needs it, and connects.
func marketDatabase(ctx context.Context, url string) (*pgxpool.Pool, error) {
	if _, err := postgres.Setup(ctx, url); err != nil {
		return nil, err
	}
	return postgres.Connect(ctx, url)
}

// MemoryLimit is the soft limit the worker keeps its Go heap to when GOMEMLIMIT is not set:
// the keyword columns' budget, a quarter more for the decoded keyword sets and word matches
// kept beside them, and 128 MiB for the rest. Without it the collector lets the heap grow to
// twice what is live, columns included. ok is false where no columns are kept (DataForSEO,
// or a budget of 0): the heap then holds no large live part for a limit to keep in check.
func MemoryLimit(cfg *config.Config) (limit int64, ok bool) {
	if cfg.KeywordProvider != "local" || cfg.KeywordColumnsMB == 0 {
		return 0, false
	}
	return (int64(cfg.KeywordColumnsMB)*5/4 + 128) << 20, true
}

// columnsWarmInterval is how often the worker looks for keyword data newer than its keyword
// columns (a question finding them stale loads them itself meanwhile).
const columnsWarmInterval = 30 * time.Second

// DataForSEOConfig is the DataForSEO client's configuration from the service's: the
// credentials, the address and the intent and difficulty fill-ins (DATAFORSEO_FILL_MISSING,
// on by default).
func DataForSEOConfig(cfg *config.Config, log *slog.Logger) dataforseo.Config {
	return dataforseo.Config{BaseURL: cfg.DataForSEOBaseURL, Login: cfg.DataForSEOLogin,
		Password: cfg.DataForSEOPassword, FillMissing: cfg.DataForSEOFillMissing, Logger: log}
}

// Callbacks is the worker's handler of callback deliveries, over the App's crawler's
// guarded HTTP client.
func Callbacks(a *app.App) *jobs.Callbacks {
	return &jobs.Callbacks{Jobs: a.Jobs, Accounts: a.Accounts, Client: a.Crawler.HTTPClient(), Log: a.Log}
}

// ScheduleCallbacks makes every job that ends schedule the delivery of its callback; the
// worker does, as the process that finishes jobs.
func ScheduleCallbacks(a *app.App) {
	sched := &jobs.CallbackScheduler{Client: a.Queue.Client, Log: a.Log}
	a.Jobs.OnFinish(func(ctx context.Context, id uuid.UUID) {
		if err := a.Jobs.MarkCallbackPending(ctx, id); err != nil {
			a.Log.Warn("callback state", "job_id", id, "err", err)
		}
		sched.Schedule(ctx, id)
	})
}

// Maintenance is the worker's handler of housekeeping tasks.
func Maintenance(a *app.App) *jobs.Maintenance {
	return &jobs.Maintenance{Ledger: a.Ledger, Log: a.Log, Jobs: a.Jobs, Retention: a.Config.JobRetention}
}

// StartRendering starts the crawler's browser and, once it runs, advertises it in Redis
// until Close, so the API accepts rendered audits. Without a browser the worker runs on
// without rendering, and says so.
func StartRendering(ctx context.Context, a *app.App) bool {
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := a.Crawler.StartRenderer(sctx); err != nil {
		a.Log.Warn("JavaScript rendering off: rendered audits are refused unless another worker renders", "err", err)
		return false
	}
	browsers := jobs.Browsers{Redis: a.Redis}
	if err := browsers.Advertise(ctx); err != nil {
		a.Log.Warn("browser not advertised yet; retried every 20 s", "err", err)
	}
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() { defer close(done); browsers.Run(runCtx, a.Log) }()
	a.OnClose(func() { stop(); <-done })
	a.Log.Info("JavaScript rendering on", "concurrency", a.Config.RenderConcurrency, "timeout", a.Config.RenderTimeout.String())
	return true
}
