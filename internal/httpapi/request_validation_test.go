package httpapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/contentapi/contentapi/internal/testenv"
)

// expectInvalid checks a 400 VALIDATION_ERROR whose message holds msg.
func expectInvalid(t *testing.T, what string, r response, msg string) {
	t.Helper()
	if r.Status != 400 || r.errCode() != "VALIDATION_ERROR" {
		t.Errorf("%s: %d %s", what, r.Status, r.Raw)
		return
	}
	m := r.Raw
	if e, ok := r.Body["error"].(map[string]any); ok {
		m, _ = e["message"].(string)
	}
	if !strings.Contains(m, msg) {
		t.Errorf("%s: message %q lacks %q", what, m, msg)
	}
}

func countRows(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	if err := testenv.Postgres(t).QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// NUL (and other control characters) in any request string is a 400 naming the field, never
// a 500 from PostgreSQL, and nothing is stored.
func TestNULInRequestsRefused(t *testing.T) {
	s := startStack(t, stackConfig{noWorker: true})

	email := uniqueEmail()
	expectInvalid(t, "register name", do(t, "POST", s.URL+"/v1/auth/register", "",
		`{"email":"`+email+`","name":"laptop\u0000"}`), "name must not contain NUL")
	expectInvalid(t, "register email", do(t, "POST", s.URL+"/v1/auth/register", "",
		`{"email":"`+strings.Replace(email, "@", "\\u0000@", 1)+`"}`), "email must not contain NUL")
	expectInvalid(t, "register email field case", do(t, "POST", s.URL+"/v1/auth/register", "",
		`{"Email":"`+email+`"}`), `unknown field "Email"`)
	if n := countRows(t, `SELECT count(*) FROM accounts WHERE lower(email) LIKE $1`, strings.ToLower(strings.Split(email, "@")[0])+"%"); n != 0 {
		t.Fatalf("%d accounts stored by refused registrations", n)
	}

	key := registerBusy(t, s.testServer)
	acc := accountID(t, s.testServer, key)
	expectInvalid(t, "key name", do(t, "POST", s.URL+"/v1/keys", key, `{"name":"ci\u0000"}`), "name must not contain NUL")
	expectInvalid(t, "key name bell", do(t, "POST", s.URL+"/v1/keys", key, `{"name":"ci\u0007"}`), "name must not contain")
	if n := countRows(t, `SELECT count(*) FROM api_keys WHERE account_id = $1`, acc); n != 1 {
		t.Fatalf("%d keys after refused creations, want 1", n)
	}

	for _, c := range []struct{ path, body, msg string }{
		{"/v1/keywords/research", `{"domain":"example.com","topic":"coffee\u0000"}`, "topic must not contain NUL"},
		{"/v1/keywords/research", `{"domain":"example.com","keywords":["a","b\u0000"]}`, "keywords[1] must not contain NUL"},
		{"/v1/keywords/gaps", `{"domain":"example.com","competitors":["a\u0000.com"]}`, "competitors[0] must not contain NUL"},
		{"/v1/content/audit", `{"domain":"example.com\u0000"}`, "domain must not contain NUL"},
		{"/v1/content/recommend", `{"domain":"example.com","brand_context":"x\u0000"}`, "brand_context must not contain NUL"},
		{"/v1/content-map", `{"domain":"example.com","focus_topics":["\u0000"]}`, "focus_topics[0] must not contain NUL"},
		{"/v1/keywords/research", "{\"domain\":\"example.com\",\"topic\":\"caf\xe9\"}", "topic must be valid UTF-8"},
		{"/v1/keywords/research", `{"domAin":"example.com"}`, `unknown field "domAin"`},
		{"/v1/keywords/research", `{"domain":"example.com","domain":"other.com"}`, `duplicate field "domain"`},
	} {
		expectInvalid(t, c.path+" "+c.body, do(t, "POST", s.URL+c.path, key, c.body), c.msg)
	}
	expectNothingCharged(t, s, key)
}

// expectNothingCharged checks a fresh free account still has its 50 credits, no job and no
// reservation.
func expectNothingCharged(t *testing.T, s *stack, key string) {
	t.Helper()
	acc := accountID(t, s.testServer, key)
	if b := s.balanceOf(t, key); b != 50 {
		t.Fatalf("balance %d after refused calls, want 50", b)
	}
	if n := countRows(t, `SELECT count(*) FROM jobs WHERE account_id = $1`, acc); n != 0 {
		t.Fatalf("%d jobs after refused calls", n)
	}
	if n := countRows(t, `SELECT count(*) FROM reservations WHERE account_id = $1`, acc); n != 0 {
		t.Fatalf("%d reservations after refused calls", n)
	}
}

// Domains are strict DNS names, compared in one spelling: no empty labels, no numeric names,
// and a domain written with its root dot is still the domain itself.
func TestStrictDomainsOverHTTP(t *testing.T) {
	s := startStack(t, stackConfig{noWorker: true})
	key := registerBusy(t, s.testServer)
	for _, c := range []struct{ path, body, msg string }{
		{"/v1/keywords/gaps", `{"domain":"a.com","competitors":["a.com."]}`, "competitors[0] is the domain itself"},
		{"/v1/keywords/gaps", `{"domain":"A.com.","competitors":["www.a.com"]}`, "competitors[0] is the domain itself"},
		{"/v1/keywords/gaps", `{"domain":"a.com","competitors":["b..com"]}`, "competitors[0] is not a valid domain name"},
		{"/v1/keywords/research", `{"domain":".."}`, "domain is not a valid domain name"},
		{"/v1/keywords/research", `{"domain":"example.com.."}`, "domain is not a valid domain name"},
		{"/v1/keywords/research", `{"domain":"127.1"}`, "domain must be a domain name, not an IP address"},
		{"/v1/keywords/research", `{"domain":"2130706433"}`, "not an IP address"},
		{"/v1/content/audit", `{"domain":"0x7f.1"}`, "not an IP address"},
		{"/v1/content-map", `{"domain":"example.com","competitors":["0177.0.0.1"]}`, "competitors[0] must be a domain name, not an IP address"},
	} {
		expectInvalid(t, c.path+" "+c.body, do(t, "POST", s.URL+c.path, key, c.body), c.msg)
	}
	expectNothingCharged(t, s, key)
}

// dry_run takes the usual boolean spellings; a misspelt or unknown query parameter is a 400,
// never a job run and charged.
func TestDryRunSpellingsAndUnknownQuery(t *testing.T) {
	s := startStack(t, stackConfig{noWorker: true})
	key := registerBusy(t, s.testServer)
	body := map[string]any{"domain": "example.com", "topic": "coffee"}
	for _, q := range []string{"dry_run", "dry_run=", "dry_run=yes", "dry_run=true", "dry_run=TRUE", "dry_run=1", "dry_run=on", "dry_run=Yes"} {
		r := do(t, "POST", s.URL+"/v1/keywords/research?"+q, key, body)
		if r.Status != 200 || r.data()["dry_run"] != true || r.data()["credits_cost"] != float64(5) {
			t.Errorf("?%s: %d %s", q, r.Status, r.Raw)
		}
	}
	for _, c := range []struct{ query, msg string }{
		{"dryrun=true", `unknown query parameter "dryrun"`},
		{"dry-run=1", `unknown query parameter "dry-run"`},
		{"Dry_Run=true", `unknown query parameter "Dry_Run"`},
		{"dry_run=true&verbose=1", `unknown query parameter "verbose"`},
		{"dry_run=maybe", "dry_run must be true or false"},
		{"dry_run=2", "dry_run must be true or false"},
		{"dry_run=true&dry_run=false", "dry_run is given more than once"},
	} {
		for _, path := range []string{"/v1/keywords/research", "/v1/content-map"} {
			expectInvalid(t, path+"?"+c.query, do(t, "POST", s.URL+path+"?"+c.query, key, body), c.msg)
		}
	}
	expectNothingCharged(t, s, key)

	// A false spelling is the real call: a job, and its credits reserved.
	for _, q := range []string{"dry_run=no", "dry_run=off", "dry_run=0", "dry_run=false"} {
		r := do(t, "POST", s.URL+"/v1/keywords/research?"+q, key, body, "Prefer", "respond-async")
		if r.Status != 202 {
			t.Fatalf("?%s: %d %s", q, r.Status, r.Raw)
		}
	}
	if b := s.balanceOf(t, key); b != 50-4*5 {
		t.Fatalf("balance %d after four real calls, want 30", b)
	}
}
