package httpapi_test

import (
	"context"
	"strings"
	"testing"
	"time"
)

// researchKeywords lists a research answer's keywords, cluster by cluster.
func researchKeywords(t *testing.T, data map[string]any) []string {
	t.Helper()
	var out []string
	for _, c := range data["clusters"].([]any) {
		for _, k := range c.(map[string]any)["keywords"].([]any) {
			out = append(out, k.(map[string]any)["keyword"].(string))
		}
	}
	if int(data["total_keywords"].(float64)) != len(out) {
		t.Fatalf("total_keywords %v, %d keywords", data["total_keywords"], len(out))
	}
	return out
}

// Research pages with next_cursor: pages of 7 return every keyword of the single page of
// 1,000 once, as many as total, for the default order and a filtered, sorted query; a
// cursor sent by another account, with another query or another endpoint, altered or
// expired is refused before any charge; CSV answers carry total and cursor in headers.
func TestResearchCursorPagingAndMisuse(t *testing.T) {
	s := startStack(t, stackConfig{})
	key := registerBusy(t, s.testServer)
	if err := s.Accounts.SetPlan(context.Background(), accountID(t, s.testServer, key), "enterprise", 10000, 5000); err != nil {
		t.Fatal(err)
	}
	doms := sampleDomains(t)
	queries := []map[string]any{
		{"topic": "coffee"},
		{"topic": "coffee", "order_by": []string{"keyword_difficulty.asc", "search_volume.desc"},
			"filters": map[string]any{"search_volume": map[string]any{"min": 100}, "exclude": []string{"cold"}}},
	}
	var first string
	var firstQuery map[string]any
	for _, q := range queries {
		body := func(cursor string, limit int) map[string]any {
			b := map[string]any{"domain": doms[0], "limit": limit}
			for k, v := range q {
				b[k] = v
			}
			if cursor != "" {
				b["cursor"] = cursor
			}
			return b
		}
		all := do(t, "POST", s.URL+"/v1/keywords/research", key, body("", 1000))
		if all.Status != 200 || all.data()["next_cursor"] != nil {
			t.Fatalf("%v, one page: %d %s", q, all.Status, all.Raw)
		}
		total := int(all.data()["total"].(float64))
		want := researchKeywords(t, all.data())
		if total < 15 || total != len(want) {
			t.Fatalf("%v: total %d, %d keywords on the single page", q, total, len(want))
		}
		seen := map[string]bool{}
		cursor := ""
		for page := 0; ; page++ {
			r := do(t, "POST", s.URL+"/v1/keywords/research", key, body(cursor, 7))
			if r.Status != 200 || int(r.data()["total"].(float64)) != total {
				t.Fatalf("%v page %d: %d %s", q, page, r.Status, r.Raw)
			}
			ks := researchKeywords(t, r.data())
			for _, k := range ks {
				if seen[k] {
					t.Fatalf("%v page %d: %q came back twice", q, page, k)
				}
				seen[k] = true
			}
			next, _ := r.data()["next_cursor"].(string)
			if next == "" {
				break
			}
			if len(ks) != 7 {
				t.Fatalf("%v page %d: %d keywords and a next page", q, page, len(ks))
			}
			if first == "" {
				first, firstQuery = next, q
			}
			cursor = next
		}
		if len(seen) != total {
			t.Fatalf("%v: paged %d keywords, total %d", q, len(seen), total)
		}
		for _, k := range want {
			if !seen[k] {
				t.Fatalf("%v: %q of the single page never came", q, k)
			}
		}
	}

	body := func(cursor string, limit int) map[string]any {
		b := map[string]any{"domain": doms[0], "limit": limit, "cursor": cursor}
		for k, v := range firstQuery {
			b[k] = v
		}
		return b
	}
	before := s.balanceOf(t, key)
	other := registerBusy(t, s.testServer)
	payload, sig, _ := strings.Cut(first, ".")
	otherQuery := body(first, 7)
	otherQuery["topic"] = "espresso"
	gaps := map[string]any{"domain": doms[0], "competitors": []string{doms[1]}, "cursor": first}
	for name, tc := range map[string]struct {
		key, path string
		body      map[string]any
		msg       string
	}{
		"other account":  {other, "/v1/keywords/research", body(first, 7), "another account"},
		"other query":    {key, "/v1/keywords/research", otherQuery, "another query"},
		"other endpoint": {key, "/v1/keywords/gaps", gaps, "another query"},
		"altered":        {key, "/v1/keywords/research", body(payload+"."+strings.Repeat("A", len(sig)), 7), "altered"},
	} {
		for _, dry := range []string{"", "?dry_run=true"} {
			r := do(t, "POST", s.URL+tc.path+dry, tc.key, tc.body)
			if r.Status != 400 || r.errCode() != "INVALID_CURSOR" || !strings.Contains(r.Raw, tc.msg) {
				t.Errorf("%s%s: %d %s", name, dry, r.Status, r.Raw)
			}
		}
	}
	// A dry run of a later page states its price; CSV answers carry total and cursor.
	if r := do(t, "POST", s.URL+"/v1/keywords/research?dry_run=true", key, body(first, 250)); r.Status != 200 || r.data()["credits_cost"] != float64(15) {
		t.Errorf("dry run of a later page of 250: %d %s", r.Status, r.Raw)
	}
	csvPage := do(t, "POST", s.URL+"/v1/keywords/research", key, body(first, 7), "Accept", "text/csv")
	if csvPage.Status != 200 || csvPage.Header.Get("X-Total-Count") == "" || csvPage.Header.Get("X-Next-Cursor") == "" {
		t.Errorf("csv page: %d %v", csvPage.Status, csvPage.Header)
	}
	s.Clock.Advance(25 * time.Hour)
	if r := do(t, "POST", s.URL+"/v1/keywords/research", key, body(first, 7)); r.Status != 400 || r.errCode() != "INVALID_CURSOR" || !strings.Contains(r.Raw, "expired") {
		t.Errorf("expired: %d %s", r.Status, r.Raw)
	}
	if b := s.balanceOf(t, key); b != before-5 {
		t.Errorf("balance %d after refused cursors and one CSV page; want %d", b, before-5)
	}
}
