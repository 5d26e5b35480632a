package httpapi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/contentapi/contentapi/internal/httpapi"
)

// The access log keeps a request's query, with the values of secret parameters masked.
func TestAccessLogMasksSecretsInQueries(t *testing.T) {
	s := startServer(t)
	do(t, "GET", s.URL+"/v1/usage?password=hunter2&api_key=hunter3&token=hunter4&dry_run=true", "", nil)
	log := s.logText()
	if strings.Contains(log, "hunter") {
		t.Fatalf("the log shows a secret:\n%s", log)
	}
	if !strings.Contains(log, `"query":"password=****&api_key=****&token=****&dry_run=true"`) {
		t.Fatalf("the query is not logged, masked:\n%s", log)
	}
}

// The dashboard's form token is a secret too: a query carrying it is logged masked.
func TestAccessLogMasksCSRFToken(t *testing.T) {
	s := startServer(t)
	do(t, "GET", s.URL+"/v1/usage?csrf=hunter5&dry_run=true", "", nil)
	log := s.logText()
	if strings.Contains(log, "hunter") || !strings.Contains(log, `"query":"csrf=****&dry_run=true"`) {
		t.Fatalf("the csrf token is not masked:\n%s", log)
	}
}

// Successful fast calls are logged one in AccessLogSample, each such line saying so; every
// error is logged.
func TestAccessLogSamplesSuccessfulCalls(t *testing.T) {
	s := startServer(t, func(d *httpapi.Deps) { d.AccessLogSample, d.AccessLogSlow = 4, time.Hour })
	key := register(t, s)
	for i := 0; i < 8; i++ {
		if r := do(t, "GET", s.URL+"/v1/usage", key, nil); r.Status != 200 {
			t.Fatalf("usage: %d", r.Status)
		}
	}
	for i := 0; i < 3; i++ {
		if r := do(t, "GET", s.URL+"/v1/usage", "", nil); r.Status != 401 {
			t.Fatalf("usage without a key: %d", r.Status)
		}
	}
	var ok, sampled, refused int
	for _, line := range strings.Split(s.logText(), "\n") {
		if !strings.Contains(line, `"msg":"request"`) || !strings.Contains(line, `"path":"/v1/usage"`) {
			continue
		}
		switch {
		case strings.Contains(line, `"status":200`):
			ok++
			if strings.Contains(line, `"sample":4`) {
				sampled++
			}
		case strings.Contains(line, `"status":401`):
			refused++
		}
	}
	if ok != 2 || sampled != 2 || refused != 3 {
		t.Fatalf("logged %d of 8 successful calls (%d marked sampled) and %d of 3 refused, want 2, 2 and 3:\n%s", ok, sampled, refused, s.logText())
	}
}
