package httpapi_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contentapi/contentapi/internal/auth"
)

// An account holds at most auth.MaxActiveKeys active keys: the next creation is refused with
// a message saying what to do; revoked and expired keys do not count; creations at once
// cannot pass the cap together.
func TestActiveKeysAreCapped(t *testing.T) {
	s := startServer(t)
	ctx := context.Background()
	key := registerBusy(t, s) // its first key is active
	acc := accountID(t, s, key)
	var expiring string
	for i := 1; i < auth.MaxActiveKeys-2; i++ {
		days := 0
		if i == 1 {
			days = 1
		}
		k, _, err := s.Accounts.CreateKey(ctx, acc, "bulk", days)
		if err != nil {
			t.Fatalf("key %d: %v", i+1, err)
		}
		if i == 1 {
			expiring = k.ID.String()
		}
	}

	// Two slots left, eight creations at once: two succeed.
	var wg sync.WaitGroup
	statuses := make(chan int, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses <- do(t, "POST", s.URL+"/v1/keys", key, map[string]any{"name": "race"}).Status
		}()
	}
	wg.Wait()
	close(statuses)
	created := 0
	for st := range statuses {
		if st == 201 {
			created++
		} else if st != 400 {
			t.Errorf("concurrent creation: %d", st)
		}
	}
	if created != 2 {
		t.Fatalf("%d of 8 concurrent creations succeeded with 2 slots left", created)
	}

	r := do(t, "POST", s.URL+"/v1/keys", key, map[string]any{"name": "one too many"})
	if r.Status != 400 || r.errCode() != "VALIDATION_ERROR" || !strings.Contains(r.Raw, "at most 100 active API keys") ||
		!strings.Contains(r.Raw, "revoke one") {
		t.Fatalf("101st key: %d %s", r.Status, r.Raw)
	}

	// A revoked key frees its slot.
	list := do(t, "GET", s.URL+"/v1/keys", key, nil).data()["keys"].([]any)
	var victim string
	for _, k := range list {
		if km := k.(map[string]any); km["name"] == "bulk" && km["id"] != expiring {
			victim = km["id"].(string)
			break
		}
	}
	if r := do(t, "DELETE", s.URL+"/v1/keys/"+victim, key, nil); r.Status != 200 {
		t.Fatalf("revoke: %d %s", r.Status, r.Raw)
	}
	if r := do(t, "POST", s.URL+"/v1/keys", key, map[string]any{"name": "after revoke"}); r.Status != 201 {
		t.Fatalf("after a revocation: %d %s", r.Status, r.Raw)
	}
	if r := do(t, "POST", s.URL+"/v1/keys", key, map[string]any{"name": "full"}); r.Status != 400 {
		t.Fatalf("full again: %d %s", r.Status, r.Raw)
	}

	// So does an expired one.
	s.Clock.Advance(25 * time.Hour)
	if r := do(t, "POST", s.URL+"/v1/keys", key, map[string]any{"name": "after expiry"}); r.Status != 201 {
		t.Fatalf("after an expiry: %d %s", r.Status, r.Raw)
	}
}
