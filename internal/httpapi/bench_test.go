package httpapi_test

import (
	"context"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/valyala/fasthttp"

	"github.com/contentapi/contentapi/internal/app"
	"github.com/contentapi/contentapi/internal/credits"
	"github.com/contentapi/contentapi/internal/httpapi"
	"github.com/contentapi/contentapi/internal/testenv"
)

// loadResult is what closed-loop load runs measured: every successful request's latency.
type loadResult struct {
	lat    []time.Duration
	took   time.Duration
	errors int
}

// add is r with more's requests and time.
func (r loadResult) add(more loadResult) loadResult {
	return loadResult{lat: append(r.lat, more.lat...), took: r.took + more.took, errors: r.errors + more.errors}
}

func (r loadResult) rps() float64 { return float64(len(r.lat)) / r.took.Seconds() }

// percentile is the q-th latency (0 < q < 1); the latencies must be sorted.
func (r loadResult) percentile(q float64) time.Duration { return r.lat[int(float64(len(r.lat))*q)] }

func (r loadResult) sort() { sort.Slice(r.lat, func(i, j int) bool { return r.lat[i] < r.lat[j] }) }

// runLoad drives url with conns concurrent connections for d and records every request's
// latency; the load generator runs on the same machine as the server.
func runLoad(b *testing.B, url string, keys []string, conns int, d time.Duration) loadResult {
	b.Helper()
	client := &fasthttp.Client{MaxConnsPerHost: conns}
	var mu sync.Mutex
	var lat []time.Duration
	errs := 0
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			local := make([]time.Duration, 0, 4096)
			req, res := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(res)
			req.SetRequestURI(url)
			if len(keys) > 0 {
				req.Header.Set("Authorization", "Bearer "+keys[i%len(keys)])
			}
			bad := 0
			for time.Now().Before(deadline) {
				start := time.Now()
				if err := client.Do(req, res); err != nil || res.StatusCode() != 200 {
					bad++
					continue
				}
				local = append(local, time.Since(start))
			}
			mu.Lock()
			lat = append(lat, local...)
			errs += bad
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	if len(lat) == 0 {
		b.Fatal("no successful request")
	}
	return loadResult{lat: lat, took: d, errors: errs}
}

// redisCommands is the number of commands the Redis server has run (INFO commandstats, the
// INFO itself included), Lua scripts' own calls counted with them.
func redisCommands(b *testing.B, rdb *redis.Client) int64 {
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for _, line := range strings.Split(info, "\n") {
		if _, rest, ok := strings.Cut(line, ":calls="); ok && strings.HasPrefix(line, "cmdstat_") {
			calls, _, _ := strings.Cut(rest, ",")
			v, _ := strconv.ParseInt(calls, 10, 64)
			n += v
		}
	}
	return n
}

// BenchmarkUsageVsBareFiber compares authenticated GET /v1/usage (key check and admission
// from the replica's lease of the account's rate limit, renewed from Redis a few times a
// second; the usage answer cached until the account's credits change) with a bare Fiber handler: 50 connections each, one account per connection (50
// API clients).
func BenchmarkUsageVsBareFiber(b *testing.B) {
	const conns, slices = 50, 5
	bare := fiber.New(fiber.Config{DisableStartupMessage: true})
	bare.Get("/", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"success": true}) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = bare.Listener(ln) }()
	defer bare.Shutdown()

	// Log as cmd/api does: buffered JSON lines, here to a file.
	f, err := os.CreateTemp(b.TempDir(), "api-log")
	if err != nil {
		b.Fatal(err)
	}
	logOut := app.NewLogWriter(f, 100*time.Millisecond)
	defer logOut.Close()
	uuid.EnableRandPool()
	s := startServer(b, func(d *httpapi.Deps) {
		d.Log = app.NewLogger(logOut, "info")
		d.AccessLogSample, d.AccessLogSlow = 100, 500*time.Millisecond // ACCESS_LOG_SAMPLE, ACCESS_LOG_SLOW defaults
	})
	keys := make([]string, conns)
	for i := range keys {
		keys[i] = register(b, s)
		if err := s.Accounts.SetPlan(context.Background(), accountID(b, s, keys[i]), "enterprise", 1_000_000, 0); err != nil {
			b.Fatal(err)
		}
	}
	rdb := testenv.Redis(b) // the test binary's own redis-server: its command counts are this run's
	bareURL := "http://" + ln.Addr().String() + "/"
	// One second of each load first, untimed: the figures are the steady state's, after every
	// connection is open and each account's key, usage answer and lease size are warm (a
	// cold start's first second leases one slot per call while an account's rate is learnt).
	runLoad(b, bareURL, nil, conns, time.Second)
	runLoad(b, s.URL+"/v1/usage", keys, conns, time.Second)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// The two loads take turns a second at a time, so that a change in the machine's
		// speed during the run (a shared VM's neighbours) falls on both alike.
		var base, usage loadResult
		var cmds int64
		for slice := 0; slice < slices; slice++ {
			base = base.add(runLoad(b, bareURL, nil, conns, time.Second))
			before := redisCommands(b, rdb)
			usage = usage.add(runLoad(b, s.URL+"/v1/usage", keys, conns, time.Second))
			cmds += redisCommands(b, rdb) - before - 1 // the INFO itself
		}
		base.sort()
		usage.sort()
		b.ReportMetric(float64(cmds)/float64(len(usage.lat)), "redis-cmds/req")
		b.ReportMetric(base.rps(), "bare-req/s")
		b.ReportMetric(float64(base.percentile(0.5).Microseconds())/1000, "bare-p50-ms")
		b.ReportMetric(float64(base.percentile(0.99).Microseconds())/1000, "bare-p99-ms")
		b.ReportMetric(usage.rps(), "usage-req/s")
		b.ReportMetric(float64(usage.percentile(0.5).Microseconds())/1000, "usage-p50-ms")
		b.ReportMetric(float64(usage.percentile(0.99).Microseconds())/1000, "usage-p99-ms")
		b.ReportMetric(100*usage.rps()/base.rps(), "usage-%-of-bare")
		b.ReportMetric(float64(usage.percentile(0.99))/float64(base.percentile(0.99)), "usage-p99-x-bare")
		if usage.errors > 0 {
			b.Errorf("%d failed usage requests", usage.errors)
		}
	}
	_ = s.App.Shutdown()
}

// trivialRunner is a job with no work of its own, so a round trip measures only the path:
// validate, reserve and write the job, enqueue, worker claim, settle, signal, answer.
type trivialRunner struct{}

func (trivialRunner) Run(context.Context, string, string, []byte) (any, error) {
	return map[string]any{"ok": true}, nil
}

// BenchmarkJobRoundTrip measures POST /v1/keywords/research answered synchronously through
// a real asynq worker, one call at a time, and reports p50 and p99.
func BenchmarkJobRoundTrip(b *testing.B) {
	s := startStack(b, stackConfig{runner: trivialRunner{}})
	key := register(b, s.testServer)
	acc := accountID(b, s.testServer, key)
	if err := s.Accounts.SetPlan(context.Background(), acc, "enterprise", 1_000_000_000, 0); err != nil {
		b.Fatal(err)
	}
	now := s.Clock.Now()
	if _, err := s.Ledger.Grant(context.Background(), credits.Grant{AccountID: acc, Amount: 100_000_000, IssuedAt: now,
		ExpiresAt: now.Add(24 * time.Hour), Source: credits.SourceOperator, SourceRef: "bench"}); err != nil {
		b.Fatal(err)
	}
	body := []byte(`{"domain":"example.com","topic":"coffee"}`)
	client := &fasthttp.Client{}
	req, res := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	req.SetRequestURI(s.URL + "/v1/keywords/research")
	req.Header.SetMethod("POST")
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.SetContentType("application/json")
	req.SetBody(body)
	n := b.N
	if n < 1000 {
		n = 1000
	}
	lat := make([]time.Duration, 0, n)
	b.ResetTimer()
	for i := 0; i < n; i++ {
		start := time.Now()
		if err := client.Do(req, res); err != nil || res.StatusCode() != 200 {
			b.Fatalf("round trip: %v %d %s", err, res.StatusCode(), res.Body())
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
