package local

import (
	"fmt"
	"testing"
)

// BoundIdeas makes Ideas rank a bounded candidate set in every market until the test ends,
// gathering want(limit) candidates of each kind per term when want is not nil.
func BoundIdeas(t *testing.T, want func(limit int) int) {
	rankAll, candidates := ideasRankAll, ideasCandidates
	t.Cleanup(func() { ideasRankAll, ideasCandidates = rankAll, candidates })
	ideasRankAll = 0
	if want != nil {
		ideasCandidates = want
	}
}

// TierLookups returns each tier's full-text and word look-up and the name of the partial
// index they should read.
func TierLookups() (lookups [][2]string, indexes []string) {
	for i := range ideasTiers {
		lookups = append(lookups, [2]string{lookupSQL(fullTextLookup, []int{i}), lookupSQL(wordLookup, []int{i})})
		indexes = append(indexes, fmt.Sprintf("keyword_metrics_t%02d_idx", i))
	}
	return lookups, indexes
}

// CompetitorSetsFrom makes competitor discovery use the keyword sets from domains of n
// keywords until the test ends.
func CompetitorSetsFrom(t *testing.T, n int) {
	old := setsFrom
	t.Cleanup(func() { setsFrom = old })
	setsFrom = n
}

// ColumnsOff makes gaps and rankings answer in SQL until the test ends.
func ColumnsOff(t *testing.T) {
	old := columnsOff
	t.Cleanup(func() { columnsOff = old })
	columnsOff = true
}

// ColumnAnswers is how many answers the keyword columns gave.
func ColumnAnswers() int64 { return columnAnswers.Load() }

// ColumnLoads is how many times keyword columns were loaded.
func ColumnLoads() int64 { return columnLoads.Load() }

// WalkIdeas makes research pages walk the n most relevant matches until the test ends.
func WalkIdeas(t *testing.T, n int) {
	walk := ideasWalk
	t.Cleanup(func() { ideasWalk = walk })
	ideasWalk = n
}

// SmallDictChunks makes keyword set builds write each market's keyword texts in chunks of
// about n bytes until the test ends.
func SmallDictChunks(t *testing.T, n int) {
	old := dictChunk
	t.Cleanup(func() { dictChunk = old })
	dictChunk = n
}

// ColumnFileOpens is how many times keyword columns were mapped from a column file.
func ColumnFileOpens() int64 { return columnFileOpens.Load() }

// SplitIdeasRanking makes Ideas rank n candidates or more in two halves at once until the
// test ends.
func SplitIdeasRanking(t *testing.T, n int) {
	old := rankSplit
	t.Cleanup(func() { rankSplit = old })
	rankSplit = n
}

// AlikeLookup returns the look-up of the words similar to a term's words and the planner
// settings it runs with after LookupSettings.
func AlikeLookup() (sql, settings string) { return alikeSQL, alikeSettings }

// The package's tests wait for the word indexes rather than race their builds.
func init() { wordsWaitAlways = true }

// WordIndexes makes research use the word indexes (on) or the SQL look-ups only until the
// test ends.
func WordIndexes(t *testing.T, on bool) {
	old := wordsOff
	t.Cleanup(func() { wordsOff = old })
	wordsOff = !on
}
