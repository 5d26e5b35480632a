package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
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

// ColumnFilesBothWays writes market country/language's column file of the data as it
// stands twice into dir: built through its mapping from the database, and written from
// columns loaded into the heap, and returns both files' bytes.
func ColumnFilesBothWays(ctx context.Context, pool *pgxpool.Pool, dir, country, language string) (built, written []byte, err error) {
	m, v, path, err := columnFileOf(ctx, pool, dir, country, language)
	if err != nil {
		return nil, nil, err
	}
	c, err := buildColumnFile(ctx, pool, path, m, v, DefaultColumnsBudget, 1<<20)
	if err != nil {
		return nil, nil, err
	}
	c.release()
	if built, err = os.ReadFile(path); err != nil {
		return nil, nil, err
	}
	heap, err := loadColumns(ctx, pool, m, v, DefaultColumnsBudget, 1<<20, heapColumns)
	if err != nil {
		return nil, nil, err
	}
	other := filepath.Join(dir, "written.cols")
	if err := writeColumnFile(other, heap, m, v); err != nil {
		return nil, nil, err
	}
	written, err = os.ReadFile(other)
	return built, written, err
}

// BuildColumnFileCutShort builds market country/language's column file into dir with the
// file cut to nothing under its mapping before the load writes it, and returns the build's
// error.
func BuildColumnFileCutShort(t *testing.T, pool *pgxpool.Pool, dir, country, language string) error {
	ctx := context.Background()
	m, v, path, err := columnFileOf(ctx, pool, dir, country, language)
	if err != nil {
		return err
	}
	columnFilePlaced = func(f *os.File) {
		if err := f.Truncate(0); err != nil {
			t.Error(err)
		}
	}
	defer func() { columnFilePlaced = nil }()
	c, err := buildColumnFile(ctx, pool, path, m, v, DefaultColumnsBudget, 1<<20)
	if c != nil {
		c.release()
	}
	return err
}

func columnFileOf(ctx context.Context, pool *pgxpool.Pool, dir, country, language string) (market, columnsVersion, string, error) {
	m := market{country, language}
	var v columnsVersion
	if err := pool.QueryRow(ctx, `SELECT s.built, b.generation, b.token FROM keyword_sets_state s, keyword_data_state b`).
		Scan(&v.sets, &v.data, &v.token); err != nil {
		return m, v, "", err
	}
	path, _ := columnFiles{dir: dir}.path(m, v)
	return m, v, path, nil
}

// WalkByVolume makes every unfiltered page of gaps in the default order walk the ids in
// volume order (always true) or pass over the whole gap set (false) until restore.
func WalkByVolume(always bool) (restore func()) {
	old := volumeWalks
	volumeWalks = walkNever
	if always {
		volumeWalks = walkAlways
	}
	return func() { volumeWalks = old }
}

// VolumeWalks is how many pages of gaps walked the ids in volume order.
func VolumeWalks() int64 { return volumeWalked.Load() }

// PassInParts splits every pass over candidates of at least min ids into parts (at most
// n) until restore.
func PassInParts(n, min int) (restore func()) {
	oldN, oldMin := passParts, minPartIDs
	passParts, minPartIDs = n, min
	return func() { passParts, minPartIDs = oldN, oldMin }
}

// TrigramsAsPostgres is the database probe of the worker's similarities.
func TrigramsAsPostgres(ctx context.Context, pool *pgxpool.Pool) (bool, error) {
	return trigramsAsPostgres(ctx, pool)
}
