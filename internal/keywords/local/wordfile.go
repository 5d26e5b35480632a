package local

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"

	"github.com/jackc/pgx/v5"
)

// Word files: a market's word index (wordindex.go) written once to a file that every worker
// of a node maps read-only, as the column files are (columnfile.go): named by the market and
// the data's token, checked whole (CRC-32C) when mapped by a process that did not write it,
// written under a temporary name and renamed, the older files of the market removed. The
// build streams the market's keywords from PostgreSQL into unlinked temporary files and then
// into the file, mapped for writing: the process holds the market's words (its vocabulary),
// not its keywords. A worker with no column directory writes its file in the temporary
// directory and unlinks it once mapped.
//
// The layout, in the machine's byte order: a 96-byte header, then, each at a multiple of 8:
// the keywords' key ends (uint32 × n), trigram counts (uint16 × n), word-list ends
// (uint32 × n), the word lists (uint32 × w), the words' ends (uint32 × v), trigram counts
// (uint16 × v), postings' ends (uint32 × v), the postings (uint32 × w), the trigram index's
// trigrams and words (uint32 × t each, by trigram then word), the words' texts and the keys'
// texts.

const wordFileMagic = "KWWORDS1"

const wordHeaderSize = 96

type wordHeader struct {
	Magic                          [8]byte
	Order                          uint32
	Sum                            uint32 // CRC-32C of everything after the header
	N, W, V, T, VocabText, KeyText uint64
	Token                          [16]byte
	Country                        [2]byte
	Language                       [2]byte
	_                              [4]byte
}

type wordLayout struct {
	keyEnds, ntrgm, wordEnds, words, vocabEnds, vocabTrgms, postEnds, posts, trgms, trgmWords, vocabText, keyText, size int
}

func wordLayoutOf(h wordHeader) wordLayout {
	align := func(o int) int { return (o + 7) &^ 7 }
	n, w, v, t := int(h.N), int(h.W), int(h.V), int(h.T)
	var l wordLayout
	l.keyEnds = wordHeaderSize
	l.ntrgm = align(l.keyEnds + 4*n)
	l.wordEnds = align(l.ntrgm + 2*n)
	l.words = align(l.wordEnds + 4*n)
	l.vocabEnds = align(l.words + 4*w)
	l.vocabTrgms = align(l.vocabEnds + 4*v)
	l.postEnds = align(l.vocabTrgms + 2*v)
	l.posts = align(l.postEnds + 4*v)
	l.trgms = align(l.posts + 4*w)
	l.trgmWords = align(l.trgms + 4*t)
	l.vocabText = align(l.trgmWords + 4*t)
	l.keyText = l.vocabText + int(h.VocabText)
	l.size = l.keyText + int(h.KeyText)
	return l
}

func wordPath(dir string, m market, v columnsVersion) (string, bool) {
	if !marketCode.MatchString(m.country) || !marketCode.MatchString(m.language) {
		return "", false
	}
	return filepath.Join(dir, fmt.Sprintf("%s-%s-%x.words", m.country, m.language, v.token)), true
}

func wordFileHeader(m market, v columnsVersion) wordHeader {
	h := wordHeader{Order: byteOrderMark, Token: v.token}
	copy(h.Magic[:], wordFileMagic)
	copy(h.Country[:], m.country)
	copy(h.Language[:], m.language)
	return h
}

// openWordFile maps the word file at path, which must hold market m's index at version v;
// summed checks it whole first (a file this process did not write).
func openWordFile(path string, m market, v columnsVersion, summed bool) (*wordIndex, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	kept := false
	defer func() {
		if !kept {
			_ = f.Close()
		}
	}()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	var h wordHeader
	if st.Size() < wordHeaderSize {
		return nil, fmt.Errorf("%w %s: %d bytes", errColumnFile, path, st.Size())
	}
	if err := binary.Read(io.NewSectionReader(f, 0, wordHeaderSize), binary.NativeEndian, &h); err != nil {
		return nil, err
	}
	want := wordFileHeader(m, v)
	if h.Magic != want.Magic || h.Order != want.Order || h.Token != want.Token || h.Country != want.Country || h.Language != want.Language ||
		max(h.N, h.W, h.V, h.T) > math.MaxUint32 || h.VocabText > math.MaxUint32 || h.KeyText > math.MaxUint32 {
		return nil, fmt.Errorf("%w %s: its header is not of this market and data", errColumnFile, path)
	}
	l := wordLayoutOf(h)
	if int64(l.size) != st.Size() {
		return nil, fmt.Errorf("%w %s: %d bytes, its header says %d", errColumnFile, path, st.Size(), l.size)
	}
	if summed {
		sum := crc32.New(castagnoli)
		if _, err := io.Copy(sum, io.NewSectionReader(f, wordHeaderSize, int64(l.size-wordHeaderSize))); err != nil {
			return nil, err
		}
		if got := sum.Sum32(); got != h.Sum {
			return nil, fmt.Errorf("%w %s: its checksum is %08x, its header says %08x", errColumnFile, path, got, h.Sum)
		}
	}
	// The keys' texts are left out of the mapping and read as answers need them: a look-up
	// returns a few hundred keys from anywhere in the file, and mapped they would end up
	// resident whole.
	b, err := mapFile(f, l.keyText)
	if err != nil {
		return nil, err
	}
	if summed {
		if _, err := wordIndexOf(b, h, l, true); err != nil {
			_ = unmapFile(b)
			return nil, fmt.Errorf("%w %s: %w", errColumnFile, path, err)
		}
		// Mapped again: the check read every page, which a fresh mapping leaves in the
		// page cache, out of the process's resident memory until questions read them.
		if err := unmapFile(b); err != nil {
			return nil, err
		}
		if b, err = mapFile(f, l.keyText); err != nil {
			return nil, err
		}
	}
	ix, err := wordIndexOf(b, h, l, false)
	if err != nil {
		_ = unmapFile(b)
		return nil, err
	}
	ix.version, ix.file, ix.keyText, ix.size = v, f, int64(l.keyText), int64(l.size)
	kept = true
	return ix, nil
}

// wordIndexOf views a mapped word file (all but the keys' texts), checked when checked:
// every list's ends rise within its array and every id is in range, so that no look-up
// reads out of the mapping.
func wordIndexOf(b []byte, h wordHeader, l wordLayout, checked bool) (*wordIndex, error) {
	n, w, v, t := int(h.N), int(h.W), int(h.V), int(h.T)
	ix := &wordIndex{mapped: b}
	ix.keys = keyTexts{ends: viewOf[uint32](b, l.keyEnds, n)} // the texts are read from the file
	ix.ntrgm = viewOf[uint16](b, l.ntrgm, n)
	ix.wordEnds = viewOf[uint32](b, l.wordEnds, n)
	ix.words = viewOf[uint32](b, l.words, w)
	ix.vocab = keyTexts{ends: viewOf[uint32](b, l.vocabEnds, v), text: b[l.vocabText:l.keyText:l.keyText]}
	ix.vocabTrgms = viewOf[uint16](b, l.vocabTrgms, v)
	ix.postEnds = viewOf[uint32](b, l.postEnds, v)
	ix.posts = viewOf[uint32](b, l.posts, w)
	ix.trgms = viewOf[uint32](b, l.trgms, t)
	ix.trgmWords = viewOf[uint32](b, l.trgmWords, t)
	if !checked {
		return ix, nil
	}
	rising := func(ends []uint32, total int) bool {
		prev := uint32(0)
		for _, e := range ends {
			if e < prev {
				return false
			}
			prev = e
		}
		return int(prev) == total || len(ends) == 0 && total == 0
	}
	below := func(ids []uint32, bound int) bool {
		for _, id := range ids {
			if int(id) >= bound {
				return false
			}
		}
		return true
	}
	switch {
	case !rising(ix.keys.ends, int(h.KeyText)) || !rising(ix.vocab.ends, len(ix.vocab.text)):
		return nil, errors.New("its texts are out of order")
	case !rising(ix.wordEnds, w) || !rising(ix.postEnds, w):
		return nil, errors.New("its lists are out of order")
	case !below(ix.words, v) || !below(ix.posts, n) || !below(ix.trgmWords, v):
		return nil, errors.New("it holds ids out of range")
	}
	return ix, nil
}

// buildWordFile streams market m's keywords, as tx sees them, into a word file at path.
func buildWordFile(ctx context.Context, tx pgx.Tx, m market, v columnsVersion, path string) error {
	dir := filepath.Dir(path)
	// The streams: keys, key ends, trigram counts, word-list ends, word lists (words
	// numbered as first met).
	var tmps [5]*os.File
	var ws [5]*bufio.Writer
	defer func() {
		for _, f := range tmps {
			if f != nil {
				_ = f.Close()
			}
		}
	}()
	for i := range tmps {
		f, err := os.CreateTemp(dir, ".words-part-*")
		if err != nil {
			return err
		}
		_ = os.Remove(f.Name()) // unlinked: gone with the descriptor
		tmps[i], ws[i] = f, bufio.NewWriterSize(f, 1<<20)
	}
	keysW, keyEndsW, ntrgmW, wordEndsW, wordsW := ws[0], ws[1], ws[2], ws[3], ws[4]
	ids := map[string]uint32{}
	var vocab []string
	var df []uint32
	var n, w, keyText int
	var mine []uint32
	var buf []byte
	var scratch [4]byte
	put32 := func(bw *bufio.Writer, x uint32) {
		binary.NativeEndian.PutUint32(scratch[:], x)
		_, _ = bw.Write(scratch[:])
	}
	rows, err := tx.Query(ctx, wordIndexSQL, m.country, m.language)
	if err != nil {
		return err
	}
	var norm, keyword []byte
	var nt int16
	_, err = pgx.ForEachRow(rows, []any{&norm, &keyword, &nt}, func() error {
		if uint64(keyText)+uint64(len(norm)) > math.MaxUint32 || n == math.MaxUint32 {
			return errors.New("too many keywords for a word file")
		}
		_, _ = keysW.Write(norm)
		keyText += len(norm)
		put32(keyEndsW, uint32(keyText))
		binary.NativeEndian.PutUint16(scratch[:2], uint16(max(nt, 0)))
		_, _ = ntrgmW.Write(scratch[:2])
		mine = mine[:0]
		buf = eachWord(unsafeString(keyword), buf, func(word []byte) {
			id, ok := ids[string(word)]
			if !ok {
				id = uint32(len(vocab))
				ids[string(word)] = id
				vocab = append(vocab, string(word))
				df = append(df, 0)
			}
			if !slices.Contains(mine, id) {
				mine = append(mine, id)
			}
		})
		for _, id := range mine {
			df[id]++
			put32(wordsW, id)
		}
		w += len(mine)
		put32(wordEndsW, uint32(w))
		n++
		return nil
	})
	if err != nil {
		return err
	}
	for _, bw := range ws {
		if err := bw.Flush(); err != nil {
			return err
		}
	}
	// The words in order, their trigrams, and the trigram index.
	order := make([]uint32, len(vocab))
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(a, b uint32) int { return strings.Compare(vocab[a], vocab[b]) })
	newID := make([]uint32, len(order))
	for i, old := range order {
		newID[old] = uint32(i)
	}
	type pair struct{ t, w uint32 }
	var pairs []pair
	var trg []uint32
	vocabText := 0
	vocabTrgms := make([]uint16, len(vocab))
	for i, old := range order {
		trg = distinct(wordTrigrams([]byte(vocab[old]), trg[:0]))
		for _, t := range trg {
			pairs = append(pairs, pair{t, uint32(i)})
		}
		vocabTrgms[i] = uint16(min(len(trg), math.MaxUint16))
		vocabText += len(vocab[old])
	}
	slices.SortFunc(pairs, func(a, b pair) int { return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.w, b.w)) })
	h := wordFileHeader(m, v)
	h.N, h.W, h.V, h.T, h.VocabText, h.KeyText = uint64(n), uint64(w), uint64(len(vocab)), uint64(len(pairs)), uint64(vocabText), uint64(keyText)
	l := wordLayoutOf(h)

	out, err := os.CreateTemp(dir, ".words-*")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			_ = out.Close()
			_ = os.Remove(out.Name())
		}
	}()
	// Written section by section through the file, not a mapping: the pages written stay
	// in the page cache, out of the process's memory.
	copyAt := func(f *os.File, off int) error {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		_, err := io.Copy(io.NewOffsetWriter(out, int64(off)), f)
		return err
	}
	writeAt := func(b []byte, off int) error { _, err := out.WriteAt(b, int64(off)); return err }
	if err := errors.Join(copyAt(tmps[0], l.keyText), copyAt(tmps[1], l.keyEnds), copyAt(tmps[2], l.ntrgm), copyAt(tmps[3], l.wordEnds)); err != nil {
		return err
	}
	// The word lists, renumbered.
	if _, err := tmps[4].Seek(0, io.SeekStart); err != nil {
		return err
	}
	chunk := make([]uint32, 8<<20) // 32 MiB
	r := bufio.NewReaderSize(tmps[4], 1<<20)
	for at := 0; at < w; {
		c := chunk[:min(len(chunk), w-at)]
		if _, err := io.ReadFull(r, bytesOf(c)); err != nil {
			return err
		}
		for i, id := range c {
			c[i] = newID[id]
		}
		if err := writeAt(bytesOf(c), l.words+4*at); err != nil {
			return err
		}
		at += len(c)
	}
	vocabEnds := make([]uint32, len(vocab))
	text := make([]byte, 0, vocabText)
	for i, old := range order {
		text = append(text, vocab[old]...)
		vocabEnds[i] = uint32(len(text))
	}
	trgms, trgmWords := make([]uint32, len(pairs)), make([]uint32, len(pairs))
	for i, p := range pairs {
		trgms[i], trgmWords[i] = p.t, p.w
	}
	postEnds := make([]uint32, len(vocab))
	sum := uint32(0)
	for i, old := range order {
		sum += df[old]
		postEnds[i] = sum
	}
	if err := errors.Join(writeAt(text, l.vocabText), writeAt(bytesOf(vocabEnds), l.vocabEnds), writeAt(bytesOf(vocabTrgms), l.vocabTrgms),
		writeAt(bytesOf(trgms), l.trgms), writeAt(bytesOf(trgmWords), l.trgmWords), writeAt(bytesOf(postEnds), l.postEnds)); err != nil {
		return err
	}
	// The postings, a range of words at a time (at most a chunk of postings): each range
	// one pass over the word lists, its postings gathered in the chunk and written.
	for w0 := 0; w0 < len(vocab); {
		base := uint32(0)
		if w0 > 0 {
			base = postEnds[w0-1]
		}
		w1 := w0 + 1
		for w1 < len(vocab) && int(postEnds[w1]-base) <= len(chunk) {
			w1++
		}
		size := int(postEnds[w1-1] - base)
		if size > len(chunk) {
			chunk = make([]uint32, size) // one word with more keywords than a chunk
		}
		got := chunk[:size]
		next := make([]uint32, w1-w0)
		for i := range next {
			next[i] = base
			if w0+i > 0 {
				next[i] = postEnds[w0+i-1]
			}
			next[i] -= base
		}
		ends := newU32Reader(io.NewSectionReader(out, int64(l.wordEnds), int64(4*n)))
		lists := newU32Reader(io.NewSectionReader(out, int64(l.words), int64(4*w)))
		prev := uint32(0)
		for k := 0; k < n; k++ {
			end, err := ends.next()
			if err != nil {
				return err
			}
			for ; prev < end; prev++ {
				id, err := lists.next()
				if err != nil {
					return err
				}
				if x := int(id); x >= w0 && x < w1 {
					got[next[x-w0]] = uint32(k)
					next[x-w0]++
				}
			}
		}
		if err := writeAt(bytesOf(got), l.posts+4*int(base)); err != nil {
			return err
		}
		w0 = w1
	}
	// The checksum, read back.
	sumHash := crc32.New(castagnoli)
	if _, err := io.Copy(sumHash, io.NewSectionReader(out, wordHeaderSize, int64(l.size-wordHeaderSize))); err != nil {
		return err
	}
	h.Sum = sumHash.Sum32()
	hb := make([]byte, wordHeaderSize)
	if _, err := binary.Encode(hb, binary.NativeEndian, h); err != nil {
		return err
	}
	if err := writeAt(hb, 0); err != nil {
		return err
	}
	if err := out.Truncate(int64(l.size)); err != nil { // the padding after the last section
		return err
	}
	if err := out.Chmod(0o600); err != nil {
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	if err := os.Rename(out.Name(), path); err != nil {
		_ = os.Remove(out.Name())
		return err
	}
	done = true
	return nil
}

// unsafeString views b as a string for a call that does not keep it.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// removeOlderWordFiles removes market m's word files other than keep, their locks, and the
// temporary files of builds a crash cut short.
func removeOlderWordFiles(dir string, m market, keep string) error {
	return removeOlderFiles(dir, m, keep, ".words", 2*wordsBuildTimeout)
}

// u32Reader reads uint32s in the machine's order, a block at a time.
type u32Reader struct {
	r     io.Reader
	block []uint32
	at    int
}

func newU32Reader(r io.Reader) *u32Reader { return &u32Reader{r: r} }

func (u *u32Reader) next() (uint32, error) {
	if u.at == len(u.block) {
		if cap(u.block) == 0 {
			u.block = make([]uint32, 1<<16)
		}
		u.block = u.block[:cap(u.block)]
		n, err := io.ReadFull(u.r, bytesOf(u.block))
		if n < 4 {
			if err == nil || err == io.ErrUnexpectedEOF {
				err = io.EOF
			}
			return 0, err
		}
		u.block, u.at = u.block[:n/4], 0
	}
	u.at++
	return u.block[u.at-1], nil
}
