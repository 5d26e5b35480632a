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

// TierLookups returns each tier's full-text, trigram and word look-up and the names of
// the two partial indexes it should read.
func TierLookups() (lookups [][3]string, indexes [][2]string) {
	for i := range ideasTiers {
		lookups = append(lookups, [3]string{lookupSQL(fullTextLookup, []int{i}), lookupSQL(trigramLookup, []int{i}),
			lookupSQL(wordLookup, []int{i})})
		indexes = append(indexes, [2]string{fmt.Sprintf("keyword_metrics_tsv_t%02d_idx", i), fmt.Sprintf("keyword_metrics_trgm_t%02d_idx", i)})
	}
	return lookups, indexes
}
