package local

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unsafe"
)

// Past the bound, a mapping's pages leave the process's resident memory and are read again
// unchanged; under it, or with no bound, they stay.
func TestMappedPagesBounded(t *testing.T) {
	if _, ok := residentFileBytes(); !ok {
		t.Skip("resident file pages are read on Linux only")
	}
	const size = 32 << 20
	want := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	path := filepath.Join(t.TempDir(), "mapped")
	if err := os.WriteFile(path, want, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := mapFile(f, size)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = unmapFile(b) }()
	t.Cleanup(func() { SetMappedMemoryLimit(0) })
	touch := func() int64 {
		t.Helper()
		if !bytes.Equal(b, want) { // reads every page
			t.Fatal("the mapping reads other bytes")
		}
		n, _ := residentFileBytes()
		return n
	}
	resident := func() int64 { n, _ := residentFileBytes(); return n }
	full := touch()
	for _, limit := range []int64{0, full + size} { // no bound, a bound above
		SetMappedMemoryLimit(limit)
		trims := MappedTrims()
		boundMapped()
		if MappedTrims() != trims || resident() < full-size/8 {
			t.Fatalf("bound %d: pages let go (%d trims, %d of %d bytes resident)", limit, MappedTrims()-trims, resident(), full)
		}
	}
	SetMappedMemoryLimit(full - size/2)
	trims := MappedTrims()
	boundMapped()
	if MappedTrims() != trims+1 {
		t.Fatalf("%d trims past the bound, want 1", MappedTrims()-trims)
	}
	if got := resident(); got > full-size*3/4 {
		t.Fatalf("%d bytes resident after the trim, %d before: the %d-byte mapping's pages stayed", got, full, size)
	}
	if again := touch(); again < full-size/8 {
		t.Fatalf("%d bytes resident after reading the mapping again, %d before", again, full)
	}
	// An unmapped file is no longer advised: a trim after it touches only live mappings.
	first := unsafe.SliceData(b)
	if err := unmapFile(b); err != nil {
		t.Fatal(err)
	}
	b = nil
	mappings.Lock()
	defer mappings.Unlock()
	if _, ok := mappings.live[first]; ok {
		t.Fatal("the mapping is still listed after unmapping")
	}
}
