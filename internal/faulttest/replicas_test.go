package faulttest

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestAdmissionAcrossReplicas runs three real API processes on one database and one Redis,
// each admitting requests from its own leases of the accounts' rate limits: a plan of N
// calls a minute admits at most N across them, a key revoked through one replica is refused
// by every replica within a second, and a plan change made by ctl (another process) applies
// on every replica within a second.
func TestAdmissionAcrossReplicas(t *testing.T) {
	s := newStack(t)
	api := s.run("api", s.bins.api)
	s.waitReady(api, s.baseURL()+"/readyz")
	bases := []string{s.baseURL()}
	ports := freePorts(t, 4)
	for i := 0; i < 2; i++ {
		apiPort, metricsPort := ports[2*i], ports[2*i+1]
		base := "http://127.0.0.1:" + strconv.Itoa(apiPort)
		replica := s.runWith(fmt.Sprintf("api%d", i+2), s.bins.api,
			"API_ADDR=127.0.0.1:"+strconv.Itoa(apiPort), "METRICS_ADDR=127.0.0.1:"+strconv.Itoa(metricsPort))
		s.waitReady(replica, base+"/readyz")
		bases = append(bases, base)
	}
	ctx := context.Background()

	// A plan of N a minute: callers on every replica, three times N requests in all.
	const n = 120
	limited := s.register("limited@example.com")
	s.ctl("plan", "set", "--email", "limited@example.com", "--plan", "pro", "--rate-limit", strconv.Itoa(n), "--credits-monthly", "0")
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for w := 0; w < 12; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 3*n/12; i++ {
				a, err := s.doAt(ctx, bases[(w+i)%3], http.MethodGet, "/v1/usage", limited)
				mu.Lock()
				if err != nil {
					statuses[-1]++
				} else {
					statuses[a.status]++
					if a.status == http.StatusTooManyRequests && (a.header.Get("Retry-After") == "" || a.header.Get("X-RateLimit-Remaining") != "0") {
						t.Errorf("429 without its headers: %v", a.header)
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("plan of %d a minute, %d requests over three replicas: %v", n, 3*n, statuses)
	if statuses[http.StatusOK] > n {
		t.Errorf("%d admitted across the replicas, over the plan's %d", statuses[http.StatusOK], n)
	}
	// Slots a replica leased and did not use go back to the window; a lease is at most a
	// twentieth of the limit, so the replicas leave at most that much each unused.
	if low := n - 3*max(1, n/20); statuses[http.StatusOK] < low {
		t.Errorf("%d admitted across the replicas, under %d of the plan's %d", statuses[http.StatusOK], low, n)
	}
	if statuses[http.StatusOK]+statuses[http.StatusTooManyRequests] != 3*n {
		t.Errorf("answers %v: want only 200 and 429", statuses)
	}

	// A busy key on every replica, revoked through one of them.
	key := s.register("revoked@example.com")
	s.ctl("plan", "set", "--email", "revoked@example.com", "--plan", "enterprise", "--rate-limit", "100000", "--credits-monthly", "0")
	created, err := s.do(ctx, http.MethodPost, "/v1/keys", key, map[string]any{"name": "second"})
	if err != nil || created.status != http.StatusCreated {
		t.Fatalf("create key: %v %d %s", err, created.status, created.raw)
	}
	second, _ := created.data()["api_key"].(string)
	id, _ := created.data()["id"].(string)
	for _, base := range bases {
		for i := 0; i < 20; i++ { // leases taken on every replica
			if a, err := s.doAt(ctx, base, http.MethodGet, "/v1/usage", second); err != nil || a.status != http.StatusOK {
				t.Fatalf("%s before revocation: %v %d %s", base, err, a.status, a.raw)
			}
		}
	}
	if a, err := s.doAt(ctx, bases[1], http.MethodDelete, "/v1/keys/"+id, key); err != nil || a.status != http.StatusOK {
		t.Fatalf("revoke: %v %d %s", err, a.status, a.raw)
	}
	revoked := time.Now()
	for _, base := range bases {
		took := s.until(t, base, second, revoked, time.Second, func(a answer) bool { return a.status == http.StatusUnauthorized })
		t.Logf("revoked key refused by %s %s after the revocation answered", base, took)
	}

	// A plan change by ctl: the new limit in every replica's headers.
	s.ctl("plan", "set", "--email", "revoked@example.com", "--plan", "enterprise", "--rate-limit", "4321", "--credits-monthly", "0")
	changed := time.Now()
	for _, base := range bases {
		took := s.until(t, base, key, changed, time.Second, func(a answer) bool { return a.header.Get("X-RateLimit-Limit") == "4321" })
		t.Logf("plan change seen by %s %s after ctl ended", base, took)
	}
}

// until asks base for /v1/usage with key until ok holds, and fails the test when that holds
// later than limit after since; it returns how long after since it held.
func (s *stack) until(t *testing.T, base, key string, since time.Time, limit time.Duration, ok func(answer) bool) time.Duration {
	t.Helper()
	start := since
	for {
		a, err := s.doAt(context.Background(), base, http.MethodGet, "/v1/usage", key)
		if err == nil && ok(a) {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			t.Errorf("%s: still %d %v %s after %s", base, a.status, err, a.raw, limit)
			return time.Since(start)
		}
	}
}

// doAt is do against another replica's base URL.
func (s *stack) doAt(ctx context.Context, base, method, path, key string) (answer, error) {
	req, err := http.NewRequestWithContext(ctx, method, base+path, nil)
	if err != nil {
		return answer{}, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	return s.send(req)
}
