package httpapi_test

import (
	"testing"
)

// badKeyNames are JSON string bodies of key names both the API and the dashboard refuse:
// NUL, invalid UTF-8, control characters and bidirectional-text controls.
var badKeyNames = map[string]string{
	"NUL":            `"a\u0000b"`,
	"invalid UTF-8":  "\"a\xffb\"",
	"U+0001":         `"a\u0001b"`,
	"tab":            `"a\tb"`,
	"U+202E":         `"a\u202eb"`,
	"U+202E literal": "\"a\u202eb\"",
	"U+2066":         `"a\u2066b"`,
}

// POST /v1/keys and registration refuse a key name with NUL, invalid UTF-8, control or
// bidirectional-text characters with VALIDATION_ERROR, and create nothing.
func TestKeyNamesRefuseControlAndBidiCharacters(t *testing.T) {
	s := startServer(t)
	key := register(t, s)
	for what, name := range badKeyNames {
		r := do(t, "POST", s.URL+"/v1/keys", key, []byte(`{"name":`+name+`}`))
		if r.Status != 400 || r.errCode() != "VALIDATION_ERROR" {
			t.Errorf("POST /v1/keys with %s: %d %s", what, r.Status, r.Raw)
		}
		email := uniqueEmail()
		r = do(t, "POST", s.URL+"/v1/auth/register", "", []byte(`{"email":"`+email+`","name":`+name+`}`))
		if r.Status != 400 || r.errCode() != "VALIDATION_ERROR" {
			t.Errorf("register with %s: %d %s", what, r.Status, r.Raw)
		}
		// Nothing was made: the address is still free.
		if r := do(t, "POST", s.URL+"/v1/auth/register", "", map[string]any{"email": email}); r.Status != 201 {
			t.Errorf("register after a refused name (%s): %d %s", what, r.Status, r.Raw)
		}
	}
	if r := do(t, "GET", s.URL+"/v1/keys", key, nil); r.Status != 200 || r.data()["total"] != float64(1) {
		t.Fatalf("keys after refused names: %d %s", r.Status, r.Raw)
	}
	if r := do(t, "POST", s.URL+"/v1/keys", key, map[string]any{"name": "café ☕ שרת"}); r.Status != 201 {
		t.Fatalf("a name in other scripts: %d %s", r.Status, r.Raw)
	}
}
