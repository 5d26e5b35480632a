package httpapi_test

import (
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// allowed reads an Allow header as a sorted list of methods.
func allowed(h http.Header) string {
	var methods []string
	for _, v := range h.Values("Allow") {
		for _, m := range strings.Split(v, ",") {
			if m = strings.TrimSpace(m); m != "" {
				methods = append(methods, m)
			}
		}
	}
	sort.Strings(methods)
	return strings.Join(methods, " ")
}

// A path called with a method it does not take answers 405 METHOD_NOT_ALLOWED with an Allow
// header naming the methods it takes, before the key is looked at (paths with parameters
// too; the billing shape under /v1/billing, as its 404). A path no route takes stays 404.
func TestWrongMethodAnswers405WithAllow(t *testing.T) {
	s := startServer(t)
	key := register(t, s)
	for _, c := range []struct {
		method, path, allow string
	}{
		{"PUT", "/v1/usage", "GET HEAD"},
		{"POST", "/v1/jobs/" + uuid.NewString(), "GET HEAD"},
		{"DELETE", "/v1/jobs/not-an-id", "GET HEAD"},
		{"GET", "/v1/keys/" + uuid.NewString(), "DELETE"},
		{"PATCH", "/v1/keys", "GET HEAD POST"},
		{"GET", "/v1/keywords/research", "POST"},
		{"DELETE", "/v1/content-map", "POST"},
		{"GET", "/v1/auth/register", "POST"},
		{"POST", "/v1/jobs", "GET HEAD"},
	} {
		for _, k := range []string{key, ""} {
			r := do(t, c.method, s.URL+c.path, k, nil)
			e, _ := r.Body["error"].(map[string]any)
			if r.Status != 405 || r.Body["success"] != false || e["code"] != "METHOD_NOT_ALLOWED" || e["message"] == "" {
				t.Errorf("%s %s: %d %s, want 405 METHOD_NOT_ALLOWED in the validation shape", c.method, c.path, r.Status, r.Raw)
			}
			if got := allowed(r.Header); got != c.allow {
				t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, got, c.allow)
			}
		}
	}
	r := do(t, "GET", s.URL+"/v1/billing/checkout", key, nil)
	if r.Status != 405 || r.Body["status"] != "error" || r.Body["code"] != "METHOD_NOT_ALLOWED" || allowed(r.Header) != "POST" {
		t.Errorf("GET /v1/billing/checkout: %d Allow %q %s, want 405 in the billing shape with Allow: POST", r.Status, r.Header.Get("Allow"), r.Raw)
	}
	for _, p := range []string{"/v1/nothing", "/v1/jobs/" + uuid.NewString() + "/more", "/v2/usage"} {
		for _, m := range []string{"GET", "POST", "DELETE"} {
			if r := do(t, m, s.URL+p, key, nil); r.Status != 404 || r.errCode() != "NOT_FOUND" || r.Header.Get("Allow") != "" {
				t.Errorf("%s %s: %d Allow %q %s, want 404 NOT_FOUND", m, p, r.Status, r.Header.Get("Allow"), r.Raw)
			}
		}
	}
}
