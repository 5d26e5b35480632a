package local_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/local"
)

// pagingGap is a gap as the test computes it.
type pagingGap struct {
	key            string
	volume         *int64
	difficulty     *float64
	cpc            *float64
	intent         string
	cpos           int
	hasMetricsRows bool
}

// setsFixture is the package's database with the paging fixture stored and the keyword
// sets built over it: what the column tests read.
func setsFixture(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool := db(t)
	pagingFixture(t, pool)
	if err := local.BuildKeywordSets(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
	return pool
}

// pagingFixture fills market pg/en with 600 keywords whose metrics take few values (many
// ties, some unknown, some keywords without a metrics row), ranked by ours.example and two
// competitors (some keywords with two URLs), and returns the gaps of ours against both.
func pagingFixture(t *testing.T, pool *pgxpool.Pool) []pagingGap {
	t.Helper()
	pagingOnce.Do(func() { pagingGaps, pagingErr = fillPagingFixture(pool) })
	if pagingErr != nil {
		t.Fatal(pagingErr)
	}
	return pagingGaps
}

var (
	pagingOnce sync.Once
	pagingGaps []pagingGap
	pagingErr  error
)

func fillPagingFixture(pool *pgxpool.Pool) ([]pagingGap, error) {
	r := rand.New(rand.NewPCG(20, 1))
	words := []string{"alpha", "beta", "gamma", "delta", "omega"}
	var metrics, rankings strings.Builder
	metrics.WriteString(`INSERT INTO keyword_metrics (keyword, country, language, search_volume, keyword_difficulty, cpc, search_intent, source) VALUES `)
	rankings.WriteString(`INSERT INTO domain_rankings (domain, keyword, country, language, position, url, source) VALUES `)
	intents := []string{"informational", "commercial", "transactional", ""}
	var gaps []pagingGap
	nm, nr := 0, 0
	sqlOr := func(ok bool, v func() string) string {
		if !ok {
			return "NULL"
		}
		return v()
	}
	for i := range 600 {
		kw := fmt.Sprintf("k%03d %s", (i*7919)%1000, words[r.IntN(len(words))])
		g := pagingGap{key: kw, intent: intents[r.IntN(4)], hasMetricsRows: r.IntN(12) != 0}
		if g.hasMetricsRows {
			if r.IntN(6) != 0 {
				v := int64(10 * r.IntN(4))
				g.volume = &v
			}
			if r.IntN(5) != 0 {
				d := float64(10 * r.IntN(3))
				g.difficulty = &d
			}
			if r.IntN(4) != 0 {
				c := 0.5 * float64(r.IntN(3))
				g.cpc = &c
			}
			if nm > 0 {
				metrics.WriteString(",")
			}
			nm++
			fmt.Fprintf(&metrics, "('%s','pg','en',%s,%s,%s,%s,'test')", kw,
				sqlOr(g.volume != nil, func() string { return fmt.Sprint(*g.volume) }),
				sqlOr(g.difficulty != nil, func() string { return fmt.Sprint(*g.difficulty) }),
				sqlOr(g.cpc != nil, func() string { return fmt.Sprint(*g.cpc) }),
				sqlOr(g.intent != "", func() string { return "'" + g.intent + "'" }))
		} else {
			g.intent = ""
		}
		rank := func(domain string, pos int, url string) {
			if nr > 0 {
				rankings.WriteString(",")
			}
			nr++
			fmt.Fprintf(&rankings, "('%s','%s','pg','en',%d,'%s','test')", domain, kw, pos, url)
		}
		ours := r.IntN(5) == 0
		if ours {
			rank("ours.example", 1+r.IntN(50), "https://ours.example/"+fmt.Sprint(i))
		}
		g.cpos = 1000
		for _, c := range []string{"comp1.example", "comp2.example"} {
			if r.IntN(3) == 0 {
				continue
			}
			pos := 1 + r.IntN(30)
			rank(c, pos, "https://"+c+"/"+fmt.Sprint(i))
			g.cpos = min(g.cpos, pos)
			if r.IntN(10) == 0 { // a second URL, ranking worse
				rank(c, pos+3, "https://"+c+"/b/"+fmt.Sprint(i))
			}
		}
		if !ours && g.cpos < 1000 {
			gaps = append(gaps, g)
		}
	}
	_, err := pool.Exec(context.Background(), metrics.String()+"; "+rankings.String())
	return gaps, err
}

func fptr(v float64) *float64 { return &v }

// gapValue is a gap's value of a field, nil when unknown.
func gapValue(g pagingGap, f keywords.Field) *float64 {
	switch f {
	case keywords.FieldSearchVolume:
		if g.volume == nil {
			return nil
		}
		return fptr(float64(*g.volume))
	case keywords.FieldDifficulty:
		return g.difficulty
	case keywords.FieldCPC:
		return g.cpc
	case keywords.FieldCompetitorPosition:
		return fptr(float64(g.cpos))
	}
	panic(f)
}

// expectGaps filters and orders the fixture's gaps as the provider should.
func expectGaps(all []pagingGap, f keywords.Filters, order []keywords.OrderKey) []string {
	if len(order) == 0 {
		order = []keywords.OrderKey{{Field: keywords.FieldSearchVolume, Desc: true}}
	}
	var out []pagingGap
next:
	for _, g := range all {
		for field, r := range f.Ranges {
			v := gapValue(g, field)
			if v == nil || (r.Min != nil && *v < *r.Min) || (r.Max != nil && *v > *r.Max) {
				continue next
			}
		}
		if len(f.Intents) > 0 && !slices.Contains(f.Intents, g.intent) {
			continue
		}
		words := strings.Fields(g.key)
		for _, w := range f.Include {
			if !slices.Contains(words, w) {
				continue next
			}
		}
		for _, w := range f.Exclude {
			if slices.Contains(words, w) {
				continue next
			}
		}
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b pagingGap) int {
		for _, o := range order {
			if o.Field == keywords.FieldKeyword {
				if c := strings.Compare(a.key, b.key); c != 0 {
					if o.Desc {
						return -c
					}
					return c
				}
				continue
			}
			va, vb := gapValue(a, o.Field), gapValue(b, o.Field)
			switch {
			case va == nil && vb == nil:
				continue
			case va == nil:
				return 1
			case vb == nil:
				return -1
			}
			if c := cmp.Compare(*va, *vb); c != 0 {
				if o.Desc {
					return -c
				}
				return c
			}
		}
		return strings.Compare(a.key, b.key)
	})
	keys := make([]string, len(out))
	for i, g := range out {
		keys[i] = g.key
	}
	return keys
}

// Paging through every gap, a few at a time, returns each exactly once and in order, for
// several orders with ties and unknown values, with and without filters, and the total is
// the number of gaps passing the filters on every page.
func TestGapsPagingReturnsEachGapOnceInOrder(t *testing.T) {
	pool := db(t)
	all := pagingFixture(t, pool)
	p := local.New(pool)
	// In SQL, then on the keyword columns (columns.go), which need fresh keyword sets.
	t.Run("sql", func(t *testing.T) {
		local.ColumnsOff(t)
		testGapsPaging(t, p, all)
	})
	t.Run("columns", func(t *testing.T) {
		if err := local.BuildKeywordSets(context.Background(), pool); err != nil {
			t.Fatal(err)
		}
		before := local.ColumnAnswers()
		testGapsPaging(t, p, all)
		if local.ColumnAnswers() == before {
			t.Fatal("no answer came from the keyword columns")
		}
	})
}

func testGapsPaging(t *testing.T, p *local.Provider, all []pagingGap) {
	asc := func(f keywords.Field) keywords.OrderKey { return keywords.OrderKey{Field: f} }
	desc := func(f keywords.Field) keywords.OrderKey { return keywords.OrderKey{Field: f, Desc: true} }
	cases := []struct {
		name    string
		filters keywords.Filters
		order   []keywords.OrderKey
	}{
		{"default", keywords.Filters{}, nil},
		{"difficulty asc, cpc desc", keywords.Filters{}, []keywords.OrderKey{asc(keywords.FieldDifficulty), desc(keywords.FieldCPC)}},
		{"position, volume asc", keywords.Filters{}, []keywords.OrderKey{asc(keywords.FieldCompetitorPosition), asc(keywords.FieldSearchVolume)}},
		{"keyword desc", keywords.Filters{}, []keywords.OrderKey{desc(keywords.FieldKeyword)}},
		{"three keys", keywords.Filters{}, []keywords.OrderKey{desc(keywords.FieldCPC), asc(keywords.FieldSearchVolume), desc(keywords.FieldDifficulty)}},
		{"volume and words", keywords.Filters{Ranges: map[keywords.Field]keywords.Range{keywords.FieldSearchVolume: {Min: fptr(10)}},
			Exclude: []string{"beta"}}, nil},
		{"position range, include", keywords.Filters{Ranges: map[keywords.Field]keywords.Range{keywords.FieldCompetitorPosition: {Min: fptr(3), Max: fptr(12)}},
			Include: []string{"alpha"}}, nil},
		{"intent, difficulty max", keywords.Filters{Intents: []string{"commercial", "transactional"},
			Ranges: map[keywords.Field]keywords.Range{keywords.FieldDifficulty: {Max: fptr(10)}}}, []keywords.OrderKey{asc(keywords.FieldCPC)}},
	}
	for _, tc := range cases {
		want := expectGaps(all, tc.filters, tc.order)
		if len(want) < 20 {
			t.Fatalf("%s: the fixture has only %d such gaps", tc.name, len(want))
		}
		for _, limit := range []int{23, 1000} {
			var got []string
			after := ""
			for page := 0; ; page++ {
				if page > len(want)+1 {
					t.Fatalf("%s, limit %d: paging does not end", tc.name, limit)
				}
				list, err := p.Gaps(context.Background(), keywords.GapsRequest{Domain: "ours.example",
					Competitors: []string{"comp1.example", "comp2.example"}, Country: "pg", Language: "en",
					Limit: limit, Filters: tc.filters, Order: tc.order, After: after})
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				if list.Total != len(want) {
					t.Fatalf("%s, limit %d, page %d: total %d, want %d", tc.name, limit, page, list.Total, len(want))
				}
				for _, g := range list.Gaps {
					got = append(got, strings.ToLower(g.Keyword.Keyword))
				}
				if list.Next == "" {
					break
				}
				if len(list.Gaps) != limit {
					t.Fatalf("%s: a page of %d before the last", tc.name, len(list.Gaps))
				}
				after = list.Next
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s, limit %d: got %d gaps, want %d\n got %v\nwant %v", tc.name, limit, len(got), len(want), head(got), head(want))
			}
		}
	}
}

func head(s []string) []string { return s[:min(len(s), 30)] }

// A token of another order is refused, not read as a position of this one.
func TestGapsTokenOfAnotherOrder(t *testing.T) {
	pool := db(t)
	p := local.New(pool)
	req := keywords.GapsRequest{Domain: "ours.example", Competitors: []string{"comp1.example"}, Country: "ca", Language: "en", Limit: 1}
	first, err := p.Gaps(context.Background(), req)
	if err != nil || first.Next == "" {
		t.Fatalf("first page: %v %+v", err, first)
	}
	req.After = first.Next
	req.Order = []keywords.OrderKey{{Field: keywords.FieldCPC}, {Field: keywords.FieldDifficulty}}
	if _, err := p.Gaps(context.Background(), req); err == nil {
		t.Fatal("a token of another order was accepted")
	}
}

// Without filters the total is counted on the keyword sets once they are built, the same
// number SQL counts; a write to the rankings makes them stale (SQL counts again) until the
// next build.
func TestGapsCountOnKeywordSets(t *testing.T) {
	pool := db(t)
	pagingFixture(t, pool)
	p := local.New(pool)
	ctx := context.Background()
	total := func(competitors ...string) int {
		t.Helper()
		list, err := p.Gaps(ctx, keywords.GapsRequest{Domain: "ours.example", Competitors: competitors, Country: "pg", Language: "en", Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		return list.Total
	}
	combos := [][]string{{"comp1.example"}, {"comp2.example"}, {"comp1.example", "comp2.example"}, {"comp2.example", "nobody.example"}}
	var inSQL []int
	for _, c := range combos {
		inSQL = append(inSQL, total(c...))
	}
	if err := local.BuildKeywordSets(ctx, pool); err != nil {
		t.Fatal(err)
	}
	for i, c := range combos {
		if n := total(c...); n != inSQL[i] || n == 0 {
			t.Errorf("%v: %d on the sets, %d in SQL", c, n, inSQL[i])
		}
	}
	// The sets are what is read: emptying one shows in the total. (From here on in SQL: the
	// keyword columns keep the sets they decoded for the data's version, and an UPDATE of
	// a set by hand does not move it; TestColumnsAnswerAsSQL compares them with SQL.)
	local.ColumnsOff(t)
	if _, err := pool.Exec(ctx, `UPDATE domain_keyword_sets SET ids = $1 WHERE country = 'pg' AND domain = 'comp2.example'`, emptySet(t)); err != nil {
		t.Fatal(err)
	}
	if n := total("comp2.example"); n != 0 {
		t.Errorf("an emptied set counts %d", n)
	}
	// A ranking written after the build: the sets are stale, SQL counts it.
	if _, err := pool.Exec(ctx, `INSERT INTO domain_rankings (domain, keyword, country, language, position, source)
		VALUES ('comp2.example', 'brand new gap', 'pg', 'en', 4, 'test')`); err != nil {
		t.Fatal(err)
	}
	if n := total("comp2.example"); n != inSQL[1]+1 {
		t.Errorf("after a write: %d, want %d", n, inSQL[1]+1)
	}
	if err := local.BuildKeywordSets(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if n := total("comp2.example"); n != inSQL[1]+1 {
		t.Errorf("rebuilt: %d, want %d", n, inSQL[1]+1)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM domain_rankings WHERE keyword = 'brand new gap'`); err != nil {
		t.Fatal(err)
	}
}

func emptySet(t *testing.T) []byte {
	b, err := roaring.New().ToBytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestKeywordSetBuildsConcurrent: keyword-set builds running at once
// beside writes to domain_rankings (imports finishing together) all succeed, and the last build leaves sets that count
// what SQL counts.
func TestKeywordSetBuildsConcurrent(t *testing.T) {
	pool := db(t)
	ctx := context.Background()
	// A market of its own, so the package's other tests never see these rows.
	t.Cleanup(func() {
		_, _ = pool.Exec(ctx, `DELETE FROM domain_rankings WHERE country = 'zc'`)
		_ = local.BuildKeywordSets(ctx, pool)
	})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 8 {
		wg.Go(func() {
			if _, err := pool.Exec(ctx, `INSERT INTO domain_rankings (domain, keyword, country, language, position, source)
				VALUES ('comp1.example', $1, 'zc', 'en', 3, 'test')`, fmt.Sprintf("concurrent gap %d", i)); err != nil {
				errs <- err
			}
			if err := local.BuildKeywordSets(ctx, pool); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := local.BuildKeywordSets(ctx, pool); err != nil {
		t.Fatal(err)
	}
	var fresh bool
	if err := pool.QueryRow(ctx, `SELECT generation = built FROM keyword_sets_state`).Scan(&fresh); err != nil || !fresh {
		t.Fatalf("sets fresh %v after the last build (%v)", fresh, err)
	}
}
