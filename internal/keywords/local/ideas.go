package local

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/stem"
)

// DefaultIdeasLimit is the number of ideas returned when a request sets no limit.
const DefaultIdeasLimit = 50

// Keyword ideas are the matches of the terms (the seeds and the topic). A keyword matches a
// term when it is the term itself, when its stemmed words contain the term's (full-text
// search with the language's configuration), or when it is trigram-similar to the term
// (pg_trgm's % operator, similarity ≥ 0.3 by default). Its relevance is its best score over
// the terms it matches:
//
//	relevance = 2 × (keyword is the term) + ts_rank(vector, query) + similarity(keyword, term)
//
// so exact seeds come first, then keywords sharing the term's words, closer phrasings
// before longer ones; ties go to the higher search volume.
//
// A market of at most ideasRankAll keywords has every match ranked. A larger one ranks a
// bounded candidate set, because ranking every match does not scale (a common word matches
// 5% of a million keywords) and neither does finding every trigram match of a phrase (the
// trigram index scan of a three-word phrase reads dozens of long posting lists: 60–150 ms
// at a million keywords, whatever the threshold). What bounds the work is that a keyword
// of m distinct trigrams is at most min(n, m)/max(n, m) similar to a term of n, and one
// holding the term's words is about that similar: the keywords are read by trigram count,
// in tiers (a partial GIN index of the full-text vector per tier, migrations 00014 and
// 00021), the tiers nearest the term's count first. Per term, want = max(8 × limit, 400):
//
//   - full-text matches: whole tiers, nearest first, until want are found;
//   - the want most similar trigram matches: tiers nearest first while their bound reaches
//     the similarity of the want-th best found so far, among the keywords sharing enough
//     of the term's words to reach that similarity in the tier (the trigrams of a phrase
//     are those of its words; see wordQuery). A word stands for itself, except the word
//     of a term of one word (one lexeme) and a word no keyword of the market has (a
//     misspelling: "expresso machine"), which stand for the words of the market's keywords
//     similar to them (keyword_words, by trigram similarity, the 32 most similar): a
//     keyword is similar to such a term mostly through such a word. That misses keywords
//     similar to a term through letters spread over several of their words, or through
//     stop words and a few shared letters only ("how to make a budget" for "how to make
//     cold brew at home", "how to bake" for "how to brew"), which rank low when found.
//
// Where the market's word index is built for the data the question sees (wordindex.go),
// the most similar come from it instead of the tier walk: the want most similar among the
// keywords holding the term's words or near spellings of them, scored exactly as
// similarity() scores them (the index finds what the walk finds and more, in a fraction of
// its time). The full-text matches still come from the tiers; their similarities, and
// those the ranking adds to every candidate's full-text rank, are then computed in the
// worker from the same trigrams (similarity in trigrams.go), not by PostgreSQL.
//
// Of these, a term passes on its limit most relevant (and those tied with the last): only
// they can be among the limit most relevant to all the terms. The keywords passed on and
// the terms themselves are then ranked by the formula above against every term.

// ideasRankAll is the market size up to which every match is ranked: the plain query reads
// the market's rows, a few milliseconds for this many. (A variable for the tests.)
var ideasRankAll = 5000

// ideasTiers are the lower bounds of the trigram-count tiers: tier i holds the keywords with
// ideasTiers[i] ≤ ntrgm < ideasTiers[i+1], the last every longer one. Migration 00021 has a
// partial GIN index per tier, over the trigrams and the full-text vector, with exactly
// these bounds.
var ideasTiers = []int{0, 7, 9, 11, 13, 15, 17, 20, 23, 27, 32, 38, 45, 54}

// tierRange returns tier i's bounds, inclusive.
func tierRange(i int) (lo, hi int) {
	if i+1 < len(ideasTiers) {
		return ideasTiers[i], ideasTiers[i+1] - 1
	}
	return ideasTiers[i], math.MaxInt16
}

// tierPredicate is tier i's condition as its indexes' WHERE clause states it: the planner
// uses a partial index only for a query that implies its predicate.
func tierPredicate(i int) string {
	if lo, hi := tierRange(i); hi < math.MaxInt16 {
		return fmt.Sprintf("ntrgm BETWEEN %d AND %d", lo, hi)
	}
	return fmt.Sprintf("ntrgm >= %d", ideasTiers[i])
}

// tierBound is the highest trigram similarity a keyword of tier i can have to a term of n
// trigrams.
func tierBound(i, n int) float64 {
	lo, hi := tierRange(i)
	switch {
	case n < lo:
		return float64(n) / float64(lo)
	case n > hi:
		return float64(hi) / float64(n)
	default:
		return 1
	}
}

// nearestTiers lists the tiers by their bound for a term of n trigrams, highest first, the
// shorter first on a tie.
func nearestTiers(n int) []int {
	tiers := make([]int, len(ideasTiers))
	for i := range tiers {
		tiers[i] = i
	}
	slices.SortStableFunc(tiers, func(a, b int) int { return cmp.Compare(tierBound(b, n), tierBound(a, n)) })
	return tiers
}

// ideasCandidates is how many candidates of each kind a term gathers. (A variable for the
// tests.)
var ideasCandidates = func(limit int) int { return max(8*limit, 400) }

// ideasTierCap bounds the rows one tier look-up returns: a tier read whole is cut there.
func ideasTierCap(want int) int { return 4 * want }

// maxTermWords is how many of a term's words (the longest) the word look-up combines.
const maxTermWords = 10

// ideaTerm is a term with what its look-ups need.
type ideaTerm struct {
	text     string
	trigrams int        // distinct trigrams
	words    []termWord // words with a lexeme, longest first
	stop     int        // trigrams of the words without one (stop words)
}

// termWord is a word of a term: its lexeme and its trigram count, and, when it stands for
// the market's words similar to it, their lexemes.
type termWord struct {
	lexeme   string
	trigrams int
	alike    []string
}

// wordQuery is the tsquery of the keywords of a tier whose lowest trigram count is lo that
// can be at least bar similar to the term through the words they share with it: OR of the
// smallest sets of its words with enough trigrams. Empty when no set has. A keyword sharing
// s trigrams with the term and having m ≥ max(lo, s) is at most s/(n + max(lo, s) - s)
// similar to it. The stop words, which the full-text index leaves out, count as shared
// with two words or more ("how to make compost at home" for "how to make cold brew at
// home"), not with one: that would read every keyword holding one common word.
func (t ideaTerm) wordQuery(lo int, bar float64) string {
	reaches := func(s int) bool {
		s = min(s, t.trigrams)
		return float64(s) >= bar*float64(t.trigrams+max(lo, s)-s)
	}
	ws := t.words
	var sets []uint
	for size := 1; size <= len(ws); size++ {
		for set := uint(1); set < 1<<len(ws); set++ {
			if bits.OnesCount(set) != size || slices.ContainsFunc(sets, func(s uint) bool { return set&s == s }) {
				continue
			}
			s := 0
			if size >= 2 {
				s = t.stop
			}
			for i := range ws {
				if set&(1<<i) != 0 {
					s += ws[i].trigrams
				}
			}
			if reaches(s) {
				sets = append(sets, set)
			}
		}
	}
	if len(sets) == 0 {
		return ""
	}
	return wordSetsQuery(ws, sets)
}

// wordSetsQuery is the tsquery OR of the sets (bit i: word i).
func wordSetsQuery(ws []termWord, sets []uint) string {
	quote := strings.NewReplacer(`\`, `\\`, `'`, `''`)
	lexeme := func(l string) string { return "'" + quote.Replace(l) + "'" }
	var or []string
	for _, set := range sets {
		var and []string
		for i, w := range ws {
			if set&(1<<i) == 0 {
				continue
			}
			if len(w.alike) == 0 {
				and = append(and, lexeme(w.lexeme))
				continue
			}
			alike := make([]string, len(w.alike))
			for j, l := range w.alike {
				alike[j] = lexeme(l)
			}
			and = append(and, "("+strings.Join(alike, " | ")+")")
		}
		or = append(or, strings.Join(and, " & "))
	}
	return strings.Join(or, " | ")
}

// A look-up reads tiers in the order given until it has $4 rows: $1 country, $2
// language, $3 the term; a similarity look-up also returns each keyword's similarity and
// takes the bar ($5) and, by words, each tier's word query ($6, …). The market is written
// as a filter no B-tree index answers (both codes have two letters), so that the planner
// reads the tier's GIN index whatever it believes of the market's size: a walk of the
// market's key in a million-keyword table is what the tiers are there to avoid.
type lookup int

const (
	fullTextLookup     lookup = iota // the term's full-text matches
	fullTextRankLookup               // the same without their similarity (0), computed here
	wordLookup                       // its trigram matches among the keywords matching a word query
)

// termQuery is the term's full-text query, computed once per statement.
const termQuery = "(SELECT websearch_to_tsquery(keyword_ts_config($2), $3))"

// vector is a keyword's full-text vector in its language, written as the tier indexes of
// migration 00021 write it: the planner reads such an index only for this expression.
const vector = "to_tsvector(keyword_ts_config(language), keyword)"

func lookupSQL(kind lookup, tiers []int) string {
	var b strings.Builder
	b.WriteString("SELECT key, sim, rank, tier FROM (")
	for j, i := range tiers {
		if j > 0 {
			b.WriteString("\n    UNION ALL ")
		}
		switch kind {
		case fullTextLookup, fullTextRankLookup:
			sim := "similarity(keyword, $3)"
			if kind == fullTextRankLookup {
				sim = "0::real"
			}
			fmt.Fprintf(&b, "(SELECT keyword_norm AS key, %s AS sim, ts_rank(%s, %s) AS rank, %d AS tier FROM keyword_metrics WHERE country || language = $1 || $2 AND %s AND %s @@ %s)",
				sim, vector, termQuery, i, tierPredicate(i), vector, termQuery)
		case wordLookup:
			// The similarity is computed once a row: by the subquery (kept apart by its
			// OFFSET), then filtered on; written in the filter and the select list, it was
			// computed twice for every row returned (a sixth of a large look-up's time).
			fmt.Fprintf(&b, "(SELECT key, sim, ts_rank(%s, %s) AS rank, %d AS tier FROM (SELECT keyword_norm AS key, keyword, language, similarity(keyword, $3) AS sim FROM keyword_metrics WHERE country || language = $1 || $2 AND %s AND %s @@ $%d::tsquery OFFSET 0) s WHERE sim >= $5)",
				vector, termQuery, i, tierPredicate(i), vector, 6+j)
		}
	}
	b.WriteString(") u LIMIT $4")
	return b.String()
}

// found is one row of a look-up: a keyword, its similarity to the term and its full-text
// rank (their sum is its relevance to the term, short of the exact match's 2).
type found struct {
	key       string
	sim, rank float32
	tier      int
}

func readLookup(ctx context.Context, tx pgx.Tx, kind lookup, tiers []int, args ...any) ([]found, error) {
	rows, err := tx.Query(ctx, lookupSQL(kind, tiers), args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (found, error) {
		var f found
		err := row.Scan(&f.key, &f.sim, &f.rank, &f.tier)
		return f, err
	})
}

// termCandidates gathers one term's candidates (see above). serial runs the look-ups
// without parallel workers, which hand rows over in no fixed order: a look-up cut by its
// LIMIT then keeps the same rows every time the data is the same (the research walk).
// beside runs the word index's look-up beside the full-text statements, on its own
// goroutine; otherwise it runs first. A look-up and a statement then take a core each,
// which shortens a question of one or two terms (a topic and its head word); with more,
// the terms' own look-ups already keep the processors busy. own computes the full-text
// matches' similarities here (trigramsAgree).
func (p *Provider) termCandidates(ctx context.Context, country, language string, t ideaTerm, threshold float64, limit, want int, serial, beside, own bool, ix *wordIndex) ([]string, error) {
	var keys []string
	var best []found
	indexed := false
	var wg sync.WaitGroup
	if ix != nil {
		wg.Add(1)
		look := func() {
			defer wg.Done()
			best, indexed = ix.similar(t.text, float32(threshold), want)
		}
		if beside {
			go look()
		} else {
			look()
		}
	}
	defer wg.Wait()
	err := p.readTx(ctx, true, func(tx pgx.Tx) error {
		if serial {
			if _, err := tx.Exec(ctx, "SET LOCAL max_parallel_workers_per_gather = 0"); err != nil {
				return err
			}
		}
		args := []any{country, language, t.text}
		tiers := nearestTiers(t.trigrams)
		// Full-text matches: the nearest tiers until want, then the rest of the last one.
		// With the word index, their similarity is computed here (as exactly as the
		// index's), not by PostgreSQL for every row.
		kind := fullTextLookup
		if own {
			kind = fullTextRankLookup
		}
		ft, err := readLookup(ctx, tx, kind, tiers, append(args, want)...)
		if err != nil {
			return err
		}
		if len(ft) == want {
			rest, err := readLookup(ctx, tx, kind, []int{ft[want-1].tier}, append(args, ideasTierCap(want))...)
			if err != nil {
				return err
			}
			ft = append(ft, rest...)
		}
		if own {
			tg := textTrigrams(t.text)
			for i := range ft {
				ft[i].sim = similarity(textTrigrams(ft[i].key), tg)
			}
		}

		wg.Wait()
		if indexed {
			keys = mostRelevant(append(ft, best...), limit)
			return nil
		}
		// The most similar: the tiers that can hold a match at once, until want; if there
		// are more, tier by tier from the last one read, the bar raised to the want-th
		// best similarity found.
		bar := threshold
		look := func(tiers []int, limit int) ([]found, error) {
			a := append(slices.Clone(args), limit, bar)
			var read []int
			for _, i := range tiers {
				if tierBound(i, t.trigrams) < bar {
					continue
				}
				lo, _ := tierRange(i)
				q := t.wordQuery(lo, bar)
				if q == "" {
					continue
				}
				a = append(a, q)
				read = append(read, i)
			}
			if len(read) == 0 {
				return nil, nil
			}
			return readLookup(ctx, tx, wordLookup, read, a...)
		}
		best, err = look(tiers, want)
		if err != nil {
			return err
		}
		if len(best) == want {
			for _, i := range tiers[slices.Index(tiers, best[want-1].tier):] {
				// Keep the want most similar and those tied with the last of them.
				slices.SortStableFunc(best, func(a, b found) int { return cmp.Compare(b.sim, a.sim) })
				cut := want
				for cut < len(best) && cut < 2*want && best[cut].sim >= best[want-1].sim {
					cut++
				}
				best = best[:cut]
				bar = max(bar, float64(best[want-1].sim))
				if tierBound(i, t.trigrams) < bar {
					break
				}
				more, err := look([]int{i}, ideasTierCap(want))
				if err != nil {
					return err
				}
				have := make(map[string]bool, len(best))
				for _, b := range best {
					have[b.key] = true
				}
				for _, f := range more {
					if !have[f.key] {
						best = append(best, f)
					}
				}
			}
		}
		keys = mostRelevant(append(ft, best...), limit)
		return nil
	})
	return keys, err
}

// mostRelevant returns the keys of the limit keywords most relevant to the term and of
// those tied with the last of them. Only these can be among the limit most relevant to
// all the terms: a keyword's relevance is its best over the terms, so one with limit
// others before it for the term where it scores best has limit others before it overall.
func mostRelevant(found []found, limit int) []string {
	rel := make(map[string]float64, len(found))
	for _, f := range found {
		if r, ok := rel[f.key]; !ok || float64(f.sim)+float64(f.rank) > r {
			rel[f.key] = float64(f.sim) + float64(f.rank)
		}
	}
	keys := slices.Collect(maps.Keys(rel))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(rel[b], rel[a]), strings.Compare(a, b)) })
	n := min(limit, len(keys))
	for n < len(keys) && n > 0 && rel[keys[n]] == rel[keys[n-1]] {
		n++
	}
	return keys[:n]
}

// readTx runs f in a read-only transaction set for the ideas queries: no JIT (compiling
// costs more than these queries take), and prepared statements' generic plans (a look-up's
// plan does not depend on its values, and planning it against every partial index costs
// more than running it). The tier look-ups (lookups true) also run without sequential
// scans: with a LIMIT the planner would expect a common term's matches early in a scan of
// the table, and for a rare term that reads a million rows where the index finds the few
// matches at once.
func (p *Provider) readTx(ctx context.Context, lookups bool, f func(tx pgx.Tx) error) error {
	set := "SET LOCAL jit = off; SET LOCAL plan_cache_mode = force_generic_plan"
	if lookups {
		set += "; " + LookupSettings
	}
	return pgx.BeginTxFunc(ctx, p.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, set); err != nil {
			return err
		}
		return f(tx)
	})
}

// LookupSettings are the planner settings of the tier look-ups.
const LookupSettings = "SET LOCAL enable_seqscan = off"

// ideasTermsSQL describes the terms ($3): trigram count, and per word (as pg_trgm splits
// them) its trigram count, its lexeme (empty for a stop word), whether a keyword of the
// market has it, and the word; and how many keywords the market has, counted up to $4.
var ideasTermsSQL = func() string {
	var has []string
	for i := range ideasTiers {
		has = append(has, `(SELECT FROM keyword_metrics WHERE country || language = $1 || $2 AND `+tierPredicate(i)+
			` AND `+vector+` @@ plainto_tsquery(keyword_ts_config($2), w.word))`)
	}
	return `
WITH words AS (
    SELECT t.i, w.i AS j, w.word
    FROM unnest($3::text[]) WITH ORDINALITY AS t(term, i),
         regexp_split_to_table(t.term, '[^[:alnum:]]+') WITH ORDINALITY AS w(word, i)
    WHERE w.word <> ''
)
SELECT coalesce(array_length(show_trgm(t.term), 1), 0),
       array(SELECT coalesce(array_length(show_trgm(w.word), 1), 0) FROM words w WHERE w.i = t.i ORDER BY w.j),
       array(SELECT coalesce((tsvector_to_array(to_tsvector(keyword_ts_config($2), w.word)))[1], '')
             FROM words w WHERE w.i = t.i ORDER BY w.j),
       array(SELECT EXISTS (` + strings.Join(has, "\n        UNION ALL ") + `)
             FROM words w WHERE w.i = t.i ORDER BY w.j),
       array(SELECT w.word FROM words w WHERE w.i = t.i ORDER BY w.j),
       coalesce(current_setting('pg_trgm.similarity_threshold', true)::float8, 0.3),
       (SELECT count(*) FROM (SELECT FROM keyword_metrics WHERE country = $1 AND language = $2 LIMIT $4) s)
FROM unnest($3::text[]) WITH ORDINALITY AS t(term, i)
ORDER BY t.i`
}()

// alikeSQL lists, for each word of $3, the lexemes of the market's words most similar to it:
// at most 32 words similar enough for pg_trgm's % operator, the most similar first (a word
// itself when a keyword has it), read nearest first from the GiST index of keyword_words
// (the market is written as a filter no B-tree answers, as in the tier look-ups).
const alikeSQL = `
SELECT w.word, coalesce(array_agg(DISTINCT l.lexeme) FILTER (WHERE l.lexeme IS NOT NULL), '{}')
FROM unnest($3::text[]) AS w(word)
LEFT JOIN LATERAL (
    SELECT n.word FROM (
        SELECT v.word FROM keyword_words v
        WHERE v.country || v.language = $1 || $2
        ORDER BY v.word <-> w.word
        LIMIT 64) n
    WHERE n.word % w.word
    ORDER BY similarity(n.word, w.word) DESC, n.word
    LIMIT 32) s ON true
LEFT JOIN LATERAL unnest(tsvector_to_array(to_tsvector(keyword_ts_config($2), s.word))) AS l(lexeme) ON true
GROUP BY w.word`

// alikeSettings are the planner settings of alikeSQL, after LookupSettings.
const alikeSettings = "SET LOCAL enable_bitmapscan = off; SET LOCAL enable_sort = off"

// collectAlike reads alikeSQL's rows.
func collectAlike(rows pgx.Rows, err error) (map[string][]string, error) {
	if err != nil {
		return nil, err
	}
	alike := map[string][]string{}
	var word string
	var lexemes []string
	_, err = pgx.ForEachRow(rows, []any{&word, &lexemes}, func() error {
		alike[word] = slices.Clone(lexemes)
		return nil
	})
	return alike, err
}

// candidateSet is what candidates found: the candidates' keys (nil when the market is small
// enough to rank all its matches), pg_trgm's similarity threshold, and whether the ranking
// takes the candidates' similarities from the worker (own: the word index answered, and
// the database computes similarities as the worker does).
type candidateSet struct {
	keys      []string
	threshold float64
	own       bool
}

// candidates returns the terms' candidates.
// want is how many candidates of each kind a term gathers (ideasCandidates(limit) but for
// the research walk); serial is termCandidates'.
func (p *Provider) candidates(ctx context.Context, country, language string, texts []string, limit, want int, serial bool) (candidateSet, error) {
	terms := make([]ideaTerm, len(texts))
	var threshold float64
	var size int
	var ix *wordIndex
	own := false
	err := p.readTx(ctx, true, func(tx pgx.Tx) error {
		var v columnsVersion
		if err := tx.QueryRow(ctx, keywordsVersionSQL).Scan(&v.data, &v.token); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, ideasTermsSQL, country, language, texts, ideasRankAll+1)
		if err != nil {
			return err
		}
		// A word stands for the market's words similar to it (see above) when it is the
		// only one of its term or no keyword has it: stand[lexeme] is that word.
		stand := make([]map[string]string, len(texts))
		var alikeOf []string
		for i := 0; rows.Next(); i++ {
			var weights []int
			var lexemes, words []string
			var known []bool
			if err := rows.Scan(&terms[i].trigrams, &weights, &lexemes, &known, &words, &threshold, &size); err != nil {
				rows.Close()
				return err
			}
			terms[i].text = texts[i]
			terms[i].words, terms[i].stop = termWords(weights, lexemes)
			stand[i] = map[string]string{}
			for j, l := range lexemes {
				if l != "" && (!known[j] || len(terms[i].words) == 1) && stand[i][l] == "" {
					stand[i][l] = words[j]
					alikeOf = append(alikeOf, words[j])
				}
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil || size <= ideasRankAll {
			return err
		}
		if p.words != nil && !wordsOff {
			if ix, err = p.words.get(ctx, p.pool, market{country, language}, v, p.waitWords || wordsWaitAlways); err != nil {
				return err
			}
			if ix != nil {
				own, err = p.trigramsAgree(ctx, tx)
				return err
			}
		}
		if len(alikeOf) == 0 {
			return nil
		}
		// Nearest first from the GiST index, not the whole market sorted: the planner
		// costs the two about the same and took the sort, which reads every word of the
		// market (docs/keyword-data-at-scale.md, "Research at 10M"). The statement's other
		// sorts have no other way and stay.
		if _, err := tx.Exec(ctx, alikeSettings); err != nil {
			return err
		}
		alike, err := collectAlike(tx.Query(ctx, alikeSQL, country, language, alikeOf))
		if err != nil {
			return err
		}
		for i := range terms {
			ws := terms[i].words[:0]
			for _, w := range terms[i].words {
				if word, ok := stand[i][w.lexeme]; ok {
					if w.alike = alike[word]; len(w.alike) == 0 {
						continue // no keyword can share it
					}
				}
				ws = append(ws, w)
			}
			terms[i].words = ws
		}
		return nil
	})
	if ix != nil {
		defer ix.release()
	}
	if err != nil {
		return candidateSet{}, err
	}
	if size <= ideasRankAll {
		return candidateSet{threshold: threshold}, nil
	}
	found := make([][]string, len(terms))
	var eg errgroup.Group
	eg.SetLimit(4)
	for i, t := range terms {
		eg.Go(func() error {
			var err error
			found[i], err = p.termCandidates(ctx, country, language, t, threshold, limit, want, serial, len(terms) <= 2, own, ix)
			return err
		})
	}
	if err := eg.Wait(); err != nil {
		return candidateSet{}, err
	}
	keys := []string{}
	seen := make(map[string]bool)
	for _, f := range found {
		for _, k := range f {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	return candidateSet{keys: keys, threshold: threshold, own: own}, nil
}

// termWords groups a term's words by lexeme (the heaviest word's count for one), longest
// first, at most maxTermWords, and sums the trigram counts of those without one.
func termWords(weights []int, lexemes []string) (words []termWord, stop int) {
	at := make(map[string]int)
	for i, l := range lexemes {
		switch j, ok := at[l]; {
		case l == "":
			stop += weights[i]
		case ok:
			words[j].trigrams = max(words[j].trigrams, weights[i])
		default:
			at[l] = len(words)
			words = append(words, termWord{lexeme: l, trigrams: weights[i]})
		}
	}
	slices.SortStableFunc(words, func(a, b termWord) int { return cmp.Compare(b.trigrams, a.trigrams) })
	return words[:min(len(words), maxTermWords)], stop
}

// headWeight scales the relevance of a match of a topic's head word alone ("gardening"
// for "home gardening"): a quarter of ts_rank + similarity, at most about 0.28, which puts
// it below the matches of the topic itself (a trigram match is at least 0.3 similar, a
// full-text match holds all the topic's words); no exact-match bonus.
const headWeight = 0.25

// ideasRankSQL ranks the keywords of the market that match a term ($3, each with its
// weight in the array at the second verb): all of them (ideasAll) or those among the
// candidates $5 and the terms themselves (ideasAmong). A keyword's full-text vector is
// computed once (the fenced lateral), not once per use and term. The third verb is a
// keyword's similarity to a term, the fourth whether it is trigram-similar to it.
const ideasRankSQL = `
WITH terms AS (
    SELECT t.term, t.weight, t.j,
           keyword_normalize(t.term) AS norm,
           websearch_to_tsquery(keyword_ts_config($2), t.term) AS tsq
    FROM unnest($3::text[], $%[2]d::float8[]) WITH ORDINALITY AS t(term, weight, j)
)
SELECT k.keyword, k.search_volume, k.keyword_difficulty, k.cpc, k.competition,
       k.search_intent, k.serp_urls, r.relevance, k.keyword_norm
FROM %[1]s
CROSS JOIN LATERAL (SELECT to_tsvector(keyword_ts_config(k.language), k.keyword) AS tsv OFFSET 0) v
CROSS JOIN LATERAL (
    SELECT max(terms.weight * (CASE WHEN k.keyword_norm = terms.norm AND terms.weight = 1 THEN 2 ELSE 0 END
               + ts_rank(v.tsv, terms.tsq)
               + s.sim)) AS relevance
    FROM terms
    CROSS JOIN LATERAL (SELECT %[3]s AS sim) s
    WHERE k.keyword_norm = terms.norm OR v.tsv @@ terms.tsq OR %[4]s
) r
WHERE k.country = $1 AND k.language = $2 AND r.relevance IS NOT NULL
ORDER BY r.relevance DESC, k.search_volume DESC NULLS LAST, k.keyword_norm
LIMIT $4`

const (
	sqlSimilarity = `similarity(k.keyword, terms.term)`
	sqlSimilar    = `k.keyword % terms.term`
)

var (
	ideasAll   = fmt.Sprintf(ideasRankSQL, `keyword_metrics k`, 5, sqlSimilarity, sqlSimilar)
	ideasAmong = fmt.Sprintf(ideasRankSQL, `(SELECT unnest($5::text[]) UNION SELECT norm FROM terms) c(key)
JOIN keyword_metrics k ON (k.country, k.language, k.keyword_norm) = ($1, $2, c.key)`, 6, sqlSimilarity, sqlSimilar)
	// ideasAmongSimilar takes the candidates' similarities to the terms, computed in the
	// worker: $7 holds candidate i's to term j at (i-1) × terms + j, and $8 is pg_trgm's
	// similarity threshold (the % operator's). A term that is not a candidate has its own
	// computed by PostgreSQL.
	ideasAmongSimilar = fmt.Sprintf(ideasRankSQL, `(SELECT c.key, c.i FROM unnest($5::text[]) WITH ORDINALITY c(key, i)
      UNION ALL SELECT DISTINCT norm, NULL::bigint FROM terms WHERE norm <> ALL ($5::text[])) c
JOIN keyword_metrics k ON (k.country, k.language, k.keyword_norm) = ($1, $2, c.key)`, 6,
		`CASE WHEN c.i IS NULL THEN similarity(k.keyword, terms.term)
                          ELSE ($7::real[])[(c.i - 1) * cardinality($3::text[]) + terms.j] END`,
		`s.sim >= $8::float8`)
)

// Ideas returns keywords matching the topic or seeds, most relevant first, at most
// req.Limit (DefaultIdeasLimit when 0), or one page of the walk (see ideasWalk) when
// req.Page has a limit. Seeds and topic together are searched as one list.
// A topic of several words is matched by its words too: its head word
// (stem.TopicHead: "gardening" for "home gardening") is one more term, weighted
// headWeight, so the keywords holding only that word follow those matching the topic.
func (p *Provider) Ideas(ctx context.Context, req keywords.IdeasRequest) (keywords.IdeaList, error) {
	country, language := Market(req.Country, req.Language)
	var texts []string
	var weights []float64
	seen := make(map[string]bool)
	add := func(t string, weight float64) {
		t = CleanKeyword(t)
		if t == "" || seen[strings.ToLower(t)] {
			return
		}
		seen[strings.ToLower(t)] = true
		texts = append(texts, t)
		weights = append(weights, weight)
	}
	for _, t := range req.Seeds {
		add(t, 1)
	}
	add(req.Topic, 1)
	if len(texts) > 0 {
		add(stem.TopicHead(req.Topic, language), headWeight)
	}
	paged := req.Page.Limit > 0
	var pos *walkPosition
	if paged && req.Page.After != "" {
		var err error
		if pos, err = parseWalkPosition(req.Page.After); err != nil {
			return keywords.IdeaList{}, err
		}
	}
	if len(texts) == 0 {
		return keywords.IdeaList{Ideas: []keywords.Keyword{}}, nil
	}
	answer := req.Limit
	if answer <= 0 {
		answer = DefaultIdeasLimit
	}
	limit := answer
	queried := !req.Filters.Empty() || len(req.Order) > 0
	if queried || paged {
		if err := checkIdeasQuery(req); err != nil {
			return keywords.IdeaList{}, err
		}
	}
	switch {
	case paged:
		limit = ideasWalk
	case queried || req.Keep != nil:
		limit = ideasPool(limit)
	}
	want := ideasCandidates(limit)
	if paged {
		want = walkCandidates(limit)
	}
	cs, err := p.candidates(ctx, country, language, texts, limit, want, paged)
	if err != nil {
		return keywords.IdeaList{}, fmt.Errorf("local: ideas: %w", err)
	}
	rows, err := p.rankIdeas(ctx, country, language, texts, weights, limit, cs)
	if err != nil {
		return keywords.IdeaList{}, fmt.Errorf("local: ideas: %w", err)
	}
	if paged {
		return walkPage(rows, req, pos)
	}
	var list keywords.IdeaList
	out := make([]keywords.Keyword, 0, len(rows))
	for _, r := range rows {
		if list.Keeps(req, r.Keyword) {
			out = append(out, r.Keyword)
		}
	}
	if queried {
		out = filterIdeas(out, req)
	}
	list.Ideas = out[:min(len(out), answer)]
	list.Total = len(list.Ideas)
	return list, nil
}

// rankSplit is the fewest candidates ranked in two halves at once, on two connections: a
// research page ranks a few thousand candidates against its terms, most of the time
// computing each candidate's full-text vector, ts_rank and similarity, which the halves
// share between the cores (docs/keyword-data-at-scale.md, "Research at 10M"). (A variable
// for the tests.)
var rankSplit = 1000

// rankIdeas ranks the market's keywords matching the terms, or only the candidates (and
// the terms themselves) when cs has keys: the limit most relevant, in the order of
// ideasRankSQL. Candidates the word index found are ranked with their similarities to the
// terms computed here, as exactly as the index computes them: deciding which terms a
// candidate is trigram-similar to was most of the statement's time (pg_trgm's % for every
// candidate and term).
func (p *Provider) rankIdeas(ctx context.Context, country, language string, texts []string, weights []float64, limit int, cs candidateSet) ([]walkRow, error) {
	keys := cs.keys
	var sims []float32
	if keys != nil && cs.own {
		sims = termSimilarities(keys, texts)
	}
	some := func(ctx context.Context, lo, hi int) ([]walkRow, error) {
		r := rankRequest{country: country, language: language, texts: texts, weights: weights, limit: limit}
		if keys != nil {
			r.keys = keys[lo:hi]
		}
		if sims != nil {
			r.sims, r.threshold = sims[lo*len(texts):hi*len(texts)], cs.threshold
		}
		return p.rankSome(ctx, r)
	}
	if keys == nil || len(keys) < rankSplit {
		return some(ctx, 0, len(keys))
	}
	// Each half is ranked with the terms and cut at limit: the limit most relevant of
	// all are among the two halves' limit most relevant.
	half := len(keys) / 2
	var a, b []walkRow
	eg, ctx := errgroup.WithContext(ctx)
	eg.Go(func() (err error) {
		a, err = some(ctx, 0, half)
		return err
	})
	eg.Go(func() (err error) {
		b, err = some(ctx, half, len(keys))
		return err
	})
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	return mergeRanked(a, b, limit), nil
}

// termSimilarities returns every key's similarity to every term, key i's to term j at
// i × len(terms) + j.
func termSimilarities(keys, terms []string) []float32 {
	tg := make([][]uint32, len(terms))
	for j, t := range terms {
		tg[j] = textTrigrams(t)
	}
	sims := make([]float32, 0, len(keys)*len(terms))
	for _, k := range keys {
		kt := textTrigrams(k)
		for j := range terms {
			sims = append(sims, similarity(kt, tg[j]))
		}
	}
	return sims
}

// mergeRanked merges two lists in ideasRankSQL's order into the first limit rows of both.
// A keyword in both (a term itself, which each half ranks) is taken once, at its first
// row: its two rows are equal (one half may have its similarities from the worker, the
// other from PostgreSQL, which agree), but a keyword is never listed twice even if they
// were not.
func mergeRanked(a, b []walkRow, limit int) []walkRow {
	out := make([]walkRow, 0, min(limit, len(a)+len(b)))
	seen := make(map[string]bool, cap(out))
	for len(out) < limit && (len(a) > 0 || len(b) > 0) {
		var r walkRow
		switch {
		case len(b) == 0 || len(a) > 0 && compareRanked(a[0], b[0]) <= 0:
			r, a = a[0], a[1:]
		default:
			r, b = b[0], b[1:]
		}
		if seen[r.norm] {
			continue
		}
		seen[r.norm] = true
		out = append(out, r)
	}
	return out
}

// compareRanked is ideasRankSQL's order: relevance, then search volume (unknown last),
// both descending, then the key (keyword_norm, compared byte by byte: its collation is
// "C").
func compareRanked(x, y walkRow) int {
	if c := cmp.Compare(y.Relevance, x.Relevance); c != 0 {
		return c
	}
	switch xv, yv := x.SearchVolume, y.SearchVolume; {
	case xv == nil && yv != nil:
		return 1
	case xv != nil && yv == nil:
		return -1
	case xv != nil && *xv != *yv:
		return cmp.Compare(*yv, *xv)
	}
	return strings.Compare(x.norm, y.norm)
}

// rankRequest is one ranking statement's arguments (see rankIdeas): the candidates' keys
// (nil: all the market's matches) and, when given, their similarities to the terms.
type rankRequest struct {
	country, language string
	texts             []string
	weights           []float64
	limit             int
	keys              []string
	sims              []float32
	threshold         float64
}

// rankSome ranks in one statement (see rankIdeas).
func (p *Provider) rankSome(ctx context.Context, r rankRequest) ([]walkRow, error) {
	var rows []walkRow
	err := p.readTx(ctx, false, func(tx pgx.Tx) error {
		sql, args := ideasAll, []any{r.country, r.language, r.texts, r.limit}
		if r.keys != nil {
			sql, args = ideasAmong, append(args, r.keys)
		}
		args = append(args, r.weights)
		if r.keys != nil && r.sims != nil {
			sql, args = ideasAmongSimilar, append(args, r.sims, r.threshold)
		}
		rs, err := tx.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		defer rs.Close()
		for rs.Next() {
			var row walkRow
			var intent *string
			if err := rs.Scan(&row.Keyword.Keyword, &row.SearchVolume, &row.Difficulty, &row.CPC, &row.Competition,
				&intent, &row.SERPURLs, &row.Relevance, &row.norm); err != nil {
				return err
			}
			if intent != nil {
				row.Intent = *intent
			}
			rows = append(rows, row)
		}
		return rs.Err()
	})
	return rows, err
}

// Filters and order_by on an unpaged call (no Page: research pages walk instead, walk.go)
// apply to a pool of the most relevant matches, ideasPool(limit) of them: the filters keep what passes, the order (relevance when none)
// sorts it, and the first limit are the answer. Ideas are matches of a topic, found by
// relevance; a filter narrows them, it does not widen the search to keywords that match the
// topic less (a filter on volume over a whole market is a different question). The pool is
// ranked by the same bounded look-ups as an unfiltered call with a larger limit.

// ideasPool is how many of the most relevant matches a filtered or ordered call considers.
func ideasPool(limit int) int { return min(max(10*limit, 500), 2000) }

// checkIdeasQuery refuses the fields ideas cannot filter or sort on here: the opportunity
// score depends on the asking domain's positions, which the provider does not know.
func checkIdeasQuery(req keywords.IdeasRequest) error {
	ok := func(f keywords.Field) bool {
		return f == keywords.FieldSearchVolume || f == keywords.FieldDifficulty || f == keywords.FieldCPC
	}
	for _, f := range sortedFields(req.Filters.Ranges) {
		if !ok(f) {
			return fmt.Errorf("filters.%s: %w", f, keywords.ErrUnsupported)
		}
	}
	for i, k := range req.Order {
		if !ok(k.Field) && k.Field != keywords.FieldKeyword {
			return fmt.Errorf("order_by[%d] %s: %w", i, k.Field, keywords.ErrUnsupported)
		}
	}
	return nil
}

// ideaValue is an idea's value of a field, nil when unknown.
func ideaValue(k keywords.Keyword, f keywords.Field) *float64 {
	switch f {
	case keywords.FieldSearchVolume:
		if k.SearchVolume == nil {
			return nil
		}
		v := float64(*k.SearchVolume)
		return &v
	case keywords.FieldDifficulty:
		return k.Difficulty
	case keywords.FieldCPC:
		return k.CPC
	}
	return nil
}

// passesFilters reports whether an idea passes the filters.
func passesFilters(k keywords.Keyword, f keywords.Filters) bool {
	pass := len(f.Intents) == 0 || slices.Contains(f.Intents, k.Intent)
	for field, r := range f.Ranges {
		v := ideaValue(k, field)
		pass = pass && v != nil && (r.Min == nil || *v >= *r.Min) && (r.Max == nil || *v <= *r.Max)
	}
	words := strings.Fields(strings.ToLower(k.Keyword))
	for _, w := range f.Include {
		pass = pass && slices.Contains(words, strings.ToLower(w))
	}
	for _, w := range f.Exclude {
		pass = pass && !slices.Contains(words, strings.ToLower(w))
	}
	return pass
}

// filterIdeas keeps the ideas passing req's filters, sorts them by its order (unknowns last,
// then the keyword; relevance order when it has none) and cuts them to its limit.
func filterIdeas(ks []keywords.Keyword, req keywords.IdeasRequest) []keywords.Keyword {
	out := ks[:0]
	for _, k := range ks {
		if passesFilters(k, req.Filters) {
			out = append(out, k)
		}
	}
	if len(req.Order) > 0 {
		slices.SortStableFunc(out, func(a, b keywords.Keyword) int {
			for _, o := range req.Order {
				var c int
				if o.Field == keywords.FieldKeyword {
					c = strings.Compare(strings.ToLower(a.Keyword), strings.ToLower(b.Keyword))
				} else {
					va, vb := ideaValue(a, o.Field), ideaValue(b, o.Field)
					switch {
					case va == nil && vb == nil:
						continue
					case va == nil:
						return 1
					case vb == nil:
						return -1
					}
					c = cmp.Compare(*va, *vb)
				}
				if o.Desc {
					c = -c
				}
				if c != 0 {
					return c
				}
			}
			return strings.Compare(strings.ToLower(a.Keyword), strings.ToLower(b.Keyword))
		})
	}
	limit := req.Limit
	if limit <= 0 {
		limit = DefaultIdeasLimit
	}
	return out[:min(len(out), limit)]
}
