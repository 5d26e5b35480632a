package local

import (
	"bytes"
	"os"
	"strconv"
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
