package local

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/jackc/pgx/v5/pgxpool"
)

// A column file is written straight from PostgreSQL: the file is allocated at its full
// size, mapped writable, and the load fills the arrays in place as the rows arrive, so the
// worker's heap never holds the market's columns (at ten million keywords a load into the
// heap peaked at 560 MB, and a worker answering research beside it reached 1.25 GB). The
// pages written are the file's pages in the page cache, which the kernel can write back and
// reclaim: while the load runs they count in the worker's resident memory, up to the file's
// size (the metrics arrive in no order, so each batch of rows touches most of the file, and
// letting the pages go between batches only made the load slower: 50 s instead of 29 s at
// ten million keywords, with the same peak); the mapped pages' bound (boundMapped) applies
// again from the checksum on.

// errNoWritableMapping is a column file that cannot be written through a mapping here (the
// platform, or the file system, or a file not allocated): the columns are loaded into the
// heap and written from there instead.
var errNoWritableMapping = errors.New("local: column file: no writable mapping")

// sumStep is how much of a written file is summed between two checks of the mapped pages'
// bound.
const sumStep = 64 << 20

// columnFilePlaced, when set (tests), is called with each file buildColumnFile has
// allocated and mapped, before it is written.
var columnFilePlaced func(*os.File)

// buildColumnFile loads market m's columns at version v from the database into a new file
// at path, and returns them mapped read-only from it.
func buildColumnFile(ctx context.Context, pool *pgxpool.Pool, path string, m market, v columnsVersion, budget int64, cacheBytes uint64) (_ *marketColumns, err error) {
	var tmp *os.File
	var b []byte
	defer func() {
		if b != nil {
			_ = unmapFile(b)
		}
		if tmp != nil && err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	// A page of the mapping that cannot be written (the disk failing under it) is a fault:
	// this goroutine's load fails with it instead of the process.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			err = fmt.Errorf("local: column file %s: %v", path, r)
		}
	}()
	var n, text int
	place := func(c *marketColumns, keys, texts int) error {
		n, text = keys, texts
		l := layoutOf(n, text)
		f, err := os.CreateTemp(filepath.Dir(path), ".cols-*")
		if err != nil {
			return fmt.Errorf("%w: %w", errNoWritableMapping, err)
		}
		tmp = f
		if b, err = mapForWrite(f, l.size); err != nil {
			return fmt.Errorf("%w: %w", errNoWritableMapping, err)
		}
		if columnFilePlaced != nil {
			columnFilePlaced(tmp)
		}
		c.volume, c.diff, c.cpc = viewOf[float64](b, l.volume, n), viewOf[float64](b, l.diff, n), viewOf[float64](b, l.cpc, n)
		c.norms = keyTexts{ends: viewOf[uint32](b, l.ends, n), text: b[l.text:l.size:l.size]}
		c.intent, c.byVolume = viewOf[uint8](b, l.intent, n), viewOf[uint32](b, l.byVolume, n)
		return nil
	}
	if _, err := loadColumns(ctx, pool, m, v, budget, cacheBytes, place); err != nil {
		return nil, err
	}
	boundMapped()
	sum := crc32.New(castagnoli)
	for at := columnHeaderSize; at < len(b); at += sumStep {
		_, _ = sum.Write(b[at:min(at+sumStep, len(b))])
		boundMapped()
	}
	if _, err := binary.Encode(b[:columnHeaderSize], binary.NativeEndian, header(m, v, n, text, sum.Sum32())); err != nil {
		return nil, err
	}
	if err := unmapFile(b); err != nil {
		return nil, err
	}
	b = nil
	if err := tmp.Chmod(0o600); err != nil {
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, err
	}
	return openColumnFile(path, m, v, budget, cacheBytes, false)
}
