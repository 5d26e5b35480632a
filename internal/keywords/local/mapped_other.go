//go:build !linux

package local

import "os"

// residentFileBytes is not read outside Linux: the mappings' pages are left to the kernel.
func residentFileBytes() (int64, bool) { return 0, false }

// mapForWrite is Linux's only: elsewhere the columns are written from the heap.
func mapForWrite(*os.File, int) ([]byte, error) { return nil, errNoWritableMapping }
