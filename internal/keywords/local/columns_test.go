package local_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/local"
)

// randomQuery draws filters and an order of up to three keys over the fields given, with
// bounds taken from the fixtures' value sets (so ties and edges are hit).
func randomQuery(r *rand.Rand, fields []keywords.Field, words []string) (keywords.Filters, []keywords.OrderKey) {
	var f keywords.Filters
	bound := func(field keywords.Field) *float64 {
		var vs []float64
		switch field {
		case keywords.FieldSearchVolume:
			vs = []float64{0, 10, 20, 49.5, 50, 1000}
		case keywords.FieldDifficulty:
			vs = []float64{0, 10, 15, 20, 30}
		case keywords.FieldCPC:
			vs = []float64{0.5, 1, 1.25, 2}
		case keywords.FieldTraffic:
			vs = []float64{0, 1, 3, 30, 300}
		default: // positions
			vs = []float64{1, 3, 4, 10, 12, 30, 101}
		}
		v := vs[r.IntN(len(vs))]
		return &v
	}
	for _, field := range fields {
		if r.IntN(4) != 0 {
			continue
		}
		if f.Ranges == nil {
			f.Ranges = map[keywords.Field]keywords.Range{}
		}
		var rg keywords.Range
		if r.IntN(2) == 0 {
			rg.Min = bound(field)
		}
		if r.IntN(2) == 0 || rg.Min == nil {
			rg.Max = bound(field)
		}
		f.Ranges[field] = rg
	}
	if r.IntN(4) == 0 {
		f.Intents = []string{"commercial", "informational"}[:1+r.IntN(2)]
	}
	if r.IntN(4) == 0 {
		f.Include = []string{words[r.IntN(len(words))]}
	}
	if r.IntN(4) == 0 {
		if w := words[r.IntN(len(words))]; len(f.Include) == 0 || f.Include[0] != w {
			f.Exclude = []string{w}
		}
	}
	var order []keywords.OrderKey
	for n := r.IntN(4); len(order) < n; {
		all := append([]keywords.Field{keywords.FieldKeyword}, fields...)
		k := keywords.OrderKey{Field: all[r.IntN(len(all))], Desc: r.IntN(2) == 0}
		dup := false
		for _, o := range order {
			dup = dup || o.Field == k.Field
		}
		if !dup {
			order = append(order, k)
		}
	}
	return f, order
}

// The keyword columns answer as SQL does: for random filters, orders and page sizes, every
// page of gaps and of rankings, its total, bands and next-page token are the same on the
// columns and in SQL (the tokens too: a cursor from one continues on the other).
func TestColumnsAnswerAsSQL(t *testing.T) {
	pool := db(t)
	pagingFixture(t, pool)
	pagedMarket(t)
	ctx := context.Background()
	// Three providers: the columns in the heap, in a column file this process writes, and
	// in one it finds written.
	dir := t.TempDir()
	warn := func(err error) { t.Errorf("column file: %v", err) }
	heap, written, found := local.New(pool), local.New(pool, local.WithColumnFiles(dir, warn)), local.New(pool, local.WithColumnFiles(dir, warn))
	// A bound of one byte: the mapped files' pages are let go after every question's use of
	// them, and read again by the next.
	old := local.SetMappedMemoryLimit(1)
	t.Cleanup(func() { local.SetMappedMemoryLimit(old) })
	trims := local.MappedTrims()
	// Each market's keyword texts in many chunks, as at ten million keywords.
	local.SmallDictChunks(t, 256)
	if err := local.BuildKeywordSets(ctx, pool); err != nil {
		t.Fatal(err)
	}
	var chunks int
	if err := pool.QueryRow(ctx, `SELECT max(chunk) + 1 FROM keyword_set_keywords`).Scan(&chunks); err != nil || chunks < 3 {
		t.Fatalf("the keyword texts in %d chunk(s) (%v), want several", chunks, err)
	}
	r := rand.New(rand.NewPCG(26, 11))
	type answer struct {
		Total int
		Bands map[string]int
		Next  string
		Rows  any
	}
	// ask pages through a question to its end with p, on the columns or (columnsOff) in SQL.
	ask := func(t *testing.T, name string, p *local.Provider, f func(p *local.Provider, after string) (answer, error)) []answer {
		t.Helper()
		var out []answer
		columns := name != "sql"
		t.Run(name, func(t *testing.T) {
			if !columns {
				local.ColumnsOff(t)
			}
			before := local.ColumnAnswers()
			after := ""
			for range 1000 {
				a, err := f(p, after)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, a)
				if a.Next == "" {
					break
				}
				after = a.Next
			}
			if n := local.ColumnAnswers() - before; columns && n != int64(len(out)) || !columns && n != 0 {
				t.Fatalf("%d of %d pages from the columns", n, len(out))
			}
		})
		return out
	}
	// same asks in SQL and on each provider's columns and compares the answers.
	same := func(t *testing.T, f func(p *local.Provider, after string) (answer, error)) {
		t.Helper()
		sql := ask(t, "sql", heap, f)
		for _, c := range []struct {
			name string
			p    *local.Provider
			walk int // 0: as chosen, 1: gaps in volume order always walked, 2: never, 3: passes in parts
		}{{"columns", heap, 0}, {"column file written", written, 0}, {"column file found", found, 0},
			{"columns walked by volume", heap, 1}, {"column file found, walked by volume", found, 1}, {"columns passed over", heap, 2},
			{"columns passed over in parts", heap, 3}, {"column file found, passed over in parts", found, 3}} {
			restore := func() {}
			switch c.walk {
			case 1, 2:
				restore = local.WalkByVolume(c.walk == 1)
			case 3:
				walk := local.WalkByVolume(false)
				parts := local.PassInParts(3, 1)
				restore = func() { parts(); walk() }
			}
			cols := ask(t, c.name, c.p, f)
			restore()
			if !reflect.DeepEqual(sql, cols) {
				t.Fatalf("%s differ from SQL:\n sql %+v\ncols %+v", c.name, sql, cols)
			}
		}
	}
	loads, opens := local.ColumnLoads(), local.ColumnFileOpens()
	gapFields := []keywords.Field{keywords.FieldSearchVolume, keywords.FieldDifficulty, keywords.FieldCPC, keywords.FieldCompetitorPosition}
	rankFields := []keywords.Field{keywords.FieldSearchVolume, keywords.FieldDifficulty, keywords.FieldCPC, keywords.FieldPosition, keywords.FieldTraffic}
	for i := range 48 {
		limit := []int{6, 37, 1000}[r.IntN(3)]
		if i%2 == 0 {
			filters, order := randomQuery(r, gapFields, []string{"alpha", "beta", "gamma", "omega"})
			comps := [][]string{{"comp1.example"}, {"comp2.example", "comp1.example"}, {"comp2.example", "nobody.example"}}[r.IntN(3)]
			q := func(p *local.Provider, after string) (answer, error) {
				l, err := p.Gaps(ctx, keywords.GapsRequest{Domain: "ours.example", Competitors: comps, Country: "pg", Language: "en",
					Limit: limit, Filters: filters, Order: order, After: after})
				return answer{Total: l.Total, Next: l.Next, Rows: l.Gaps}, err
			}
			name := fmt.Sprintf("gaps %v %+v %v limit %d", comps, filters, order, limit)
			t.Run(name, func(t *testing.T) { same(t, q) })
			continue
		}
		if i%4 == 1 { // competitor discovery, filtered (unfiltered is the keyword sets' own path)
			cf := []keywords.Field{keywords.FieldSearchVolume, keywords.FieldDifficulty, keywords.FieldCPC, keywords.FieldPosition, keywords.FieldCompetitorPosition}
			filters, _ := randomQuery(r, cf, []string{"red", "grinder", "cheap", "best"})
			if filters.Empty() {
				filters.Include = []string{"red"}
			}
			domain := []string{"big.example", "mid.example", "tiny.example"}[r.IntN(3)]
			q := func(p *local.Provider, after string) (answer, error) {
				l, err := p.Competitors(ctx, keywords.CompetitorsRequest{Domain: domain, Country: "au", Language: "en",
					Filters: filters, Page: keywords.Page{Limit: 2, After: after}})
				return answer{Total: l.Total, Next: l.Next, Rows: l.Competitors}, err
			}
			t.Run(fmt.Sprintf("competitors %s %+v", domain, filters), func(t *testing.T) { same(t, q) })
			continue
		}
		filters, order := randomQuery(r, rankFields, []string{"red", "grinder", "cheap", "best"})
		domain := []string{"big.example", "tiny.example", "nobody.example"}[r.IntN(3)]
		q := func(p *local.Provider, after string) (answer, error) {
			l, err := p.Rankings(ctx, keywords.RankingsRequest{Domain: domain, Country: "au", Language: "en",
				Filters: filters, Order: order, Page: keywords.Page{Limit: limit, After: after}})
			return answer{Total: l.Total, Bands: l.Bands, Next: l.Next, Rows: l.Rankings}, err
		}
		t.Run(fmt.Sprintf("rankings %s %+v %v limit %d", domain, filters, order, limit), func(t *testing.T) { same(t, q) })
	}
	// Gaps in the default order, unfiltered: the pages a walk by volume answers.
	walks := local.VolumeWalks()
	for _, comps := range [][]string{{"comp1.example"}, {"comp2.example", "comp1.example"}} {
		for _, limit := range []int{1, 6, 37} {
			q := func(p *local.Provider, after string) (answer, error) {
				l, err := p.Gaps(ctx, keywords.GapsRequest{Domain: "ours.example", Competitors: comps, Country: "pg", Language: "en",
					Limit: limit, After: after})
				return answer{Total: l.Total, Next: l.Next, Rows: l.Gaps}, err
			}
			t.Run(fmt.Sprintf("gaps %v by volume limit %d", comps, limit), func(t *testing.T) { same(t, q) })
		}
	}
	if local.VolumeWalks() == walks {
		t.Error("no page of gaps walked the ids in volume order")
	}
	if runtime.GOOS == "linux" && local.MappedTrims() == trims {
		t.Error("the mapped files' pages were never let go under a bound of one byte")
	}
	// Each market's columns were loaded twice from the database (the heap provider's, the
	// file writer's) and mapped from the file by the finder.
	if n, m := local.ColumnLoads()-loads, local.ColumnFileOpens()-opens; n != 4 || m != 2 {
		t.Errorf("%d loads from the database and %d column files mapped for two markets, want 4 and 2", n, m)
	}
}

// A position beyond what the keyword sets hold (they keep 16 bits: 65,535) is not
// approximated: that domain's rankings are answered in SQL, exactly.
func TestColumnsLeaveHugePositionsToSQL(t *testing.T) {
	pool := db(t)
	ctx := context.Background()
	t.Cleanup(func() {
		_, _ = pool.Exec(ctx, `DELETE FROM domain_rankings WHERE country = 'zh'`)
		_ = local.BuildKeywordSets(ctx, pool)
	})
	if _, err := pool.Exec(ctx, `INSERT INTO domain_rankings (domain, keyword, country, language, position, source) VALUES
		('far.example', 'deep keyword', 'zh', 'en', 70000, 'test'), ('far.example', 'near keyword', 'zh', 'en', 2, 'test'),
		('close.example', 'near keyword', 'zh', 'en', 5, 'test')`); err != nil {
		t.Fatal(err)
	}
	if err := local.BuildKeywordSets(ctx, pool); err != nil {
		t.Fatal(err)
	}
	p := local.New(pool)
	ask := func(domain string) keywords.RankingList {
		l, err := p.Rankings(ctx, keywords.RankingsRequest{Domain: domain, Country: "zh", Language: "en",
			Filters: keywords.Filters{Ranges: map[keywords.Field]keywords.Range{keywords.FieldPosition: {Min: fptr(60000)}}}})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	before := local.ColumnAnswers()
	if l := ask("far.example"); l.Total != 1 || len(l.Rankings) != 1 || l.Rankings[0].Position != 70000 {
		t.Fatalf("far.example: %+v", l)
	}
	if local.ColumnAnswers() != before {
		t.Fatal("a capped position was answered from the columns")
	}
	if l := ask("close.example"); l.Total != 0 || local.ColumnAnswers() != before+1 {
		t.Fatalf("close.example: %+v, %d answers from the columns", l, local.ColumnAnswers()-before)
	}
}

// A market whose columns would take more than the whole memory budget is answered in SQL,
// the same answer; a budget of 0 turns the columns off.
func TestColumnsBudget(t *testing.T) {
	pool := setsFixture(t)
	ctx := context.Background()
	req := keywords.GapsRequest{Domain: "ours.example", Competitors: []string{"comp1.example"}, Country: "pg", Language: "en", Limit: 10,
		Filters: keywords.Filters{Ranges: map[keywords.Field]keywords.Range{keywords.FieldSearchVolume: {Min: fptr(10)}}}}
	want, err := local.New(pool).Gaps(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	for _, budget := range []int64{1000, 0} {
		before := local.ColumnAnswers()
		got, err := local.New(pool, local.WithColumnsBudget(budget)).Gaps(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if local.ColumnAnswers() != before {
			t.Errorf("budget %d: answered from the columns", budget)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("budget %d: %+v, want %+v", budget, got, want)
		}
	}
}

// WarmColumns loads the columns of the data as it stands, so a question does not: after
// it, a question loads nothing; after a write and a rebuild of the sets, warming loads
// again.
func TestWarmColumns(t *testing.T) {
	pool := setsFixture(t)
	ctx := context.Background()
	p := local.New(pool)
	loads := local.ColumnLoads()
	if err := p.WarmColumns(ctx); err != nil {
		t.Fatal(err)
	}
	if local.ColumnLoads() == loads {
		t.Fatal("warming loaded nothing")
	}
	loads = local.ColumnLoads()
	answers := local.ColumnAnswers()
	req := keywords.GapsRequest{Domain: "ours.example", Competitors: []string{"comp1.example"}, Country: "pg", Language: "en", Limit: 5,
		Filters: keywords.Filters{Include: []string{"alpha"}}}
	if _, err := p.Gaps(ctx, req); err != nil {
		t.Fatal(err)
	}
	if local.ColumnAnswers() != answers+1 || local.ColumnLoads() != loads {
		t.Fatalf("after warming: %d answers from the columns, %d loads", local.ColumnAnswers()-answers, local.ColumnLoads()-loads)
	}
	if err := p.WarmColumns(ctx); err != nil || local.ColumnLoads() != loads {
		t.Fatalf("warming again with nothing changed: %v, %d loads", err, local.ColumnLoads()-loads)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM domain_rankings WHERE false`); err != nil { // moves the generation on
		t.Fatal(err)
	}
	if err := p.WarmColumns(ctx); err != nil || local.ColumnLoads() != loads {
		t.Fatalf("warming with stale sets: %v, %d loads", err, local.ColumnLoads()-loads)
	}
	if err := local.BuildKeywordSets(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if err := p.WarmColumns(ctx); err != nil || local.ColumnLoads() == loads {
		t.Fatalf("warming after a rebuild: %v, no load", err)
	}
}

// A gaps page the keyword columns chose reads only the keywords' metrics from PostgreSQL,
// the competitors' positions coming from their keyword sets: it must still say which gaps
// a synthetic ranking row stands behind, and spell a keyword without metrics as its ranking
// rows do, as the SQL answer does.
func TestColumnGapsSyntheticAndUnmeasured(t *testing.T) {
	pool := db(t)
	ctx := context.Background()
	t.Cleanup(func() {
		_, _ = pool.Exec(ctx, `DELETE FROM domain_rankings WHERE country = 'sy'; DELETE FROM keyword_metrics WHERE country = 'sy'`)
		_ = local.BuildKeywordSets(ctx, pool)
	})
	if _, err := pool.Exec(ctx, `
		INSERT INTO keyword_metrics (keyword, country, language, search_volume, source, synthetic) VALUES
			('shared one', 'sy', 'en', 100, 'test', false), ('comp two', 'sy', 'en', 90, 'test', false),
			('comp three', 'sy', 'en', 80, 'test', false), ('metrics four', 'sy', 'en', 70, 'test', true),
			('plain six', 'sy', 'en', 60, 'test', false);
		INSERT INTO domain_rankings (domain, keyword, country, language, position, url, source, synthetic) VALUES
			('ours.example', 'shared one', 'sy', 'en', 3, 'https://ours.example/1', 'test', false),
			('c1.example', 'shared one', 'sy', 'en', 1, 'https://c1.example/1', 'test', false),
			('c1.example', 'comp two', 'sy', 'en', 4, 'https://c1.example/2', 'test', true),
			('c1.example', 'comp three', 'sy', 'en', 7, 'https://c1.example/3', 'test', true),
			('c1.example', 'comp three', 'sy', 'en', 2, 'https://c1.example/3b', 'test', false),
			('c2.example', 'comp three', 'sy', 'en', 9, 'https://c2.example/3', 'test', false),
			('c2.example', 'metrics four', 'sy', 'en', 5, 'https://c2.example/4', 'test', false),
			('c2.example', 'Unmeasured  Five', 'sy', 'en', 6, 'https://c2.example/5', 'test', false),
			('c1.example', 'plain six', 'sy', 'en', 8, 'https://c1.example/6', 'test', false)`); err != nil {
		t.Fatal(err)
	}
	if err := local.BuildKeywordSets(ctx, pool); err != nil {
		t.Fatal(err)
	}
	ask := func(t *testing.T) keywords.GapList {
		t.Helper()
		l, err := local.New(pool).Gaps(ctx, keywords.GapsRequest{Domain: "ours.example", Competitors: []string{"c1.example", "c2.example"},
			Country: "sy", Language: "en", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	before := local.ColumnAnswers()
	cols := ask(t)
	if local.ColumnAnswers() == before {
		t.Fatal("the columns did not answer")
	}
	var sql keywords.GapList
	t.Run("sql", func(t *testing.T) {
		local.ColumnsOff(t)
		sql = ask(t)
	})
	if !reflect.DeepEqual(cols, sql) {
		t.Fatalf("columns and SQL differ:\ncols %+v\n sql %+v", cols, sql)
	}
	got := map[string]keywords.Gap{}
	for _, g := range cols.Gaps {
		got[g.Keyword.Keyword] = g
	}
	for kw, synthetic := range map[string]bool{"comp two": true, "comp three": true, "metrics four": true, "Unmeasured  Five": false, "plain six": false} {
		if g, ok := got[kw]; !ok || g.Synthetic != synthetic {
			t.Errorf("%q: listed %v, synthetic %v, want %v (gaps %+v)", kw, ok, g.Synthetic, synthetic, cols.Gaps)
		}
	}
	if p := got["comp three"].CompetitorPositions; p["c1.example"] != 2 || p["c2.example"] != 9 || len(p) != 2 {
		t.Errorf("comp three's positions %v, want c1 2 and c2 9", p)
	}
}
