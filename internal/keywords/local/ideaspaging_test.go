package local_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/local"
)

// fillIdeasPaging fills market za/en with 250 keywords about lanterns whose metrics take
// few values (many ties, some unknown), and 20 keywords sharing only "lamp".
func fillIdeasPaging(t *testing.T, p *local.Provider, exec func(sql string) error) {
	t.Helper()
	r := rand.New(rand.NewPCG(7, 20))
	words := []string{"solar", "camping", "paper", "led", "garden", "vintage", "hanging", "battery", "outdoor", "chinese"}
	var b strings.Builder
	b.WriteString(`INSERT INTO keyword_metrics (keyword, country, language, search_volume, keyword_difficulty, cpc, search_intent, source) VALUES `)
	opt := func(ok bool, v string) string {
		if !ok {
			return "NULL"
		}
		return v
	}
	seen := map[string]bool{}
	n := 0
	for n < 250 {
		kw := words[r.IntN(len(words))] + " lantern"
		if r.IntN(2) == 0 {
			kw = words[r.IntN(len(words))] + " " + kw
		}
		if r.IntN(3) == 0 {
			kw += fmt.Sprintf(" %d", r.IntN(40))
		}
		if seen[kw] {
			continue
		}
		seen[kw] = true
		if n > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "('%s', 'za', 'en', %s, %s, %s, %s, 'test')", kw,
			opt(r.IntN(8) > 0, fmt.Sprint([]int{10, 50, 100, 500}[r.IntN(4)])),
			opt(r.IntN(6) > 0, fmt.Sprint([]int{10, 30, 60}[r.IntN(3)])),
			opt(r.IntN(5) > 0, fmt.Sprint([]float64{0.5, 1.25}[r.IntN(2)])),
			opt(r.IntN(4) > 0, "'"+[]string{"commercial", "informational"}[r.IntN(2)]+"'"))
		n++
	}
	if err := exec(b.String()); err != nil {
		t.Fatal(err)
	}
}

// Research pages: walking every page of 7 returns each idea once, in the order of the
// answer of one page holding them all, as many as total, for several filters and orders,
// on the plain query and on the bounded look-ups, with and without a Keep rule and a bound
// on the walk.
func TestIdeasPaging(t *testing.T) {
	pool := db(t)
	p := local.New(pool)
	ctx := context.Background()
	fillIdeasPaging(t, p, func(sql string) error { _, err := pool.Exec(ctx, sql); return err })
	f := func(v float64) *float64 { return &v }
	noSix := func(k keywords.Keyword) bool { return !strings.Contains(k.Keyword, "6") }
	cases := []struct {
		name  string
		req   keywords.IdeasRequest
		bound func(t *testing.T)
	}{
		{"relevance", keywords.IdeasRequest{Topic: "lantern"}, nil},
		{"volume desc", keywords.IdeasRequest{Topic: "lantern", Order: []keywords.OrderKey{{Field: keywords.FieldSearchVolume, Desc: true}}}, nil},
		{"difficulty asc, cpc desc", keywords.IdeasRequest{Topic: "garden lantern", Order: []keywords.OrderKey{
			{Field: keywords.FieldDifficulty}, {Field: keywords.FieldCPC, Desc: true}}}, nil},
		{"filtered, keyword desc", keywords.IdeasRequest{Topic: "lantern", Filters: keywords.Filters{
			Ranges:  map[keywords.Field]keywords.Range{keywords.FieldSearchVolume: {Min: f(50)}},
			Exclude: []string{"paper"}, Intents: []string{"commercial"}},
			Order: []keywords.OrderKey{{Field: keywords.FieldKeyword, Desc: true}}}, nil},
		{"keep rule", keywords.IdeasRequest{Topic: "solar lantern", Keep: noSix, KeepRule: "no six"}, nil},
		{"bounded look-ups", keywords.IdeasRequest{Topic: "camping lantern", Order: []keywords.OrderKey{{Field: keywords.FieldCPC}}},
			func(t *testing.T) { local.BoundIdeas(t, nil) }},
		{"walk of 60", keywords.IdeasRequest{Topic: "lantern", Order: []keywords.OrderKey{{Field: keywords.FieldSearchVolume}}},
			func(t *testing.T) { local.WalkIdeas(t, 60) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.bound != nil {
				c.bound(t)
			}
			req := c.req
			req.Country, req.Language = "za", "en"
			req.Page = keywords.Page{Limit: 1000}
			all, err := p.Ideas(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if all.Total != len(all.Ideas) || all.Next != "" || all.Total < 15 {
				t.Fatalf("one page: total %d, %d ideas, next %q; want them all, at least 15", all.Total, len(all.Ideas), all.Next)
			}
			if c.name == "walk of 60" && all.Total != 60 {
				t.Fatalf("walk of 60: total %d", all.Total)
			}
			checkIdeasOrder(t, req, all.Ideas)
			var walked []string
			seen := map[string]bool{}
			req.Page = keywords.Page{Limit: 7}
			for pages := 0; ; pages++ {
				if pages > all.Total {
					t.Fatal("the pages do not end")
				}
				page, err := p.Ideas(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				if page.Total != all.Total {
					t.Fatalf("page %d: total %d, want %d", pages+1, page.Total, all.Total)
				}
				for _, k := range page.Ideas {
					if seen[k.Keyword] {
						t.Fatalf("page %d: %q came back twice", pages+1, k.Keyword)
					}
					seen[k.Keyword] = true
					walked = append(walked, k.Keyword)
				}
				if page.Next == "" {
					break
				}
				if len(page.Ideas) != 7 {
					t.Fatalf("page %d: %d ideas with a next page", pages+1, len(page.Ideas))
				}
				req.Page.After = page.Next
			}
			if len(walked) != all.Total {
				t.Fatalf("walked %d ideas, total %d", len(walked), all.Total)
			}
			for i, k := range all.Ideas {
				if walked[i] != k.Keyword {
					t.Fatalf("idea %d: %q, the single page has %q", i, walked[i], k.Keyword)
				}
			}
		})
	}
	if _, err := p.Ideas(ctx, keywords.IdeasRequest{Topic: "lantern", Country: "za", Language: "en",
		Page: keywords.Page{Limit: 7, After: "not a token"}}); err == nil {
		t.Error("a bad token was accepted")
	}
}

// checkIdeasOrder checks that ideas pass the request's filters and rule and are in its
// order (unknowns last, then the keyword).
func checkIdeasOrder(t *testing.T, req keywords.IdeasRequest, ideas []keywords.Keyword) {
	t.Helper()
	value := func(k keywords.Keyword, f keywords.Field) (float64, bool) {
		switch f {
		case keywords.FieldSearchVolume:
			if k.SearchVolume != nil {
				return float64(*k.SearchVolume), true
			}
		case keywords.FieldDifficulty:
			if k.Difficulty != nil {
				return *k.Difficulty, true
			}
		case keywords.FieldCPC:
			if k.CPC != nil {
				return *k.CPC, true
			}
		}
		return 0, false
	}
	order := req.Order
	for i, k := range ideas {
		if req.Keep != nil && !req.Keep(k) {
			t.Fatalf("%q breaks the keep rule", k.Keyword)
		}
		for _, w := range req.Filters.Exclude {
			if strings.Contains(k.Keyword, w) {
				t.Fatalf("%q holds excluded %q", k.Keyword, w)
			}
		}
		if len(req.Filters.Intents) > 0 && k.Intent != req.Filters.Intents[0] {
			t.Fatalf("%q has intent %q", k.Keyword, k.Intent)
		}
		if i == 0 {
			continue
		}
		a := ideas[i-1]
		c := 0
		if len(order) == 0 {
			c = cmp.Compare(k.Relevance, a.Relevance) // descending
		}
		for _, o := range order {
			if c != 0 {
				break
			}
			if o.Field == keywords.FieldKeyword {
				c = strings.Compare(a.Keyword, k.Keyword)
			} else {
				va, oka := value(a, o.Field)
				vb, okb := value(k, o.Field)
				switch {
				case !oka && !okb:
					continue
				case !oka:
					c = 1
				case !okb:
					c = -1
				default:
					c = cmp.Compare(va, vb)
				}
				if o.Field != keywords.FieldKeyword && oka && okb && o.Desc {
					c = -c
				}
				continue
			}
			if o.Desc {
				c = -c
			}
		}
		if c > 0 {
			t.Fatalf("%q (%d) before %q: not in the order %v", a.Keyword, i-1, k.Keyword, order)
		}
	}
}
