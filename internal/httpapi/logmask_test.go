package httpapi_test

import (
	"strings"
	"testing"
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
