package httpapi_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A bad query is a 400 naming the field, before anything is charged or stored.
func TestKeywordQueryValidationCostsNothing(t *testing.T) {
	s := startStack(t, stackConfig{noWorker: true})
	key := registerBusy(t, s.testServer)
	doms := sampleDomains(t)
	base := func(extra map[string]any) map[string]any {
		b := map[string]any{"domain": doms[0], "competitors": []string{doms[1]}}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	for _, tc := range []struct {
		path  string
		body  map[string]any
		field string
	}{
		{"/v1/keywords/gaps", base(map[string]any{"filters": map[string]any{"volume": map[string]any{"min": 1}}}), "filters.volume"},
		{"/v1/keywords/gaps", base(map[string]any{"filters": map[string]any{"search_volume": map[string]any{"min": 9, "max": 1}}}), "filters.search_volume.min"},
		{"/v1/keywords/gaps", base(map[string]any{"filters": map[string]any{"position": map[string]any{"max": 3}}}), "filters.position"},
		{"/v1/keywords/gaps", base(map[string]any{"order_by": []string{"cpc.asc", "volume.up"}}), "order_by[1]"},
		{"/v1/keywords/gaps", base(map[string]any{"limit": 1001}), "limit"},
		{"/v1/keywords/research", map[string]any{"domain": doms[0], "topic": "coffee", "filters": map[string]any{"competitor_position": map[string]any{"max": 3}}}, "filters.competitor_position"},
	} {
		for _, dry := range []string{"", "?dry_run=true"} {
			r := do(t, "POST", s.URL+tc.path+dry, key, tc.body)
			if r.Status != 400 || r.errCode() != "VALIDATION_ERROR" || !strings.Contains(r.Raw, tc.field) {
				t.Errorf("%s %v%s: %d %s; want 400 naming %s", tc.path, tc.body, dry, r.Status, r.Raw, tc.field)
			}
		}
	}
	// A large page's price, as a dry run states it.
	r := do(t, "POST", s.URL+"/v1/keywords/gaps?dry_run=true", key, base(map[string]any{"limit": 1000}))
	if r.Status != 200 || r.data()["credits_cost"] != float64(50) {
		t.Errorf("dry run of limit 1000: %d %s", r.Status, r.Raw)
	}
	if b := s.balanceOf(t, key); b != 50 {
		t.Errorf("refused calls charged: balance %d", b)
	}
	var jobs int
	_ = testPool(t).QueryRow(t.Context(), `SELECT count(*) FROM jobs WHERE account_id = $1`, accountID(t, s.testServer, key)).Scan(&jobs)
	if jobs != 0 {
		t.Errorf("refused calls made %d jobs", jobs)
	}
}

// Paging with next_cursor returns every gap once, in order, with the same total; a cursor
// sent by another account, with another query, altered or expired is refused before any
// charge.
func TestGapsCursorPagingAndMisuse(t *testing.T) {
	s := startStack(t, stackConfig{})
	key := registerBusy(t, s.testServer)
	if err := s.Accounts.SetPlan(context.Background(), accountID(t, s.testServer, key), "enterprise", 10000, 5000); err != nil {
		t.Fatal(err)
	}
	doms := sampleDomains(t)
	body := func(cursor string, limit int) map[string]any {
		b := map[string]any{"domain": doms[0], "competitors": []string{doms[1], doms[2]}, "limit": limit,
			"order_by": []string{"keyword_difficulty.asc", "search_volume.desc"}}
		if cursor != "" {
			b["cursor"] = cursor
		}
		return b
	}
	all := do(t, "POST", s.URL+"/v1/keywords/gaps", key, body("", 1000))
	if all.Status != 200 || all.data()["next_cursor"] != nil {
		t.Fatalf("one page: %d %s", all.Status, all.Raw)
	}
	total := int(all.data()["total"].(float64))
	if total < 12 || all.data()["total_gaps"] != all.data()["total"] {
		t.Fatalf("total %v, total_gaps %v", all.data()["total"], all.data()["total_gaps"])
	}
	var want []string
	for _, g := range all.data()["gaps"].([]any) {
		want = append(want, g.(map[string]any)["keyword"].(string))
	}
	var got []string
	cursor, first := "", ""
	for page := 0; ; page++ {
		r := do(t, "POST", s.URL+"/v1/keywords/gaps", key, body(cursor, 5))
		if r.Status != 200 || int(r.data()["total"].(float64)) != total {
			t.Fatalf("page %d: %d %s", page, r.Status, r.Raw)
		}
		for _, g := range r.data()["gaps"].([]any) {
			got = append(got, g.(map[string]any)["keyword"].(string))
		}
		next, _ := r.data()["next_cursor"].(string)
		if next == "" {
			break
		}
		if first == "" {
			first = next
		}
		cursor = next
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("paged %d gaps %v\nwant %d %v", len(got), got, len(want), want)
	}

	before := s.balanceOf(t, key)
	other := registerBusy(t, s.testServer)
	payload, sig, _ := strings.Cut(first, ".")
	altered := body(payload+"."+strings.Repeat("A", len(sig)), 5)
	otherQuery := body(first, 5)
	otherQuery["order_by"] = []string{"keyword_difficulty.asc"}
	for name, tc := range map[string]struct {
		key  string
		body map[string]any
		msg  string
	}{
		"other account": {other, body(first, 5), "another account"},
		"other query":   {key, otherQuery, "another query"},
		"altered":       {key, altered, "altered"},
	} {
		r := do(t, "POST", s.URL+"/v1/keywords/gaps", tc.key, tc.body)
		if r.Status != 400 || r.errCode() != "INVALID_CURSOR" || !strings.Contains(r.Raw, tc.msg) {
			t.Errorf("%s: %d %s", name, r.Status, r.Raw)
		}
	}
	// CSV answers carry the total and the cursor in headers.
	csvPage := do(t, "POST", s.URL+"/v1/keywords/gaps", key, body("", 5), "Accept", "text/csv")
	if csvPage.Status != 200 || csvPage.Header.Get("X-Total-Count") != itoa(total) || csvPage.Header.Get("X-Next-Cursor") == "" {
		t.Errorf("csv page: %d %v", csvPage.Status, csvPage.Header)
	}
	// Another limit continues the same query.
	if r := do(t, "POST", s.URL+"/v1/keywords/gaps", key, body(first, 7)); r.Status != 200 {
		t.Errorf("another limit: %d %s", r.Status, r.Raw)
	}
	s.Clock.Advance(25 * time.Hour)
	if r := do(t, "POST", s.URL+"/v1/keywords/gaps", key, body(first, 5)); r.Status != 400 || r.errCode() != "INVALID_CURSOR" || !strings.Contains(r.Raw, "expired") {
		t.Errorf("expired: %d %s", r.Status, r.Raw)
	}
	if b := s.balanceOf(t, key); b != before-20 {
		t.Errorf("balance %d after refused cursors and two pages; want %d", b, before-20)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
