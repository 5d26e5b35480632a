package importer

import (
	"testing"

	"github.com/contentapi/contentapi/internal/keywords"
)

// AlwaysNewTable makes the test's imports write every table as a new table (swap.go),
// whatever the sizes, and runs beforeSwap (when not nil) before each switch.
func AlwaysNewTable(t testing.TB, beforeSwapHook func()) {
	t.Helper()
	alwaysNewTable, beforeSwap = true, beforeSwapHook
	t.Cleanup(func() { alwaysNewTable, beforeSwap = false, nil })
}

// WritersLock is the advisory lock an import holds.
const WritersLock = writersLock

// AlwaysDirect makes the test's imports into an empty table copy every file straight into a
// new table (direct.go), however small, holding at most held rows for the staging table at
// a time, and sorting ranking rows in runs of run bytes (sorted.go; 0: the default, a file
// of one run).
func AlwaysDirect(t testing.TB, held, run int) {
	t.Helper()
	alwaysDirect, heldRows = true, held
	if run > 0 {
		runBytes = run
	}
	t.Cleanup(func() { alwaysDirect, heldRows, runBytes = false, defaultHeldRows, defaultRunBytes })
}

// DefaultPaths undoes AlwaysNewTable and AlwaysDirect: the imports that follow choose their
// write path by size, as in production.
func DefaultPaths() {
	alwaysNewTable, beforeSwap, alwaysDirect, heldRows, runBytes = false, nil, false, defaultHeldRows, defaultRunBytes
}

// SetsMarkets calls hook with the markets each new rankings table's keyword sets are read
// by (nil: all at once) and reads them by the markets it returns, until the test ends.
func SetsMarkets(t testing.TB, hook func([]keywords.Market) []keywords.Market) {
	t.Helper()
	setsMarkets = hook
	t.Cleanup(func() { setsMarkets = nil })
}
