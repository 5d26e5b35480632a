//go:build unix

package local

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// mapFile maps size bytes of f read-only, shared with every process mapping it.
func mapFile(f *os.File, size int) ([]byte, error) {
	if size == 0 {
		return []byte{}, nil
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err == nil {
		mapped(b)
	}
	return b, err
}

func unmapFile(b []byte) error { return unmapped(b, syscall.Munmap) }

// dropPages lets go of the resident pages of b, a read-only shared mapping: they stay in
// the page cache, and a later read maps them again.
func dropPages(b []byte) { _ = unix.Madvise(b, unix.MADV_DONTNEED) }

// lockFile opens (creating) the file at path and waits, until ctx ends, for its exclusive
// lock; closing the file lets it go.
func lockFile(ctx context.Context, path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	t := time.NewTicker(lockPoll)
	defer t.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			_ = f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// lockPoll is how often a worker waiting for another's column file tries its lock (a
// load takes seconds).
const lockPoll = 50 * time.Millisecond
