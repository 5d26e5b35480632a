package importer

import (
	"slices"
	"strings"
	"testing"
)

func TestParseNumber(t *testing.T) {
	cases := []struct {
		in           string
		decimalComma bool
		want         float64 // -1: unknown (nil)
		err          string  // part of the reason when rejected
	}{
		{"1300", false, 1300, ""},
		{"1,300", false, 1300, ""},
		{"1 300", false, 1300, ""},
		{"1\u00a0300", false, 1300, ""},
		{"12'500", false, 12500, ""},
		{"1,234,567", false, 1234567, ""},
		{"1.300", true, 1300, ""},
		{"1.300", false, 1.3, ""},
		{"0,75", true, 0.75, ""},
		{"0,75", false, 0.75, ""},
		{"1.234,50", true, 1234.5, ""},
		{"1,234.50", false, 1234.5, ""},
		{"$1.20", false, 1.2, ""},
		{"45%", false, 45, ""},
		{"", false, -1, ""},
		{"-", false, -1, ""},
		{"n/a", false, -1, ""},
		{"N/A", false, -1, ""},
		{"1K-10K", false, 0, "range"},
		{"10K – 100K", false, 0, "range"},
		{"100 - 1,000", false, 0, "range"},
		{"1.5K", false, 0, "not a number"},
		{"abc", false, 0, "not a number"},
		{"-3", false, 0, "negative"},
		{"NaN", false, 0, "not a number"},
	}
	for _, c := range cases {
		got, err := parseNumber("col", c.in, c.decimalComma)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "col") {
				t.Errorf("parseNumber(%q) = %v, %v; want an error about %q", c.in, got, err, c.err)
			}
		case err != nil:
			t.Errorf("parseNumber(%q): %v", c.in, err)
		case c.want < 0:
			if got != nil {
				t.Errorf("parseNumber(%q) = %v, want unknown", c.in, *got)
			}
		case got == nil || *got != c.want:
			t.Errorf("parseNumber(%q, %v) = %v, want %v", c.in, c.decimalComma, got, c.want)
		}
	}
}

func TestParseFields(t *testing.T) {
	if c, err := parseCompetition("c", "Medium", false); c != nil || err != nil {
		t.Errorf("a competition word must be unknown: %v %v", c, err)
	}
	if c, _ := parseCompetition("c", "45", false); c == nil || *c != 0.45 {
		t.Errorf("indexed competition 45 = %v", c)
	}
	if _, err := parseCompetition("c", "150", false); err == nil {
		t.Error("competition 150 accepted")
	}
	if p, err := parsePosition("p", "4.5", false); p != 5 || err != nil {
		t.Errorf("position 4.5 = %d %v", p, err)
	}
	if _, err := parsePosition("p", "", false); err == nil {
		t.Error("empty position accepted")
	}
	for in, want := range map[string]string{"Informational": "informational", "C, T": "commercial",
		"transactional": "transactional", "N": "navigational", "Local": ""} {
		got := parseIntent(in)
		if (got == nil && want != "") || (got != nil && *got != want) {
			t.Errorf("parseIntent(%q) = %v, want %q", in, got, want)
		}
	}
	if code, err := parseCode("country", "GB", "us"); code != "uk" || err != nil {
		t.Errorf("GB = %q %v", code, err)
	}
	if code, _ := parseCode("country", "", "ca"); code != "ca" {
		t.Errorf("default country = %q", code)
	}
}

func TestSniffDelimiter(t *testing.T) {
	for sample, want := range map[string]rune{
		"Keyword,Volume\na,1\n":                              ',',
		"Keyword;Volume\n\"a;b\";1,5\n":                      ';',
		"Title line, with commas\nKeyword\tVolume\na\t1":     '\t',
		"keyword\nonly\n":                                    ',',
		"Keyword\tAvg. monthly searches\na\t\"1,000,000\"\n": '\t',
	} {
		if got := sniffDelimiter(sample); got != want {
			t.Errorf("sniffDelimiter(%q) = %q, want %q", sample, got, want)
		}
	}
}

// isUnknown answers texts over 4 bytes without lower-casing them; it must answer every text
// as lower-casing it and comparing does. The alphabet holds the words' letters in both
// cases, the letters whose lower case is ASCII though they are not (the Kelvin sign, the
// capital I with a dot), dashes and spaces; every text of up to 5 of them is tried.
func TestIsUnknownAsLowerCased(t *testing.T) {
	words := []string{"", "-", "–", "—", "--", "n/a", "na", "null", "none"}
	alphabet := []string{"n", "N", "a", "A", "/", "u", "U", "l", "L", "o", "O", "e", "E", "-", "–", "—", "\u212a", "\u0130", " ", "k"}
	var try func(prefix string, depth int)
	checked := 0
	try = func(s string, depth int) {
		checked++
		if got, want := isUnknown(s), slices.Contains(words, strings.ToLower(s)); got != want {
			t.Fatalf("isUnknown(%q) = %v, want %v", s, got, want)
		}
		if depth == 5 {
			return
		}
		for _, c := range alphabet {
			try(s+c, depth+1)
		}
	}
	try("", 0)
	if checked < 3_000_000 {
		t.Fatalf("%d texts checked", checked)
	}
}
