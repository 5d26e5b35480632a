package report

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/jsonbody"
)

func decodeGaps(t *testing.T, body string) (*GapsRequest, error) {
	t.Helper()
	r := &GapsRequest{}
	if err := jsonbody.Decode([]byte(body), r); err != nil {
		return nil, err
	}
	return r, r.Normalize(Options{})
}

// Each bad query is a VALIDATION_ERROR naming the field it is about.
func TestQueryValidationNamesTheField(t *testing.T) {
	base := `"domain":"a.com","competitors":["b.com"]`
	bad := map[string]string{
		`"filters":{"volume":{"min":1}}`:                                                    `filters.volume`,
		`"filters":{"search_volume":{"min":"x"}}`:                                           `filters.search_volume.min`,
		`"filters":{"search_volume":{}}`:                                                    `filters.search_volume must have a min or a max`,
		`"filters":{"search_volume":{"min":10,"max":5}}`:                                    `filters.search_volume.min must not be greater`,
		`"filters":{"cpc":{"min":-1}}`:                                                      `filters.cpc.min must not be negative`,
		`"filters":{"position":{"max":10}}`:                                                 `filters.position does not apply`,
		`"filters":{"opportunity_score":{"min":10}}`:                                        `filters.opportunity_score does not apply`,
		`"filters":{"intent":["buying"]}`:                                                   `filters.intent[0]`,
		`"filters":{"include":["cold brew"]}`:                                               `filters.include[0] must be one word`,
		`"filters":{"include":[""]}`:                                                        `filters.include[0] must not be empty`,
		`"filters":{"include":["x"],"exclude":["X"]}`:                                       `filters.exclude`,
		`"order_by":["search_volume"]`:                                                      `order_by[0]`,
		`"order_by":["keyword.asc","volume.desc"]`:                                          `order_by[1]`,
		`"order_by":["cpc.asc","cpc.desc"]`:                                                 `order_by[1] names cpc a second time`,
		`"order_by":["cpc.asc","keyword.asc","search_volume.asc","keyword_difficulty.asc"]`: `order_by may have at most 3`,
		`"order_by":["position.asc"]`:                                                       `order_by[0]: position does not apply`,
		`"limit":1001`:                                                                      `limit must be from 1 to 1000`,
		`"cursor":"` + strings.Repeat("x", 3000) + `"`:                                      `cursor`,
	}
	for q, want := range bad {
		_, err := decodeGaps(t, "{"+base+","+q+"}")
		e, ok := apperr.As(err)
		if !ok || !strings.Contains(e.Message, want) {
			t.Errorf("%s: %v; want a message with %q", q, err, want)
		}
	}
}

// A query normalises to one canonical form: an empty filters object and order are as if not
// sent (the default answer's stored request is unchanged), lists are lower-cased and sorted.
func TestQueryCanonicalForm(t *testing.T) {
	r, err := decodeGaps(t, `{"domain":"a.com","competitors":["b.com"],"filters":{},"order_by":[]}`)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := decodeGaps(t, `{"domain":"a.com","competitors":["b.com"]}`)
	a, _ := json.Marshal(r)
	b, _ := json.Marshal(plain)
	if string(a) != string(b) {
		t.Errorf("empty query stored as %s, no query as %s", a, b)
	}
	r, err = decodeGaps(t, `{"domain":"a.com","competitors":["b.com"],"filters":{"intent":["Transactional","commercial","commercial"],"exclude":["Cheap","bad"],"search_volume":{"min":500}},"order_by":[" CPC.Desc "]}`)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(r.Query)
	want := `{"filters":{"search_volume":{"min":500},"intent":["commercial","transactional"],"exclude":["bad","cheap"]},"order_by":["cpc.desc"]}`
	if string(got) != want {
		t.Errorf("query %s; want %s", got, want)
	}
	if f := r.KeywordFilters(); *f.Ranges["search_volume"].Min != 500 || len(f.Intents) != 2 {
		t.Errorf("provider filters %+v", f)
	}
	if o := r.KeywordOrder(); len(o) != 1 || o[0].Field != "cpc" || !o[0].Desc {
		t.Errorf("provider order %+v", o)
	}
}

// Large pages cost the price once per started PageRows rows; the default limits cost it once.
func TestPagePrice(t *testing.T) {
	gaps, _ := Lookup(string(KindGaps))
	for limit, want := range map[int]int{50: 10, 200: 10, 201: 20, 1000: 50} {
		r, err := decodeGaps(t, `{"domain":"a.com","competitors":["b.com"],"limit":`+itoa(limit)+`}`)
		if err != nil {
			t.Fatal(err)
		}
		if got := gaps.CostOf(r); got != want {
			t.Errorf("limit %d costs %d; want %d", limit, got, want)
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// A cursor opens only for the account and query it was sealed for, unaltered and in time.
func TestCursorMisuse(t *testing.T) {
	c := NewCursors([]byte(strings.Repeat("k", 32)))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	req, _ := decodeGaps(t, `{"domain":"a.com","competitors":["b.com"],"filters":{"search_volume":{"min":5}},"limit":10}`)
	cur, err := c.Seal(KindGaps, "acct-1", req, "token-7", now)
	if err != nil {
		t.Fatal(err)
	}
	with := func(body string) *GapsRequest {
		r, err := decodeGaps(t, body)
		if err != nil {
			t.Fatal(err)
		}
		r.Cursor = cur
		return r
	}
	same := with(`{"domain":"a.com","competitors":["b.com"],"filters":{"search_volume":{"min":5}},"limit":500}`)
	if tok, err := c.Open(KindGaps, "acct-1", same, now.Add(time.Hour)); err != nil || tok != "token-7" {
		t.Fatalf("Open = %q, %v; want the token (another limit is the same query)", tok, err)
	}
	cases := map[string]struct {
		kind    Kind
		account string
		req     *GapsRequest
		at      time.Time
		msg     string
	}{
		"other account": {KindGaps, "acct-2", same, now, "another account"},
		"other query":   {KindGaps, "acct-1", with(`{"domain":"a.com","competitors":["b.com"],"filters":{"search_volume":{"min":6}}}`), now, "another query"},
		"other kind":    {KindResearch, "acct-1", same, now, "another query"},
		"expired":       {KindGaps, "acct-1", same, now.Add(CursorTTL), "expired"},
	}
	for name, tc := range cases {
		_, err := c.Open(tc.kind, tc.account, tc.req, tc.at)
		if e, ok := apperr.As(err); !ok || e.Code != apperr.InvalidCursor || !strings.Contains(e.Message, tc.msg) {
			t.Errorf("%s: %v; want INVALID_CURSOR with %q", name, err, tc.msg)
		}
	}
	// Any change to the payload or the signature, or another key, is refused.
	payload, sig, _ := strings.Cut(cur, ".")
	for _, bad := range []string{payload[:len(payload)-1] + "A." + sig, payload + "." + sig[:len(sig)-2] + "AA", payload, "x.y",
		strings.Replace(cur, payload, payload+"e30", 1)} {
		r := with(`{"domain":"a.com","competitors":["b.com"],"filters":{"search_volume":{"min":5}}}`)
		r.Cursor = bad
		if _, err := c.Open(KindGaps, "acct-1", r, now); apperr.CodeOf(err) != apperr.InvalidCursor {
			t.Errorf("tampered %q: %v", bad, err)
		}
	}
	if _, err := NewCursors([]byte(strings.Repeat("o", 32))).Open(KindGaps, "acct-1", same, now); apperr.CodeOf(err) != apperr.InvalidCursor {
		t.Errorf("another key: %v", err)
	}
}

// Research refuses opportunity_score as a filter or an order when the request is checked
// (before the API creates a job): no keyword data source can filter or sort ideas on a
// score computed from the domain's positions after they are read.
func TestResearchRefusesOpportunityOnCheck(t *testing.T) {
	for _, q := range []string{`"filters":{"opportunity_score":{"min":10}}`, `"order_by":["opportunity_score.desc"]`} {
		r := &ResearchRequest{}
		if err := jsonbody.Decode([]byte(`{"domain":"a.com","topic":"coffee",`+q+`}`), r); err != nil {
			t.Fatal(err)
		}
		e, ok := apperr.As(r.Normalize(Options{}))
		if !ok || e.Code != apperr.Validation || !strings.Contains(e.Message, "opportunity") {
			t.Errorf("%s: %v; want a VALIDATION_ERROR naming opportunity_score", q, e)
		}
	}
}
