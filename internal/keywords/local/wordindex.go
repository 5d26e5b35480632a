package local

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The word index: a market's keywords by the words they hold, for research's trigram
// look-ups. A keyword's trigrams are its words' (trigrams.go), so what a keyword shares with
// a term is what its words share: each market word sharing a trigram with the term gets a
// bitmask of the term's trigrams it holds, and a keyword's shared trigrams are the OR of its
// words' masks, counted exactly; its similarity is then s / (n + m - s) in float4, as
// pg_trgm's similarity() computes it (n the term's trigrams, m the keyword's: ntrgm).
//
// Which keywords are read: each word of the term stands for itself and the market's words
// at least alikeBar similar to it (the word of a term of one word, and a word no keyword
// holds, for the maxAlike most similar at the threshold), and the keywords read are those
// holding the words of a set of the term's words whose trigrams can reach the bar (the
// want-th best similarity found so far; the threshold at first). Sets are read cheapest
// first and drawn again as the bar rises (see similar). A word's keywords come by trigram
// count, and one of m ≥ n trigrams is at most n / m similar, so a list is read only as far
// as its keywords can reach the bar. The answer is the want most similar of the keywords
// read (and those tied with the last, up to twice want): the same keywords the SQL tier
// walk reads (those sharing enough of the term's words) and those sharing near spellings of
// them, in a fraction of the time (docs/keyword-data-at-scale.md). Keywords similar to the
// term only through pieces of other words are found by neither.
//
// An index is built from one version of the keywords (keyword_data_state's
// keywords_generation and keywords_token, which writes to the rankings leave as they are:
// migration 00046) and used only for questions that see that version; others use the SQL
// look-ups.
// Keyword ids are in (trigram count, keyword_norm) order, so that every worker building the
// same version numbers it alike and cuts ties the same way (by id).

// keywordsVersionSQL reads the keywords' version, which names a word index (in the data
// and token of a columnsVersion; its sets are 0).
const keywordsVersionSQL = `SELECT keywords_generation, keywords_token FROM keyword_data_state`

// wordIndex is one market's keywords by word: views of its mapped word file (wordfile.go).
type wordIndex struct {
	version    columnsVersion
	keys       keyTexts // keyword_norm by keyword id
	ntrgm      []uint16 // the keywords' trigram counts (ntrgm)
	words      []uint32 // keyword i's distinct words: words[wordEnds[i-1]:wordEnds[i]]
	wordEnds   []uint32
	vocab      keyTexts // the words by word id, in order
	vocabTrgms []uint16 // their trigram counts
	postEnds   []uint32 // word w's keywords: posts[postEnds[w-1]:postEnds[w]], ascending
	posts      []uint32
	trgms      []uint32 // the words' trigrams, ascending, beside the word holding each
	trgmWords  []uint32

	mapped  []byte   // the file but the keys' texts
	file    *os.File // the file, open for the keys' texts (at keyText)
	keyText int64
	size    int64        // the file's
	refs    atomic.Int64 // the store's hold and the questions'; unmapped and closed at 0
	scratch sync.Pool    // *wordScratch
}

// acquire holds the index for a question until it calls release; false for one let go.
func (ix *wordIndex) acquire() bool {
	for {
		n := ix.refs.Load()
		if n <= 0 {
			return false
		}
		if ix.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (ix *wordIndex) release() {
	if ix.refs.Add(-1) == 0 {
		_ = unmapFile(ix.mapped)
		_ = ix.file.Close()
	}
	boundMapped()
}

// key reads keyword k's key from the file.
func (ix *wordIndex) key(k uint32) (string, error) {
	lo, hi := span(ix.keys.ends, int(k))
	b := make([]byte, hi-lo)
	if _, err := ix.file.ReadAt(b, ix.keyText+int64(lo)); err != nil {
		return "", err
	}
	return string(b), nil
}

// holding returns the words holding trigram t.
func (ix *wordIndex) holding(t uint32) []uint32 {
	lo, _ := slices.BinarySearch(ix.trgms, t)
	hi := lo
	for hi < len(ix.trgms) && ix.trgms[hi] == t {
		hi++
	}
	return ix.trgmWords[lo:hi]
}

// wordScratch is one look-up's working memory, kept for the next.
type wordScratch struct {
	masks []uint64 // by word id: the term's trigrams the word holds (zeroed after use)
	seen  []uint64 // by keyword id: read already (zeroed after use)
	mark  []uint64 // by keyword id: of a group (zeroed after use)
}

func span(ends []uint32, i int) (lo, hi uint32) {
	if i > 0 {
		lo = ends[i-1]
	}
	return lo, ends[i]
}

// wordIndexSQL reads a market's keywords by trigram count, then key.
const wordIndexSQL = `SELECT keyword_norm, keyword, coalesce(ntrgm, 0) AS m FROM keyword_metrics
WHERE country = $1 AND language = $2 ORDER BY m, keyword_norm`

// maxTermTrigrams is the most trigrams a term looked up in a word index may have (a bit
// each); a longer term takes the SQL look-ups.
const maxTermTrigrams = 64

// termGroup is a word of a term and the market's words that stand for it: the word itself,
// or, for the word of a term of one word and a word no keyword holds, the market's words
// most similar to it (at most maxAlike, at least the threshold similar).
type termGroup struct {
	ids  []uint32
	mask uint64 // the term's trigrams any of them holds
	df   int    // keywords holding one of them (with repeats)
}

const maxAlike = 32

// alikeBar is how similar a market's word must be to a word of a term of several words to
// stand for it.
const alikeBar = 0.5

// similar returns the want keywords most similar to term of those its word sets read (see
// above), at least threshold similar, and those tied with the want-th (up to 2 × want), each
// with its similarity; ok is false when the term has no trigram or more than
// maxTermTrigrams.
func (ix *wordIndex) similar(term string, threshold float32, want int) (out []found, ok bool) {
	return ix.similarStats(term, threshold, want, &lookupStats{})
}

// lookupStats counts what a look-up read (for the timings test).
type lookupStats struct{ words, sets, setsRead, postings, verified int }

func (ix *wordIndex) similarStats(term string, threshold float32, want int, st *lookupStats) (out []found, ok bool) {
	tg := textTrigrams(term)
	n := len(tg)
	if n == 0 || n > maxTermTrigrams || want <= 0 {
		return nil, false
	}
	sc, _ := ix.scratch.Get().(*wordScratch)
	if sc == nil {
		sc = &wordScratch{masks: make([]uint64, len(ix.postEnds)), seen: make([]uint64, (len(ix.ntrgm)+63)/64),
			mark: make([]uint64, (len(ix.ntrgm)+63)/64)}
	}
	defer ix.scratch.Put(sc)
	bit := func(t uint32) uint64 {
		i, found := slices.BinarySearch(tg, t)
		if !found {
			return 0
		}
		return 1 << i
	}
	// Every market word sharing a trigram with the term gets its mask (the verification of a
	// keyword ORs its words').
	var rel []uint32
	for i, t := range tg {
		for _, w := range ix.holding(t) {
			if sc.masks[w] == 0 {
				rel = append(rel, w)
			}
			sc.masks[w] |= 1 << i
		}
	}
	st.words = len(rel)
	df := func(w uint32) int { lo, hi := span(ix.postEnds, int(w)); return int(hi - lo) }

	// The term's words and what stands for each.
	var groups []termGroup
	var words [][]byte
	eachWord(term, nil, func(w []byte) {
		if !slices.ContainsFunc(words, func(x []byte) bool { return string(x) == string(w) }) {
			words = append(words, slices.Clone(w))
		}
	})
	for _, w := range words {
		var own uint64
		c := 0
		for _, t := range distinct(wordTrigrams(w, nil)) {
			own |= bit(t)
			c++
		}
		g := termGroup{mask: own}
		id, known := ix.vocab.find(string(w))
		// A word stands for itself and the market's words at least alikeBar similar to
		// it ("kettles", "nireli" for "nirelite"); the word of a term of one word, and a
		// word no keyword holds, for the words at least threshold similar.
		bar := threshold
		if known && len(words) > 1 {
			bar = max(bar, alikeBar)
		}
		{
			// The market's words most similar to it.
			type alike struct {
				id  uint32
				sim float32
			}
			var as []alike
			for _, v := range rel {
				s := float32(bits.OnesCount64(sc.masks[v] & own))
				cv := ix.vocabTrgms[v]
				if sim := s / (float32(c) + float32(cv) - s); sim >= bar || known && v == uint32(id) {
					as = append(as, alike{v, sim})
				}
			}
			slices.SortFunc(as, func(a, b alike) int { return cmp.Or(cmp.Compare(b.sim, a.sim), cmp.Compare(a.id, b.id)) })
			for _, a := range as[:min(len(as), maxAlike)] {
				g.ids = append(g.ids, a.id)
			}
		}
		if len(g.ids) == 0 {
			continue
		}
		g.mask = 0
		for _, id := range g.ids {
			g.mask |= sc.masks[id]
			g.df += df(id)
		}
		groups = append(groups, g)
	}
	if len(groups) > maxTermWords {
		slices.SortStableFunc(groups, func(a, b termGroup) int { return cmp.Compare(bits.OnesCount64(b.mask), bits.OnesCount64(a.mask)) })
		groups = groups[:maxTermWords]
	}

	type cand struct {
		id  uint32
		sim float32
	}
	var best []cand
	bar := threshold
	cut := func() {
		// Ties by id, the same in every worker's build of the data (and the keys' pages
		// are left unread).
		slices.SortFunc(best, func(a, b cand) int { return cmp.Or(cmp.Compare(b.sim, a.sim), cmp.Compare(a.id, b.id)) })
		if len(best) < want {
			return
		}
		k := want
		for k < len(best) && k < 2*want && best[k].sim >= best[want-1].sim {
			k++
		}
		best = best[:k]
		bar = max(bar, best[want-1].sim)
	}
	reaches := func(mask uint64) bool { return float32(bits.OnesCount64(mask))/float32(n) >= bar }
	var touched []uint32
	verify := func(k uint32) {
		if sc.seen[k/64]&(1<<(k%64)) != 0 {
			return
		}
		sc.seen[k/64] |= 1 << (k % 64)
		touched = append(touched, k)
		st.verified++
		var shared uint64
		wlo, whi := span(ix.wordEnds, int(k))
		for _, x := range ix.words[wlo:whi] {
			shared |= sc.masks[x]
		}
		s := float32(bits.OnesCount64(shared))
		// pg_trgm's similarity, in float4 as it computes it.
		if sim := s / (float32(n) + float32(ix.ntrgm[k]) - s); sim >= bar {
			best = append(best, cand{k, sim})
			if len(best) >= 4*want {
				cut()
			}
		}
	}

	// The smallest sets of the groups whose trigrams can reach the bar: a keyword holding
	// none of a set's groups' words shares too few trigrams with the term. The cheapest
	// first, which are the most specific and raise the bar soonest; as the bar rises, the
	// sets are drawn again (a set that reached the old bar may not reach the new one,
	// while some of its supersets do). A set is read by its rarest group's keywords, or,
	// when its second rarest is not much commoner, by the keywords holding both; what was
	// read covers every set holding the groups read (done).
	var done []uint
	// A word's keywords come by trigram count, and one of m ≥ n trigrams is at most n / m
	// similar: past that bar, the rest of the list cannot reach it. Ids are in trigram
	// count order too, so the keywords past the bar are those from one id on, found once
	// for each bar (reading each keyword's count as the lists are read was a third of a
	// look-up's time: one cache miss a keyword).
	pastBar, pastFrom := float32(-1), uint32(0)
	pastAt := func() uint32 {
		if bar != pastBar {
			pastBar = bar
			pastFrom = uint32(sort.Search(len(ix.ntrgm), func(i int) bool {
				m := float32(ix.ntrgm[i])
				return m >= float32(n) && float32(n)/m < bar
			}))
		}
		return pastFrom
	}
	past := func(k uint32) bool { return k >= pastAt() }
	covered := func(set uint) bool { return slices.ContainsFunc(done, func(d uint) bool { return set&d == d }) }
	maskOf := func(set uint) (m uint64) {
		for i, g := range groups {
			if set&(1<<i) != 0 {
				m |= g.mask
			}
		}
		return m
	}
	// rarest returns the set's rarest group, and its second rarest (-1 for none).
	rarest := func(set uint) (first, second int) {
		first, second = -1, -1
		for i, g := range groups {
			switch {
			case set&(1<<i) == 0:
			case first < 0 || g.df < groups[first].df:
				first, second = i, first
			case second < 0 || g.df < groups[second].df:
				second = i
			}
		}
		return first, second
	}
	both := func(first, second int) bool {
		return second >= 0 && groups[first].df > 4096 && groups[second].df < 16*groups[first].df
	}
	cost := func(set uint) int {
		first, second := rarest(set)
		if both(first, second) {
			return (groups[first].df + groups[second].df) / 16
		}
		return groups[first].df
	}
	for {
		next, nextCost := uint(0), 0
		var reaching []uint
		for size := 1; size <= len(groups); size++ {
			for set := uint(1); set < 1<<len(groups); set++ {
				if bits.OnesCount(set) != size || !reaches(maskOf(set)) ||
					slices.ContainsFunc(reaching, func(r uint) bool { return set&r == r }) {
					continue
				}
				reaching = append(reaching, set)
				if covered(set) {
					continue
				}
				st.sets++
				if c := cost(set); next == 0 || c < nextCost {
					next, nextCost = set, c
				}
			}
		}
		if next == 0 {
			break
		}
		st.setsRead++
		first, second := rarest(next)
		if both(first, second) {
			done = append(done, 1<<first|1<<second)
			// Mark the second group's keywords, read the first's that are marked.
			marked := make([][]uint32, len(groups[second].ids))
			for j, id := range groups[second].ids {
				p := ix.postings(id)
				end, _ := slices.BinarySearch(p, pastAt())
				p = p[:end]
				for _, k := range p {
					sc.mark[k/64] |= 1 << (k % 64)
				}
				marked[j] = p
				st.postings += len(p)
			}
			for _, id := range groups[first].ids {
				for _, k := range ix.postings(id) {
					if past(k) {
						break
					}
					st.postings++
					if sc.mark[k/64]&(1<<(k%64)) != 0 {
						verify(k)
					}
				}
			}
			for _, p := range marked {
				for _, k := range p {
					sc.mark[k/64] = 0
				}
			}
			continue
		}
		done = append(done, 1<<first)
		for _, id := range groups[first].ids {
			for _, k := range ix.postings(id) {
				if past(k) {
					break
				}
				st.postings++
				verify(k)
			}
		}
	}
	cut()
	for _, w := range rel {
		sc.masks[w] = 0
	}
	for _, k := range touched {
		sc.seen[k/64] = 0
	}
	out = make([]found, len(best))
	for i, c := range best {
		key, err := ix.key(c.id)
		if err != nil {
			return nil, false // the SQL look-ups answer
		}
		out[i] = found{key: key, sim: c.sim, tier: -1}
	}
	return out, true
}

// postings are the ids of the keywords holding word w, ascending.
func (ix *wordIndex) postings(w uint32) []uint32 {
	lo, hi := span(ix.postEnds, int(w))
	return ix.posts[lo:hi]
}

// wordStore holds the markets' word indexes, one version each. dir is where their files are
// shared with the node's other workers ("" for the temporary directory, each file unlinked
// once mapped).
type wordStore struct {
	dir     string
	warn    func(error)
	mu      sync.Mutex
	markets map[market]*wordEntry
	report  func(WordIndexBuild)
}

// WordIndexBuild reports one build (or mapping) of a market's word index.
type WordIndexBuild struct {
	Country, Language string
	Keywords, Words   int
	Bytes             int64 // the file's size
	Took              time.Duration
	Mapped            bool // mapped from a file another build wrote
	Err               error
}

// WithWordIndexReport calls f after every build of a word index.
func WithWordIndexReport(f func(WordIndexBuild)) Option {
	return func(p *Provider) {
		if p.words != nil {
			p.words.report = f
		}
	}
}

type wordEntry struct {
	version  columnsVersion
	ready    chan struct{} // closed when ix or err is set
	ix       *wordIndex    // held by the store (one of its refs)
	mapped   bool
	err      error
	started  time.Time
	ended    time.Time
	failures int // builds of this version that failed before this one
}

// wordsRetry is how long after a failed build the next question tries again, doubled
// after each failure of the same version up to wordsRetryMax (a full disk should not have
// every worker read the market from PostgreSQL every minute).
const (
	wordsRetry    = time.Minute
	wordsRetryMax = time.Hour
)

// failed reports a build that ended without an index, long enough ago to try again.
func (e *wordEntry) failed() bool {
	select {
	case <-e.ready:
		wait := min(wordsRetry<<min(e.failures, 6), wordsRetryMax)
		return e.ix == nil && time.Since(e.ended) > wait
	default:
		return false
	}
}

// wordsBuildTimeout bounds a build, which runs detached from the question that started it.
const wordsBuildTimeout = 10 * time.Minute

// get returns market m's word index of version v, held for the caller (release it), when it
// is built; otherwise it starts its build (in the background, unless wait) and returns nil.
func (s *wordStore) get(ctx context.Context, pool *pgxpool.Pool, m market, v columnsVersion, wait bool) (*wordIndex, error) {
	s.mu.Lock()
	if s.markets == nil {
		s.markets = map[market]*wordEntry{}
	}
	e := s.markets[m]
	failures := 0
	if e != nil && e.version == v && e.failed() {
		failures = e.failures + 1
		e = nil // a failed build is tried again after a while
	}
	if e != nil && v.data < e.version.data && time.Since(e.started) < wordsRetry {
		// A question on a snapshot older than the index's data (it began before an
		// import's switch) answers in SQL rather than build the old data again. A lower
		// generation that lasts is a restored backup's, which gets its index.
		s.mu.Unlock()
		return nil, nil
	}
	if e == nil || e.version != v {
		if e != nil {
			select {
			case <-e.ready:
				if e.ix != nil {
					e.ix.release() // the store's hold: unmapped when no question holds it
				}
			default: // an older build still running: let it finish first
				s.mu.Unlock()
				if !wait {
					return nil, nil
				}
				select {
				case <-e.ready:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return s.get(ctx, pool, m, v, wait)
			}
		}
		e = &wordEntry{version: v, ready: make(chan struct{}), started: time.Now(), failures: failures}
		s.markets[m] = e
		go s.build(pool, m, e)
	}
	s.mu.Unlock()
	if !wait {
		select {
		case <-e.ready:
		default:
			return nil, nil
		}
	}
	select {
	case <-e.ready:
		if e.ix == nil || !e.ix.acquire() {
			return nil, nil // the SQL look-ups answer (a failure was warned of)
		}
		return e.ix, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// build makes the index of e's version ready: mapped from its file when another worker has
// written it, else built from the database into the file. A build that finds the data moved
// on leaves no index (the next question starts one for the new version).
func (s *wordStore) build(pool *pgxpool.Pool, m market, e *wordEntry) {
	t0 := time.Now()
	defer func() {
		if e.err != nil && s.warn != nil {
			s.warn(e.err)
		}
		if s.report != nil {
			r := WordIndexBuild{Country: m.country, Language: m.language, Took: time.Since(t0), Mapped: e.mapped, Err: e.err}
			if e.ix != nil {
				r.Keywords, r.Words, r.Bytes = e.ix.keys.len(), e.ix.vocab.len(), e.ix.size
			}
			s.report(r)
		}
		e.ended = time.Now()
		close(e.ready)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), wordsBuildTimeout)
	defer cancel()
	dir, shared := s.dir, s.dir != ""
	if !shared {
		dir = os.TempDir()
	}
	path, ok := wordPath(dir, m, e.version)
	if !ok {
		return
	}
	if !shared {
		path = strings.TrimSuffix(path, ".words") + fmt.Sprintf("-%d-%d.words", os.Getpid(), time.Now().UnixNano())
	} else {
		lock, err := lockFile(ctx, path+".lock")
		if err != nil {
			e.err = fmt.Errorf("local: word file: lock: %w", err)
			return
		}
		defer lock.Close()
		ix, err := openWordFile(path, m, e.version, true)
		if err == nil {
			ix.refs.Store(1)
			e.ix, e.mapped = ix, true
			return
		}
		if !errors.Is(err, os.ErrNotExist) && s.warn != nil {
			s.warn(err)
		}
	}
	if shared {
		// The market's older files go first: the disk then holds one index of the market
		// and this build's parts, not two indexes (workers mapping an old file keep it).
		if err := removeOlderWordFiles(dir, m, path); err != nil && s.warn != nil {
			s.warn(err)
		}
	}
	built := false
	e.err = inSnapshot(ctx, pool, func(tx pgx.Tx) error {
		var now columnsVersion
		if err := tx.QueryRow(ctx, keywordsVersionSQL).Scan(&now.data, &now.token); err != nil {
			return err
		}
		if now.data != e.version.data || now.token != e.version.token {
			return nil
		}
		built = true
		return buildWordFile(ctx, tx, m, e.version, path)
	})
	if e.err != nil || !built {
		if e.err != nil {
			e.err = fmt.Errorf("local: word index of %s/%s: %w", m.country, m.language, e.err)
		}
		return
	}
	if !shared {
		defer os.Remove(path) // the mapping stays
	}
	ix, err := openWordFile(path, m, e.version, false)
	if err != nil {
		e.err = err
		return
	}
	ix.refs.Store(1)
	e.ix = ix
}

// WarmWordIndexes builds (or maps) the word index of every market research would use one
// for, as the data stands, so that research after a worker starts or after an import does
// not use the SQL look-ups while the first question's build runs.
func (p *Provider) WarmWordIndexes(ctx context.Context) error {
	if p.words == nil || wordsOff {
		return nil
	}
	var v columnsVersion
	var markets []market
	err := inSnapshot(ctx, p.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, keywordsVersionSQL).Scan(&v.data, &v.token); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT m.country, m.language FROM (SELECT DISTINCT country, language FROM keyword_words) m
			WHERE (SELECT count(*) FROM (SELECT FROM keyword_metrics k WHERE k.country = m.country AND k.language = m.language LIMIT $1) s) > $2`,
			ideasRankAll+1, ideasRankAll)
		if err != nil {
			return err
		}
		var m market
		_, err = pgx.ForEachRow(rows, []any{&m.country, &m.language}, func() error {
			markets = append(markets, m)
			return nil
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("local: word indexes: %w", err)
	}
	for _, m := range markets {
		ix, err := p.words.get(ctx, p.pool, m, v, true)
		if err != nil {
			return err
		}
		if ix != nil {
			ix.release()
		}
	}
	return nil
}

// WithoutWordIndexes makes research use the SQL look-ups only.
func WithoutWordIndexes() Option { return func(p *Provider) { p.words = nil } }

// WaitForWordIndexes makes a question wait for its market's word index to be built,
// instead of using the SQL look-ups meanwhile (benchmarks and tests).
func WaitForWordIndexes() Option { return func(p *Provider) { p.waitWords = true } }

// wordsOff turns the word indexes off, and wordsWaitAlways makes every question wait for
// them (both for the tests).
var wordsOff, wordsWaitAlways bool
