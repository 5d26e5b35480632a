package importer

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/klauspost/pgzip"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// sniffSize is how much of the file is looked at to choose encoding and delimiter.
const sniffSize = 64 << 10

// headerSearchLines bounds the title lines some exports put above the header (Keyword
// Planner writes two).
const headerSearchLines = 10

// maxRecordBytes bounds one CSV record (a row, quoted line breaks included). A keyword row
// is a few hundred bytes; a file without line breaks, or a quote left open, would otherwise
// be held in memory whole before the CSV reader could say anything about it.
const maxRecordBytes = 1 << 20

// errRecordTooLong ends an import whose file has a record over maxRecordBytes.
var errRecordTooLong = fmt.Errorf("a row longer than %d bytes: a quote left open, or not a CSV file", maxRecordBytes)

// recordLimit passes reads through until more than maxRecordBytes were read since the
// last record ended (the table calls reset after each). The CSV reader reads ahead at most
// its 4 KiB buffer, so a record is bounded within that much.
type recordLimit struct {
	r io.Reader
	n int
}

func (l *recordLimit) Read(p []byte) (int, error) {
	if l.n > maxRecordBytes {
		return 0, errRecordTooLong
	}
	n, err := l.r.Read(p)
	l.n += n
	return n, err
}

func (l *recordLimit) reset() { l.n = 0 }

// gunzip returns the decompressed stream of a gzip file (recognised by its magic bytes,
// whatever its name), else r itself. klauspost/pgzip inflates with klauspost/compress's
// decoder (about twice as fast as compress/gzip) on a goroutine of its own, a few blocks
// ahead of the reader, so the file is decompressed on one core while its rows are parsed
// on another.
func gunzip(r io.Reader) (io.Reader, error) {
	br := bufio.NewReader(r)
	head, _ := br.Peek(2)
	if len(head) < 2 || head[0] != 0x1f || head[1] != 0x8b {
		return br, nil
	}
	zr, err := pgzip.NewReader(br)
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	return zr, nil
}

// decode returns r as UTF-8 text: a UTF-8 BOM is dropped, UTF-16 (Keyword Planner's
// "CSV for Excel", with or without a BOM) is decoded, and a file that is not valid UTF-8 is
// read as Windows-1252, the encoding of spreadsheet exports on Windows.
func decode(r io.Reader) io.Reader {
	br := bufio.NewReaderSize(r, sniffSize)
	head, _ := br.Peek(sniffSize) // a short file gives a short head and io.EOF
	switch {
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}), bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		return transform.NewReader(br, unicode.BOMOverride(unicode.UTF8.NewDecoder()))
	case len(head) >= 4 && head[0] != 0 && head[1] == 0 && head[2] != 0 && head[3] == 0:
		return transform.NewReader(br, unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM).NewDecoder())
	case len(head) >= 4 && head[0] == 0 && head[1] != 0 && head[2] == 0 && head[3] != 0:
		return transform.NewReader(br, unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM).NewDecoder())
	case bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}):
		_, _ = br.Discard(3)
		return br
	case !validUTF8Prefix(head, len(head) == sniffSize):
		return transform.NewReader(br, charmap.Windows1252.NewDecoder())
	}
	return br
}

// validUTF8Prefix reports whether b is valid UTF-8, allowing a rune cut at the end when b
// is only the first part of the file.
func validUTF8Prefix(b []byte, truncated bool) bool {
	if truncated {
		for i := 0; i < utf8.UTFMax && len(b) > 0 && !utf8.Valid(b); i++ {
			b = b[:len(b)-1]
		}
	}
	return utf8.Valid(b)
}

// table is an opened CSV file positioned after its header.
type table struct {
	r      *csv.Reader
	limit  *recordLimit
	header []string // normalised header names
	raw    []string // header names as written, trimmed
	comma  rune
}

// open decodes r, finds the delimiter and the header row (the first of the first few rows
// that names a keyword column) and returns a reader positioned after it.
func open(r io.Reader) (*table, error) {
	r, err := gunzip(r)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(decode(r), sniffSize)
	sample, _ := br.Peek(sniffSize)
	comma := sniffDelimiter(string(sample))
	limit := &recordLimit{r: br}
	cr := csv.NewReader(limit)
	cr.Comma = comma
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = false
	for i := 0; i < headerSearchLines; i++ {
		rec, err := cr.Read()
		limit.reset()
		if errors.Is(err, io.EOF) {
			break
		}
		var perr *csv.ParseError
		if errors.As(err, &perr) {
			continue // a title line above the header need not be valid CSV
		}
		if err != nil {
			return nil, fmt.Errorf("read header: %w", err)
		}
		names := make([]string, len(rec))
		raw := make([]string, len(rec))
		for j, f := range rec {
			names[j] = normalizeHeader(f)
			raw[j] = strings.TrimSpace(strings.ReplaceAll(f, "\ufeff", ""))
		}
		if findColumn(names, keywordAliases) >= 0 {
			cr.ReuseRecord = true // rows are converted before the next is read
			return &table{r: cr, limit: limit, header: names, raw: raw, comma: comma}, nil
		}
	}
	return nil, fmt.Errorf("no header row with a keyword column (one of %s) in the first %d rows",
		strings.Join(keywordAliases, ", "), headerSearchLines)
}

// sniffDelimiter picks tab, semicolon or comma: the one that splits a header-like line
// (one naming a keyword column) into the most fields; failing that, the one most frequent
// outside quotes in the first lines.
func sniffDelimiter(sample string) rune {
	lines := strings.SplitN(sample, "\n", headerSearchLines+1)
	if len(lines) > headerSearchLines {
		lines = lines[:headerSearchLines]
	}
	candidates := []rune{'\t', ';', ','}
	best, bestFields := ',', 0
	for _, d := range candidates {
		for _, line := range lines {
			fields := splitQuoted(strings.TrimRight(line, "\r"), d)
			names := make([]string, len(fields))
			for i, f := range fields {
				names[i] = normalizeHeader(f)
			}
			if findColumn(names, keywordAliases) >= 0 && len(fields) > bestFields {
				best, bestFields = d, len(fields)
			}
		}
	}
	if bestFields > 1 {
		return best
	}
	best, bestCount := ',', 0
	for _, d := range candidates {
		for _, line := range lines {
			if n := len(splitQuoted(line, d)) - 1; n > bestCount {
				best, bestCount = d, n
			}
		}
	}
	return best
}

// splitQuoted splits a line at d outside double quotes, dropping the quotes.
func splitQuoted(line string, d rune) []string {
	var fields []string
	var cur strings.Builder
	quoted := false
	for _, c := range line {
		switch {
		case c == '"':
			quoted = !quoted
		case c == d && !quoted:
			fields = append(fields, cur.String())
			cur.Reset()
		default:
			cur.WriteRune(c)
		}
	}
	return append(fields, cur.String())
}

// normalizeHeader lower-cases a header and collapses its white space; a BOM left by a
// tool that wrote one per field is dropped.
func normalizeHeader(s string) string {
	s = strings.ReplaceAll(s, "\ufeff", "")
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// findColumn returns the index of the column named by the earliest alias in the list, or -1.
func findColumn(header []string, aliases []string) int {
	for _, a := range aliases {
		for i, h := range header {
			if h == a {
				return i
			}
		}
	}
	return -1
}
