package local

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"os"
)

// dictChunk is the size a market's keyword texts are written in (keyword_set_keywords, one
// row a chunk): large enough that a market of ten million keywords takes some tens of rows,
// small enough that the build holds one at a time.
var dictChunk = 4 << 20 // a variable for tests only

// spill is a market's keyword texts in id order, NUL-separated, written to a temporary file
// as the build numbers them, so the build's memory does not grow with the keywords.
type spill struct {
	f     *os.File
	w     *bufio.Writer
	empty bool
}

// newSpill creates the file and unlinks it at once: it is read and written through its
// descriptor, and a build killed midway leaves nothing behind.
func newSpill() (*spill, error) {
	f, err := os.CreateTemp("", "keyword-set-norms-")
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		_ = f.Close()
		return nil, err
	}
	return &spill{f: f, w: bufio.NewWriterSize(f, 1<<16), empty: true}, nil
}

// add appends the next keyword.
func (s *spill) add(norm []byte) error {
	if !s.empty {
		if err := s.w.WriteByte(0); err != nil {
			return err
		}
	}
	s.empty = false
	_, err := s.w.Write(norm)
	return err
}

// chunks reads the keywords back from the start: each call of next returns the following
// whole keywords, NUL-separated, about max bytes of them (one keyword longer than max
// alone), and how many; nil at the end.
func (s *spill) chunks(max int) (next func() ([]byte, int, error), err error) {
	if err := s.w.Flush(); err != nil {
		return nil, err
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	r := bufio.NewReaderSize(s.f, 1<<16)
	done := s.empty
	return func() ([]byte, int, error) {
		if done {
			return nil, 0, nil
		}
		var b []byte
		count := 0
		for len(b) < max {
			word, err := r.ReadSlice(0)
			for errors.Is(err, bufio.ErrBufferFull) { // a keyword longer than the buffer
				b = append(b, word...)
				word, err = r.ReadSlice(0)
			}
			b = append(b, word...)
			if errors.Is(err, io.EOF) {
				done = true
				return b, count + 1, nil
			}
			if err != nil {
				return nil, 0, err
			}
			count++
		}
		return b[:len(b)-1], count, nil // the NUL ending the chunk's last keyword goes
	}, nil
}

// remove closes the file, which frees its space.
func (s *spill) remove() { _ = s.f.Close() }

// positionList is a keyword set's best positions in id order, kept in blocks: one slice
// doubling to the whole list would hold up to twice the positions at ten million keywords.
type positionList struct {
	blocks [][]uint16
}

// positionBlock is the size of the blocks a list has once it is that long.
const positionBlock = 4096

// add appends p, starting the list on a nil receiver.
func (l *positionList) add(p uint16) *positionList {
	if l == nil {
		l = &positionList{}
	}
	last := len(l.blocks) - 1
	if last < 0 || len(l.blocks[last]) == cap(l.blocks[last]) {
		size := positionBlock
		if last < 0 {
			size = 8
		} else if c := cap(l.blocks[last]); c < positionBlock {
			// Short lists, most of a market's domains, grow by doubling within one block.
			grown := make([]uint16, len(l.blocks[last]), 2*c)
			copy(grown, l.blocks[last])
			l.blocks[last] = append(grown, p)
			return l
		}
		l.blocks = append(l.blocks, make([]uint16, 0, size))
		last++
	}
	l.blocks[last] = append(l.blocks[last], p)
	return l
}

// lower sets the last position to p when p is better.
func (l *positionList) lower(p uint16) {
	b := l.blocks[len(l.blocks)-1]
	if i := len(b) - 1; p < b[i] {
		b[i] = p
	}
}

// bytes encodes the positions as little-endian uint16s (domain_keyword_sets.positions).
func (l *positionList) bytes() []byte {
	n := 0
	for _, b := range l.blocks {
		n += len(b)
	}
	out := make([]byte, 0, 2*n)
	for _, b := range l.blocks {
		for _, p := range b {
			out = binary.LittleEndian.AppendUint16(out, p)
		}
	}
	return out
}
