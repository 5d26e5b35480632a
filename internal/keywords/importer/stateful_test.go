package importer_test

// A stateful property test of the keyword answers: random histories of writes to the
// keyword data (imports of every shape and write path, imports killed at a stage, two at
// once, the sample set, an operator's DELETE, UPDATE or TRUNCATE, keyword set builds, a
// worker restart), and after each step every kind of answer from one long-lived provider
// stack — the Redis answer cache over the local provider with its keyword columns, as the
// worker keeps them — compared with an oracle: plain
// SQL over domain_rankings and keyword_metrics, filtered and sorted here by the documented
// rules. An answer that outlives the data it was made from (a cached answer, columns or
// keyword sets of an older generation) shows as a difference.
//
// The history is a function of the seed, which the test prints; a failure prints the steps
// that led to it. Flags: -stateful.ops (default 30; 2,000 or more for a long run),
// -stateful.seed (0: from the clock), -stateful.cache=false (no Redis cache, to see what
// the provider alone does).

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/cache"
	"github.com/contentapi/contentapi/internal/keywords/importer"
	"github.com/contentapi/contentapi/internal/keywords/local"
	"github.com/contentapi/contentapi/internal/keywords/sample"
	"github.com/contentapi/contentapi/internal/postgres"
	"github.com/contentapi/contentapi/internal/testenv"
)

var (
	statefulOps   = flag.Int("stateful.ops", 30, "operations of TestStatefulKeywordAnswers")
	statefulSeed  = flag.Uint64("stateful.seed", 0, "seed of TestStatefulKeywordAnswers (0: from the clock)")
	statefulCache = flag.Bool("stateful.cache", true, "TestStatefulKeywordAnswers asks through the Redis answer cache")
)

// stMarket is a market of the test's data.
type stMarket struct{ country, language string }

var stMarkets = []stMarket{{"us", "en"}, {"de", "de"}}

// stWords are the words of the test's keywords: two or three of them, lower case, so a
// keyword is its own normalised form and words are whole words.
var stWords = strings.Fields("alpha brew cold drip espresso filter grind hot iced java kettle latte mocha nitro oat pour roast steam tamp urn")

var stIntents = []string{"informational", "navigational", "commercial", "transactional"}

// stRank is a row of a rankings file.
type stRank struct {
	domain, keyword string
	position        int
	url             string // "" for none
	volume          *int64
	kd, cpc         *float64
}

// stMachine is the history's state: the data's generator and the provider stack under test.
type stMachine struct {
	t        *testing.T
	pool     *pgxpool.Pool
	rng      *rand.Rand
	provider keywords.Provider // the cache over the local provider, kept across steps
	// newProvider builds the stack as a worker starting does.
	newProvider func() keywords.Provider
	universe    []string // the keywords files draw from
	domains     []string // the domains files draw from
	last        map[stMarket][]stRank
	log         []string
	step        int
	seeded      int // sample.Seed runs
	spent       map[string]time.Duration
}

func (m *stMachine) timed(kind string, start time.Time) { m.spent[kind] += time.Since(start) }

func TestStatefulKeywordAnswers(t *testing.T) {
	pool, dsn := testenv.PostgresDSN(t)
	rdb := testenv.Redis(t)
	ctx := context.Background()
	seed := *statefulSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d: rerun with -stateful.seed=%d -stateful.ops=%d", seed, seed, *statefulOps)
	for _, sql := range []string{`DELETE FROM domain_rankings`, `DELETE FROM keyword_metrics`} {
		if _, err := pool.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	if err := local.BuildKeywordSets(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if err := rdb.FlushDB(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(importer.DefaultPaths)
	// The provider reads through a pool of its own, as the worker does beside an import
	// run by cmd/ctl: reads during an import then never wait for the import's connections.
	readers, err := postgres.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(readers.Close)
	m := newMachine(t, pool, readers, rdb, seed)
	start := time.Now()
	var applying, checking time.Duration
	for m.step = 1; m.step <= *statefulOps; m.step++ {
		t0 := time.Now()
		m.apply()
		t1 := time.Now()
		problem := m.check()
		applying, checking = applying+t1.Sub(t0), checking+time.Since(t1)
		if m.step%100 == 0 {
			t.Logf("step %d after %s", m.step, time.Since(start).Round(time.Second)) // a long run's progress (-v)
		}
		if problem != "" {
			t.Fatalf("seed %d, step %d: %s\nsteps:\n  %s", seed, m.step, problem, strings.Join(m.log, "\n  "))
		}
	}
	t.Logf("%d operations in %s: %s writing, %s checking", *statefulOps, time.Since(start).Round(time.Millisecond),
		applying.Round(time.Millisecond), checking.Round(time.Millisecond))
	t.Logf("checking by kind: %v", m.spent)
}

func newMachine(t *testing.T, pool, readers *pgxpool.Pool, rdb *redis.Client, seed uint64) *stMachine {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var ttl time.Duration
	if *statefulCache {
		ttl = 24 * time.Hour
	}
	m := &stMachine{t: t, pool: pool, rng: rng, last: map[stMarket][]stRank{}, spent: map[string]time.Duration{},
		newProvider: func() keywords.Provider {
			return cache.New(local.New(readers, local.WithColumnsBudget(64<<20)), rdb, ttl)
		}}
	m.provider = m.newProvider()
	for _, a := range stWords {
		for _, b := range stWords {
			if a != b && rng.IntN(3) > 0 {
				m.universe = append(m.universe, a+" "+b)
			}
		}
	}
	for range 60 {
		m.universe = append(m.universe, stWords[rng.IntN(len(stWords))]+" "+stWords[rng.IntN(len(stWords))]+" "+stWords[rng.IntN(len(stWords))])
	}
	for i := range 3 + rng.IntN(3) {
		m.domains = append(m.domains, fmt.Sprintf("d%d.example", i+1))
	}
	return m
}

// logf records what a step did.
func (m *stMachine) logf(format string, args ...any) {
	m.log = append(m.log, fmt.Sprintf("%d: ", m.step)+fmt.Sprintf(format, args...))
}

// apply runs one random operation.
func (m *stMachine) apply() {
	ctx := context.Background()
	mk := stMarkets[m.rng.IntN(len(stMarkets))]
	switch n := m.rng.IntN(100); {
	case n < 40:
		m.importRankings(ctx, mk, m.rankingsFile(mk))
	case n < 50:
		m.importKeywords(ctx, mk)
	case n < 60:
		m.killedImport(ctx, mk)
	case n < 68:
		m.twoImports(ctx)
	case n < 80:
		m.operatorWrite(ctx, mk)
	case n < 88:
		m.logf("BuildKeywordSets")
		if err := local.BuildKeywordSets(ctx, m.pool); err != nil {
			m.t.Fatalf("step %d: build keyword sets: %v", m.step, err)
		}
	case n < 92 && m.seeded < 2:
		m.seeded++
		k, r, err := sample.Seed(ctx, m.pool)
		m.logf("sample.Seed: %d keyword rows, %d ranking rows: %v", k, r, err)
		if err != nil {
			m.t.Fatalf("step %d: sample seed: %v", m.step, err)
		}
	case n < 95:
		m.logf("worker restart: a new provider stack on the same Redis")
		m.provider = m.newProvider()
	default:
		m.importRankings(ctx, mk, m.rankingsFile(mk))
	}
}

// rankingsFile makes a rankings file for the market from the last one: a new file, a
// superset, a subset, the same file, changed positions and metrics, or a new domain's rows.
func (m *stMachine) rankingsFile(mk stMarket) (rows []stRank) {
	last := m.last[mk]
	kind := m.rng.IntN(7)
	if len(last) == 0 {
		kind = 0
	}
	switch kind {
	case 0, 1:
		rows = m.newRows(10 + m.rng.IntN(200))
		m.logf("rankings file %s: new, %d rows", mk.country, len(rows))
	case 2:
		if len(last) > 150 { // a few hundred rows at most
			last = last[:50]
		}
		rows = append(slices.Clone(last), m.newRows(2*len(last))...)
		m.logf("rankings file %s: superset of the last (%d rows)", mk.country, len(rows))
	case 3:
		for _, r := range last {
			if m.rng.IntN(2) == 0 {
				rows = append(rows, r)
			}
		}
		m.logf("rankings file %s: subset of the last (%d rows)", mk.country, len(rows))
	case 4:
		rows = slices.Clone(last)
		m.logf("rankings file %s: the last again (%d rows)", mk.country, len(rows))
	case 5:
		for _, r := range last {
			if m.rng.IntN(2) == 0 {
				r.position = 1 + m.rng.IntN(100)
				r.volume, r.kd, r.cpc = m.metrics()
			}
			rows = append(rows, r)
		}
		m.logf("rankings file %s: the last with positions and metrics changed (%d rows)", mk.country, len(rows))
	default:
		if len(m.domains) < 8 {
			m.domains = append(m.domains, fmt.Sprintf("d%d.example", len(m.domains)+1))
		}
		d := m.domains[len(m.domains)-1]
		for range 5 + m.rng.IntN(60) {
			rows = append(rows, m.row(d))
		}
		m.logf("rankings file %s: rows of %s (%d rows)", mk.country, d, len(rows))
	}
	m.last[mk] = rows
	return rows
}

func (m *stMachine) newRows(n int) []stRank {
	rows := make([]stRank, n)
	for i := range rows {
		rows[i] = m.row(m.domains[m.rng.IntN(len(m.domains))])
	}
	return rows
}

func (m *stMachine) row(domain string) stRank {
	r := stRank{domain: domain, keyword: m.universe[m.rng.IntN(len(m.universe))], position: 1 + m.rng.IntN(100)}
	if m.rng.IntN(5) > 0 {
		r.url = fmt.Sprintf("https://%s/p%d", domain, m.rng.IntN(3))
	}
	r.volume, r.kd, r.cpc = m.metrics()
	return r
}

// metrics are random metrics, each unknown now and then.
func (m *stMachine) metrics() (*int64, *float64, *float64) {
	var vol *int64
	var kd, cpc *float64
	if m.rng.IntN(6) > 0 {
		v := int64(10 * (1 + m.rng.IntN(500)))
		vol = &v
	}
	if m.rng.IntN(6) > 0 {
		v := float64(m.rng.IntN(101))
		kd = &v
	}
	if m.rng.IntN(6) > 0 {
		v := float64(m.rng.IntN(1000)) / 100
		cpc = &v
	}
	return vol, kd, cpc
}

// number is *v in decimal, or unknown when v is nil.
func number[T int64 | float64](v *T, unknown string) string {
	if v == nil {
		return unknown
	}
	return strconv.FormatFloat(float64(*v), 'f', -1, 64)
}

func cellI(v *int64) string   { return number(v, "") }
func cellF(v *float64) string { return number(v, "") }

func rankingsCSV(rows []stRank, withMetrics bool) string {
	var b strings.Builder
	b.WriteString("domain,keyword,position,url")
	if withMetrics {
		b.WriteString(",search volume,kd,cpc")
	}
	b.WriteByte('\n')
	for _, r := range rows {
		fmt.Fprintf(&b, "%s,%s,%d,%s", r.domain, r.keyword, r.position, r.url)
		if withMetrics {
			fmt.Fprintf(&b, ",%s,%s,%s", cellI(r.volume), cellF(r.kd), cellF(r.cpc))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// paths sets the write path of the imports that follow at random and names it.
func (m *stMachine) paths(beforeSwap func()) string {
	importer.DefaultPaths()
	switch m.rng.IntN(3) {
	case 0:
		importer.AlwaysNewTable(m.t, beforeSwap)
		return "new table"
	case 1:
		held, run := 5+m.rng.IntN(50), 0
		if m.rng.IntN(2) == 0 {
			run = 100 + m.rng.IntN(2000) // several sorted runs, merged
		}
		importer.AlwaysDirect(m.t, held, run)
		return fmt.Sprintf("direct when empty (%d held, runs of %d bytes)", held, run)
	}
	return "by size"
}

// importRankings imports rows into the market.
func (m *stMachine) importRankings(ctx context.Context, mk stMarket, rows []stRank) {
	withMetrics := m.rng.IntN(2) == 0
	stage, hook, at := m.readDuring(ctx)
	path := m.paths(hook)
	m.logf("  import rankings %s, metrics %v, path %s%s", mk.country, withMetrics, path, at)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	rep, err := importer.ImportRankings(ctx, m.pool, strings.NewReader(rankingsCSV(rows, withMetrics)),
		importer.Options{Country: mk.country, Language: mk.language, Source: "stateful", Stage: stage})
	m.logf("  -> read %d loaded %d unchanged %d merged %d rejected %d: %v", rep.Read, rep.Loaded, rep.Unchanged, rep.Merged, rep.RejectedRows, err)
	if err != nil {
		m.t.Fatalf("step %d: import rankings: %v\nsteps:\n  %s", m.step, err, strings.Join(m.log, "\n  "))
	}
	if p := m.checkImported(ctx, mk, rows); p != "" {
		m.t.Fatalf("step %d: %s\nsteps:\n  %s", m.step, p, strings.Join(m.log, "\n  "))
	}
}

// readDuring returns, now and then, an Options.Stage callback or a hook before a new
// table's switch that asks the usual questions once, at a random point of the import: their
// answers, of the data before the import, are what the cache and the columns must not keep
// serving after it. at describes the point for the log.
func (m *stMachine) readDuring(ctx context.Context) (stage func(string, int, int), beforeSwap func(), at string) {
	if m.rng.IntN(3) > 0 {
		return nil, nil, ""
	}
	point := []string{importer.StageWriting, importer.StageIndexes, "before swap", importer.StageAnalysing}[m.rng.IntN(4)]
	var once sync.Once
	read := func() { once.Do(func() { m.ask(ctx) }) }
	if point == "before swap" {
		return nil, read, ", read before the swap"
	}
	return func(s string, _, _ int) {
		if s == point {
			read()
		}
	}, nil, fmt.Sprintf(", read at %q", point)
}

// ask asks the questions every check asks first, ignoring the answers (and errors: a
// question racing an import may fail); only what they leave in the cache and the columns
// matters.
func (m *stMachine) ask(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for _, mk := range stMarkets {
		for _, d := range m.domains[:2] {
			_, _ = m.provider.Rankings(ctx, keywords.RankingsRequest{Domain: d, Country: mk.country, Language: mk.language,
				Page: keywords.Page{Limit: 10}})
			_, _ = m.provider.Competitors(ctx, keywords.CompetitorsRequest{Domain: d, Country: mk.country, Language: mk.language,
				Page: keywords.Page{Limit: 3}})
		}
		_, _ = m.provider.Gaps(ctx, keywords.GapsRequest{Domain: m.domains[0], Competitors: m.domains[1:3], Country: mk.country,
			Language: mk.language, Limit: 20})
		_, _ = m.provider.Ideas(ctx, keywords.IdeasRequest{Topic: "brew", Country: mk.country, Language: mk.language,
			Page: keywords.Page{Limit: 10}})
	}
}

// checkImported checks the documented effect of a rankings file on the rows it names: a
// domain's rows for a keyword are the file's URLs for it, each at its best position in the
// file.
func (m *stMachine) checkImported(ctx context.Context, mk stMarket, rows []stRank) string {
	type pair struct{ domain, keyword string }
	want := map[pair]map[string]int{}
	for _, r := range rows {
		k := pair{r.domain, r.keyword}
		if want[k] == nil {
			want[k] = map[string]int{}
		}
		if p, ok := want[k][r.url]; !ok || r.position < p {
			want[k][r.url] = r.position
		}
	}
	for k, urls := range want {
		got := map[string]int{}
		rs, err := m.pool.Query(ctx, `SELECT coalesce(url, ''), position FROM domain_rankings
			WHERE domain = $1 AND country = $2 AND language = $3 AND keyword_norm = $4`, k.domain, mk.country, mk.language, k.keyword)
		if err != nil {
			m.t.Fatal(err)
		}
		var u string
		var p int
		if _, err := pgx.ForEachRow(rs, []any{&u, &p}, func() error { got[u] = p; return nil }); err != nil {
			m.t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(urls) {
			return fmt.Sprintf("after the import, %s ranks for %q in %s with %v (URL: position), the file says %v",
				k.domain, k.keyword, mk.country, got, urls)
		}
	}
	return ""
}

// importKeywords imports metrics for some keywords of the market, some of them new.
func (m *stMachine) importKeywords(ctx context.Context, mk stMarket) {
	var b strings.Builder
	b.WriteString("keyword,volume,kd,cpc,intent\n")
	n := 5 + m.rng.IntN(150)
	for range n {
		kw := m.universe[m.rng.IntN(len(m.universe))]
		if m.rng.IntN(5) == 0 {
			kw = stWords[m.rng.IntN(len(stWords))] + " unranked " + stWords[m.rng.IntN(len(stWords))]
		}
		vol, kd, cpc := m.metrics()
		intent := ""
		if m.rng.IntN(3) > 0 {
			intent = stIntents[m.rng.IntN(len(stIntents))]
		}
		fmt.Fprintf(&b, "%s,%s,%s,%s,%s\n", kw, cellI(vol), cellF(kd), cellF(cpc), intent)
	}
	stage, hook, at := m.readDuring(ctx)
	path := m.paths(hook)
	m.logf("import keywords %s: %d rows, path %s%s", mk.country, n, path, at)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	rep, err := importer.ImportKeywords(ctx, m.pool, strings.NewReader(b.String()),
		importer.Options{Country: mk.country, Language: mk.language, Source: "stateful", Stage: stage})
	m.logf("  -> read %d loaded %d unchanged %d: %v", rep.Read, rep.Loaded, rep.Unchanged, err)
	if err != nil {
		m.t.Fatalf("step %d: import keywords: %v", m.step, err)
	}
}

// killedImport imports a rankings file and cancels it at a random point: as it starts
// writing (before its commit), while a new table's indexes are built, before the switch of
// a new table, or once it has committed (before the analysis and the keyword sets' build).
// Some imports never reach the point and complete.
func (m *stMachine) killedImport(ctx context.Context, mk stMarket) {
	rows := m.rankingsFile(mk)
	withMetrics := m.rng.IntN(2) == 0
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	at := []string{importer.StageWriting, importer.StageIndexes, "before swap", importer.StageAnalysing}[m.rng.IntN(4)]
	var once sync.Once
	var killed atomic.Bool
	kill := func() { once.Do(func() { killed.Store(true); cancel() }) }
	var hook func()
	if at == "before swap" {
		hook = kill
	}
	path := m.paths(hook)
	m.logf("  import rankings %s, metrics %v, path %s, killed at %q", mk.country, withMetrics, path, at)
	rep, err := importer.ImportRankings(ctx, m.pool, strings.NewReader(rankingsCSV(rows, withMetrics)),
		importer.Options{Country: mk.country, Language: mk.language, Source: "stateful",
			Stage: func(stage string, done, total int) {
				if stage == at {
					kill()
				}
			}})
	m.logf("  -> read %d loaded %d: %v", rep.Read, rep.Loaded, err)
	if err != nil && !killed.Load() { // killed, it may fail with an error of its own, not only the context's
		m.t.Fatalf("step %d: killed import: %v", m.step, err)
	}
}

// twoImports runs two rankings imports at once, on one write path.
func (m *stMachine) twoImports(ctx context.Context) {
	a, b := stMarkets[m.rng.IntN(len(stMarkets))], stMarkets[m.rng.IntN(len(stMarkets))]
	m.logf("two imports at once:")
	ra, rb := m.rankingsFile(a), m.rankingsFile(b)
	path := m.paths(nil)
	m.logf("  path %s", path)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, job := range []struct {
		mk   stMarket
		rows []stRank
	}{{a, ra}, {b, rb}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = importer.ImportRankings(ctx, m.pool, strings.NewReader(rankingsCSV(job.rows, i == 0)),
				importer.Options{Country: job.mk.country, Language: job.mk.language, Source: "stateful"})
		}()
	}
	reading := make(chan struct{})
	go func() {
		defer close(reading)
		for ctx.Err() == nil {
			m.ask(ctx)
		}
	}()
	wg.Wait()
	cancel() // the reader stops
	<-reading
	m.logf("  -> %v", errs)
	if err := errors.Join(errs...); err != nil {
		m.t.Fatalf("step %d: two imports: %v", m.step, err)
	}
}

// operatorWrite deletes or updates rows as an operator's cleanup in psql would, without
// rebuilding anything.
func (m *stMachine) operatorWrite(ctx context.Context, mk stMarket) {
	var sql string
	var args []any
	d := m.domains[m.rng.IntN(len(m.domains))]
	switch m.rng.IntN(8) {
	case 5:
		sql = `UPDATE domain_rankings SET position = least(position + 7, 100) WHERE domain = $1 AND country = $2 AND language = $3`
		args = []any{d, mk.country, mk.language}
	case 6:
		sql = `UPDATE keyword_metrics SET search_volume = search_volume + 10, cpc = NULL
			WHERE country = $1 AND language = $2 AND keyword_norm LIKE $3`
		args = []any{mk.country, mk.language, "% " + stWords[m.rng.IntN(len(stWords))]}
	case 7:
		sql = `TRUNCATE domain_rankings`
	case 0, 1:
		sql = `DELETE FROM domain_rankings WHERE domain = $1 AND country = $2 AND language = $3 AND keyword_norm LIKE $4`
		args = []any{d, mk.country, mk.language, stWords[m.rng.IntN(len(stWords))] + " %"}
	case 2:
		sql = `DELETE FROM domain_rankings WHERE domain = $1 AND country = $2 AND language = $3`
		args = []any{d, mk.country, mk.language}
	case 3:
		sql = `DELETE FROM keyword_metrics WHERE country = $1 AND language = $2 AND keyword_norm LIKE $3`
		args = []any{mk.country, mk.language, "% " + stWords[m.rng.IntN(len(stWords))]}
	default:
		sql = `DELETE FROM domain_rankings WHERE country = $1 AND language = $2;
			DELETE FROM keyword_metrics WHERE country = $1 AND language = $2`
		args = []any{mk.country, mk.language}
	}
	var n int64
	err := pgx.BeginFunc(ctx, m.pool, func(tx pgx.Tx) error {
		for _, s := range strings.Split(sql, ";") {
			tag, err := tx.Exec(ctx, s, args[:strings.Count(s, "$")]...)
			if err != nil {
				return err
			}
			n += tag.RowsAffected()
		}
		return nil
	})
	m.logf("%s %v: %d rows", strings.Join(strings.Fields(sql), " "), args, n)
	if err != nil {
		m.t.Fatalf("step %d: operator's write: %v", m.step, err)
	}
}

// oRow is a row of an answer as the oracle reads it: a ranking (position, url), a gap
// (cpos, comps) or a shared keyword of two domains (position: the domain's, cpos: the
// competitor's).
type oRow struct {
	norm, keyword string
	position      int
	url           string
	cpos          int
	comps         map[string]int
	volume        *int64
	kd, cpc       *float64
	intent        string
}

func (r *oRow) value(f keywords.Field) *float64 {
	var v float64
	switch f {
	case keywords.FieldSearchVolume:
		if r.volume == nil {
			return nil
		}
		v = float64(*r.volume)
	case keywords.FieldDifficulty:
		return r.kd
	case keywords.FieldCPC:
		return r.cpc
	case keywords.FieldPosition:
		v = float64(r.position)
	case keywords.FieldCompetitorPosition:
		v = float64(r.cpos)
	default:
		panic("no value for " + f)
	}
	return &v
}

// passes applies the documented filters: ranges inclusive, an unknown value never in a
// range; intents; whole words included and excluded.
func (r *oRow) passes(f keywords.Filters) bool {
	for field, rg := range f.Ranges {
		v := r.value(field)
		if v == nil || rg.Min != nil && *v < *rg.Min || rg.Max != nil && *v > *rg.Max {
			return false
		}
	}
	if len(f.Intents) > 0 && !slices.Contains(f.Intents, r.intent) {
		return false
	}
	words := strings.Fields(r.norm)
	for _, w := range f.Include {
		if !slices.Contains(words, w) {
			return false
		}
	}
	for _, w := range f.Exclude {
		if slices.Contains(words, w) {
			return false
		}
	}
	return true
}

// compareRows is the documented order: each key in turn, unknown values last in either
// direction, then the keyword ascending.
func compareRows(order []keywords.OrderKey, a, b *oRow) int {
	for _, o := range order {
		var c int
		if o.Field == keywords.FieldKeyword {
			c = strings.Compare(a.norm, b.norm)
		} else {
			va, vb := a.value(o.Field), b.value(o.Field)
			switch {
			case va == nil && vb == nil:
				continue
			case va == nil:
				return 1
			case vb == nil:
				return -1
			}
			c = cmp.Compare(*va, *vb)
		}
		if o.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return strings.Compare(a.norm, b.norm)
}

// collectORows reads rows of (norm, keyword, position, url, cpos, comps, volume, kd, cpc,
// intent).
func collectORows(rows pgx.Rows, err error) ([]*oRow, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*oRow, error) {
		var r oRow
		err := row.Scan(&r.norm, &r.keyword, &r.position, &r.url, &r.cpos, &r.comps, &r.volume, &r.kd, &r.cpc, &r.intent)
		return &r, err
	})
}

// The oracle's statements: one row per keyword, the best position, the first URL (by URL)
// of the best position, the metrics when the keyword has a row.
const (
	oracleRankingsSQL = `
SELECT b.keyword_norm, b.keyword, b.position, coalesce(b.url, ''), 0, NULL::jsonb,
       k.search_volume, k.keyword_difficulty, k.cpc, coalesce(k.search_intent, '')
FROM (SELECT DISTINCT ON (keyword_norm) keyword_norm, coalesce(keyword, keyword_norm COLLATE "default") AS keyword, position, url FROM domain_rankings
      WHERE domain = $1 AND country = $2 AND language = $3
      ORDER BY keyword_norm, position, url NULLS FIRST) b
LEFT JOIN keyword_metrics k ON k.country = $2 AND k.language = $3 AND k.keyword_norm = b.keyword_norm`

	oracleGapsSQL = `
SELECT c.keyword_norm, coalesce(k.keyword, min(c.keyword)), 0, '', min(c.position)::int, jsonb_object_agg(c.domain, c.position),
       k.search_volume, k.keyword_difficulty, k.cpc, coalesce(k.search_intent, '')
FROM (SELECT domain, keyword_norm, min(coalesce(keyword, keyword_norm COLLATE "default")) AS keyword, min(position) AS position FROM domain_rankings
      WHERE country = $1 AND language = $2 AND domain = ANY($3::text[])
      GROUP BY domain, keyword_norm) c
LEFT JOIN keyword_metrics k ON k.country = $1 AND k.language = $2 AND k.keyword_norm = c.keyword_norm
WHERE NOT EXISTS (SELECT 1 FROM domain_rankings d
                  WHERE d.domain = $4 AND d.country = $1 AND d.language = $2 AND d.keyword_norm = c.keyword_norm)
GROUP BY c.keyword_norm, k.keyword, k.search_volume, k.keyword_difficulty, k.cpc, k.search_intent`

	// The keywords the domain $1 shares with each other domain, o.domain in comps.
	oracleSharedSQL = `
WITH b AS (SELECT domain, keyword_norm, min(position) AS position FROM domain_rankings
           WHERE country = $2 AND language = $3 GROUP BY domain, keyword_norm)
SELECT d.keyword_norm, d.keyword_norm, d.position, '', o.position, jsonb_build_object(o.domain, o.position),
       k.search_volume, k.keyword_difficulty, k.cpc, coalesce(k.search_intent, '')
FROM b d JOIN b o ON o.keyword_norm = d.keyword_norm AND o.domain <> d.domain
LEFT JOIN keyword_metrics k ON k.country = $2 AND k.language = $3 AND k.keyword_norm = d.keyword_norm
WHERE d.domain = $1`

	oracleTotalsSQL = `SELECT domain, count(DISTINCT keyword_norm)::int FROM domain_rankings
WHERE country = $1 AND language = $2 GROUP BY domain`
)

// check asks every kind of question in every market and returns the first difference
// from the oracle, "" when there is none.
func (m *stMachine) check() string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, mk := range stMarkets {
		domains, err := collectKeys(m.pool.Query(ctx, `SELECT DISTINCT domain FROM domain_rankings
			WHERE country = $1 AND language = $2 ORDER BY 1`, mk.country, mk.language))
		if err != nil {
			m.t.Fatal(err)
		}
		// The same questions at every step (the first domains, default filters and order,
		// one page size) meet what the cache and the columns kept; random ones beside them.
		asked := append(slices.Clone(domains[:min(3, len(domains))]), "nobody.example")
		for i, d := range asked {
			if p := m.checkRankings(ctx, mk, keywords.RankingsRequest{Domain: d, Page: keywords.Page{Limit: 10}}); p != "" {
				return p
			}
			if p := m.checkCompetitors(ctx, mk, keywords.CompetitorsRequest{Domain: d, Page: keywords.Page{Limit: 3}}); p != "" {
				return p
			}
			if i >= 2 {
				continue
			}
			others := slices.DeleteFunc(slices.Clone(m.domains), func(o string) bool { return o == d })
			if len(others) > 2 {
				others = others[:2]
			}
			if p := m.checkGaps(ctx, mk, keywords.GapsRequest{Domain: d, Competitors: others, Limit: 20}); p != "" {
				return p
			}
		}
		if p := m.checkIdeas(ctx, mk, keywords.IdeasRequest{Topic: "brew", Page: keywords.Page{Limit: 10}}); p != "" {
			return p
		}
		if len(domains) == 0 {
			continue
		}
		for range 2 {
			d := domains[m.rng.IntN(len(domains))]
			if p := m.checkRankings(ctx, mk, keywords.RankingsRequest{Domain: d, Filters: m.filters(keywords.FieldPosition),
				Order: m.order(keywords.FieldPosition, keywords.FieldSearchVolume, keywords.FieldDifficulty, keywords.FieldCPC),
				Page:  keywords.Page{Limit: 3 + m.rng.IntN(30)}}); p != "" {
				return p
			}
			var comps []string
			for _, c := range domains {
				if m.rng.IntN(3) == 0 {
					comps = append(comps, c)
				}
			}
			if m.rng.IntN(4) == 0 {
				comps = append(comps, "unranked.example")
			}
			if p := m.checkGaps(ctx, mk, keywords.GapsRequest{Domain: d, Competitors: comps, Limit: 3 + m.rng.IntN(30),
				Filters: m.filters(keywords.FieldCompetitorPosition),
				Order: m.order(keywords.FieldSearchVolume, keywords.FieldDifficulty, keywords.FieldCPC, keywords.FieldCompetitorPosition,
					keywords.FieldKeyword)}); p != "" {
				return p
			}
		}
		d := domains[m.rng.IntN(len(domains))]
		if p := m.checkCompetitors(ctx, mk, keywords.CompetitorsRequest{Domain: d, Page: keywords.Page{Limit: 1 + m.rng.IntN(5)},
			Filters: m.filters(keywords.FieldPosition, keywords.FieldCompetitorPosition)}); p != "" {
			return p
		}
		if p := m.checkIdeas(ctx, mk, keywords.IdeasRequest{Topic: stWords[m.rng.IntN(len(stWords))],
			Page: keywords.Page{Limit: 1 + m.rng.IntN(20)}}); p != "" {
			return p
		}
	}
	return ""
}

func collectKeys(rows pgx.Rows, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// filters are random filters on the metrics and the given position fields.
func (m *stMachine) filters(positions ...keywords.Field) keywords.Filters {
	var f keywords.Filters
	pick := func(vs ...float64) *float64 {
		i := m.rng.IntN(len(vs) + 1)
		if i == len(vs) {
			return nil
		}
		return &vs[i]
	}
	rg := func(field keywords.Field, mins, maxs []float64) {
		if m.rng.IntN(3) > 0 {
			return
		}
		r := keywords.Range{Min: pick(mins...), Max: pick(maxs...)}
		if r.Min == nil && r.Max == nil {
			return
		}
		if f.Ranges == nil {
			f.Ranges = map[keywords.Field]keywords.Range{}
		}
		f.Ranges[field] = r
	}
	rg(keywords.FieldSearchVolume, []float64{100, 1000}, []float64{2000, 4000})
	rg(keywords.FieldDifficulty, []float64{20, 50}, []float64{60})
	rg(keywords.FieldCPC, []float64{1}, []float64{5})
	for _, p := range positions {
		rg(p, []float64{1, 4}, []float64{10, 50})
	}
	if m.rng.IntN(4) == 0 {
		f.Include = []string{stWords[m.rng.IntN(len(stWords))]}
	}
	if m.rng.IntN(4) == 0 {
		f.Exclude = []string{stWords[m.rng.IntN(len(stWords))]}
	}
	if m.rng.IntN(5) == 0 {
		f.Intents = []string{stIntents[m.rng.IntN(len(stIntents))]}
	}
	return f
}

// order is a random order of up to two of the fields, or none (the default).
func (m *stMachine) order(fields ...keywords.Field) []keywords.OrderKey {
	var o []keywords.OrderKey
	for range m.rng.IntN(3) {
		f := fields[m.rng.IntN(len(fields))]
		if !slices.ContainsFunc(o, func(k keywords.OrderKey) bool { return k.Field == f }) {
			o = append(o, keywords.OrderKey{Field: f, Desc: m.rng.IntN(2) == 0})
		}
	}
	return o
}

func showI(v *int64) string   { return number(v, "null") }
func showF(v *float64) string { return number(v, "null") }

func (r *oRow) String() string {
	s := fmt.Sprintf("%q volume %s kd %s cpc %s intent %q", r.keyword, showI(r.volume), showF(r.kd), showF(r.cpc), r.intent)
	if r.comps != nil {
		return s + fmt.Sprintf(" competitors %v", r.comps)
	}
	return s + fmt.Sprintf(" position %d url %q", r.position, r.url)
}

// walk asks for every page of a question, from the first, until one names no next page:
// page asks for the page after a token and returns the next token and what is wrong with
// the page ("" if nothing). A walk of more than most pages does not end.
func walk(what string, most int, page func(after string) (next, problem string)) string {
	after := ""
	for n := 1; ; n++ {
		next, problem := page(after)
		switch {
		case problem != "":
			return fmt.Sprintf("%s: page %d: %s", what, n, problem)
		case next == "":
			return ""
		case n > most:
			return fmt.Sprintf("%s: the walk does not end (page %d)", what, n)
		}
		after = next
	}
}

// walkRows walks every page of a question whose rows the oracle gives: page returns the
// rows of the page after a token. The rows so far are compared after each page, all of them
// at the end.
func walkRows(what string, want []*oRow, page func(after string) (rows []*oRow, next, problem string)) string {
	var got []*oRow
	if p := walk(what, len(want)+1, func(after string) (string, string) {
		rows, next, problem := page(after)
		if problem != "" {
			return "", problem
		}
		got = append(got, rows...)
		return next, firstDifference(want[:min(len(got), len(want))], got)
	}); p != "" {
		return p
	}
	if d := firstDifference(want, got); d != "" {
		return fmt.Sprintf("%s: walk of every page: %s", what, d)
	}
	return ""
}

// asked describes a request for a failure message.
func asked(kind string, mk stMarket, req any) string {
	return fmt.Sprintf("%s %s/%s %+v", kind, mk.country, mk.language, req)
}

// firstDifference compares a walk's rows with the oracle's, in order.
func firstDifference(want, got []*oRow) string {
	for i := range max(len(want), len(got)) {
		switch {
		case i >= len(got):
			return fmt.Sprintf("row %d: oracle %s, answer has %d rows", i+1, want[i], len(got))
		case i >= len(want):
			return fmt.Sprintf("row %d: answer %s, oracle has %d rows", i+1, got[i], len(want))
		case want[i].String() != got[i].String():
			return fmt.Sprintf("row %d: oracle %s, answer %s", i+1, want[i], got[i])
		}
	}
	return ""
}

func sortedPassing(rows []*oRow, f keywords.Filters, order []keywords.OrderKey) []*oRow {
	rows = slices.DeleteFunc(rows, func(r *oRow) bool { return !r.passes(f) })
	slices.SortFunc(rows, func(a, b *oRow) int { return compareRows(order, a, b) })
	return rows
}

func kwRow(k keywords.Keyword) oRow {
	return oRow{norm: k.Keyword, keyword: k.Keyword, volume: k.SearchVolume, kd: k.Difficulty, cpc: k.CPC, intent: k.Intent}
}

// checkRankings walks every page of the rankings question.
func (m *stMachine) checkRankings(ctx context.Context, mk stMarket, req keywords.RankingsRequest) string {
	defer m.timed("rankings", time.Now())
	req.Country, req.Language = mk.country, mk.language
	what := asked("rankings", mk, req)
	rows, err := collectORows(m.pool.Query(ctx, oracleRankingsSQL, req.Domain, mk.country, mk.language))
	if err != nil {
		m.t.Fatal(err)
	}
	order := req.Order
	if len(order) == 0 {
		order = []keywords.OrderKey{{Field: keywords.FieldPosition}, {Field: keywords.FieldSearchVolume, Desc: true}}
	}
	want := sortedPassing(rows, req.Filters, order)
	bands := map[string]int{}
	for _, b := range keywords.Bands {
		bands[b.Name] = 0
		for _, r := range want {
			if r.position >= b.From && r.position <= b.To {
				bands[b.Name]++
			}
		}
	}
	return walkRows(what, want, func(after string) (rows []*oRow, next, problem string) {
		req.Page.After = after
		list, err := m.provider.Rankings(ctx, req)
		switch {
		case err != nil:
			return nil, "", err.Error()
		case list.Total != len(want):
			return nil, "", fmt.Sprintf("total %d, oracle %d", list.Total, len(want))
		case fmt.Sprint(list.Bands) != fmt.Sprint(bands):
			return nil, "", fmt.Sprintf("bands %v, oracle %v", list.Bands, bands)
		}
		for _, r := range list.Rankings {
			o := kwRow(r.Keyword)
			o.position, o.url = r.Position, r.URL
			rows = append(rows, &o)
		}
		return rows, list.Next, ""
	})
}

// checkGaps walks every page of the gaps question.
func (m *stMachine) checkGaps(ctx context.Context, mk stMarket, req keywords.GapsRequest) string {
	defer m.timed("gaps", time.Now())
	req.Country, req.Language = mk.country, mk.language
	what := asked("gaps", mk, req)
	var comps, unranked []string
	for _, c := range req.Competitors {
		if c != req.Domain && !slices.Contains(comps, c) {
			comps = append(comps, c)
			var ranks bool
			if err := m.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM domain_rankings WHERE domain = $1 AND country = $2 AND language = $3)`,
				c, mk.country, mk.language).Scan(&ranks); err != nil {
				m.t.Fatal(err)
			}
			if !ranks {
				unranked = append(unranked, c)
			}
		}
	}
	rows, err := collectORows(m.pool.Query(ctx, oracleGapsSQL, mk.country, mk.language, comps, req.Domain))
	if err != nil {
		m.t.Fatal(err)
	}
	order := req.Order
	if len(order) == 0 {
		order = []keywords.OrderKey{{Field: keywords.FieldSearchVolume, Desc: true}}
	}
	want := sortedPassing(rows, req.Filters, order)
	return walkRows(what, want, func(after string) (rows []*oRow, next, problem string) {
		req.After = after
		list, err := m.provider.Gaps(ctx, req)
		switch {
		case err != nil:
			return nil, "", err.Error()
		case list.Total != len(want):
			return nil, "", fmt.Sprintf("total %d, oracle %d", list.Total, len(want))
		case len(comps) > 0 && fmt.Sprint(list.Unranked) != fmt.Sprint(unranked):
			return nil, "", fmt.Sprintf("unranked competitors %v, oracle %v", list.Unranked, unranked)
		}
		for _, g := range list.Gaps {
			o := kwRow(g.Keyword)
			o.comps = g.CompetitorPositions
			rows = append(rows, &o)
		}
		return rows, list.Next, ""
	})
}

// checkCompetitors walks every page of the competitors question.
func (m *stMachine) checkCompetitors(ctx context.Context, mk stMarket, req keywords.CompetitorsRequest) string {
	defer m.timed("competitors", time.Now())
	req.Country, req.Language = mk.country, mk.language
	what := asked("competitors", mk, req)
	shared, err := collectORows(m.pool.Query(ctx, oracleSharedSQL, req.Domain, mk.country, mk.language))
	if err != nil {
		m.t.Fatal(err)
	}
	totals := map[string]int{}
	rows, err := m.pool.Query(ctx, oracleTotalsSQL, mk.country, mk.language)
	if err != nil {
		m.t.Fatal(err)
	}
	var d string
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&d, &n}, func() error { totals[d] = n; return nil }); err != nil {
		m.t.Fatal(err)
	}
	type sums struct{ n, pos, dpos int }
	by := map[string]*sums{}
	for _, r := range shared {
		if !r.passes(req.Filters) {
			continue
		}
		for c := range r.comps {
			s := by[c]
			if s == nil {
				s = &sums{}
				by[c] = s
			}
			s.n++
			s.pos += r.cpos
			s.dpos += r.position
		}
	}
	var want []keywords.Competitor
	for c, s := range by {
		want = append(want, keywords.Competitor{Domain: c, Shared: s.n, Total: totals[c],
			AvgPosition: float64(s.pos) / float64(s.n), DomainAvgPosition: float64(s.dpos) / float64(s.n)})
	}
	slices.SortFunc(want, func(a, b keywords.Competitor) int {
		return cmp.Or(cmp.Compare(b.Shared, a.Shared), strings.Compare(a.Domain, b.Domain))
	})
	same := func(a, b keywords.Competitor) bool {
		return a.Domain == b.Domain && a.Shared == b.Shared && a.Total == b.Total &&
			math.Abs(a.AvgPosition-b.AvgPosition) <= 0.0051 && math.Abs(a.DomainAvgPosition-b.DomainAvgPosition) <= 0.0051
	}
	var got []keywords.Competitor
	if p := walk(what, len(want)+1, func(after string) (string, string) {
		req.Page.After = after
		list, err := m.provider.Competitors(ctx, req)
		switch {
		case err != nil:
			return "", err.Error()
		case list.Total != len(want):
			return "", fmt.Sprintf("total %d, oracle %d", list.Total, len(want))
		}
		got = append(got, list.Competitors...)
		return list.Next, ""
	}); p != "" {
		return p
	}
	for i := range max(len(want), len(got)) {
		switch {
		case i >= len(got):
			return fmt.Sprintf("%s: walk of every page: row %d: oracle %+v, answer has %d rows", what, i+1, want[i], len(got))
		case i >= len(want):
			return fmt.Sprintf("%s: walk of every page: row %d: answer %+v, oracle has %d rows", what, i+1, got[i], len(want))
		case !same(want[i], got[i]):
			return fmt.Sprintf("%s: walk of every page: row %d: oracle %+v, answer %+v", what, i+1, want[i], got[i])
		}
	}
	return ""
}

// checkIdeas walks every page of a research question: relevance is the provider's own, but
// every idea must be a keyword of the market now, with its metrics now, once, and the total
// must count what the pages hold.
func (m *stMachine) checkIdeas(ctx context.Context, mk stMarket, req keywords.IdeasRequest) string {
	defer m.timed("ideas", time.Now())
	req.Country, req.Language = mk.country, mk.language
	what := asked("ideas", mk, req)
	rows, err := collectORows(m.pool.Query(ctx, `SELECT keyword_norm, keyword, 0, '', 0, NULL::jsonb,
		search_volume, keyword_difficulty, cpc, coalesce(search_intent, '') FROM keyword_metrics WHERE country = $1 AND language = $2`,
		mk.country, mk.language))
	if err != nil {
		m.t.Fatal(err)
	}
	now := map[string]*oRow{}
	for _, r := range rows {
		now[r.norm] = r
	}
	seen := map[string]bool{}
	total := -1
	if p := walk(what, len(now)+1, func(after string) (string, string) {
		req.Page.After = after
		list, err := m.provider.Ideas(ctx, req)
		switch {
		case err != nil:
			return "", err.Error()
		case total >= 0 && list.Total != total:
			return "", fmt.Sprintf("total %d, page 1 said %d", list.Total, total)
		case list.Total > len(now):
			return "", fmt.Sprintf("total %d, the market has %d keywords", list.Total, len(now))
		}
		total = list.Total
		for _, k := range list.Ideas {
			got := kwRow(k)
			want, ok := now[strings.ToLower(k.Keyword)]
			switch {
			case !ok:
				return "", fmt.Sprintf("idea %s is not a keyword of the market", &got)
			case seen[want.norm]:
				return "", fmt.Sprintf("idea %q again", k.Keyword)
			}
			got.intent, got.keyword = want.intent, want.keyword // not compared
			if got.String() != want.String() {
				return "", fmt.Sprintf("idea %s, the keyword's row now %s", &got, want)
			}
			seen[want.norm] = true
		}
		return list.Next, ""
	}); p != "" {
		return p
	}
	if total != len(seen) {
		return fmt.Sprintf("%s: total %d, the pages hold %d ideas", what, total, len(seen))
	}
	return ""
}
