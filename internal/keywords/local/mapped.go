package local

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// The column and word files are mapped read-only and shared through the page cache, so the
// machine holds one copy of them whatever the number of workers. Their pages a worker has
// read still count in its resident memory, though, and over a day of questions on big
// markets they add up to the files' whole size (a gigabyte at ten million keywords). A
// worker given a bound (SetMappedMemoryLimit) lets go of its mappings' pages whenever, at
// the end of a question's use of a mapping, its resident file pages exceed the bound: the
// pages stay in the page cache, and the next question that reads one maps it again for a
// minor fault (the kernel maps its cached neighbours with it), never a disk read.

// mappings are the files this process has mapped, by their first byte.
var mappings = struct {
	sync.Mutex
	live map[*byte][]byte
}{live: map[*byte][]byte{}}

// DefaultMappedLimit is the bound a worker sets when none is configured (KEYWORD_MAPPED_MB).
const DefaultMappedLimit = 384 << 20

// mappedLimit is SetMappedMemoryLimit's bound in bytes, 0 for none.
var mappedLimit atomic.Int64

// mappedTrims counts the times the mappings' pages were let go (tests and the bench).
var mappedTrims atomic.Int64

// SetMappedMemoryLimit bounds the pages of mapped column and word files resident in this
// process at bytes (0: no bound), and returns the previous bound. It is the process's,
// like debug.SetMemoryLimit: the resident memory it reads is the process's.
func SetMappedMemoryLimit(bytes int64) int64 { return mappedLimit.Swap(max(bytes, 0)) }

// MappedTrims reports how many times the mapped files' pages were let go.
func MappedTrims() int64 { return mappedTrims.Load() }

// mapped records b, a new mapping.
func mapped(b []byte) {
	if len(b) == 0 {
		return
	}
	mappings.Lock()
	mappings.live[unsafe.SliceData(b)] = b
	mappings.Unlock()
}

// unmapped forgets b and unmaps it with unmap, under the lock that trimming holds: the
// range is never advised once it may be some other mapping's.
func unmapped(b []byte, unmap func([]byte) error) error {
	if len(b) == 0 {
		return nil
	}
	mappings.Lock()
	defer mappings.Unlock()
	delete(mappings.live, unsafe.SliceData(b))
	return unmap(b)
}

// boundMapped lets go of every mapping's resident pages when the process's resident file
// pages exceed the bound. It is called as a question lets go of a mapping; a call while
// another trims returns at once.
func boundMapped() {
	limit := mappedLimit.Load()
	if limit == 0 {
		return
	}
	if n, ok := residentFileBytes(); !ok || n <= limit {
		return
	}
	if !mappings.TryLock() {
		return
	}
	defer mappings.Unlock()
	for _, b := range mappings.live {
		dropPages(b)
	}
	mappedTrims.Add(1)
}
