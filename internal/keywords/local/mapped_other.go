//go:build !linux

package local

// residentFileBytes is not read outside Linux: the mappings' pages are left to the kernel.
func residentFileBytes() (int64, bool) { return 0, false }
