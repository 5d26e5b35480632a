//go:build !unix

package local

import (
	"context"
	"errors"
	"os"
)

var errNoMapping = errors.New("local: column files are mapped on unix systems only")

func mapFile(*os.File, int) ([]byte, error) { return nil, errNoMapping }

func unmapFile([]byte) error { return nil }

func dropPages([]byte) {}

func lockFile(context.Context, string) (*os.File, error) { return nil, errNoMapping }
