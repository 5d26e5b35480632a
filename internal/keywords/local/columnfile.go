package local

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unsafe"
)

// Column files: a market's keyword columns written once to a file that every worker of a
// node maps into memory, read-only. The first worker to need a version of the data loads it
// from PostgreSQL (tens of seconds at ten million keywords) and writes the file; every other
// worker, and the same one after a restart, maps the file in well under a second and shares
// its pages with the others through the page cache, so the columns take one copy per node
// however many workers run there. A worker loading a version holds the file's lock
// (flock), so that the others wait for its file instead of loading the same data again.
//
// A file is named by its market, the data's token (keyword_data_state.token, drawn anew at
// every write of the keyword data: migration 00044) and the keyword sets' build: it is only
// ever read for the data it was written from. It holds a checksum of its contents (CRC-32C),
// checked with its header and the texts' bounds when it is mapped: a file torn by a crash or
// changed on disk is not read but loaded again. Written whole under a temporary name and
// renamed, a file is never seen half written. When a worker writes a market's file, it
// removes that market's older files; a worker still mapping one keeps it until it lets go.
//
// The layout, in the machine's byte order (the header says which; a file of the other
// order is not read): a 64-byte header, then the columns' arrays, each at an offset that is
// a multiple of 8: volume, difficulty and CPC (float64 × n), the texts' ends (uint32 × n),
// the ids in the order of volume (uint32 × n: byVolume), the intents (uint8 × n), then the
// texts.

// columnFileMagic opens every column file; the digit is the layout's version.
const columnFileMagic = "KWCOLS02"

// byteOrderMark is written in the machine's order: read back in another, it differs.
const byteOrderMark = 0x01020304

const columnHeaderSize = 64

// columnHeader is a column file's first 64 bytes.
type columnHeader struct {
	Magic    [8]byte
	Order    uint32
	Sum      uint32 // CRC-32C of everything after the header
	N        uint64 // keywords
	Text     uint64 // bytes of their texts
	Token    [16]byte
	Sets     int64
	Country  [2]byte
	Language [2]byte
	_        [4]byte
}

// columnLayout is where each array of a file of n keywords and text bytes of texts lies.
type columnLayout struct {
	volume, diff, cpc, ends, byVolume, intent, text, size int
}

func layoutOf(n, text int) columnLayout {
	align := func(o int) int { return (o + 7) &^ 7 }
	var l columnLayout
	l.volume = columnHeaderSize
	l.diff = l.volume + 8*n
	l.cpc = l.diff + 8*n
	l.ends = l.cpc + 8*n
	l.byVolume = l.ends + 4*n
	l.intent = align(l.byVolume + 4*n)
	l.text = align(l.intent + n)
	l.size = l.text + text
	return l
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// marketCode is a market's country or language as a file name may hold it.
var marketCode = regexp.MustCompile(`^[a-z]{2}$`)

// columnFiles is the directory of the column files ("" when the columns are kept in the
// heap only) and where failures to write or read one are reported.
type columnFiles struct {
	dir  string
	warn func(error)
}

// path is the file of market m's columns at version v; ok is false when there is none
// (no directory, or a market code no file name should hold).
func (f columnFiles) path(m market, v columnsVersion) (string, bool) {
	if f.dir == "" || !marketCode.MatchString(m.country) || !marketCode.MatchString(m.language) {
		return "", false
	}
	return filepath.Join(f.dir, fmt.Sprintf("%s-%s-%x-%d.cols", m.country, m.language, v.token, v.sets)), true
}

func (f columnFiles) report(err error) {
	if err != nil && f.warn != nil {
		f.warn(err)
	}
}

// bytesOf views a slice of fixed-size values as its bytes.
func bytesOf[T float64 | uint32 | uint16 | uint8](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

// viewOf views n values of type T at b[off:], which must be aligned for T.
func viewOf[T float64 | uint32 | uint16 | uint8](b []byte, off, n int) []T {
	if n == 0 {
		return []T{}
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[off])), n)
}

// writeColumnFile writes c, market m's columns at version v, to path: under a temporary
// name in the same directory, renamed when whole.
func writeColumnFile(path string, c *marketColumns, m market, v columnsVersion) (err error) {
	n, text := c.norms.len(), len(c.norms.text)
	if uint64(text) > math.MaxUint32 {
		return fmt.Errorf("local: column file: %d bytes of keyword texts do not fit", text)
	}
	if len(c.volume) != n || len(c.diff) != n || len(c.cpc) != n || len(c.intent) != n || len(c.byVolume) != n {
		return fmt.Errorf("local: column file: columns of %d keywords with arrays of other lengths", n)
	}
	l := layoutOf(n, text)
	tmp, err := os.CreateTemp(filepath.Dir(path), ".cols-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	// The header, its checksum blank, then the arrays through the checksum.
	if _, err := tmp.Write(make([]byte, columnHeaderSize)); err != nil {
		return err
	}
	sum := crc32.New(castagnoli)
	w := bufio.NewWriterSize(io.MultiWriter(tmp, sum), 1<<20)
	at := columnHeaderSize
	pad := func(to int) {
		_, _ = w.Write(make([]byte, to-at))
		at = to
	}
	for _, part := range []struct {
		off int
		b   []byte
	}{{l.volume, bytesOf(c.volume)}, {l.diff, bytesOf(c.diff)}, {l.cpc, bytesOf(c.cpc)}, {l.ends, bytesOf(c.norms.ends)},
		{l.byVolume, bytesOf(c.byVolume)}, {l.intent, bytesOf(c.intent)}, {l.text, c.norms.text}} {
		pad(part.off)
		_, _ = w.Write(part.b)
		at += len(part.b)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	h := header(m, v, n, text, sum.Sum32())
	hb := make([]byte, columnHeaderSize)
	if _, err := binary.Encode(hb, binary.NativeEndian, h); err != nil {
		return err
	}
	if _, err := tmp.WriteAt(hb, 0); err != nil {
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// header is the header of a file of market m's columns at version v: n keywords, text bytes
// of texts, sum the checksum of the arrays.
func header(m market, v columnsVersion, n, text int, sum uint32) columnHeader {
	h := columnHeader{Order: byteOrderMark, Sum: sum, N: uint64(n), Text: uint64(text), Token: v.token, Sets: v.sets}
	copy(h.Magic[:], columnFileMagic)
	copy(h.Country[:], m.country)
	copy(h.Language[:], m.language)
	return h
}

// errColumnFile is a column file that is not the one asked for, or not whole.
var errColumnFile = errors.New("local: column file")

// openColumnFile maps the file at path, which must hold market m's columns at version v,
// and returns columns that are views of it; os.ErrNotExist when there is no such file.
// summed checks the file's checksum, which reads every page of it: a file this process has
// just written from the columns it holds is not summed, so that its pages are read only as
// questions need them, not all at once while the heap still holds the columns too.
func openColumnFile(path string, m market, v columnsVersion, budget int64, cacheBytes uint64, summed bool) (*marketColumns, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() < columnHeaderSize || st.Size() > math.MaxInt {
		return nil, fmt.Errorf("%w %s: %d bytes", errColumnFile, path, st.Size())
	}
	var h columnHeader
	if err := binary.Read(io.NewSectionReader(f, 0, columnHeaderSize), binary.NativeEndian, &h); err != nil {
		return nil, err
	}
	want := header(m, v, int(min(h.N, math.MaxInt32)), int(min(h.Text, math.MaxUint32)), h.Sum)
	if h != want || h.N > math.MaxInt32 || h.Text > math.MaxUint32 {
		return nil, fmt.Errorf("%w %s: its header is not of this market and data", errColumnFile, path)
	}
	n, text := int(h.N), int(h.Text)
	l := layoutOf(n, text)
	if int64(l.size) != st.Size() {
		return nil, fmt.Errorf("%w %s: %d bytes, its header says %d", errColumnFile, path, st.Size(), l.size)
	}
	if columnBytes(n, text) > budget {
		return nil, errColumnsTooBig
	}
	b, err := mapFile(f, l.size)
	if err != nil {
		return nil, err
	}
	ends, byVolume := viewOf[uint32](b, l.ends, n), viewOf[uint32](b, l.byVolume, n)
	if err := checkMapped(b, ends, byVolume, text, h.Sum, summed); err != nil {
		_ = unmapFile(b)
		return nil, fmt.Errorf("%w %s: %w", errColumnFile, path, err)
	}
	c := newMarketColumns(cacheBytes)
	c.bytes, c.mapped = columnBytes(n, text), b
	c.volume, c.diff, c.cpc = viewOf[float64](b, l.volume, n), viewOf[float64](b, l.diff, n), viewOf[float64](b, l.cpc, n)
	c.norms = keyTexts{ends: ends, text: b[l.text:l.size:l.size]}
	c.intent, c.byVolume = viewOf[uint8](b, l.intent, n), byVolume
	c.refs.Store(1)
	return c, nil
}

// checkMapped checks a mapped column file: its checksum when summed (every page read), that
// its texts' ends rise to the texts' length, so that no keyword reads past them, and that
// the ids in volume order are ids.
func checkMapped(b []byte, ends, byVolume []uint32, text int, sum uint32, summed bool) error {
	if summed {
		if got := crc32.Checksum(b[columnHeaderSize:], castagnoli); got != sum {
			return fmt.Errorf("its checksum is %08x, its header says %08x", got, sum)
		}
	}
	prev := uint32(0)
	for _, e := range ends {
		if e < prev {
			return errors.New("its keyword texts are out of order")
		}
		prev = e
	}
	if len(ends) > 0 && int(prev) != text {
		return fmt.Errorf("its keyword texts end at %d of %d bytes", prev, text)
	}
	for _, id := range byVolume {
		if int(id) >= len(ends) {
			return fmt.Errorf("its volume order holds id %d of %d", id, len(ends))
		}
	}
	return nil
}

// removeOlderColumnFiles removes market m's column files other than keep, and the lock
// files beside them; and the temporary files of writes that a crash cut short (older than
// a load may take).
func removeOlderColumnFiles(dir string, m market, keep string) error {
	return removeOlderFiles(dir, m, keep, ".cols", 2*columnsLoadTimeout)
}

// removeOlderFiles removes market m's files of the kind ext (".cols", ".words") other than
// keep, their lock files, and the kind's temporary files (named "."+ext+"-*") older than
// stale, which a crash left behind.
func removeOlderFiles(dir string, m market, keep, ext string, stale time.Duration) error {
	names, err := filepath.Glob(filepath.Join(dir, m.country+"-"+m.language+"-*"+ext+"*"))
	if err != nil {
		return err
	}
	temps, err := filepath.Glob(filepath.Join(dir, ext+"-*"))
	if err != nil {
		return err
	}
	for _, name := range temps {
		if st, err := os.Stat(name); err == nil && time.Since(st.ModTime()) > stale {
			names = append(names, name)
		}
	}
	var errs []error
	for _, name := range names {
		base := filepath.Base(name)
		if name == keep || name == keep+".lock" ||
			!(strings.HasSuffix(name, ext) || strings.HasSuffix(name, ext+".lock") || strings.HasPrefix(base, ext+"-")) {
			continue
		}
		if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
