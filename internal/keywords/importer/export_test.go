package importer

import "testing"

// AlwaysNewTable makes the test's imports write every table as a new table (swap.go),
// whatever the sizes, and runs beforeSwap (when not nil) before each switch.
func AlwaysNewTable(t testing.TB, beforeSwapHook func()) {
	t.Helper()
	alwaysNewTable, beforeSwap = true, beforeSwapHook
	t.Cleanup(func() { alwaysNewTable, beforeSwap = false, nil })
}

// WritersLock is the advisory lock an import holds.
const WritersLock = writersLock
