package report

import (
	"encoding/json"
	"testing"
)

// The stored form of every request is what the previous version stored (these rows were
// written by it): byte for byte, since the bytes are the Idempotency-Key fingerprint, and
// read back by the worker as the same request without checking it again.
func TestStoredRequests(t *testing.T) {
	tests := []struct {
		kind         Kind
		body, stored string
	}{
		{KindResearch, `{"domain":"https://www.Example.com/blog","topic":" cold brew ","keywords":["Cold  Brew","cold brew","espresso"],"country":"UK","limit":20,"callback_url":"https://hooks.example.org/x?y=1"}`, `{"domain":"www.example.com","topic":"cold brew","keywords":["Cold Brew","espresso"],"country":"uk","language":"en","limit":20,"callback_url":"https://hooks.example.org/x?y=1"}`},
		{KindResearch, `{"domain":"example.com"}`, `{"domain":"example.com","country":"us","language":"en","limit":50}`},
		{KindGaps, `{"domain":"example.com","competitors":["rival.com","www.Other.co.uk"],"language":"DE"}`, `{"domain":"example.com","competitors":["rival.com","www.other.co.uk"],"country":"us","language":"de","limit":50}`},
		{KindAudit, `{"domain":"bücher.example","sitemap_url":"https://www.bücher.example/sitemap.xml#x"}`, `{"domain":"xn--bcher-kva.example","sitemap_url":"https://www.xn--bcher-kva.example/sitemap.xml","max_pages":100}`},
		{KindAudit, `{"domain":"example.com","max_pages":25}`, `{"domain":"example.com","max_pages":25}`},
		{KindRecommend, `{"domain":"example.com","focus_topics":["running shoes"],"brand_context":" We sell shoes. ","competitors":["b.com"],"limit":5}`, `{"domain":"example.com","focus_topics":["running shoes"],"brand_context":"We sell shoes.","competitors":["b.com"],"country":"us","language":"en","limit":5}`},
		{KindRecommend, `{"domain":"example.com"}`, `{"domain":"example.com","country":"us","language":"en","limit":10}`},
		{KindContentMap, `{"domain":"example.com","focus_topics":["matcha"],"brand_context":"Tea.","competitors":["b.com","c.com"],"country":"au"}`, `{"domain":"example.com","focus_topics":["matcha"],"competitors":["b.com","c.com"],"brand_context":"Tea.","country":"au","language":"en","limit":20}`},
		{KindContentMap, `{"domain":"example.com"}`, `{"domain":"example.com","country":"us","language":"en","limit":20}`},
	}
	for _, tt := range tests {
		a, ok := Lookup(string(tt.kind))
		if !ok {
			t.Fatalf("%s is not in the catalogue", tt.kind)
		}
		req := a.NewRequest()
		if err := json.Unmarshal([]byte(tt.body), req); err != nil {
			t.Fatal(err)
		}
		if err := req.Normalize(Options{}); err != nil {
			t.Fatalf("%s %s: %v", tt.kind, tt.body, err)
		}
		if got, _ := json.Marshal(req); string(got) != tt.stored {
			t.Errorf("%s %s is stored as\n%s, the previous version stored\n%s", tt.kind, tt.body, got, tt.stored)
		}
		read, err := a.ReadStored([]byte(tt.stored))
		if err != nil {
			t.Fatalf("%s: %v", tt.kind, err)
		}
		if got, _ := json.Marshal(read); string(got) != tt.stored {
			t.Errorf("%s: the worker reads %s as %s", tt.kind, tt.stored, got)
		}
	}
}

// A stored request lacking optional fields (written another way) is read with their
// defaults, and one that is no request at all is ErrBadJob; nothing else is checked.
func TestReadStoredDefaults(t *testing.T) {
	tests := []struct {
		kind         Kind
		stored, want string
	}{
		{KindResearch, `{"domain":"127.0.0.1:8080","topic":"tea"}`, `{"domain":"127.0.0.1:8080","topic":"tea","country":"us","language":"en","limit":50}`},
		{KindGaps, `{"domain":"a.com","competitors":["b.com"],"country":"uk"}`, `{"domain":"a.com","competitors":["b.com"],"country":"uk","language":"en","limit":50}`},
		{KindAudit, `{"domain":"a.com"}`, `{"domain":"a.com","max_pages":100}`},
		{KindRecommend, `{"domain":"a.com","limit":2}`, `{"domain":"a.com","country":"us","language":"en","limit":2}`},
		{KindContentMap, `{"domain":"a.com","country":"au"}`, `{"domain":"a.com","country":"au","language":"en","limit":20}`},
	}
	for _, tt := range tests {
		a, _ := Lookup(string(tt.kind))
		read, err := a.ReadStored([]byte(tt.stored))
		if err != nil {
			t.Fatalf("%s: %v", tt.kind, err)
		}
		if got, _ := json.Marshal(read); string(got) != tt.want {
			t.Errorf("%s: %s is read as %s, want %s", tt.kind, tt.stored, got, tt.want)
		}
		if _, err := a.ReadStored([]byte(`{"domain":`)); err == nil {
			t.Errorf("%s: a broken row is read", tt.kind)
		}
	}
}
