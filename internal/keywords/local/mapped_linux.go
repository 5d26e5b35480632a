package local

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// residentFileBytes reads the process's resident shared pages (file pages and shared
// memory: /proc/self/statm's third field), which its mapped files' pages are part of.
func residentFileBytes() (int64, bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := bytes.Fields(b)
	if len(f) < 3 {
		return 0, false
	}
	pages, err := strconv.ParseInt(string(f[2]), 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * int64(os.Getpagesize()), true
}

// mapForWrite (unmapped by unmapFile) allocates size bytes of f on disk and maps them writable, shared: what is
// written through the mapping is the file's. The blocks are allocated first so that no
// write finds the disk full (a fault, not an error).
func mapForWrite(f *os.File, size int) ([]byte, error) {
	if err := syscall.Fallocate(int(f.Fd()), 0, 0, int64(size)); err != nil {
		return nil, err
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err == nil {
		mapped(b)
	}
	return b, err
}
