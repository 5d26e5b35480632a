package local

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/testenv"
)

// wordMarket fills market ie/en of the test database with random keywords: words drawn from
// a small vocabulary of syllables (so that words share trigrams as real ones do), in upper
// and lower case, with digits, punctuation, repeated words, and letters outside ASCII.
func wordMarket(t *testing.T, rng *rand.Rand, n int) (*pgxpool.Pool, []string) {
	t.Helper()
	pool := testenv.Postgres(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `DELETE FROM keyword_metrics WHERE country = 'ie' AND language = 'en'`); err != nil {
		t.Fatal(err)
	}
	syll := []string{"ka", "fe", "mo", "ca", "lat", "te", "bre", "w", "ho", "me", "to", "at", "ma", "ke", "é", "ß", "Ñ", "9", "x"}
	word := func() string {
		var b strings.Builder
		for range 1 + rng.IntN(4) {
			b.WriteString(syll[rng.IntN(len(syll))])
		}
		if rng.IntN(8) == 0 {
			return strings.ToUpper(b.String())
		}
		return b.String()
	}
	vocab := make([]string, 300)
	for i := range vocab {
		vocab[i] = word()
	}
	seps := []string{" ", " ", " ", "-", ", ", " & ", "'"}
	seen := map[string]bool{}
	var kws []string
	for len(kws) < n {
		var b strings.Builder
		for i := range 1 + rng.IntN(5) {
			if i > 0 {
				b.WriteString(seps[rng.IntN(len(seps))])
			}
			b.WriteString(vocab[rng.IntN(len(vocab))])
		}
		k := b.String()
		if !seen[strings.ToLower(k)] {
			seen[strings.ToLower(k)] = true
			kws = append(kws, k)
		}
	}
	if _, err := pool.Exec(ctx, `INSERT INTO keyword_metrics (keyword, country, language, source)
		SELECT k, 'ie', 'en', 'test' FROM unnest($1::text[]) AS k ON CONFLICT DO NOTHING`, kws); err != nil {
		t.Fatal(err)
	}
	return pool, vocab
}

func wordIndexOfMarket(t *testing.T, pool *pgxpool.Pool, dir string) *wordIndex {
	t.Helper()
	ctx := context.Background()
	var v columnsVersion
	if err := pool.QueryRow(ctx, keywordsVersionSQL).Scan(&v.data, &v.token); err != nil {
		t.Fatal(err)
	}
	s := &wordStore{dir: dir, warn: func(err error) { t.Logf("warned: %v", err) }}
	ix, err := s.get(ctx, pool, market{"ie", "en"}, v, true)
	if err != nil || ix == nil {
		t.Fatalf("word index: %v", err)
	}
	t.Cleanup(ix.release)
	return ix
}

// Every keyword the word index finds comes with PostgreSQL's similarity to the term, to the
// last bit of its float4; and it finds every keyword
// at least the threshold similar, through words of the term that share enough of its
// trigrams by themselves (the look-up's sets), as plain SQL over the market finds them.
func TestWordIndexSimilarityAsPostgres(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	pool, vocab := wordMarket(t, rng, 3000)
	ix := wordIndexOfMarket(t, pool, "")
	ctx := context.Background()
	for range 30 {
		var words []string
		for range 1 + rng.IntN(3) {
			words = append(words, vocab[rng.IntN(len(vocab))])
		}
		term := strings.Join(words, " ")
		got, ok := ix.similar(term, 0.3, 100000)
		if !ok {
			continue
		}
		rows, err := pool.Query(ctx, `SELECT keyword_norm, similarity(keyword, $1), keyword FROM keyword_metrics
			WHERE country = 'ie' AND language = 'en' AND similarity(keyword, $1) >= 0.3`, term)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]float32{}
		text := map[string]string{}
		var k, kw string
		var sim float32
		if _, err := pgx.ForEachRow(rows, []any{&k, &sim, &kw}, func() error {
			want[k], text[k] = sim, kw
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		found := map[string]bool{}
		for _, f := range got {
			found[f.key] = true
			if s, ok := want[f.key]; !ok || s != f.sim {
				t.Errorf("seed %d, %q: %q at %v, PostgreSQL says %v (listed %v)", seed, term, f.key, f.sim, s, ok)
			}
		}
		// A keyword holding words of the term that share enough of its trigrams to reach
		// the bar by themselves is found (trigram sets checked against show_trgm above,
		// through the similarities).
		n := len(textTrigrams(term))
		for k, s := range want {
			kwWords := map[string]bool{}
			eachWord(text[k], nil, func(w []byte) { kwWords[string(w)] = true })
			var held []string
			eachWord(term, nil, func(w []byte) {
				if kwWords[string(w)] {
					held = append(held, string(w))
				}
			})
			shared := 0
			for _, tr := range textTrigrams(strings.Join(held, " ")) {
				if slices.Contains(textTrigrams(term), tr) {
					shared++
				}
			}
			if float32(shared)/float32(n) >= 0.3 && !found[k] {
				t.Errorf("seed %d, %q: %q (%v similar, holding %q) not found", seed, term, k, s, held)
			}
		}
	}
}

// A word file another worker finds changed on disk is not read: its checksum fails, the
// index is built again, and the look-ups answer as before.
func TestWordFileChangedIsBuiltAgain(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	pool, vocab := wordMarket(t, rng, 2000)
	dir := t.TempDir()
	first := wordIndexOfMarket(t, pool, dir)
	term := vocab[0] + " " + vocab[1]
	before, _ := first.similar(term, 0.3, 50)
	files, _ := filepath.Glob(filepath.Join(dir, "ie-en-*.words"))
	if len(files) != 1 {
		t.Fatalf("word files: %v", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x55
	if err := os.WriteFile(files[0], b, 0o600); err != nil {
		t.Fatal(err)
	}
	var warned []error
	var v columnsVersion
	if err := pool.QueryRow(context.Background(), keywordsVersionSQL).Scan(&v.data, &v.token); err != nil {
		t.Fatal(err)
	}
	s := &wordStore{dir: dir, warn: func(err error) { warned = append(warned, err) }}
	again, err := s.get(context.Background(), pool, market{"ie", "en"}, v, true)
	if err != nil || again == nil {
		t.Fatal(err)
	}
	defer again.release()
	if len(warned) != 1 || !errors.Is(warned[0], errColumnFile) || !strings.Contains(warned[0].Error(), "checksum") {
		t.Errorf("warned %v, want the checksum's failure", warned)
	}
	after, _ := again.similar(term, 0.3, 50)
	if !slices.Equal(after, before) {
		t.Errorf("after the rebuild %v, before %v", after, before)
	}
}

// A write to the keywords moves research to an index of the new keywords: a keyword added
// after the first question is found by the next, from an index built for the new version.
// A write to the rankings alone keeps the index.
func TestWordIndexFollowsTheData(t *testing.T) {
	rankAll := ideasRankAll
	t.Cleanup(func() { ideasRankAll = rankAll })
	ideasRankAll = 0
	rng := rand.New(rand.NewPCG(11, 11))
	pool, vocab := wordMarket(t, rng, 2000)
	p := New(pool)
	ctx := context.Background()
	term := vocab[5] + " " + vocab[6]
	added := strings.ToLower(term) + " qzq"
	ask := func() []string {
		list, err := p.Ideas(ctx, keywords.IdeasRequest{Topic: term, Country: "ie", Language: "en", Limit: 30})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, k := range list.Ideas {
			out = append(out, k.Keyword)
		}
		return out
	}
	version := func() columnsVersion {
		var v columnsVersion
		if err := pool.QueryRow(ctx, keywordsVersionSQL).Scan(&v.data, &v.token); err != nil {
			t.Fatal(err)
		}
		return v
	}
	dataToken := func() (tok [16]byte) {
		if err := pool.QueryRow(ctx, `SELECT token FROM keyword_data_state`).Scan(&tok); err != nil {
			t.Fatal(err)
		}
		return tok
	}
	first := ask()
	if slices.Contains(first, added) {
		t.Fatalf("%q before it was added: %v", added, first)
	}
	built := p.words.markets[market{"ie", "en"}]
	if built == nil || built.version != version() || built.ix == nil {
		t.Fatalf("no index of the data after the first question: %+v", built)
	}
	// A write to the rankings alone moves the data on, not the keywords: the index stays.
	before, keys := dataToken(), version()
	if _, err := pool.Exec(ctx, `INSERT INTO domain_rankings (domain, keyword, country, language, position, url, source)
		VALUES ('ranks.example', $1, 'ie', 'en', 3, 'https://ranks.example/', 'test')`, first[0]); err != nil {
		t.Fatal(err)
	}
	if dataToken() == before || version() != keys {
		t.Fatalf("a ranking write: data token moved %v, keywords' version %+v → %+v", dataToken() != before, keys, version())
	}
	if got := ask(); !slices.Equal(got, first) {
		t.Fatalf("after a ranking write: %v, want %v", got, first)
	}
	if e := p.words.markets[market{"ie", "en"}]; e != built {
		t.Fatalf("the index was built again after a ranking write: %+v", e)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO keyword_metrics (keyword, country, language, source) VALUES ($1, 'ie', 'en', 'test')`, added); err != nil {
		t.Fatal(err)
	}
	if got := ask(); !slices.Contains(got, added) {
		t.Errorf("%q not found after it was added: %v", added, got)
	}
	if e := p.words.markets[market{"ie", "en"}]; e == nil || e.version != version() || e.ix == nil {
		t.Errorf("the index is not of the new data: %+v", e)
	}
}

// The similarity the ranking takes from the worker (similarity over textTrigrams) is
// PostgreSQL's similarity(), to the last bit of its float4, whether computed from a
// keyword's text or from its key, for keywords against terms and keywords against each
// other (mixed case, digits, punctuation and letters outside ASCII).
func TestSimilarityAsPostgres(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	pool, vocab := wordMarket(t, rng, 400)
	ctx := context.Background()
	var terms []string
	for range 40 {
		var words []string
		for range 1 + rng.IntN(4) {
			words = append(words, vocab[rng.IntN(len(vocab))])
		}
		terms = append(terms, strings.Join(words, []string{" ", "  ", "-", " & "}[rng.IntN(4)]))
	}
	rows, err := pool.Query(ctx, `SELECT k.keyword, k.keyword_norm, t.term, similarity(k.keyword, t.term)
		FROM keyword_metrics k, unnest($1::text[]) t(term) WHERE k.country = 'ie' AND k.language = 'en'`, terms)
	if err != nil {
		t.Fatal(err)
	}
	var kw, key, term string
	var want float32
	n := 0
	if _, err := pgx.ForEachRow(rows, []any{&kw, &key, &term, &want}, func() error {
		n++
		tg := textTrigrams(term)
		if got := similarity(textTrigrams(kw), tg); got != want {
			t.Errorf("seed %d: similarity(%q, %q) = %v, PostgreSQL says %v", seed, kw, term, got, want)
		}
		if got := similarity(textTrigrams(key), tg); got != want {
			t.Errorf("seed %d: similarity(key %q, %q) = %v, PostgreSQL says %v", seed, key, term, got, want)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != 400*len(terms) {
		t.Fatalf("compared %d pairs, want %d", n, 400*len(terms))
	}
}
