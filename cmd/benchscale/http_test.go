package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/contentapi/contentapi/internal/report"
)

// TestQuestionForms checks that a question's HTTP form is its request as JSON, that the
// in-process call gets the request normalized, and that a later page's body is the same
// request with the first page's cursor.
func TestQuestionForms(t *testing.T) {
	limit := 100
	r := report.RankingsRequest{DomainQuery: report.DomainQuery{Domain: "Big.example", Limit: &limit,
		Query: report.Query{OrderBy: []string{"keyword.asc"}}}}
	var got report.RankingsRequest
	call := func(_ *report.Builder, _ context.Context, r report.RankingsRequest) (report.RankingsResult, error) {
		got = r
		next := "c1"
		if r.Cursor != "" {
			next = ""
		}
		return report.RankingsResult{Total: 7, NextCursor: &next}, nil
	}
	summary := func(res report.RankingsResult) string { return "total " + strconv.Itoa(res.Total) }
	q := newQuestion("k", "n", "/v1/keywords/rankings", r, call, summary)
	if want := `{"domain":"Big.example","country":"","limit":100,"order_by":["keyword.asc"]}`; string(q.http.body) != want {
		t.Fatalf("body %s, want %s", q.http.body, want)
	}
	s, err := q.ask(context.Background(), nil)
	if err != nil || s != "total 7" || got.Country != "us" || got.Domain != "big.example" {
		t.Fatalf("in process: %q %v, request %+v", s, err, got)
	}
	if s, err := q.http.read([]byte(`{"total":7,"rankings":[]}`)); err != nil || s != "total 7" {
		t.Fatalf("over HTTP: %q %v", s, err)
	}

	later := laterPage("k", "n", "/v1/keywords/rankings", r, call,
		func(res report.RankingsResult) *string { return res.NextCursor }, summary)
	if _, err := later.ask(context.Background(), nil); err != nil || got.Cursor != "c1" {
		t.Fatalf("later page in process: %v, cursor %q", err, got.Cursor)
	}
	var body map[string]any
	if err := json.Unmarshal(later.http.page("abc"), &body); err != nil || body["cursor"] != "abc" || body["domain"] != "Big.example" {
		t.Fatalf("later page body %v %v", body, err)
	}
	if strings.Contains(string(later.http.body), "cursor") {
		t.Fatalf("the first page's body carries a cursor: %s", later.http.body)
	}
}

// TestAskHTTPChecks checks that an HTTP answer other than 200, or one whose summary differs
// from the in-process answer, is an error, and that a matching one is timed.
func TestAskHTTPChecks(t *testing.T) {
	status, total := http.StatusOK, 7
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Header.Get("Authorization") != "Bearer key" || !json.Valid(b) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"success":true,"data":{"total":` + strconv.Itoa(total) + `}}`))
	}))
	defer srv.Close()
	s := &httpStack{base: srv.URL, key: "key", client: &http.Client{Timeout: time.Minute}, cursors: map[string]string{}}
	q := newQuestion("k", "n", "/x", report.CompetitorsRequest{}, nil,
		func(res report.CompetitorsResult) string { return "total " + strconv.Itoa(res.Total) })
	res := &result{answers: map[string]string{"k n": "total 7"}, httpTimings: map[string][]time.Duration{}}
	if err := askHTTP(context.Background(), s, res, q, 2); err != nil || len(res.httpTimings["k"]) != 2 {
		t.Fatalf("matching answers: %v, %d timings", err, len(res.httpTimings["k"]))
	}
	total = 8
	if err := askHTTP(context.Background(), s, res, q, 2); err == nil || !strings.Contains(err.Error(), `over HTTP "total 8", in process "total 7"`) {
		t.Fatalf("a different total: %v", err)
	}
	total, status = 7, http.StatusAccepted
	if err := askHTTP(context.Background(), s, res, q, 2); err == nil || !strings.Contains(err.Error(), "status 202") {
		t.Fatalf("a 202: %v", err)
	}
}
