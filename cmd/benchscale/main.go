// Command benchscale is `make bench-scale`: it generates a seeded keyword and ranking data
// set at one or more sizes, in two shapes (spread and skewed, see gen.go), loads each into a database of its own through the real
// `ctl import` commands (measuring rows/s and the ctl process's peak resident memory), then
// times keyword research, gaps, content recommend and the content map over a fixed list
// of questions and prints p50/p95 side by side. Each database is dropped afterwards.
//
// The answers are built by report.Builder over the local provider, the code the API's
// handlers and the worker's jobs run, without the Redis cache. Crawls are cut off at once
// (a 1 ms crawl timeout), so recommend and content map times exclude crawl time.
//
// With -http (make bench-scale sets it) each question is also asked as the user's HTTP call
// to the real bin/api and bin/worker, started on the bench database (http.go); both
// figures are printed side by side, and the HTTP answers must carry the same totals.
package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/crawler"
	"github.com/contentapi/contentapi/internal/keywords/local"
	"github.com/contentapi/contentapi/internal/postgres"
	"github.com/contentapi/contentapi/internal/report"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "benchscale:", err)
		os.Exit(1)
	}
}

// size is one data-set size.
type size struct{ keywords, rankings, big int }

// result is what one size of one shape measured.
type result struct {
	size
	shape              string
	importKW, importRK phase
	timings            map[string][]time.Duration
	httpTimings        map[string][]time.Duration // -http: the same questions through the API
	answers            map[string]string
	reimport           phase
	floorRK            phase // raw COPY of the rankings file (copyFloor), after the imports
	floorBefore        phase // the same, before the ranking import
	// columnsDB and columnsFile are the times to have the keyword columns of every market
	// ready: read from the database and written to a column file, then mapped from it.
	columnsDB, columnsFile time.Duration
	domainRows, distinct   int
}

// phase is one ctl run.
type phase struct {
	rows    int
	elapsed time.Duration
	maxRSS  int64 // bytes
	out     string
}

func run(ctx context.Context) error {
	kwFlag := flag.String("keywords", "100000,1000000", "keyword counts, comma-separated")
	rkFlag := flag.String("rankings", "300000,3000000", "ranking counts, one per keyword count")
	bigFlag := flag.String("big", "", "rankings of the big domain, one per size (default 24% of rankings)")
	domains := flag.Int("domains", 2000, "domains with rankings")
	seed := flag.Uint64("seed", 1, "generator seed")
	rounds := flag.Int("rounds", 5, "times each question is asked (after one warm-up)")
	ctlBin := flag.String("ctl", "bin/ctl", "the ctl binary")
	dsn := flag.String("database-url", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "server to create the bench databases on")
	keep := flag.Bool("keep", false, "keep the databases (for EXPLAIN), print their names")
	flag.StringVar(&reuse, "reuse", "", "time the answers of this kept database (same sizes and seed) without generating or importing")
	flag.StringVar(&only, "only", "", "ask only the questions whose kind contains this")
	flag.BoolVar(&reimport, "reimport", true, "import the rankings file a second time over the stored rows (timed)")
	flag.BoolVar(&askQuestions, "questions", true, "time the answers after the imports")
	flag.StringVar(&workerMemLimit, "gomemlimit", "", "GOMEMLIMIT of the api and worker (-http), e.g. 900MiB")
	flag.BoolVar(&wordIndexes, "word-indexes", true, "research reads the word indexes (built before the first research question is timed); false: the SQL look-ups only")
	flag.IntVar(&mappedMB, "mapped-mb", -1, "the bound in MiB of the mapped column and word files' pages resident, in process and in the worker (KEYWORD_MAPPED_MB; -1: the default)")
	flag.IntVar(&columnsMB, "columns-mb", -1, "the keyword columns' memory budget in MiB, in process and in the worker (KEYWORD_COLUMNS_MB; -1: the default)")
	flag.BoolVar(&paging, "paging", true, "page through every gap of the big domain, 1,000 a page")
	flag.IntVar(&pagingPages, "paging-pages", 0, "stop the paging after this many pages (0: page through every gap; the count of distinct gaps is checked against the total only then)")
	flag.BoolVar(&compress, "gzip", true, "write the data files gzip-compressed")
	flag.BoolVar(&overHTTP, "http", false, "also time every question (the paging too) through HTTP: bin/api and bin/worker started on each database")
	flag.StringVar(&httpOpts.api, "api", "bin/api", "the api binary (-http)")
	flag.StringVar(&httpOpts.worker, "worker", "bin/worker", "the worker binary (-http)")
	flag.StringVar(&httpOpts.redisServer, "redis-url", cmp.Or(os.Getenv("REDIS_URL"), "redis://127.0.0.1:6379"),
		"Redis server for -http (default $REDIS_URL); its database number is ignored: a free one (15 down to 1) is claimed")
	filesDir := flag.String("files", "", "write the data files into this directory and keep them; files already there (same shape, sizes and seed) are used as they are")
	shapes := flag.String("shapes", shapeSpread+","+shapeSkewed, "data-set shapes, comma-separated: spread, skewed")
	flag.StringVar(&keptColumns, "columns-dir", "", "keep the column and word files in this directory (with -http, the worker's under worker/), and map those already there for the same data (\"\": a temporary directory, removed)")
	floorOnly := flag.String("floor", "", "only time the raw COPY of this data file into a table of -database-url's database (the import's floor), and stop")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the in-process answers to this file")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	httpOpts.ctl = *ctlBin
	if *floorOnly != "" {
		_, err := copyFloor(ctx, *dsn, *floorOnly, -1)
		return err
	}

	sizes, err := parseSizes(*kwFlag, *rkFlag, *bigFlag)
	if err != nil {
		return err
	}
	dir := *filesDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "benchscale"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}
	var results []result
	for _, s := range sizes {
		for _, shape := range strings.Split(*shapes, ",") {
			if shape != shapeSpread && shape != shapeSkewed {
				return fmt.Errorf("unknown shape %q", shape)
			}
			res, err := measure(ctx, s, shape, *domains, *seed, *rounds, *ctlBin, *dsn, dir, *keep)
			if err != nil {
				return err
			}
			results = append(results, res)
			printResults(results)
		}
	}
	return nil
}

func parseSizes(kw, rk, big string) ([]size, error) {
	ks, rs := strings.Split(kw, ","), strings.Split(rk, ",")
	bs := strings.Split(big, ",")
	if len(ks) != len(rs) {
		return nil, errors.New("-keywords and -rankings need as many sizes")
	}
	var out []size
	for i := range ks {
		k, err1 := strconv.Atoi(strings.TrimSpace(ks[i]))
		r, err2 := strconv.Atoi(strings.TrimSpace(rs[i]))
		if err := errors.Join(err1, err2); err != nil || k < 1000 || r < 10000 {
			return nil, fmt.Errorf("bad size %q/%q (at least 1000 keywords, 10000 rankings)", ks[i], rs[i])
		}
		b := r * 24 / 100
		if big != "" && i < len(bs) {
			v, err := strconv.Atoi(strings.TrimSpace(bs[i]))
			if err != nil {
				return nil, fmt.Errorf("bad -big %q", bs[i])
			}
			b = v
		}
		out = append(out, size{k, r, min(b, k)})
	}
	return out, nil
}

func measure(ctx context.Context, s size, shape string, domains int, seed uint64, rounds int, ctlBin, serverDSN, dir string, keep bool) (result, error) {
	res := result{size: s, shape: shape, timings: map[string][]time.Duration{}, httpTimings: map[string][]time.Duration{},
		answers: map[string]string{}}
	start := time.Now()
	d := generate(seed, s.keywords, s.rankings, s.big, domains)
	if shape == shapeSkewed {
		d = generateSkewed(seed, s.keywords, s.rankings, domains)
	}
	fmt.Fprintf(os.Stderr, "== %s: %d keywords, %d rankings (%d, %d, %d for the biggest domains), %d domains\n", shape,
		s.keywords, s.rankings, d.sizes[0], d.sizes[1], d.sizes[2], domains)
	if reuse != "" {
		return ask(ctx, res, d, mustDSN(serverDSN, reuse), rounds)
	}
	kwFile := filepath.Join(dir, fmt.Sprintf("keywords-%s-%d-%d-%d.csv.gz", shape, s.keywords, domains, seed))
	rkFile := filepath.Join(dir, fmt.Sprintf("rankings-%s-%d-%d-%d-%d.csv.gz", shape, s.rankings, s.big, domains, seed))
	if !exists(kwFile) || !exists(rkFile) {
		if err := d.writeKeywords(kwFile, seed); err != nil {
			return res, err
		}
		if err := d.writeRankings(rkFile, seed); err != nil {
			return res, err
		}
	}
	fmt.Fprintf(os.Stderr, "generated in %v\n", time.Since(start).Round(time.Millisecond))

	dbName := fmt.Sprintf("contentapi_benchscale_%d_%d_%s", os.Getpid(), s.keywords, shape)
	dsn, err := withDatabase(serverDSN, dbName)
	if err != nil {
		return res, err
	}
	if !keep {
		defer dropDatabase(serverDSN, dbName)
	} else {
		fmt.Fprintf(os.Stderr, "database kept: %s\n", dbName)
	}
	if _, err := ctl(ctx, ctlBin, dsn, "migrate"); err != nil {
		return res, err
	}
	if err := settle(ctx, dsn); err != nil {
		return res, err
	}
	if res.importKW, err = ctl(ctx, ctlBin, dsn, "import", "keywords", kwFile); err != nil {
		return res, err
	}
	res.importKW.rows = s.keywords
	// The floor is taken before the ranking import and after the imports, and the import
	// is measured against their mean: on a disk whose speed moves (35–60 s for one file's
	// floor within an hour on one machine), one floor says as much about the disk's
	// moment as about the import.
	if res.floorBefore, err = copyFloor(ctx, dsn, rkFile, s.rankings); err != nil {
		return res, err
	}
	if err := settle(ctx, dsn); err != nil {
		return res, err
	}
	if res.importRK, err = ctl(ctx, ctlBin, dsn, "import", "rankings", rkFile); err != nil {
		return res, err
	}
	res.importRK.rows = s.rankings
	if reimport {
		if err := settle(ctx, dsn); err != nil {
			return res, err
		}
		if res.reimport, err = ctl(ctx, ctlBin, dsn, "import", "rankings", rkFile); err != nil {
			return res, err
		}
		res.reimport.rows = s.rankings
	}
	if res.floorRK, err = copyFloor(ctx, dsn, rkFile, s.rankings); err != nil {
		return res, err
	}

	if !askQuestions {
		return res, nil
	}
	return ask(ctx, res, d, dsn, rounds)
}

// exists reports whether a data file of an earlier run (-files) is there to use.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func mustDSN(server, name string) string {
	dsn, err := withDatabase(server, name)
	if err != nil {
		panic(err)
	}
	return dsn
}

// ask times the questions against the database, and with -http each through the API after
// its in-process rounds.
func ask(ctx context.Context, res result, d *dataset, dsn string, rounds int) (_ result, err error) {
	pool, err := postgres.Connect(ctx, dsn)
	if err != nil {
		return res, err
	}
	defer pool.Close()
	var stack *httpStack
	if overHTTP {
		if stack, err = startHTTP(ctx, httpOpts, dsn); err != nil {
			return res, err
		}
		defer func() { stack.stop(err != nil && ctx.Err() == nil) }() // logs kept after a failure, not an interrupt
	}
	// The data set's counts (a minute at 30M rankings) are left out of a run asking some of
	// the questions only.
	if only == "" {
		if err := pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT (domain, keyword_norm)) FROM domain_rankings`).Scan(&res.domainRows, &res.distinct); err != nil {
			return res, err
		}
	}
	opts := []local.Option{local.WithoutWordIndexes()}
	if wordIndexes {
		opts = []local.Option{local.WaitForWordIndexes(), local.WithWordIndexReport(func(b local.WordIndexBuild) {
			fmt.Fprintf(os.Stderr, "word index %s/%s: %d keywords, %d words, %d MB, built in %s (peak RSS %d MB), err %v\n",
				b.Country, b.Language, b.Keywords, b.Words, b.Bytes>>20, b.Took.Round(time.Millisecond), peakRSS(os.Getpid())>>20, b.Err)
		})}
	}
	if columnsMB >= 0 {
		opts = append(opts, local.WithColumnsBudget(int64(columnsMB)<<20))
	}
	mapped := int64(local.DefaultMappedLimit)
	if mappedMB >= 0 {
		mapped = int64(mappedMB) << 20
	}
	local.SetMappedMemoryLimit(mapped)
	columnsDir := keptColumns
	if columnsDir == "" {
		dir, err := os.MkdirTemp("", "benchscale-columns")
		if err != nil {
			return res, err
		}
		defer os.RemoveAll(dir) // the mappings outlive the files' names
		columnsDir = dir
	}
	kp, err := timeColumns(ctx, pool, opts, columnsDir, &res)
	if err != nil {
		return res, err
	}
	b := &report.Builder{Keywords: kp, Clock: clock.Real{},
		Crawler: crawler.New(crawler.Config{Timeout: time.Millisecond, RequestTimeout: time.Millisecond}),
		Cursors: report.NewCursors([]byte("benchscale cursor key, 32 bytes or more"))}
	ctx = report.WithAccount(ctx, "benchscale")
	for _, q := range questions(d) {
		if !strings.Contains(q.kind, only) {
			continue
		}
		for i := 0; i <= rounds; i++ {
			t0 := time.Now()
			summary, err := q.ask(ctx, b)
			took := time.Since(t0)
			if err != nil {
				return res, fmt.Errorf("%s %s: %w", q.kind, q.name, err)
			}
			if i == 0 {
				res.answers[q.kind+" "+q.name] = summary
				continue // warm-up
			}
			if summary == noSecondPage {
				break
			}
			res.timings[q.kind] = append(res.timings[q.kind], took)
		}
		if stack != nil {
			if err := askHTTP(ctx, stack, &res, q, rounds); err != nil {
				return res, err
			}
		}
	}
	fmt.Fprintf(os.Stderr, "in-process answers: peak RSS %d MB, the mapped files' pages let go %d times\n", peakRSS(os.Getpid())>>20, local.MappedTrims())
	if paging && strings.Contains(pagingKind, only) {
		if err := pageAll(ctx, b, &res, "site0300.example", d.domains[0]); err != nil {
			return res, err
		}
		if stack != nil {
			if err := pageAllHTTP(ctx, stack, &res, "site0300.example", d.domains[0]); err != nil {
				return res, err
			}
		}
	}
	return res, nil
}

// timeColumns times the keyword columns made ready twice over a column directory of its
// own (dir, where the word indexes' files go too): by a provider that reads them from the
// database and writes their files, then by one that maps those files (as a second worker of a machine does). It returns the second,
// which answers the in-process questions.
func timeColumns(ctx context.Context, pool *pgxpool.Pool, opts []local.Option, dir string, res *result) (*local.Provider, error) {
	var warned error
	opts = append(slices.Clip(opts), local.WithColumnFiles(dir, func(err error) { warned = errors.Join(warned, err) }))
	var p *local.Provider
	for _, took := range []*time.Duration{&res.columnsDB, &res.columnsFile} {
		p = local.New(pool, opts...)
		t0 := time.Now()
		if err := p.WarmColumns(ctx); err != nil {
			return nil, err
		}
		*took = time.Since(t0)
	}
	if warned != nil {
		return nil, warned
	}
	db, file := local.ColumnLoadCounts()
	fmt.Fprintf(os.Stderr, "keyword columns: %d market(s) read from the database in %s, %d mapped from their files in %s\n",
		db, res.columnsDB.Round(time.Millisecond), file, res.columnsFile.Round(time.Millisecond))
	return p, nil
}

// pagingKind names the timings of pageAll.
const pagingKind = "gaps paging 1000 a page"

// pageAll pages through every gap of the domain against the competitor, 1,000 a page with
// next_cursor, in process, timing each page, and checks that each gap comes back exactly
// once.
func pageAll(ctx context.Context, b *report.Builder, res *result, domain, competitor string) error {
	return walkGaps(res, res.timings, domain, competitor, func(r report.GapsRequest) (report.GapsResult, error) {
		if err := r.Normalize(report.Options{}); err != nil {
			return report.GapsResult{}, err
		}
		return b.Gaps(ctx, r)
	})
}

// pageAllHTTP is pageAll through the API.
func pageAllHTTP(ctx context.Context, s *httpStack, res *result, domain, competitor string) error {
	return walkGaps(res, res.httpTimings, domain, competitor, func(r report.GapsRequest) (report.GapsResult, error) {
		var page report.GapsResult
		status, data, err := s.post(ctx, "/v1/keywords/gaps", s.key, mustJSON(r))
		if err != nil {
			return page, err
		}
		if status != http.StatusOK {
			return page, fmt.Errorf("POST /v1/keywords/gaps: status %d: %.500s", status, data)
		}
		return page, json.Unmarshal(data, &page)
	})
}

// walkGaps pages through the gaps with ask, timing each page into timings, and records
// (or, through HTTP after in process, checks) what came back.
func walkGaps(res *result, timings map[string][]time.Duration, domain, competitor string, ask func(report.GapsRequest) (report.GapsResult, error)) error {
	limit := 1000
	seen := map[string]bool{}
	cursor := ""
	pages, total := 0, 0
	answer := ""
	for {
		r := report.GapsRequest{Domain: domain, Competitors: []string{competitor}, Limit: &limit}
		r.Cursor = cursor
		t0 := time.Now()
		page, err := ask(r)
		timings[pagingKind] = append(timings[pagingKind], time.Since(t0))
		if err != nil {
			return fmt.Errorf("%s, page %d: %w", pagingKind, pages+1, err)
		}
		pages++
		total = page.Total
		for _, g := range page.Gaps {
			if seen[g.Keyword] {
				return fmt.Errorf("%s: %q came back twice (page %d)", pagingKind, g.Keyword, pages)
			}
			seen[g.Keyword] = true
		}
		if page.NextCursor == nil {
			break
		}
		if pagingPages > 0 && pages == pagingPages {
			answer = fmt.Sprintf("the first %d pages, %d distinct gaps of total %d", pages, len(seen), total)
			break
		}
		cursor = *page.NextCursor
	}
	if answer == "" {
		if len(seen) != total {
			return fmt.Errorf("%s: %d gaps came back, total %d", pagingKind, len(seen), total)
		}
		answer = fmt.Sprintf("%d pages, %d distinct gaps = total %d", pages, len(seen), total)
	}
	if want, ok := res.answers[pagingKind]; ok && want != answer {
		return fmt.Errorf("%s: over HTTP %q, in process %q", pagingKind, answer, want)
	}
	res.answers[pagingKind] = answer
	return nil
}

// reuse and only are the -reuse and -only flags.
var reuse, only string

// overHTTP is -http; httpOpts the binaries and Redis server it uses.
var (
	overHTTP bool
	httpOpts httpOptions
)

// askQuestions says whether answers are timed (-questions); paging whether every gap of
// the big domain is paged through (-paging).
var askQuestions, paging = true, true

// reimport is -reimport.
var reimport = true

// pagingPages is -paging-pages: the pages paged through, every one when 0.
var pagingPages int

// columnsMB is the keyword columns' budget in MiB (-columns-mb) of the in-process answers
// and of the worker (-http); -1 keeps the service's default.
var columnsMB = -1

// keptColumns is -columns-dir.
var keptColumns string

// mappedMB is the bound in MiB of the mapped files' pages resident (-mapped-mb) in process
// and in the worker; -1 keeps the service's default (local.DefaultMappedLimit).
var mappedMB = -1

// wordIndexes makes the in-process research read the word indexes.
var wordIndexes = true

// workerMemLimit is the Go runtime's soft memory limit (GOMEMLIMIT) of the api and worker
// (-gomemlimit); "" sets none.
var workerMemLimit string

// ctl runs the ctl binary against the bench database and measures it.
func ctl(ctx context.Context, bin, dsn string, args ...string) (phase, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dsn)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return phase{}, err
	}
	peak := watchPeakRSS(cmd.Process.Pid)
	err := cmd.Wait()
	p := phase{elapsed: time.Since(start), out: strings.TrimSpace(buf.String()), maxRSS: peak()}
	out := buf.Bytes()
	if err != nil {
		return p, fmt.Errorf("ctl %s: %w: %s", strings.Join(args, " "), err, out)
	}
	fmt.Fprintf(os.Stderr, "ctl %s: %v, peak RSS %d MB\n%s\n", strings.Join(args, " "), p.elapsed.Round(time.Millisecond), p.maxRSS>>20, p.out)
	return p, nil
}

// watchPeakRSS samples the process's VmHWM (its peak resident set) every 10 ms until the
// returned function is called, which returns the highest value seen. rusage's Maxrss is no
// use here: a child started by a Go program shares the parent's memory until it execs, so
// Linux reports the larger parent's peak for it.
func watchPeakRSS(pid int) func() int64 {
	var peak atomic.Int64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			if b := peakRSS(pid); b > peak.Load() {
				peak.Store(b)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() int64 {
		close(done)
		<-stopped
		return peak.Load()
	}
}

func withDatabase(dsn, name string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

func dropDatabase(serverDSN, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, serverDSN)
	if err != nil {
		fmt.Fprintln(os.Stderr, "drop database:", err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		fmt.Fprintln(os.Stderr, "drop database:", err)
	}
}

// printResults prints the sizes side by side.
func printResults(results []result) {
	fmt.Println()
	width := 24
	withHTTP := slices.ContainsFunc(results, func(r result) bool { return len(r.httpTimings) > 0 })
	if withHTTP {
		width = 32
	}
	row := func(label string, f func(r result) string) {
		fmt.Printf("%-46s", label)
		for _, r := range results {
			fmt.Printf(" %*s", width, f(r))
		}
		fmt.Println()
	}
	row("keywords / rankings", func(r result) string { return fmt.Sprintf("%d / %d", r.keywords, r.rankings) })
	row("shape", func(r result) string { return r.shape })
	row("import keywords rows/s", func(r result) string { return rate(r.importKW) })
	row("import keywords peak RSS", func(r result) string { return fmt.Sprintf("%d MB", r.importKW.maxRSS>>20) })
	row("import rankings rows/s", func(r result) string { return rate(r.importRK) })
	row("import rankings peak RSS", func(r result) string { return fmt.Sprintf("%d MB", r.importRK.maxRSS>>20) })
	row("re-import rankings rows/s", func(r result) string { return rate(r.reimport) })
	row("raw COPY of the rankings file rows/s", func(r result) string { return rate(r.floorBefore) + ", after: " + rate(r.floorRK) })
	row("import rankings, share of raw COPY rows/s", func(r result) string {
		return fmt.Sprintf("%.0f%%", 100*(r.floorBefore.elapsed.Seconds()+r.floorRK.elapsed.Seconds())/2/r.importRK.elapsed.Seconds())
	})
	row("keyword columns ready: database / file", func(r result) string {
		return fmt.Sprintf("%.1fs / %.0fms", r.columnsDB.Seconds(), float64(r.columnsFile.Microseconds())/1000)
	})
	row("ranking rows / distinct kw+domain", func(r result) string { return fmt.Sprintf("%d / %d", r.domainRows, r.distinct) })
	kinds := []string{}
	for _, r := range results {
		for k := range r.timings {
			if !slices.Contains(kinds, k) {
				kinds = append(kinds, k)
			}
		}
	}
	slices.Sort(kinds)
	if withHTTP {
		row("p50 / p95", func(result) string { return "in process | HTTP" })
	}
	for _, k := range kinds {
		row(k+" p50 / p95", func(r result) string {
			cell := p50p95(r.timings[k])
			if withHTTP {
				http := "-"
				if t := r.httpTimings[k]; len(t) > 0 {
					http = p50p95(t)
				}
				cell += " | " + http
			}
			return cell
		})
	}
	fmt.Println()
	for _, r := range results {
		keys := make([]string, 0, len(r.answers))
		for k := range r.answers {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		fmt.Printf("answers at %d keywords, %s:\n", r.keywords, r.shape)
		for _, k := range keys {
			fmt.Printf("  %-40s %s\n", k, r.answers[k])
		}
	}
}

// p50p95 is "p50 / p95 ms" of the durations.
func p50p95(t []time.Duration) string {
	t = slices.Clone(t)
	slices.Sort(t)
	return fmt.Sprintf("%s / %s", strings.TrimSuffix(ms(pct(t, 50)), " ms"), ms(pct(t, 95)))
}

func rate(p phase) string {
	return fmt.Sprintf("%.0f (%.1fs)", float64(p.rows)/p.elapsed.Seconds(), p.elapsed.Seconds())
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d.Microseconds())/1000) }

// pct is the nearest-rank percentile of sorted durations.
func pct(t []time.Duration, p int) time.Duration {
	if len(t) == 0 {
		return 0
	}
	i := (p*len(t) + 99) / 100
	return t[max(i, 1)-1]
}

// peakRSS is the process's peak resident set (VmHWM) in bytes, 0 when it cannot be read.
func peakRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}
