package httpapi_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/auth"
	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/httpapi"
	"github.com/contentapi/contentapi/internal/testenv"
)

var keyPattern = regexp.MustCompile(`^ap_[A-Za-z0-9]{32}$`)

func TestRegister(t *testing.T) {
	s := startServer(t)
	email := uniqueEmail()
	r := do(t, "POST", s.URL+"/v1/auth/register", "", map[string]any{"email": "  " + strings.ToUpper(email) + " "})
	if r.Status != 201 || r.Body["success"] != true {
		t.Fatalf("register: %d %s", r.Status, r.Raw)
	}
	d := r.data()
	got := keysOf(d)
	sort.Strings(got)
	if want := "api_key credits key_prefix plan rate_limit warning"; strings.Join(got, " ") != want {
		t.Fatalf("fields %v, want %s", got, want)
	}
	key := d["api_key"].(string)
	if !keyPattern.MatchString(key) || !auth.WellFormed(key) {
		t.Fatalf("key %q is not ap_ + 32 characters with a valid checksum", key)
	}
	if d["key_prefix"] != key[:8] || d["plan"] != "free" || d["credits"] != float64(50) ||
		d["rate_limit"] != "10 requests/minute" || !strings.Contains(d["warning"].(string), "cannot be retrieved") {
		t.Fatalf("data %v", d)
	}
	if r.Header.Get("X-Request-ID") == "" {
		t.Fatal("no X-Request-ID")
	}
	// Only the digest is stored.
	var n int
	digest := sha256.Sum256([]byte(key))
	if err := testenv.Postgres(t).QueryRow(context.Background(),
		`SELECT count(*) FROM api_keys WHERE digest = $1 AND name = 'Default'`, digest[:]).Scan(&n); err != nil || n != 1 {
		t.Fatalf("digest row %d %v", n, err)
	}
	if strings.Contains(s.logText(), key) {
		t.Fatal("the key appears in the log")
	}

	// Same address in another case: 409.
	r = do(t, "POST", s.URL+"/v1/auth/register", "", map[string]any{"email": strings.ToLower(email)})
	if r.Status != 409 || r.errCode() != "EMAIL_ALREADY_REGISTERED" || r.Body["success"] != false {
		t.Fatalf("duplicate: %d %s", r.Status, r.Raw)
	}
	// A named first key.
	r = do(t, "POST", s.URL+"/v1/auth/register", "", map[string]any{"email": uniqueEmail(), "name": "CI server"})
	k2 := r.data()["api_key"].(string)
	keys := do(t, "GET", s.URL+"/v1/keys", k2, nil).data()["keys"].([]any)
	if len(keys) != 1 || keys[0].(map[string]any)["name"] != "CI server" {
		t.Fatalf("keys %v", keys)
	}
}

func TestRegisterValidation(t *testing.T) {
	s := startServer(t)
	cases := []struct {
		body, code, msg string
		status          int
	}{
		{`{}`, "VALIDATION_ERROR", "email is required", 400},
		{`{"email":"not-an-address"}`, "VALIDATION_ERROR", "email", 400},
		{`{"email":"Bob <bob@example.com>"}`, "VALIDATION_ERROR", "plain e-mail", 400},
		{`{"email":"bob@localhost"}`, "VALIDATION_ERROR", "domain", 400},
		{`{"email":42}`, "VALIDATION_ERROR", "email must be a string", 400},
		{`{"email":"a@example.com","nmae":"x"}`, "VALIDATION_ERROR", "unknown field", 400},
		{`{"email":"a@example.com","name":"` + strings.Repeat("n", 101) + `"}`, "VALIDATION_ERROR", "name must be at most 100", 400},
		{`not json`, "VALIDATION_ERROR", "not valid JSON", 400},
		{``, "VALIDATION_ERROR", "JSON object", 400},
		{`[]`, "VALIDATION_ERROR", "JSON object", 400},
	}
	for _, c := range cases {
		r := do(t, "POST", s.URL+"/v1/auth/register", "", c.body)
		if r.Status != c.status || r.errCode() != c.code || r.Body["success"] != false {
			t.Errorf("%s: %d %s", c.body, r.Status, r.Raw)
			continue
		}
		if msg := r.Body["error"].(map[string]any)["message"].(string); !strings.Contains(msg, c.msg) {
			t.Errorf("%s: message %q lacks %q", c.body, msg, c.msg)
		}
	}
	// Nothing was created by any of them.
	var n int
	_ = testenv.Postgres(t).QueryRow(context.Background(), `SELECT count(*) FROM accounts WHERE email = 'a@example.com'`).Scan(&n)
	if n != 0 {
		t.Fatal("a rejected registration created an account")
	}
}

func TestBodyLimitAndUnknownPaths(t *testing.T) {
	s := startServer(t)
	big := `{"email":"a@example.com","name":"` + strings.Repeat("x", httpapi.BodyLimit) + `"}`
	r := do(t, "POST", s.URL+"/v1/auth/register", "", big)
	if r.Status != 413 || r.errCode() != "PAYLOAD_TOO_LARGE" || r.Header.Get("X-Request-ID") == "" {
		t.Fatalf("large body: %d %v %s", r.Status, r.Header, r.Raw)
	}
	r = do(t, "GET", s.URL+"/v1/no-such-thing", "", nil)
	if r.Status != 404 || r.errCode() != "NOT_FOUND" || r.Header.Get("X-Request-ID") == "" {
		t.Fatalf("unknown path: %d %s", r.Status, r.Raw)
	}
	r = do(t, "GET", s.URL+"/v1/usage", "", nil, "X-Request-ID", "caller-id-123")
	if r.Header.Get("X-Request-ID") != "caller-id-123" {
		t.Fatalf("caller's request id not kept: %q", r.Header.Get("X-Request-ID"))
	}
	r = do(t, "GET", s.URL+"/v1/usage", "", nil, "X-Request-ID", "bad id\twith tab")
	if id := r.Header.Get("X-Request-ID"); uuid.Validate(id) != nil {
		t.Fatalf("unsafe request id echoed: %q", id)
	}
}

func TestAuthentication(t *testing.T) {
	s := startServer(t)
	key := register(t, s)
	cases := []struct {
		header, code string
		status       int
	}{
		{"", "MISSING_AUTH_HEADER", 401},
		{"Bearer", "INVALID_API_KEY", 401},
		{"Basic " + key, "INVALID_API_KEY", 401},
		{"Bearer ap_short", "INVALID_API_KEY", 401},
		{"Bearer " + key[:len(key)-1] + flip(key[len(key)-1]), "INVALID_API_KEY", 401}, // checksum fails
	}
	for _, c := range cases {
		r := do(t, "GET", s.URL+"/v1/usage", "", nil, "Authorization", c.header)
		if r.Status != c.status || r.Body["code"] != c.code || r.Body["message"] == "" || r.Body["error"] == "" {
			t.Errorf("%q: %d %s", c.header, r.Status, r.Raw)
		}
	}
	// A well-formed key we never issued.
	fake, _ := auth.NewKey()
	if r := do(t, "GET", s.URL+"/v1/usage", fake, nil); r.Status != 401 || r.Body["code"] != "INVALID_API_KEY" {
		t.Fatalf("unknown key: %d %s", r.Status, r.Raw)
	}
	if r := do(t, "GET", s.URL+"/v1/usage", "", nil, "Authorization", "bearer "+key); r.Status != 200 {
		t.Fatalf("lower-case scheme: %d %s", r.Status, r.Raw)
	}
}

func flip(b byte) string {
	if b == 'A' {
		return "B"
	}
	return "A"
}

func TestKeysLifecycle(t *testing.T) {
	s := startServer(t)
	key := registerBusy(t, s)

	r := do(t, "POST", s.URL+"/v1/keys", key, map[string]any{"name": "Staging", "expires_in_days": 30})
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Raw)
	}
	k2 := r.data()["api_key"].(string)
	id2 := r.data()["id"].(string)
	if !keyPattern.MatchString(k2) || r.data()["expires_at"] == nil || r.data()["warning"] == "" {
		t.Fatalf("create: %s", r.Raw)
	}
	for _, bad := range []any{map[string]any{"expires_in_days": 0}, map[string]any{"expires_in_days": 4000}, map[string]any{"name": 5}} {
		if r := do(t, "POST", s.URL+"/v1/keys", key, bad); r.Status != 400 || r.errCode() != "VALIDATION_ERROR" {
			t.Errorf("%v: %d %s", bad, r.Status, r.Raw)
		}
	}

	// The new key works; listing shows both keys and never a key.
	if r := do(t, "GET", s.URL+"/v1/usage", k2, nil); r.Status != 200 {
		t.Fatalf("new key: %d", r.Status)
	}
	r = do(t, "GET", s.URL+"/v1/keys", key, nil)
	if r.Status != 200 || len(r.data()["keys"].([]any)) != 2 || strings.Contains(r.Raw, k2) || strings.Contains(r.Raw, key) {
		t.Fatalf("list: %s", r.Raw)
	}
	for _, k := range r.data()["keys"].([]any) {
		km := k.(map[string]any)
		if km["status"] != "active" || km["last_used_at"] == nil {
			t.Fatalf("key %v: want active with last_used_at", km)
		}
	}

	// Another account cannot see or revoke it.
	other := register(t, s)
	if r := do(t, "DELETE", s.URL+"/v1/keys/"+id2, other, nil); r.Status != 404 || r.errCode() != "NOT_FOUND" {
		t.Fatalf("foreign revoke: %d %s", r.Status, r.Raw)
	}
	if r := do(t, "DELETE", s.URL+"/v1/keys/not-a-uuid", key, nil); r.Status != 404 {
		t.Fatalf("bad id: %d", r.Status)
	}

	// Revoked: refused on the very next request.
	r = do(t, "DELETE", s.URL+"/v1/keys/"+id2, key, nil)
	if r.Status != 200 || r.data()["status"] != "revoked" || r.data()["revoked_at"] == nil {
		t.Fatalf("revoke: %d %s", r.Status, r.Raw)
	}
	if r := do(t, "GET", s.URL+"/v1/usage", k2, nil); r.Status != 401 || r.Body["code"] != "INVALID_API_KEY" {
		t.Fatalf("revoked key: %d %s", r.Status, r.Raw)
	}
	// Expiry, with time moved by the test.
	r = do(t, "POST", s.URL+"/v1/keys", key, map[string]any{"expires_in_days": 1})
	k3 := r.data()["api_key"].(string)
	if r := do(t, "GET", s.URL+"/v1/usage", k3, nil); r.Status != 200 {
		t.Fatalf("fresh key: %d", r.Status)
	}
	s.Clock.Advance(25 * time.Hour)
	if r := do(t, "GET", s.URL+"/v1/usage", k3, nil); r.Status != 403 || r.Body["code"] != "EXPIRED_API_KEY" {
		t.Fatalf("expired key: %d %s", r.Status, r.Raw)
	}
	if r := do(t, "GET", s.URL+"/v1/usage", key, nil); r.Status != 200 {
		t.Fatalf("key without expiry after a day: %d", r.Status)
	}
}

// A key revoked through one replica is refused by another that had it cached.
func TestRevocationReachesEveryReplica(t *testing.T) {
	a := startServer(t)
	b := startServer(t)
	key := register(t, a)
	r := do(t, "POST", a.URL+"/v1/keys", key, map[string]any{"name": "second"})
	k2, id2 := r.data()["api_key"].(string), r.data()["id"].(string)
	if r := do(t, "GET", b.URL+"/v1/usage", k2, nil); r.Status != 200 { // b caches the key
		t.Fatalf("replica b: %d", r.Status)
	}
	if r := do(t, "DELETE", a.URL+"/v1/keys/"+id2, key, nil); r.Status != 200 {
		t.Fatalf("revoke: %d", r.Status)
	}
	if r := do(t, "GET", b.URL+"/v1/usage", k2, nil); r.Status != 401 {
		t.Fatalf("replica b after revocation: %d %s", r.Status, r.Raw)
	}
}

func TestRateLimitBurst(t *testing.T) {
	s := startServer(t)
	key := register(t, s)
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	var refused response
	for i := 0; i < 30; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := do(t, "GET", s.URL+"/v1/usage", key, nil)
			mu.Lock()
			statuses[r.Status]++
			if r.Status == 429 {
				refused = r
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if statuses[200] != 10 || statuses[429] != 20 {
		t.Fatalf("statuses %v, want 10×200 and 20×429", statuses)
	}
	if refused.Body["code"] != "RATE_LIMIT_EXCEEDED" || refused.Body["error"] == nil || refused.Body["message"] == nil {
		t.Fatalf("429 body %s", refused.Raw)
	}
	ra := refused.Header.Get("Retry-After")
	if ra == "" || ra == "0" || len(ra) > 2 || refused.Header.Get("X-RateLimit-Limit") != "10" ||
		refused.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("429 headers %v", refused.Header)
	}
	// However it is spaced, the 11th in the minute is refused.
	if r := do(t, "GET", s.URL+"/v1/account", key, nil); r.Status != 429 {
		t.Fatalf("11th request: %d", r.Status)
	}
	// Limits are per account: another account is unaffected.
	if r := do(t, "GET", s.URL+"/v1/usage", register(t, s), nil); r.Status != 200 || r.Header.Get("X-RateLimit-Remaining") != "9" {
		t.Fatalf("other account: %d %v", r.Status, r.Header)
	}
}

func TestPlanChangeAppliesOnNextRequest(t *testing.T) {
	s := startServer(t)
	key := register(t, s)
	for i := 0; i < 10; i++ {
		do(t, "GET", s.URL+"/v1/usage", key, nil)
	}
	if r := do(t, "GET", s.URL+"/v1/usage", key, nil); r.Status != 429 {
		t.Fatalf("want 429 at 11, got %d", r.Status)
	}
	acc := accountID(t, s, key)
	if err := s.Accounts.SetPlan(context.Background(), acc, "pro", 60, 1000); err != nil {
		t.Fatal(err)
	}
	r := do(t, "GET", s.URL+"/v1/usage", key, nil)
	if r.Status != 200 || r.Header.Get("X-RateLimit-Limit") != "60" || r.data()["plan"] != "pro" || r.data()["rate_limit"] != float64(60) {
		t.Fatalf("after upgrade: %d %v %s", r.Status, r.Header, r.Raw)
	}
}

// accountID finds a key's account in the database, spending no request.
func accountID(t testing.TB, s *testServer, key string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	digest := sha256.Sum256([]byte(key))
	if err := testenv.Postgres(t).QueryRow(context.Background(),
		`SELECT account_id FROM api_keys WHERE digest = $1`, digest[:]).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// registerBusy registers an account with a high rate limit, for tests making many requests.
func registerBusy(t *testing.T, s *testServer) string {
	t.Helper()
	key := register(t, s)
	if err := s.Accounts.SetPlan(context.Background(), accountID(t, s, key), "enterprise", 10000, 0); err != nil {
		t.Fatal(err)
	}
	return key
}

func TestUsageAccountAndInfo(t *testing.T) {
	s := startServer(t)
	key := register(t, s)
	acc := accountID(t, s, key)
	r := do(t, "GET", s.URL+"/v1/usage", key, nil)
	d := r.data()
	got := keysOf(d)
	sort.Strings(got)
	if strings.Join(got, " ") != "credits_limit credits_remaining credits_used period_end period_start plan rate_limit recent_calls upgrade_url" {
		t.Fatalf("usage fields %v", got)
	}
	// The period is the account's, in UTC ISO 8601.
	if a, err := s.Accounts.Get(context.Background(), acc); err != nil || d["period_start"] != a.PeriodStart.UTC().Format(time.RFC3339Nano) ||
		d["period_end"] != a.PeriodEnd.UTC().Format(time.RFC3339Nano) || !a.PeriodEnd.Equal(clock.AddMonths(a.PeriodStart, 1)) {
		t.Fatalf("usage period %v..%v, account %+v %v", d["period_start"], d["period_end"], a, err)
	}
	if d["plan"] != "free" || d["credits_used"] != float64(0) || d["credits_limit"] != float64(50) ||
		d["credits_remaining"] != float64(50) || d["rate_limit"] != float64(10) || d["upgrade_url"] != "https://dash.test/billing" {
		t.Fatalf("usage %s", r.Raw)
	}
	if calls, ok := d["recent_calls"].([]any); !ok || len(calls) != 0 {
		t.Fatalf("recent_calls %v", d["recent_calls"])
	}
	// A settled call shows in usage.
	res, err := s.Ledger.Reserve(context.Background(), acc, 5, "/v1/keywords/research")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ledger.Settle(context.Background(), res); err != nil {
		t.Fatal(err)
	}
	d = do(t, "GET", s.URL+"/v1/usage", key, nil).data()
	calls := d["recent_calls"].([]any)
	if d["credits_used"] != float64(5) || d["credits_remaining"] != float64(45) || len(calls) != 1 {
		t.Fatalf("after a call: %v", d)
	}
	call := calls[0].(map[string]any)
	if call["endpoint"] != "/v1/keywords/research" || call["credits_used"] != float64(5) {
		t.Fatalf("call %v", call)
	}
	if _, err := time.Parse(time.RFC3339, call["created_at"].(string)); err != nil {
		t.Fatalf("created_at %v: %v", call["created_at"], err)
	}

	a := do(t, "GET", s.URL+"/v1/account", key, nil).data()
	for _, f := range []string{"id", "email", "plan", "billing_cycle", "pending_change", "created_at"} {
		if _, ok := a[f]; !ok {
			t.Errorf("account lacks %s: %v", f, a)
		}
	}

	for _, path := range []string{"/v1", "/"} {
		info := do(t, "GET", s.URL+path, "", nil)
		eps, _ := info.Body["endpoints"].(map[string]any)
		if info.Status != 200 || info.Body["status"] != "operational" || info.Body["version"] == "" || info.Body["documentation"] != "https://docs.test" {
			t.Fatalf("info %s: %s", path, info.Raw)
		}
		for route, cost := range map[string]string{"POST /v1/content/recommend": "15 credits", "POST /v1/content-map": "25 credits",
			"POST /v1/keywords/research": "5 credits", "POST /v1/keywords/gaps": "10 credits", "POST /v1/content/audit": "15 credits",
			"POST /v1/auth/register": "0 credits", "GET /v1/usage": "0 credits", "POST /v1/billing/checkout": "0 credits"} {
			if txt, _ := eps[route].(string); !strings.Contains(txt, cost) {
				t.Errorf("info lists %s as %q, want %s", route, txt, cost)
			}
		}
	}
}

func TestFreeCreditsRenewOnFirstRequestOfNewPeriod(t *testing.T) {
	s := startServer(t)
	key := register(t, s)
	acc := accountID(t, s, key)
	for i := 0; i < 2; i++ {
		res, _ := s.Ledger.Reserve(context.Background(), acc, 20, "/v1/content-map")
		_, _ = s.Ledger.Settle(context.Background(), res)
	}
	if d := do(t, "GET", s.URL+"/v1/usage", key, nil).data(); d["credits_remaining"] != float64(10) {
		t.Fatalf("before: %v", d)
	}
	before := do(t, "GET", s.URL+"/v1/usage", key, nil).data()
	s.Clock.Advance(32 * 24 * time.Hour)
	d := do(t, "GET", s.URL+"/v1/usage", key, nil).data()
	if d["credits_remaining"] != float64(50) || d["credits_used"] != float64(0) {
		t.Fatalf("new period: %v (want 50 remaining, no rollover, 0 used)", d)
	}
	// The period moved on by a month: the new one starts where the old one ended.
	end, _ := time.Parse(time.RFC3339, before["period_end"].(string))
	if d["period_start"] != before["period_end"] || d["period_end"] != clock.AddMonths(end, 1).Format(time.RFC3339Nano) {
		t.Fatalf("period %v..%v after %v..%v", d["period_start"], d["period_end"], before["period_start"], before["period_end"])
	}
}

func TestRegistrationLimitedPerIP(t *testing.T) {
	s := startServer(t, func(d *httpapi.Deps) { d.RegisterLimit = 3 })
	// Other tests registered from this address too: start from an empty window.
	testenv.Redis(t).Del(context.Background(), "rl:{register:127.0.0.1}")
	statuses := []int{}
	for i := 0; i < 5; i++ {
		r := do(t, "POST", s.URL+"/v1/auth/register", "", map[string]any{"email": uniqueEmail()})
		statuses = append(statuses, r.Status)
		if r.Status == 429 && (r.Body["code"] != "RATE_LIMIT_EXCEEDED" || r.Header.Get("Retry-After") == "") {
			t.Fatalf("429: %v %s", r.Header, r.Raw)
		}
	}
	if fmt.Sprint(statuses) != "[201 201 201 429 429]" {
		t.Fatalf("statuses %v: want three registrations, then the per-IP limit", statuses)
	}
}

func TestPanicRecoveredAndShutdownDrains(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{})
	s := startServer(t, func(d *httpapi.Deps) {
		d.Routes = func(r fiber.Router) {
			r.Get("/test/panic", func(c *fiber.Ctx) error { panic("secret internal detail") })
			r.Get("/test/slow", func(c *fiber.Ctx) error {
				close(entered)
				<-release
				return c.SendString("finished")
			})
		}
	})
	r := do(t, "GET", s.URL+"/test/panic", "", nil)
	if r.Status != 500 || r.errCode() != "INTERNAL_ERROR" || strings.Contains(r.Raw, "secret") {
		t.Fatalf("panic: %d %s", r.Status, r.Raw)
	}
	if !strings.Contains(s.logText(), r.Header.Get("X-Request-ID")) {
		t.Fatal("the panic is not logged with the request id")
	}

	done := make(chan string)
	go func() {
		res, err := http.Get(s.URL + "/test/slow")
		if err != nil {
			done <- "error: " + err.Error()
			return
		}
		defer res.Body.Close()
		buf := make([]byte, 64)
		n, _ := res.Body.Read(buf)
		done <- string(buf[:n])
	}()
	<-entered
	shut := make(chan error)
	go func() { shut <- s.App.ShutdownWithTimeout(10 * time.Second) }()
	close(release)
	if got := <-done; got != "finished" {
		t.Fatalf("request in flight during shutdown got %q", got)
	}
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
}

func TestHealth(t *testing.T) {
	s := startServer(t)
	if r := do(t, "GET", s.URL+"/healthz", "", nil); r.Status != 200 {
		t.Fatalf("healthz %d", r.Status)
	}
	r := do(t, "GET", s.URL+"/readyz", "", nil)
	if r.Status != 200 || r.Body["checks"].(map[string]any)["database"] != "ok" {
		t.Fatalf("readyz %d %s", r.Status, r.Raw)
	}
}
