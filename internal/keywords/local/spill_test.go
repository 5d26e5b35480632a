package local

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// A market's keywords spilled and read back in chunks of any size are the same keywords in
// the same order, each chunk whole keywords and counted right, however long a keyword is.
func TestSpillChunks(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for round := range 200 {
		var words []string
		for range r.IntN(50) {
			n := 1 + r.IntN(40)
			if r.IntN(20) == 0 {
				n = 70000 + r.IntN(70000) // past the reader's buffer
			}
			words = append(words, strings.Repeat(string(rune('a'+r.IntN(26))), n))
		}
		s, err := newSpill()
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range words {
			if err := s.add([]byte(w)); err != nil {
				t.Fatal(err)
			}
		}
		max := 1 + r.IntN(300)
		next, err := s.chunks(max)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for {
			b, count, err := next()
			if err != nil {
				t.Fatal(err)
			}
			if b == nil {
				break
			}
			chunk := strings.Split(string(b), "\x00")
			if len(chunk) != count {
				t.Fatalf("round %d: a chunk of %d keywords counted %d", round, len(chunk), count)
			}
			if len(chunk) > 1 && len(b)-len(chunk[len(chunk)-1]) > max {
				t.Fatalf("round %d: a chunk went on past %d bytes before its last keyword", round, max)
			}
			got = append(got, chunk...)
		}
		s.remove()
		if !slices.Equal(got, words) {
			t.Fatalf("round %d (chunks of %d bytes): read back %d keywords, wrote %d", round, max, len(got), len(words))
		}
	}
}

// A position list is the positions added, the last lowered when a better one comes, at
// every length.
func TestPositionList(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	for _, n := range []int{1, 7, 8, 9, 4095, 4096, 4097, 20000} {
		var l *positionList
		var want []uint16
		for range n {
			p := uint16(r.IntN(200))
			l = l.add(p)
			want = append(want, p)
			if better := uint16(r.IntN(200)); r.IntN(3) == 0 {
				l.lower(better)
				want[len(want)-1] = min(want[len(want)-1], better)
			}
		}
		b := l.bytes()
		if len(b) != 2*n {
			t.Fatalf("%d positions encoded in %d bytes", n, len(b))
		}
		for i, p := range want {
			if got := uint16(b[2*i]) | uint16(b[2*i+1])<<8; got != p {
				t.Fatalf("%d positions: position %d is %d, want %d", n, i, got, p)
			}
		}
	}
}

// The keyword texts read back from their chunks are the keywords, each at its id, and a
// keyword is found at its id.
func TestKeyTexts(t *testing.T) {
	keys := []string{"a", "ab", "b cold brew", "kettle", "z"}
	// As keyword_set_keywords holds them: chunks of NUL-separated texts.
	chunked := keyTexts{text: make([]byte, len(strings.Join(keys, ""))), ends: make([]uint32, len(keys))}
	w := keyTextsWriter{k: &chunked}
	w.addChunk([]byte(strings.Join(keys[:2], "\x00")))
	w.addChunk([]byte(strings.Join(keys[2:], "\x00")))
	if err := w.done(); err != nil {
		t.Fatal(err)
	}
	// One keyword more, or one byte more, than the storage holds is an error.
	for _, extra := range []string{"\x00zz", "z"} {
		short := keyTexts{text: make([]byte, len(chunked.text)), ends: make([]uint32, len(keys))}
		w := keyTextsWriter{k: &short}
		w.addChunk([]byte(strings.Join(keys, "\x00") + extra))
		if err := w.done(); err == nil {
			t.Errorf("%q more than the storage holds: no error", extra)
		}
	}
	for _, k := range []keyTexts{chunked, keyTextsOf(keys)} {
		if k.len() != len(keys) {
			t.Fatalf("%d keywords, want %d", k.len(), len(keys))
		}
		for i, key := range keys {
			if k.at(i) != key {
				t.Errorf("keyword %d is %q, want %q", i, k.at(i), key)
			}
			if id, ok := k.find(key); !ok || id != i {
				t.Errorf("find(%q) = %d, %v", key, id, ok)
			}
		}
		for _, missing := range []string{"", "aa", "c", "zz"} {
			if _, ok := k.find(missing); ok {
				t.Errorf("find(%q) found it", missing)
			}
		}
	}
}
