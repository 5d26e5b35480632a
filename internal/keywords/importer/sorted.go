package importer

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/md5" //nolint:gosec // url_hash is MD5, as PostgreSQL computes it
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unsafe"

	"github.com/jackc/pgx/v5/pgtype"
)

// A ranking file copied straight into a new table (direct.go) is sorted first, in the
// order of the table's primary key (domain, country, language, keyword_norm, url_hash).
// PostgreSQL builds a B-tree over rows that arrive in its order two to three times faster
// than over rows in the file's order (docs/keyword-data-at-scale.md, "Rows in key order"),
// and the rows of one key come out together, so they are merged here, as they leave the
// sort, instead of being staged and merged in SQL.
//
// The sort is external, in bounded memory: rows are gathered as records in runs of at most
// runBytes, each run sorted and written to a temporary file on a goroutine of its own while
// the next run is read, and the runs are merged as COPY asks for rows. A file of one run
// never touches the disk. Memory is two runs whatever the file's size (and, while COPY
// runs, one keyword's rows of a domain, at most groupBytes); the disk holds each row
// once, about the size of the uncompressed file, in the directory os.TempDir names
// ($TMPDIR). The files are unlinked as soon as they are created, so nothing is left behind
// by a killed import.
//
// A record is the row's sort key, then what else COPY needs:
//
//	uint32 key length | key: domain 0 country 0 language 0 keyword_norm 0 URL 0
//	uint32 position | uint64 ^line | uvarint keyword length (0: the keyword is its norm) | keyword
//	byte 1 (a URL) or 0 (none: the key's URL is empty)
//
// A keyword that is its norm goes to COPY as NULL, as domain_rankings stores it (migration
// 00048), so the table's rows are 16 bytes shorter than with the text twice.
//
// The key's texts hold no NUL (cleanText), so comparing keys byte by byte orders them as
// PostgreSQL's "C" collation orders the columns one after the other; the position and the
// inverted line after the key put a key's best position first, and among equal positions
// the file's last row, which is the row the merge keeps. A key whose order PostgreSQL sees
// otherwise (a language compared under the database's collation) costs the build its
// speed, never a wrong row.
//
// The key holds the URL, not url_hash, its MD5: the hash is computed as the merged rows
// leave for COPY (sortedSource.fill), on the core COPY leaves idle, rather than for every
// row read, on the cores the read keeps busy (a tenth of the reading's CPU at 30M rows).
// The rows of one domain, market and keyword, one per URL, are then put in url_hash
// order, and two URLs of one hash (no URL and an empty one; an MD5 collision) are one key
// there as they are in the table: the first in order is kept.

// runBytes bounds the records of one run.
var runBytes = defaultRunBytes

const defaultRunBytes = 32 << 20

// run is one run's records: buf holds them one after the other, offs where each starts;
// once sorted, offs is in the records' order and lens holds their lengths.
type run struct {
	buf     []byte
	offs    []uint32
	lens    []uint32
	entries []sortEntry // the sort's, kept for the run's next filling
	scratch []sortEntry
}

func newRun() *run {
	return &run{buf: make([]byte, 0, runBytes), offs: make([]uint32, 0, runBytes/64)}
}

// keyOf returns the sort key of record r.
func keyOf(r []byte) []byte {
	k := int(binary.BigEndian.Uint32(r))
	return r[4 : 4+k]
}

// orderOf returns the bytes record r is sorted by: its key, position and inverted line.
func orderOf(r []byte) []byte {
	k := int(binary.BigEndian.Uint32(r))
	return r[4 : 4+k+12]
}

// record returns the record at offset o of the run.
func (rn *run) record(o uint32) []byte {
	r := rn.buf[o:]
	n := 4 + int(binary.BigEndian.Uint32(r)) + 12
	kw, m := binary.Uvarint(r[n:])
	n += m + int(kw)
	return r[:n+1]
}

// appendRecord appends the record of a ranking row whose norm Go computed.
func appendRecord(b []byte, r *stagedRow) []byte {
	at := len(b)
	b = append(b, 0, 0, 0, 0)
	b = append(append(b, r.domain...), 0)
	b = append(append(b, r.country...), 0)
	b = append(append(b, r.language...), 0)
	b = append(append(b, r.norm...), 0)
	if r.url != nil {
		b = append(b, *r.url...)
	}
	b = append(b, 0)
	binary.BigEndian.PutUint32(b[at:], uint32(len(b)-at-4))
	b = binary.BigEndian.AppendUint32(b, uint32(r.position))
	b = binary.BigEndian.AppendUint64(b, ^uint64(r.line))
	if r.keyword == r.norm {
		b = binary.AppendUvarint(b, 0)
	} else {
		b = binary.AppendUvarint(b, uint64(len(r.keyword)))
		b = append(b, r.keyword...)
	}
	if r.url == nil {
		return append(b, 0)
	}
	return append(b, 1)
}

// runSorter gathers records into runs and spills the full ones, sorted, to files. Two
// runs at most exist: the one being filled and the one being spilled.
type runSorter struct {
	cur   *run
	runs  int       // runs allocated
	full  chan *run // runs to sort and spill
	free  chan *run // runs spilled, to fill again
	spilt int       // runs handed to the spilling goroutine
	// files and spill, the spilling goroutine's first error, are read after done.
	files []*os.File
	spill error
	done  chan struct{}
	// records counts the records added.
	records int
}

func newRunSorter() *runSorter {
	s := &runSorter{cur: newRun(), runs: 1, full: make(chan *run), free: make(chan *run, 2), done: make(chan struct{})}
	go s.spillRuns(s.full)
	return s
}

// add adds the record of row r.
func (s *runSorter) add(r *stagedRow) error {
	at := len(s.cur.buf)
	s.cur.buf = appendRecord(s.cur.buf, r)
	if len(s.cur.buf) > runBytes && at > 0 { // the run is full without this record
		s.cur.buf = s.cur.buf[:at]
		if err := s.handOver(); err != nil {
			return err
		}
		if s.runs < 2 {
			s.cur, s.runs = newRun(), s.runs+1
		} else {
			select {
			case s.cur = <-s.free:
			case <-s.done:
				return s.spill
			}
		}
		s.cur.buf = appendRecord(s.cur.buf, r)
		at = 0
	}
	s.cur.offs = append(s.cur.offs, uint32(at))
	s.records++
	return nil
}

// handOver gives the current run to the spilling goroutine.
func (s *runSorter) handOver() error {
	select {
	case s.full <- s.cur:
		s.spilt++
		s.cur = nil
		return nil
	case <-s.done:
		return s.spill
	}
}

// spillRuns sorts each full run and writes it to a file of its own.
func (s *runSorter) spillRuns(full <-chan *run) {
	defer close(s.done)
	for rn := range full {
		s.spill = s.writeRun(rn)
		rn.buf, rn.offs, rn.lens = rn.buf[:0], rn.offs[:0], rn.lens[:0]
		if s.spill != nil {
			return
		}
		s.free <- rn // never blocks: two runs at most
	}
}

// stop ends the spilling goroutine once it has spilled what it was handed.
func (s *runSorter) stop() {
	if s.full != nil {
		close(s.full)
		s.full = nil
		<-s.done
	}
}

// sortEntry is a record of a run as its sort compares it: the rank of its key's market
// prefix (domain, country and language, each with its NUL) among the run's prefixes, then
// the first 8 bytes of the rest of its order (keyword_norm on), big-endian. A file lists a
// domain's rows together, so most records of a run share their prefix, and comparing their
// keys byte by byte read it again on every comparison (a fifth of the read phase's CPU at
// 30M rankings). The run is sorted by the two numbers (radixSort), which settle most
// records' places, and only records alike in both are compared by the rest of their bytes.
type sortEntry struct {
	group, off, n uint32 // n: the record's length
	abbr          uint64
}

// marketPrefixLen returns the length of key k's market prefix: up to its third NUL. The
// texts hold no NUL (cleanText), so one prefix is never a proper prefix of another, and
// comparing two keys' prefixes orders the keys as comparing the keys does when they differ.
func marketPrefixLen(k []byte) int {
	n := 0
	for i, c := range k {
		if c == 0 {
			if n++; n == 3 {
				return i + 1
			}
		}
	}
	return len(k)
}

// sort sorts the run's records in the order of their order bytes (orderOf).
func (rn *run) sort() {
	ids := make(map[string]uint32)
	var prefixes []string
	entries := slices.Grow(rn.entries[:0], len(rn.offs))[:len(rn.offs)]
	rn.entries = entries
	last := uint32(0) // the previous record's prefix: a file lists a domain's rows together
	for i, o := range rn.offs {
		order := orderOf(rn.buf[o:])
		p := marketPrefixLen(keyOf(rn.buf[o:]))
		id := last
		if i == 0 || prefixes[last] != string(order[:p]) {
			var ok bool
			if id, ok = ids[string(order[:p])]; !ok {
				id = uint32(len(prefixes))
				ids[string(order[:p])] = id
				prefixes = append(prefixes, string(order[:p]))
			}
			last = id
		}
		var abbr [8]byte
		copy(abbr[:], order[p:])   // the rest is at least 14 bytes: two NULs, position, line
		end := uint32(len(rn.buf)) // the records lie in buf in the order offs lists them
		if i+1 < len(rn.offs) {
			end = rn.offs[i+1]
		}
		entries[i] = sortEntry{group: id, off: o, n: end - o, abbr: binary.BigEndian.Uint64(abbr[:])}
	}
	byText := make([]uint32, len(prefixes))
	for i := range byText {
		byText[i] = uint32(i)
	}
	slices.SortFunc(byText, func(a, b uint32) int { return strings.Compare(prefixes[a], prefixes[b]) })
	rank := make([]uint32, len(prefixes))
	skip := make([]int, len(prefixes)) // by rank: the bytes two records of the group and abbreviation share
	for r, id := range byText {
		rank[id] = uint32(r)
		skip[r] = len(prefixes[id]) + 8
	}
	for i := range entries {
		entries[i].group = rank[entries[i].group]
	}
	rn.scratch = radixSort(entries, slices.Grow(rn.scratch[:0], len(entries))[:len(entries)])
	// Records of one group and abbreviation are put in the order of the rest of their bytes.
	for i := 0; i < len(entries); {
		j := i + 1
		for j < len(entries) && entries[j].group == entries[i].group && entries[j].abbr == entries[i].abbr {
			j++
		}
		if j-i > 1 {
			k := skip[entries[i].group]
			slices.SortFunc(entries[i:j], func(a, b sortEntry) int {
				return bytes.Compare(orderOf(rn.buf[a.off:])[k:], orderOf(rn.buf[b.off:])[k:])
			})
		}
		i = j
	}
	rn.lens = rn.lens[:0]
	for i, e := range entries {
		rn.offs[i] = e.off
		rn.lens = append(rn.lens, e.n)
	}
}

// radixSort sorts entries by group, then abbreviation, with a least-significant-digit
// radix sort, a byte a pass, through scratch (as long as entries), which it returns. A
// byte every entry has alike takes no pass: the groups of a run are a few ranks, and an
// abbreviation's bytes are letters. The sort is stable.
func radixSort(entries, scratch []sortEntry) []sortEntry {
	if len(entries) < 2 {
		return scratch
	}
	var counts [radixDigits][256]uint32
	for i := range entries {
		for d := range counts {
			counts[d][entries[i].digit(d)]++
		}
	}
	src, dst := entries, scratch
	for d := range counts {
		var at [256]uint32
		sum, used := uint32(0), 0
		for b, n := range counts[d] {
			at[b] = sum
			sum += n
			if n != 0 {
				used++
			}
		}
		if used <= 1 {
			continue
		}
		for i := range src {
			b := src[i].digit(d)
			dst[at[b]] = src[i]
			at[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &entries[0] {
		copy(entries, src)
	}
	return scratch
}

// radixDigits are the bytes radixSort sorts by: the abbreviation's, then the group's.
const radixDigits = 8 + 4

// digit returns byte d of the entry's sort number, least significant first: its
// abbreviation's bytes, then its group's.
func (e *sortEntry) digit(d int) byte {
	if d < 8 {
		return byte(e.abbr >> (8 * d))
	}
	return byte(e.group >> (8 * (d - 8)))
}

// writeRun writes the run, sorted, to a new unlinked temporary file.
func (s *runSorter) writeRun(rn *run) error {
	rn.sort()
	f, err := os.CreateTemp("", "contentapi-import-*")
	if err != nil {
		return fmt.Errorf("sort rows: %w", err)
	}
	_ = os.Remove(f.Name()) // unlinked: the open file stays readable (where the system allows it; else close removes it)
	s.files = append(s.files, f)
	w := bufio.NewWriterSize(f, 1<<20)
	var n [4]byte
	for i, o := range rn.offs {
		r := rn.buf[o : o+rn.lens[i]]
		binary.BigEndian.PutUint32(n[:], uint32(len(r)))
		_, _ = w.Write(n[:]) // a write error sticks in w
		_, _ = w.Write(r)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("sort rows: %w", err)
	}
	return nil
}

// close removes the sorter's files. It may be called before the runs are merged.
func (s *runSorter) close() {
	s.stop()
	for _, f := range s.files {
		name := f.Name()
		_ = f.Close()
		_ = os.Remove(name) // where it could not be unlinked while open
	}
	s.files = nil
}

// merged ends the gathering and returns the records in order, one per key.
func (s *runSorter) merged() (*mergedRecords, error) {
	m := &mergedRecords{}
	if s.spilt == 0 { // one run: sorted where it is
		s.stop()
		s.cur.sort()
		return m, m.push(&cursor{mem: s.cur})
	}
	if len(s.cur.offs) > 0 {
		if err := s.handOver(); err != nil {
			return nil, err
		}
	}
	s.cur = nil
	s.stop()
	if s.spill != nil {
		return nil, s.spill
	}
	for len(s.free) > 0 {
		<-s.free // the runs' memory goes before the merge's
	}
	for _, f := range s.files {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("sort rows: %w", err)
		}
		if err := m.push(&cursor{file: bufio.NewReaderSize(f, 64<<10)}); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// cursor reads one sorted run: a run in memory, or a file of records.
type cursor struct {
	rec  []byte
	mem  *run
	i    int
	file *bufio.Reader
	n    [4]byte
}

// next moves to the cursor's next record; false at the run's end.
func (c *cursor) next() (bool, error) {
	if c.mem != nil {
		if c.i >= len(c.mem.offs) {
			return false, nil
		}
		c.rec = c.mem.record(c.mem.offs[c.i])
		c.i++
		return true, nil
	}
	if _, err := io.ReadFull(c.file, c.n[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		return false, fmt.Errorf("sort rows: read back: %w", err)
	}
	n := int(binary.BigEndian.Uint32(c.n[:]))
	if cap(c.rec) < n {
		c.rec = make([]byte, n, n+n/2)
	}
	c.rec = c.rec[:n]
	if _, err := io.ReadFull(c.file, c.rec); err != nil {
		return false, fmt.Errorf("sort rows: read back: %w", err)
	}
	return true, nil
}

// mergedRecords merges sorted runs, keeping the first record of each key (its best
// position, then the file's last row of it). It is a min-heap of the runs by their current
// record.
type mergedRecords struct {
	heap []*cursor
	// advance is the run whose record was handed out last; it moves on at the next call,
	// so the record stays valid until then.
	advance *cursor
	last    []byte // the key handed out last
	started bool
	// repeats counts the records dropped for a key already handed out.
	repeats int
}

// push adds a run at its first record.
func (m *mergedRecords) push(c *cursor) error {
	ok, err := c.next()
	if !ok || err != nil {
		return err
	}
	m.heap = append(m.heap, c)
	m.up(len(m.heap) - 1)
	return nil
}

// next returns the next record of a new key, valid until the following call, or nil at
// the end.
func (m *mergedRecords) next() ([]byte, error) {
	for {
		if c := m.advance; c != nil {
			m.advance = nil
			ok, err := c.next()
			if err != nil {
				return nil, err
			}
			if ok {
				m.down(0)
			} else {
				last := len(m.heap) - 1
				m.heap[0] = m.heap[last]
				m.heap = m.heap[:last]
				if last > 0 {
					m.down(0)
				}
			}
		}
		if len(m.heap) == 0 {
			return nil, nil
		}
		top := m.heap[0]
		m.advance = top
		key := keyOf(top.rec)
		if m.started && bytes.Equal(key, m.last) {
			m.repeats++
			continue
		}
		m.started = true
		m.last = append(m.last[:0], key...)
		return top.rec, nil
	}
}

func (m *mergedRecords) less(i, j int) bool {
	return bytes.Compare(orderOf(m.heap[i].rec), orderOf(m.heap[j].rec)) < 0
}

func (m *mergedRecords) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !m.less(i, p) {
			return
		}
		m.heap[i], m.heap[p] = m.heap[p], m.heap[i]
		i = p
	}
}

func (m *mergedRecords) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(m.heap) {
			return
		}
		c := l
		if r := l + 1; r < len(m.heap) && m.less(r, l) {
			c = r
		}
		if !m.less(c, i) {
			return
		}
		m.heap[i], m.heap[c] = m.heap[c], m.heap[i]
		i = c
	}
}

// sortedSource feeds COPY into a new ranking table the merged records: the columns of
// target.copyColumns.
type sortedSource struct {
	m    *mergedRecords
	rec  []byte
	d    rankingRecord // rec's columns
	hash [16]byte      // rec's url_hash
	// group holds the records of one domain, market and keyword, one per url_hash, in
	// its order (fill), copied into arena; at is the next to hand out. peeked is the merged
	// record that ended the group, valid until m moves on.
	group  []hashedRecord
	at     int
	arena  []byte
	peeked []byte
	opts   Options
	source []byte // source(opts), for appendTuple
	vals   []any
	err    error
	rows   int
}

// hashedRecord is a record of sortedSource's group: where it lies in the arena, and its
// url_hash.
type hashedRecord struct {
	from, to int
	hash     [16]byte
}

func (s *sortedSource) Next() bool {
	if s.at == len(s.group) {
		if s.err = s.fill(); s.err != nil || len(s.group) == 0 {
			return false
		}
	}
	g := s.group[s.at]
	s.at++
	s.rec, s.hash = s.arena[g.from:g.to], g.hash
	s.d = decodeRecord(s.rec)
	s.rows++
	return true
}

// groupBytes bounds the records of a group (sortedSource.fill).
var groupBytes = defaultGroupBytes

const defaultGroupBytes = 4 << 20

// fill reads the merged records of the next domain, market and keyword into the group,
// computes each one's url_hash and puts them in its order, keeping the first record of
// each hash; the group is empty at the end. A keyword a domain ranks for with more URLs
// than groupBytes holds (thousands) is handed out in groups of that size, each in
// url_hash order: the table is then not in its key's order, which costs the primary key's
// build its speed, and two URLs of one MD5 in different groups fail that build (a
// duplicate key) instead of being merged.
func (s *sortedSource) fill() error {
	s.group, s.at, s.arena = s.group[:0], 0, s.arena[:0]
	rec := s.peeked
	s.peeked = nil
	if rec == nil {
		var err error
		if rec, err = s.m.next(); rec == nil || err != nil {
			return err
		}
	}
	prefix, _ := splitURL(keyOf(rec))
	for {
		_, url := splitURL(keyOf(rec))
		from := len(s.arena)
		s.arena = append(s.arena, rec...) // rec is the merge's until it moves on
		s.group = append(s.group, hashedRecord{from: from, to: len(s.arena), hash: hashURL(url)})
		var err error
		if rec, err = s.m.next(); err != nil {
			return err
		}
		if rec == nil || len(s.arena) >= groupBytes ||
			!bytes.HasPrefix(keyOf(rec), s.arena[s.group[0].from+4:s.group[0].from+4+len(prefix)]) {
			s.peeked = rec
			break
		}
	}
	if len(s.group) == 1 {
		return nil
	}
	slices.SortFunc(s.group, func(a, b hashedRecord) int {
		return cmp.Or(bytes.Compare(a.hash[:], b.hash[:]),
			bytes.Compare(positionAndLine(s.arena[a.from:a.to]), positionAndLine(s.arena[b.from:b.to])))
	})
	kept := s.group[:1]
	for _, g := range s.group[1:] {
		if g.hash == kept[len(kept)-1].hash {
			s.m.repeats++
			continue
		}
		kept = append(kept, g)
	}
	s.group = kept
	return nil
}

// hashURL is url_hash: MD5, as urlHash and PostgreSQL compute it (a test makes URLs
// collide).
var hashURL = func(url []byte) [16]byte { return md5.Sum(url) } //nolint:gosec // see urlHash

// splitURL splits a ranking record's key after its fourth NUL: domain 0 country 0
// language 0 keyword_norm 0, and the URL (empty for none) without its NUL.
func splitURL(key []byte) (prefix, url []byte) {
	i := bytes.LastIndexByte(key[:len(key)-1], 0) + 1 // the URL holds no NUL
	return key[:i], key[i : len(key)-1]
}

// positionAndLine returns the bytes after record r's key that order it among records of
// one key: its position and inverted line.
func positionAndLine(r []byte) []byte {
	k := int(binary.BigEndian.Uint32(r))
	return r[4+k : 4+k+12]
}

// rankingRecord is a merged record's columns, pointing into the record.
type rankingRecord struct {
	domain, country, language, norm []byte
	keyword                         []byte // nil: the keyword is its norm, stored as NULL
	position                        []byte // big-endian int32, as COPY's binary format has it
	url                             []byte // nil: no URL
}

// decodeRecord splits record r into its columns (the layout is appendRecord's).
func decodeRecord(r []byte) rankingRecord {
	key := keyOf(r)
	var parts [5][]byte
	rest := key
	for i := range parts {
		j := bytes.IndexByte(rest, 0)
		parts[i], rest = rest[:j], rest[j+1:]
	}
	d := rankingRecord{domain: parts[0], country: parts[1], language: parts[2], norm: parts[3]}
	n := 4 + len(key)
	d.position = r[n : n+4]
	n += 12
	kw, m := binary.Uvarint(r[n:])
	n += m
	if kw > 0 {
		d.keyword = r[n : n+int(kw)]
		n += int(kw)
	}
	if r[n] == 1 {
		d.url = parts[4]
	}
	return d
}

// Values decodes the current record. Its texts point into the record, which stays
// unchanged until the next call of Next: COPY encodes a row before it asks for the next
// (encodeCopy), so they are not copied.
func (s *sortedSource) Values() ([]any, error) {
	d := &s.d
	hash := pgtype.UUID{Bytes: s.hash, Valid: true}
	var keyword, url any
	if d.keyword != nil {
		keyword = view(d.keyword)
	}
	if d.url != nil {
		url = view(d.url)
	}
	s.vals = append(s.vals[:0], view(d.domain), keyword, view(d.norm), view(d.country), view(d.language),
		int(binary.BigEndian.Uint32(d.position)), url, hash, source(s.opts), s.opts.Synthetic)
	return s.vals, nil
}

func (s *sortedSource) Err() error { return s.err }

// rankingOIDs are the types of the columns sortedSource writes itself: domain, keyword,
// keyword_norm, country, language (text), position (integer), url (text), url_hash (uuid),
// source (text), synthetic (boolean).
var rankingOIDs = []uint32{pgtype.TextOID, pgtype.TextOID, pgtype.TextOID, pgtype.TextOID, pgtype.TextOID,
	pgtype.Int4OID, pgtype.TextOID, pgtype.UUIDOID, pgtype.TextOID, pgtype.BoolOID}

func (s *sortedSource) encodes(oids []uint32) bool { return slices.Equal(oids, rankingOIDs) }

// appendTuple appends the current record as a row of COPY's binary format: the bytes of
// its texts as they are, the position and the hash as PostgreSQL stores them.
func (s *sortedSource) appendTuple(buf []byte) []byte {
	d := &s.d
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(rankingOIDs)))
	buf = appendField(buf, d.domain)
	buf = appendNullable(buf, d.keyword)
	buf = appendField(buf, d.norm)
	buf = appendField(buf, d.country)
	buf = appendField(buf, d.language)
	buf = appendField(buf, d.position)
	buf = appendNullable(buf, d.url)
	buf = appendField(buf, s.hash[:])
	if s.source == nil {
		s.source = []byte(source(s.opts))
	}
	buf = appendField(buf, s.source)
	synthetic := byte(0)
	if s.opts.Synthetic {
		synthetic = 1
	}
	return appendField(buf, []byte{synthetic})
}

// view is b as a string without a copy; b must not change while the string is used.
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// copySorted reads the rest of src, sorts the rows Go normalised by key, and copies them,
// one per key, into table; the other rows (see directSource) are staged in import_rows as
// they come. It returns how many rows each got.
func (l *loader) copySorted(ctx context.Context, src *rowSource, tg target, opts Options, table string) (copied, staged int, err error) {
	s := newRunSorter()
	defer s.close()
	var held []stagedRow
	stageHeld := func() error {
		if err := l.stageHeld(ctx, src, held); err != nil {
			return err
		}
		staged += len(held)
		clear(held)
		held = held[:0]
		return nil
	}
	stageAll := false
	for src.Next() {
		r := &src.cur
		if r.norm == "" && mayNormalizeToASCII(r.keyword) {
			stageAll = true
		}
		if stageAll || r.norm == "" {
			if held = append(held, *r); len(held) >= heldRows {
				if err := stageHeld(); err != nil {
					return 0, staged, err
				}
			}
			continue
		}
		if err := s.add(r); err != nil {
			return 0, staged, err
		}
		if s.records%ProgressEvery == 0 {
			if err := ctx.Err(); err != nil {
				return 0, staged, err
			}
		}
	}
	if err := src.Err(); err != nil {
		return 0, staged, fmt.Errorf("copy rows: %w", err)
	}
	if err := stageHeld(); err != nil {
		return 0, staged, err
	}
	src.fileRead(l)
	m, err := s.merged()
	if err != nil {
		return 0, staged, err
	}
	n, err := copyFreeze(ctx, l.tx, table, tg.copyColumns(), &sortedSource{m: m, opts: opts})
	if err != nil {
		return 0, staged, fmt.Errorf("copy rows: %w", err)
	}
	return int(n), staged, nil
}
