package local

import (
	"slices"
	"testing"
)

// The bound of a tier is the best similarity its keywords can have: a term of 7 trigrams
// ("coffee") is at most 7/9 similar to a keyword of 9 or 10, 6/7 to one of 6 or fewer.
func TestTierBound(t *testing.T) {
	for _, c := range []struct {
		tier, n int
		want    float64
	}{{1, 7, 1}, {1, 8, 1}, {2, 7, 7.0 / 9}, {0, 7, 6.0 / 7}, {13, 7, 7.0 / 54}, {13, 60, 1}, {12, 60, 53.0 / 60}} {
		if got := tierBound(c.tier, c.n); got != c.want {
			t.Errorf("tierBound(%d, %d) = %v, want %v", c.tier, c.n, got, c.want)
		}
	}
	if got := nearestTiers(7)[:4]; !slices.Equal(got, []int{1, 0, 2, 3}) {
		t.Errorf("nearest tiers for 7 trigrams: %v, want [1 0 2 3 …]", got)
	}
}

// A keyword sharing a set of the term's words can reach the bar only if those words have
// enough of the term's trigrams: for "best coffee grinder" (21 trigrams) among keywords of
// 20 or more, no single word does at 0.3 (grinder: 8/(21+20-8) = 0.24), every pair does; at
// 0.45 coffee with grinder (15/(21+20-15) = 0.58) and best with grinder (13/28) do, best
// with coffee (12/29) does not. Among keywords of 9 or more, coffee alone does at 0.3
// (7/(21+9-7)); among those of 40 or more, only all three at 0.45 (20/41), nothing at 0.5.
func TestWordQuery(t *testing.T) {
	term := ideaTerm{text: "best coffee grinder", trigrams: 21}
	term.words, term.stop = termWords([]int{5, 7, 8}, []string{"best", "coffe", "grinder"})
	for _, c := range []struct {
		lo   int
		bar  float64
		want string
	}{
		{20, 0.3, "'grinder' & 'coffe' | 'grinder' & 'best' | 'coffe' & 'best'"},
		{20, 0.45, "'grinder' & 'coffe' | 'grinder' & 'best'"},
		{9, 0.3, "'grinder' | 'coffe'"},
		{40, 0.45, "'grinder' & 'coffe' & 'best'"},
		{40, 0.5, ""},
	} {
		if got := term.wordQuery(c.lo, c.bar); got != c.want {
			t.Errorf("word query from %d trigrams at %v: %q, want %q", c.lo, c.bar, got, c.want)
		}
	}
	// Stop words have no lexeme and count as shared with two words or more: for "how to
	// make cold brew at home" (30 trigrams, 10 of them in how, to and at), keywords of 27 or
	// more sharing make and home may reach 0.3 (20/(30+27-20)), those sharing cold alone
	// may not (5/52).
	term = ideaTerm{text: "how to make cold brew at home", trigrams: 30}
	term.words, term.stop = termWords([]int{4, 3, 5, 5, 5, 3, 5}, []string{"", "", "make", "cold", "brew", "", "home"})
	if term.stop != 10 || len(term.words) != 4 {
		t.Fatalf("words %+v, stop words' trigrams %d", term.words, term.stop)
	}
	if got, want := term.wordQuery(27, 0.3), "'make' & 'cold' | 'make' & 'brew' | 'cold' & 'brew' | 'make' & 'home' | 'cold' & 'home' | 'brew' & 'home'"; got != want {
		t.Errorf("how-to word query: %q, want %q", got, want)
	}
	// A lexeme is quoted for tsquery.
	ws, _ := termWords([]int{6}, []string{"it's"})
	if q := wordSetsQuery(ws, []uint{1}); q != `'it''s'` {
		t.Errorf("quoted query %q", q)
	}
}

// Two halves' rankings merge into one list in ranking order, cut at the limit, each
// keyword once at its first (most relevant) row, even where a keyword's two rows differ and
// are not next to each other in the merge.
func TestMergeRankedListsEachKeywordOnce(t *testing.T) {
	row := func(norm string, rel float64) walkRow {
		r := walkRow{norm: norm}
		r.Keyword.Keyword, r.Relevance = norm, rel
		return r
	}
	a := []walkRow{row("cold brew", 3.1), row("iced coffee", 0.9), row("decaf", 0.5)}
	b := []walkRow{row("cold brew", 3.1), row("espresso", 1.2), row("decaf", 0.8), row("latte", 0.6)}
	got := mergeRanked(a, b, 10)
	var names []string
	for _, r := range got {
		names = append(names, r.norm)
	}
	want := []string{"cold brew", "espresso", "iced coffee", "decaf", "latte"}
	if !slices.Equal(names, want) {
		t.Fatalf("merged %v, want %v", names, want)
	}
	if got[3].Relevance != 0.8 {
		t.Errorf("decaf kept at relevance %v, want its first row's 0.8", got[3].Relevance)
	}
	if got := mergeRanked(a, b, 2); len(got) != 2 || got[1].norm != "espresso" {
		t.Errorf("cut at 2: %v", got)
	}
}
