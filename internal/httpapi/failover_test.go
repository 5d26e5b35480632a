package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/contentapi/contentapi/internal/app"
	"github.com/contentapi/contentapi/internal/app/apptest"
	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/config"
	"github.com/contentapi/contentapi/internal/job"
	"github.com/contentapi/contentapi/internal/testenv"
)

// failoverCall is one call of the load: what, when, and how it was answered.
type failoverCall struct {
	research   bool
	start, end time.Time
	status     int
	code       string
	err        error
}

func (c failoverCall) ok() bool { return c.err == nil && c.status >= 200 && c.status < 300 }

// The service on Redis through Sentinel (a master, a replica, three sentinels, all real)
// loses its master to SIGKILL under load: authenticated calls and analysis calls whose jobs
// reserve credits and run on a real asynq worker, API and worker clients made from
// REDIS_SENTINEL_MASTER and REDIS_SENTINEL_ADDRS as the binaries make them. No call is
// answered 500 (a call that needs Redis while there is no master gets the documented 503
// SERVICE_UNAVAILABLE with Retry-After), the service answers again within 10 s of the
// master's death, every job ends (succeeded and charged, or failed and refunded), and the
// ledger is exact: each account's grants are its balance plus what its succeeded jobs were
// charged, nothing left reserved, and the API's usage says that balance.
func TestSentinelFailoverUnderLoad(t *testing.T) {
	ctx := context.Background()
	rs := testenv.StartRedisSentinel(t, testenv.SentinelTimings{DownAfter: time.Second, FailoverTimeout: 2 * time.Second})
	jobCfg := apptest.JobConfig
	jobCfg.EnqueueGrace = time.Second
	st := startStack(t, redisFrom(t, stackConfig{jobCfg: jobCfg, sync: 5 * time.Second}, map[string]string{
		"REDIS_URL": "redis://sentinel-named-master/0", "REDIS_SENTINEL_MASTER": testenv.SentinelMaster,
		"REDIS_SENTINEL_ADDRS": strings.Join(rs.Sentinels, ",")}))

	const accounts, granted = 4, 100000
	keys := make([]string, accounts)
	ids := make([]uuid.UUID, accounts)
	for i := range keys {
		keys[i] = register(t, st.testServer)
		ids[i] = accountID(t, st.testServer, keys[i])
		if err := st.Accounts.SetPlan(ctx, ids[i], "enterprise", 1000000, 0); err != nil {
			t.Fatal(err)
		}
		grantCredits(t, st, keys[i], granted)
	}
	grants := perKey[uuid.UUID](t, `SELECT account_id, sum(amount) FROM credit_grants WHERE account_id = ANY($1) GROUP BY 1`, ids)

	// The load: each worker alternates a zero-credit call and an analysis call.
	client := &http.Client{Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	results := make(chan failoverCall, 1<<16)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var stopOnce sync.Once
	stopLoad := func() { stopOnce.Do(func() { close(stop); wg.Wait() }) }
	t.Cleanup(stopLoad) // before the server stops, should the test end early
	for w := range 2 * accounts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := keys[w%accounts]
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				research := i%2 == 1
				c := failoverCall{research: research, start: time.Now()}
				if research {
					c.status, c.code, c.err = failoverDo(client, "POST", st.URL+"/v1/keywords/research", key,
						map[string]any{"domain": "example.com", "topic": fmt.Sprintf("coffee %d", i%7)})
				} else {
					c.status, c.code, c.err = failoverDo(client, "GET", st.URL+"/v1/usage", key, nil)
				}
				c.end = time.Now()
				select {
				case results <- c:
				case <-stop:
					return
				}
			}
		}()
	}
	var calls []failoverCall
	next := func() failoverCall {
		t.Helper()
		select {
		case c := <-results:
			calls = append(calls, c)
			return c
		case <-time.After(30 * time.Second):
			t.Fatal("no call answered for 30 s")
			return failoverCall{}
		}
	}
	for done := 0; done < 20; {
		if c := next(); c.research && c.ok() {
			done++
		}
	}

	died := time.Now()
	rs.Kill(rs.Master)
	killed := time.Now()
	rs.AwaitMaster(t, rs.Replica, 30*time.Second)
	switched := time.Since(died)

	// Answering again: 200 calls in a row, 20 of them analysis calls, all made after the
	// master died.
	for inRow, researchInRow := 0, 0; inRow < 200 || researchInRow < 20; {
		c := next()
		switch {
		case c.start.Before(killed):
		case c.ok():
			inRow++
			if c.research {
				researchInRow++
			}
		default:
			inRow, researchInRow = 0, 0
		}
		if time.Since(died) > 30*time.Second {
			t.Fatalf("the service does not answer again 30 s after the master died")
		}
	}
	stopLoad()
	close(results)
	for c := range results {
		calls = append(calls, c)
	}

	// What the callers saw.
	statuses := map[int]int{}
	var lastFailed time.Time
	var firstFail, lastFail time.Duration
	for _, c := range calls {
		if c.err != nil {
			t.Errorf("call at %s: %v", c.start.Sub(died), c.err)
			continue
		}
		statuses[c.status]++
		switch {
		case c.ok():
		case c.status == 503 && c.code == apperr.ServiceUnavailable:
			if c.start.After(lastFailed) {
				lastFailed = c.start
			}
			if firstFail == 0 || c.start.Sub(died) < firstFail {
				firstFail = c.start.Sub(died)
			}
			lastFail = max(lastFail, c.end.Sub(died))
		default:
			t.Errorf("call at %s (research %v): %d %s, want 2xx, or 503 %s while there is no master",
				c.start.Sub(died), c.research, c.status, c.code, apperr.ServiceUnavailable)
		}
	}
	again := time.Duration(-1)
	for _, c := range calls {
		if c.ok() && c.start.After(killed) && c.start.After(lastFailed) && (again < 0 || c.end.Sub(died) < again) {
			again = c.end.Sub(died)
		}
	}
	if again < 0 || again > 10*time.Second {
		t.Errorf("answering again %s after the master died, want within 10 s", again)
	}
	t.Logf("%d calls %v; the sentinels named the new master %s after the master died; 503s from %s to %s; answering again after %s",
		len(calls), statuses, switched.Round(time.Millisecond), firstFail.Round(time.Millisecond),
		lastFail.Round(time.Millisecond), again.Round(time.Millisecond))

	// Every job ends. A task sent to the old master just before it died may not have
	// reached the replica: the worker's sweep sends it again, as in production once the
	// enqueue grace has passed (the test's clock is moved past it). A task the new master
	// still holds under the job's task id (taken, or waiting out a retry's delay, when the
	// old one died) cannot be sent again: asynq hands it on itself, a taken one 30 s after
	// its 30 s lease ends. So a job may take a minute and more to end, and the bound is 90 s.
	deadline := time.Now().Add(90 * time.Second)
	var swept job.SweepResult
	for {
		var open int
		if err := testPool(t).QueryRow(ctx, `SELECT count(*) FROM jobs WHERE account_id = ANY($1) AND status IN ('queued', 'running')`,
			ids).Scan(&open); err != nil {
			t.Fatal(err)
		}
		if open == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d jobs still open 90 s after the load: %v", open, openJobs(t, ids))
		}
		st.Clock.Advance(jobCfg.EnqueueGrace)
		r, err := st.Jobs.Sweep(ctx)
		if err != nil {
			t.Fatal(err)
		}
		swept.Resent, swept.Resumed, swept.Refunded = swept.Resent+r.Resent, swept.Resumed+r.Resumed, swept.Refunded+r.Refunded
		// Polling the jobs table: the jobs' ends are signalled per job, not as a whole.
		time.Sleep(50 * time.Millisecond)
	}

	// Credits are exact: grants = balance + settled charges, nothing reserved; every
	// succeeded job is charged its cost, every failed one refunded.
	var mismatched int
	if err := testPool(t).QueryRow(ctx, `SELECT count(*) FROM jobs j JOIN reservations r ON r.id = j.reservation_id
		WHERE j.account_id = ANY($1) AND NOT ((j.status = 'succeeded' AND r.status = 'settled' AND r.amount = j.cost)
			OR (j.status = 'succeeded' AND j.cost = 0 AND r.status = 'refunded') OR (j.status = 'failed' AND r.status = 'refunded'))`,
		ids).Scan(&mismatched); err != nil {
		t.Fatal(err)
	}
	if mismatched != 0 {
		t.Errorf("%d jobs whose reservation does not match their end", mismatched)
	}
	if after := perKey[uuid.UUID](t, `SELECT account_id, sum(amount) FROM credit_grants WHERE account_id = ANY($1) GROUP BY 1`, ids); !maps.Equal(after, grants) {
		t.Errorf("grants changed under the load: %v, then %v", grants, after)
	}
	balances := perKey[uuid.UUID](t, `SELECT account_id, sum(remaining) FROM credit_grants WHERE account_id = ANY($1) GROUP BY 1`, ids)
	settled := perKey[uuid.UUID](t, `SELECT account_id, sum(amount) FROM reservations WHERE account_id = ANY($1) AND status = 'settled' GROUP BY 1`, ids)
	reserved := perKey[uuid.UUID](t, `SELECT account_id, sum(amount) FROM reservations WHERE account_id = ANY($1) AND status = 'reserved' GROUP BY 1`, ids)
	charged := perKey[uuid.UUID](t, `SELECT account_id, sum(cost) FROM jobs WHERE account_id = ANY($1) AND status = 'succeeded' GROUP BY 1`, ids)
	jobsBy := perKey[string](t, `SELECT status, count(*) FROM jobs WHERE account_id = ANY($1) GROUP BY 1`, ids)
	for i, id := range ids {
		if balances[id]+settled[id] != grants[id] || reserved[id] != 0 || settled[id] != charged[id] {
			t.Errorf("account %d: granted %d, balance %d, settled %d, reserved %d, succeeded jobs' cost %d: want balance + settled = granted, none reserved, settled = cost",
				i, grants[id], balances[id], settled[id], reserved[id], charged[id])
		}
		if u := do(t, "GET", st.URL+"/v1/usage", keys[i], nil); u.data()["credits_remaining"] != float64(balances[id]) {
			t.Errorf("account %d: usage says %v credits remaining, the ledger %d", i, u.data()["credits_remaining"], balances[id])
		}
	}
	t.Logf("jobs %v (the sweep sent %d again, resumed %d, refunded %d); credits settled %d", jobsBy,
		swept.Resent, swept.Resumed, swept.Refunded, sumOf(settled))
}

// openJobs describes the accounts' jobs not ended: status, attempts, age and heartbeat.
func openJobs(t *testing.T, ids []uuid.UUID) string {
	t.Helper()
	var open string
	if err := testPool(t).QueryRow(context.Background(), `SELECT coalesce(string_agg(id::text || ' ' || status ||
		' attempts ' || attempts || ' created ' || created_at || ' heartbeat ' || coalesce(heartbeat_at::text, 'none'), '; '), '')
		FROM jobs WHERE account_id = ANY($1) AND status IN ('queued', 'running')`, ids).Scan(&open); err != nil {
		t.Fatal(err)
	}
	return open
}

// redisFrom is sc with the API's and the worker's Redis clients made as the binaries make
// them from the configuration variables env (REDIS_URL and the Sentinel or Cluster ones).
func redisFrom(t *testing.T, sc stackConfig, env map[string]string) stackConfig {
	t.Helper()
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if sc.redis, err = app.ConnectRedis(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	rdb := sc.redis
	t.Cleanup(func() { _ = rdb.Close() })
	if sc.workerRedis, err = app.AsynqRedis(cfg); err != nil {
		t.Fatal(err)
	}
	return sc
}

// failoverDo makes one call and returns its status and error code.
func failoverDo(client *http.Client, method, url, key string, body any) (int, string, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, url, rd)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return res.StatusCode, "", err
	}
	r := response{Status: res.StatusCode}
	_ = json.Unmarshal(raw, &r.Body)
	return res.StatusCode, r.errCode(), nil
}

// perKey reads the (key, number) rows sql gives for the accounts ids ($1).
func perKey[K comparable](t *testing.T, sql string, ids []uuid.UUID) map[K]int {
	t.Helper()
	rows, err := testPool(t).Query(context.Background(), sql, ids)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[K]int{}
	for rows.Next() {
		var k K
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			t.Fatal(err)
		}
		out[k] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func sumOf(m map[uuid.UUID]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// The service runs on a Redis Cluster of three masters (REDIS_CLUSTER_ADDRS): registration
// (its limit), the gate, usage, and analysis calls whose jobs go through asynq to a real
// worker and are charged, for accounts whose keys fall in different slots.
func TestClusterServes(t *testing.T) {
	ctx := context.Background()
	nodes := testenv.StartRedisCluster(t, 3)
	st := startStack(t, redisFrom(t, stackConfig{}, map[string]string{
		"REDIS_URL": "redis://cluster-seeds/0", "REDIS_CLUSTER_ADDRS": strings.Join(nodes, ",")}))
	for i := range 3 {
		key := register(t, st.testServer)
		r := do(t, "POST", st.URL+"/v1/keywords/research", key, map[string]any{"domain": "example.com", "topic": "coffee"})
		if r.Status != 200 {
			t.Fatalf("account %d: research on the cluster: %d %s", i, r.Status, r.Raw)
		}
		u := do(t, "GET", st.URL+"/v1/usage", key, nil)
		if u.Status != 200 || u.data()["credits_used"] != float64(5) {
			t.Fatalf("account %d: usage on the cluster: %d %s", i, u.Status, u.Raw)
		}
	}
	used := 0
	for _, n := range nodes {
		c := redis.NewClient(&redis.Options{Addr: n})
		if keys, err := c.DBSize(ctx).Result(); err == nil && keys > 0 {
			used++
		}
		_ = c.Close()
	}
	if used < 2 {
		t.Errorf("keys on %d of the cluster's 3 masters, want them spread", used)
	}
}
