package importer

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzReadFile drives the code an import runs before PostgreSQL sees a row (gzip and
// encoding detection, delimiter and header sniffing, the CSV stream, the cell parsers) with
// arbitrary files, read as keyword files and as ranking files. It must never panic, every
// row read must end loaded or rejected with its line and a reason, and every loaded value
// must be storable (valid UTF-8 without NUL, bounded keyword and host lengths).
func FuzzReadFile(f *testing.F) {
	seeds := []string{
		"keyword,volume,kd,cpc,competition,intent,serp_urls\ncoffee,1300,35,1.20,0.5,Informational,https://a.example/ https://b.example/\n",
		"\ufeffKeyword,Search Volume,Keyword Difficulty,CPC,Intent\n\"quoted, kw\",\"1,300\",35,1.20,Informational\nrange,1K-10K,20,0.5,Commercial\nempty,,,,\n",
		"Keyword Stats 2024\nAll locations\nKeyword\tAvg. monthly searches\tCompetition\tCompetition (indexed value)\nbeans\t1000\tLow\t12\n",
		"Keyword;Volume;CPC\nmoka;1.300;0,45\n",
		"Query,Page,Position,Clicks\naeropress recipe,https://brewlab.example/aeropress,3.4,10\n",
		"Keyword,Domain,Position,URL,Search Volume,KD\nidem one,idem.example,4,https://idem.example/one,100,20\n",
		"keyword,position\nno domain,1\n",
		"keyword,volume\nbad \"quote,1\n\"unterminated\n",
		"keyword,volume\n,\n,,,\nnul\x00kw,5\n",
		"keyword,volume,country,language\nkw,-1,XX,english\nkw2,1e400,us,en\n",
		"\xff\xfek\x00e\x00y\x00w\x00o\x00r\x00d\x00\n\x00a\x00\n\x00",
		"keyword\n\x93smart quotes\x94\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s), false)
	}
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	_, _ = w.Write([]byte(seeds[0]))
	_ = w.Close()
	f.Add(z.Bytes(), true)

	f.Fuzz(func(t *testing.T, data []byte, rankings bool) {
		tbl, err := open(bytes.NewReader(data))
		if err != nil {
			return // no header: the import stops before reading rows, which is reported
		}
		var rep Report
		var src *rowSource
		cols := mapColumns(tbl.header, tbl.raw)
		if rankings {
			if cols.position < 0 {
				return // refused before reading rows
			}
			src = rankingSource(tbl, cols, &rep, Options{Domain: "fallback.example"}, newKeyer(true, true))
		} else {
			src = keywordSource(tbl, cols, &rep, Options{}, newKeyer(true, true))
		}
		loaded := 0
		for src.Next() {
			loaded++
			checkStorable(t, src.cur, rankings)
			if vals, _ := src.Values(); len(vals) != len(src.columns()) {
				t.Fatalf("%d values for the columns %v", len(vals), src.columns())
			}
		}
		if src.Err() != nil {
			return // a read error fails the whole import
		}
		if rep.Read != loaded+rep.RejectedRows {
			t.Fatalf("read %d rows, loaded %d, rejected %d", rep.Read, loaded, rep.RejectedRows)
		}
		if len(rep.Rejected) > MaxRejectionDetails || len(rep.Rejected) > rep.RejectedRows {
			t.Fatalf("%d rejections listed of %d", len(rep.Rejected), rep.RejectedRows)
		}
		for _, r := range rep.Rejected {
			if r.Line < 1 || strings.TrimSpace(r.Reason) == "" {
				t.Fatalf("rejection without line or reason: %+v", r)
			}
		}
	})
}

// checkStorable fails when a staging row holds a value PostgreSQL would refuse or the
// readers promise never to produce, or a key that is not the keyword's.
func checkStorable(t *testing.T, r stagedRow, rankings bool) {
	t.Helper()
	if r.line < 1 {
		t.Fatalf("row without a line number: %+v", r)
	}
	text := func(s string) {
		if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
			t.Fatalf("unstorable text %q in %+v", s, r)
		}
	}
	text(r.keyword)
	if r.keyword == "" || utf8.RuneCountInString(r.keyword) > maxKeywordLength {
		t.Fatalf("keyword %q", r.keyword)
	}
	for _, p := range []*string{r.intent, r.url} {
		if p != nil {
			text(*p)
		}
	}
	for _, s := range r.serp {
		text(s)
	}
	switch {
	case isASCII(r.keyword) && r.norm != strings.ToLower(r.keyword):
		t.Fatalf("keyword %q normalised to %q", r.keyword, r.norm)
	case !isASCII(r.keyword) && (r.norm != "" || !r.seen):
		t.Fatalf("keyword %q normalised in Go (%q, seen %v)", r.keyword, r.norm, r.seen)
	}
	if rankings {
		if !validHost(r.domain) {
			t.Fatalf("ranking row with domain %q", r.domain)
		}
		if r.position < 1 {
			t.Fatalf("ranking row with position %d", r.position)
		}
	}
}
