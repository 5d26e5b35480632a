package local_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/local"
)

// Every tier's look-ups read that tier's partial index (migration 00021): the planner
// takes a partial index only when the query states its predicate and an expression index
// only for its expression, so a tier bound or a full-text vector that differs between
// ideas.go and the migration would scan the table instead.
func TestIdeasTierIndexes(t *testing.T) {
	pool := db(t)
	ctx := context.Background()
	lookups, indexes := local.TierLookups()
	for i := range lookups {
		for j, sql := range lookups[i] {
			var plan []string
			err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, local.LookupSettings); err != nil {
					return err
				}
				args := []any{"us", "en", "coffee grinder", 10, 0.3, "'coffe' & 'grinder'"}
				if j == 0 {
					args = args[:4]
				}
				rows, err := tx.Query(ctx, "EXPLAIN "+sql, args...)
				if err != nil {
					return err
				}
				plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
				return err
			})
			if err != nil {
				t.Fatalf("tier %d look-up %d: %v", i, j, err)
			}
			want := indexes[i]
			if !strings.Contains(strings.Join(plan, "\n"), want) {
				t.Errorf("tier %d look-up %d does not read %s:\n%s", i, j, want, strings.Join(plan, "\n"))
			}
		}
	}
}

// The words similar to a term's words are read nearest first from keyword_words' GiST
// index, not by sorting every word of the market by distance. Planned over as many words
// as the 10M bench set has (20,000), vacuumed (their B-tree then answers an index-only
// scan, which the planner preferred), in a temporary table of the same name and indexes
// that stands for keyword_words on the connection.
func TestIdeasAlikeWordsNearestFirst(t *testing.T) {
	ctx := context.Background()
	conn, err := db(t).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for _, s := range []string{
		`CREATE TEMP TABLE keyword_words (LIKE public.keyword_words INCLUDING ALL)`,
		`INSERT INTO keyword_words SELECT substr(md5(i::text), 1, 3 + i % 7), 'us', 'en' FROM generate_series(1, 20000) i ON CONFLICT DO NOTHING`,
		`VACUUM ANALYZE keyword_words`,
	} {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	defer func() { _, _ = conn.Exec(ctx, `DROP TABLE pg_temp.keyword_words`) }()
	sql, settings := local.AlikeLookup()
	var plan []string
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, local.LookupSettings+"; "+settings); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, "EXPLAIN "+sql, "us", "en", []string{"expresso"})
		if err != nil {
			return err
		}
		plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if p := strings.Join(plan, "\n"); !strings.Contains(p, "Order By: (word <-> w.word)") {
		t.Errorf("the similar words are not read nearest first from the GiST index:\n%s", p)
	}
}

// ideaRequests are asked of both the full ranking and the bounded candidates; missing are
// the keywords of the full answer the bounded one leaves out: those similar to a phrase of
// several words only through one shared word (the stop words and shared letters making up
// the rest of the similarity), which the word look-up does not read (see ideas.go).
var ideaRequests = []struct {
	keywords.IdeasRequest
	missing []string
}{
	{keywords.IdeasRequest{Topic: "cold brew", Limit: 10}, nil},
	{keywords.IdeasRequest{Topic: "coffee", Limit: 20}, nil},
	{keywords.IdeasRequest{Topic: "grinding", Limit: 50}, nil},
	{keywords.IdeasRequest{Topic: "expresso machine", Limit: 5}, nil},
	// A misspelt word alone: no keyword holds it, its similar words do (keyword_words).
	{keywords.IdeasRequest{Topic: "expresso", Limit: 5}, nil},
	{keywords.IdeasRequest{Topic: "cofee", Limit: 10}, nil},
	{keywords.IdeasRequest{Topic: "running shoes", Limit: 30}, nil},
	{keywords.IdeasRequest{Seeds: []string{"best running shoes", "dog training"}, Topic: "remote work", Limit: 25}, nil},
	{keywords.IdeasRequest{Topic: "widget", Country: "ca", Limit: 3}, nil},
	{keywords.IdeasRequest{Topic: "home gardening", Limit: 50}, nil},
	{keywords.IdeasRequest{Topic: "home gardening", Limit: 5}, nil},
	{keywords.IdeasRequest{Topic: "how to make cold brew at home", Limit: 30},
		[]string{"how to make a budget", "how to make iced coffee", "how to make pour over coffee"}},
	{keywords.IdeasRequest{Seeds: []string{"pour over coffee ratio", "  Cold  Brew Coffee "}, Limit: 30},
		[]string{"buy coffee grinder", "decaf coffee beans"}},
}

func ideasAnswer(t *testing.T, p *local.Provider, r keywords.IdeasRequest, leaveOut []string) []string {
	t.Helper()
	got, err := ideasOf(p.Ideas(context.Background(), r))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, k := range got {
		if !slices.Contains(leaveOut, k.Keyword) {
			out = append(out, fmt.Sprintf("%s %.4f", k.Keyword, k.Relevance))
		}
	}
	return out
}

// On a small data set the bounded candidates hold every keyword the full ranking puts in
// the answer but the few documented above: the answers are otherwise the same, in the same
// order.
func TestIdeasBoundedSameAsFull(t *testing.T) {
	local.WordIndexes(t, false)
	testBounded(t, nil, false)
}

// With the word index, the bounded candidates hold every keyword the full ranking puts in
// the answer, the few the SQL look-ups miss included: the answers are the same.
func TestIdeasIndexedSameAsFull(t *testing.T) {
	testBounded(t, nil, true)
}

// With as few candidates as the limit, every tier look-up is cut short and the similarity
// bar rises tier by tier: the answers are still the full ranking's.
func TestIdeasBoundedFewCandidates(t *testing.T) {
	local.WordIndexes(t, false)
	testBounded(t, func(limit int) int { return limit }, false)
	t.Run("indexed", func(t *testing.T) { testBounded(t, func(limit int) int { return limit }, true) })
}

// testBounded compares the bounded answers with the full ranking's, with the word index
// (indexed: nothing missing) or the SQL look-ups (the documented misses left out).
func testBounded(t *testing.T, want func(limit int) int, indexed bool) {
	p := local.New(db(t))
	if indexed {
		local.WordIndexes(t, true)
	}
	var full [][]string
	for _, r := range ideaRequests {
		missing := r.missing
		if indexed {
			missing = nil
		}
		full = append(full, ideasAnswer(t, p, r.IdeasRequest, missing))
		if all := ideasAnswer(t, p, r.IdeasRequest, nil); len(all) != len(full[len(full)-1])+len(missing) {
			t.Fatalf("%+v: the full answer lacks some of %v: %v", r.IdeasRequest, missing, all)
		}
	}
	local.BoundIdeas(t, want)
	for i, r := range ideaRequests {
		if got := ideasAnswer(t, p, r.IdeasRequest, nil); !slices.Equal(got, full[i]) {
			t.Errorf("%+v:\nbounded %v\nfull    %v (less %v)", r.IdeasRequest, got, full[i], r.missing)
		}
	}
}

// A topic of several words is matched by its words: "home gardening" (a topic of the sample
// no keyword holds whole) gives every keyword "gardening" gives, after the keywords
// matching the phrase itself, and none holding only the modifier "home".
func TestIdeasTopicByWords(t *testing.T) {
	p := local.New(db(t))
	ask := func(topic string) []string {
		got, err := ideasOf(p.Ideas(context.Background(), keywords.IdeasRequest{Topic: topic, Limit: 100}))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, k := range got {
			out = append(out, k.Keyword)
		}
		return out
	}
	phrase, word := ask("home gardening"), ask("gardening")
	if len(word) < 10 {
		t.Fatalf("gardening: %q", word)
	}
	for _, k := range word {
		if !slices.Contains(phrase, k) {
			t.Errorf("home gardening lacks %q, which gardening gives", k)
		}
	}
	for _, k := range phrase {
		if strings.Contains(k, "home") && !strings.Contains(k, "garden") {
			t.Errorf("home gardening gives %q, which holds only the modifier", k)
		}
	}
	// The phrase's own trigram match ranks before the keywords found by the head word alone.
	if len(phrase) == 0 || phrase[0] != "container gardening ideas" {
		t.Errorf("home gardening: %q, want container gardening ideas first", phrase)
	}
}

// Filters and order_by on ideas: every idea passes the filters, in the order asked, and
// they are among the unfiltered call's pool of matches.
func TestIdeasFiltersAndOrder(t *testing.T) {
	p := local.New(db(t))
	ctx := context.Background()
	lo, hi := 100.0, 40.0
	got, err := ideasOf(p.Ideas(ctx, keywords.IdeasRequest{Topic: "coffee", Country: "us", Language: "en", Limit: 10,
		Filters: keywords.Filters{Ranges: map[keywords.Field]keywords.Range{keywords.FieldSearchVolume: {Min: &lo},
			keywords.FieldDifficulty: {Max: &hi}}, Exclude: []string{"cold"}},
		Order: []keywords.OrderKey{{Field: keywords.FieldCPC, Desc: true}}}))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 {
		t.Fatal("no idea passes")
	}
	for i, k := range got {
		if k.SearchVolume == nil || *k.SearchVolume < 100 || k.Difficulty == nil || *k.Difficulty > 40 || strings.Contains(k.Keyword, "cold") {
			t.Fatalf("%q does not pass the filters", k.Keyword)
		}
		if i > 0 && k.CPC != nil && (got[i-1].CPC == nil || *got[i-1].CPC < *k.CPC) {
			t.Fatalf("not by cpc descending: %v", keywordsOf(got))
		}
	}
	if _, err := ideasOf(p.Ideas(ctx, keywords.IdeasRequest{Topic: "coffee", Order: []keywords.OrderKey{{Field: keywords.FieldOpportunity}}})); !errors.Is(err, keywords.ErrUnsupported) {
		t.Fatalf("order by opportunity: %v", err)
	}
}

// Ranked in two halves on two connections (rankIdeas), the candidates give the answers the
// one statement gives: the same keywords with the same metrics and relevance, in the same
// order, cut at the same row, each term that is itself a keyword once. Asked of the
// bounded candidates, unpaged and as pages of a walk short enough to be cut.
func TestIdeasRankedInHalvesAsInOne(t *testing.T) {
	p := local.New(db(t))
	local.BoundIdeas(t, nil)
	local.WalkIdeas(t, 12)
	var asks []keywords.IdeasRequest
	for _, r := range ideaRequests {
		asks = append(asks, r.IdeasRequest)
		paged := r.IdeasRequest
		paged.Page = keywords.Page{Limit: 5}
		asks = append(asks, paged)
	}
	answers := func() []keywords.IdeaList {
		var out []keywords.IdeaList
		for _, r := range asks {
			list, err := p.Ideas(context.Background(), r)
			if err != nil {
				t.Fatalf("%+v: %v", r, err)
			}
			out = append(out, list)
		}
		return out
	}
	local.SplitIdeasRanking(t, 1<<30)
	whole := answers()
	local.SplitIdeasRanking(t, 1)
	halves := answers()
	for i := range asks {
		if !reflect.DeepEqual(halves[i], whole[i]) {
			t.Errorf("%+v:\nin halves %+v\nin one    %+v", asks[i], halves[i], whole[i])
		}
	}
}

// The same comparison on random requests: topics and seeds drawn from the market's own
// keywords (whole, one or two of their words, a word with a letter dropped), random
// limits, unpaged and paged, each asked ranked in halves and in one statement.
func TestIdeasRankedInHalvesAsInOneRandom(t *testing.T) {
	pool := db(t)
	p := local.New(pool)
	local.BoundIdeas(t, nil)
	local.WalkIdeas(t, 15)
	ctx := context.Background()
	rows, err := pool.Query(ctx, `SELECT keyword FROM keyword_metrics WHERE country = 'us' AND language = 'en' ORDER BY keyword_norm`)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(stored) == 0 {
		t.Fatalf("%d keywords: %v", len(stored), err)
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	pick := func() string { return stored[rng.IntN(len(stored))] }
	term := func() string {
		words := strings.Fields(pick())
		switch rng.IntN(4) {
		case 0:
			return strings.Join(words, " ")
		case 1:
			return words[rng.IntN(len(words))]
		case 2:
			return words[rng.IntN(len(words))] + " " + strings.Fields(pick())[0]
		default:
			w := words[rng.IntN(len(words))]
			if len(w) < 4 {
				return w
			}
			i := 1 + rng.IntN(len(w)-2)
			return w[:i] + w[i+1:]
		}
	}
	for range 40 {
		r := keywords.IdeasRequest{Limit: 1 + rng.IntN(60)}
		if rng.IntN(3) > 0 {
			r.Topic = term()
		}
		for range rng.IntN(3) {
			r.Seeds = append(r.Seeds, term())
		}
		if r.Topic == "" && len(r.Seeds) == 0 {
			r.Topic = term()
		}
		if rng.IntN(2) == 0 {
			r.Page = keywords.Page{Limit: 1 + rng.IntN(8)}
		}
		ask := func(split int) keywords.IdeaList {
			local.SplitIdeasRanking(t, split)
			list, err := p.Ideas(ctx, r)
			if err != nil {
				t.Fatalf("seed %d, %+v: %v", seed, r, err)
			}
			return list
		}
		if whole, halves := ask(1<<30), ask(1); !reflect.DeepEqual(halves, whole) {
			t.Errorf("seed %d, %+v:\nin halves %+v\nin one    %+v", seed, r, halves, whole)
		}
	}
}
