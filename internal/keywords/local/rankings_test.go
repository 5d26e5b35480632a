package local_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/local"
)

// A generated market ("au"/"en") for paging tests: a few domains whose rankings tie often
// (positions and metrics drawn from small sets, some unknown), some keywords ranked with
// two URLs, some without a keyword row. The tests check the provider against answers
// computed here from the same rows.

type pagedRow struct {
	keyword         string
	volume          *int64
	difficulty, cpc *float64
	intent          string
	position        int
	url             string
	hasMetrics      bool
	domain          string
}

var (
	pagedOnce sync.Once
	pagedRows []pagedRow // one per domain and keyword: the best position and its URL
)

func pagedMarket(t *testing.T) []pagedRow {
	t.Helper()
	pool := db(t)
	pagedOnce.Do(func() {
		r := rand.New(rand.NewPCG(20, 3))
		words := []string{"red", "blue", "green", "grinder", "mill", "kettle", "cheap", "best"}
		intents := []string{"", "informational", "commercial", "transactional"}
		type metrics struct {
			volume          *int64
			difficulty, cpc *float64
			intent          string
			ok              bool
		}
		kw := map[string]metrics{}
		var keys []string
		for i := 0; i < 160; i++ {
			k := fmt.Sprintf("%s %s k%03d", words[r.IntN(len(words))], words[r.IntN(len(words))], i)
			m := metrics{ok: r.IntN(10) != 0, intent: intents[r.IntN(len(intents))]}
			if r.IntN(6) != 0 {
				v := int64([]int{0, 10, 10, 50, 1000}[r.IntN(5)])
				m.volume = &v
			}
			if r.IntN(5) != 0 {
				d := float64(r.IntN(4) * 10)
				m.difficulty = &d
			}
			if r.IntN(4) != 0 {
				c := []float64{0.5, 1.25, 2}[r.IntN(3)]
				m.cpc = &c
			}
			kw[k] = m
			keys = append(keys, k)
			if m.ok {
				_, err := pool.Exec(context.Background(), `INSERT INTO keyword_metrics
					(keyword, country, language, search_volume, keyword_difficulty, cpc, search_intent, source)
					VALUES ($1, 'au', 'en', $2, $3, $4, nullif($5, ''), 'test')`, k, m.volume, m.difficulty, m.cpc, m.intent)
				if err != nil {
					t.Fatal(err)
				}
			}
		}
		domains := []string{"big.example", "mid.example", "small.example", "tiny.example"}
		shares := []int{100, 60, 30, 8}
		for di, d := range domains {
			perm := r.Perm(len(keys))[:min(shares[di], len(keys))]
			if di == 0 {
				perm = r.Perm(len(keys))[:140]
			}
			for _, i := range perm {
				k := keys[i]
				pos := []int{1, 2, 3, 3, 5, 9, 12, 12, 30, 60, 99, 101}[r.IntN(12)]
				u := fmt.Sprintf("https://%s/%d", d, i)
				rows := [][2]any{{pos, u}}
				if r.IntN(5) == 0 { // a second, worse URL, and sometimes an equal one
					rows = append(rows, [2]any{pos + 1 + r.IntN(5), u + "/b"})
				}
				if r.IntN(9) == 0 {
					rows = append(rows, [2]any{pos, u + "/a"})
				}
				for _, row := range rows {
					if _, err := pool.Exec(context.Background(), `INSERT INTO domain_rankings (domain, keyword, country, language, position, url, source)
						VALUES ($1, $2, 'au', 'en', $3, $4, 'test')`, d, k, row[0], row[1]); err != nil {
						t.Fatal(err)
					}
				}
				m := kw[k]
				pr := pagedRow{keyword: k, position: pos, url: u, domain: d, hasMetrics: m.ok}
				if m.ok {
					pr.volume, pr.difficulty, pr.cpc, pr.intent = m.volume, m.difficulty, m.cpc, m.intent
				}
				pagedRows = append(pagedRows, pr)
			}
		}
	})
	return pagedRows
}

// fieldValue is a row's value of a field, nil when unknown.
func fieldValue(r pagedRow, f keywords.Field) *float64 {
	switch f {
	case keywords.FieldSearchVolume:
		if r.volume == nil {
			return nil
		}
		v := float64(*r.volume)
		return &v
	case keywords.FieldDifficulty:
		return r.difficulty
	case keywords.FieldCPC:
		return r.cpc
	case keywords.FieldPosition:
		v := float64(r.position)
		return &v
	case keywords.FieldTraffic:
		t := keywords.EstimatedTraffic(r.volume, r.position)
		if t == nil {
			return nil
		}
		v := float64(*t)
		return &v
	}
	panic("field " + f)
}

func passes(r pagedRow, f keywords.Filters) bool {
	for field, rg := range f.Ranges {
		v := fieldValue(r, field)
		if v == nil || (rg.Min != nil && *v < *rg.Min) || (rg.Max != nil && *v > *rg.Max) {
			return false
		}
	}
	if len(f.Intents) > 0 && !slices.Contains(f.Intents, r.intent) {
		return false
	}
	words := strings.Fields(r.keyword)
	for _, w := range f.Include {
		if !slices.Contains(words, w) {
			return false
		}
	}
	for _, w := range f.Exclude {
		if slices.Contains(words, w) {
			return false
		}
	}
	return true
}

// compareRows orders rows as the provider documents: each key with unknowns last, then the
// keyword ascending.
func compareRows(order []keywords.OrderKey) func(a, b pagedRow) int {
	return func(a, b pagedRow) int {
		for _, k := range order {
			var c int
			if k.Field == keywords.FieldKeyword {
				c = strings.Compare(a.keyword, b.keyword)
			} else {
				va, vb := fieldValue(a, k.Field), fieldValue(b, k.Field)
				switch {
				case va == nil && vb == nil:
				case va == nil:
					c = 1
				case vb == nil:
					c = -1
				default:
					c = cmp.Compare(*va, *vb)
					if k.Desc {
						c = -c
					}
				}
				if c != 0 {
					return c
				}
				continue
			}
			if k.Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return strings.Compare(a.keyword, b.keyword)
	}
}

func ptr(v float64) *float64 { return &v }

func TestRankingsPagesEveryRowOnceInOrder(t *testing.T) {
	all := pagedMarket(t)
	pool := db(t)
	p := local.New(pool)
	// Both ways: the rankings joined to the keyword table (the keyword sets stale), then
	// the keyword columns (columns.go), which need fresh keyword sets.
	for _, source := range []string{"joined", "columns"} {
		switch source {
		case "joined":
			// A statement writing no row still moves the generation on: the keyword sets
			// are stale, whatever other tests built.
			if _, err := pool.Exec(context.Background(), `DELETE FROM domain_rankings WHERE false`); err != nil {
				t.Fatal(err)
			}
		case "columns":
			if err := local.BuildKeywordSets(context.Background(), pool); err != nil {
				t.Fatal(err)
			}
		}
		before := local.ColumnAnswers()
		testRankingsPaging(t, source, p, all)
		if onColumns := local.ColumnAnswers() > before; onColumns != (source == "columns") {
			t.Fatalf("%s: answers from the keyword columns: %v", source, onColumns)
		}
	}
}

func testRankingsPaging(t *testing.T, source string, p *local.Provider, all []pagedRow) {
	cases := []struct {
		name    string
		filters keywords.Filters
		order   []keywords.OrderKey
	}{
		{name: "default order"},
		{name: "volume desc", order: []keywords.OrderKey{{Field: keywords.FieldSearchVolume, Desc: true}}},
		{name: "difficulty asc, cpc desc, position", order: []keywords.OrderKey{{Field: keywords.FieldDifficulty}, {Field: keywords.FieldCPC, Desc: true}, {Field: keywords.FieldPosition}}},
		{name: "traffic desc", order: []keywords.OrderKey{{Field: keywords.FieldTraffic, Desc: true}}},
		{name: "keyword desc", order: []keywords.OrderKey{{Field: keywords.FieldKeyword, Desc: true}}},
		{name: "filtered", filters: keywords.Filters{Ranges: map[keywords.Field]keywords.Range{
			keywords.FieldSearchVolume: {Min: ptr(10)}, keywords.FieldPosition: {Max: ptr(20)}}},
			order: []keywords.OrderKey{{Field: keywords.FieldCPC}}},
		{name: "words and intent", filters: keywords.Filters{Intents: []string{"commercial", "informational"},
			Include: []string{"grinder"}, Exclude: []string{"cheap"}}},
		{name: "traffic range", filters: keywords.Filters{Ranges: map[keywords.Field]keywords.Range{
			keywords.FieldTraffic: {Min: ptr(1), Max: ptr(300)}}}, order: []keywords.OrderKey{{Field: keywords.FieldTraffic}}},
	}
	for _, c := range cases {
		for _, domain := range []string{"big.example", "tiny.example"} {
			t.Run(source+" "+c.name+" "+domain, func(t *testing.T) {
				var want []pagedRow
				for _, r := range all {
					if r.domain == domain && passes(r, c.filters) {
						want = append(want, r)
					}
				}
				order := c.order
				if len(order) == 0 {
					order = []keywords.OrderKey{{Field: keywords.FieldPosition}, {Field: keywords.FieldSearchVolume, Desc: true}}
				}
				slices.SortFunc(want, compareRows(order))
				bands := map[string]int{"1-3": 0, "4-10": 0, "11-20": 0, "21-50": 0, "51-100": 0}
				for _, r := range want {
					for _, b := range keywords.Bands {
						if r.position >= b.From && r.position <= b.To {
							bands[b.Name]++
						}
					}
				}
				var got []keywords.Ranking
				after := ""
				for pages := 0; ; pages++ {
					if pages > len(want)+1 {
						t.Fatal("paging does not end")
					}
					list, err := p.Rankings(context.Background(), keywords.RankingsRequest{Domain: "WWW." + strings.ToUpper(domain),
						Country: "au", Language: "en", Filters: c.filters, Order: c.order, Page: keywords.Page{Limit: 7, After: after}})
					if err != nil {
						t.Fatal(err)
					}
					if list.Total != len(want) {
						t.Fatalf("total %d, want %d", list.Total, len(want))
					}
					if !mapsEqual(list.Bands, bands) {
						t.Fatalf("bands %v, want %v", list.Bands, bands)
					}
					got = append(got, list.Rankings...)
					if list.Next == "" {
						break
					}
					if len(list.Rankings) != 7 {
						t.Fatalf("page of %d rows with a next token", len(list.Rankings))
					}
					after = list.Next
				}
				if len(got) != len(want) {
					t.Fatalf("paged %d rows, want %d", len(got), len(want))
				}
				for i := range want {
					g, w := got[i], want[i]
					if g.Keyword.Keyword != w.keyword || g.Position != w.position || g.URL != w.url {
						t.Fatalf("row %d: got %s #%d %s, want %s #%d %s", i, g.Keyword.Keyword, g.Position, g.URL, w.keyword, w.position, w.url)
					}
					if !eqInt(g.SearchVolume, w.volume) || !eqFloat(g.Difficulty, w.difficulty) || !eqFloat(g.CPC, w.cpc) || g.Intent != w.intent {
						t.Fatalf("row %d %s: metrics differ", i, w.keyword)
					}
					if !eqInt(g.EstimatedTraffic, keywords.EstimatedTraffic(w.volume, w.position)) {
						t.Fatalf("row %d %s: traffic %v", i, w.keyword, g.EstimatedTraffic)
					}
				}
			})
		}
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

func eqInt(a, b *int64) bool     { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
func eqFloat(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func TestRankingsUnsupportedFieldAndBadToken(t *testing.T) {
	p := local.New(db(t))
	_, err := p.Rankings(context.Background(), keywords.RankingsRequest{Domain: "ours.example", Country: "ca",
		Order: []keywords.OrderKey{{Field: keywords.FieldCompetitorPosition}}})
	if !errors.Is(err, keywords.ErrUnsupported) {
		t.Fatalf("order by competitor_position: %v, want ErrUnsupported", err)
	}
	_, err = p.Rankings(context.Background(), keywords.RankingsRequest{Domain: "ours.example", Country: "ca",
		Page: keywords.Page{Limit: 5, After: "not-a-token"}})
	if !errors.Is(err, local.ErrBadToken) {
		t.Fatalf("bad token: %v", err)
	}
}
