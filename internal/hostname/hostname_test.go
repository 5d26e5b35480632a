package hostname

import (
	"errors"
	"strings"
	"testing"
)

func TestToASCII(t *testing.T) {
	ok := map[string]string{
		"example.com":                    "example.com",
		"Example.COM":                    "example.com",
		"example.com.":                   "example.com", // the root dot is the same name
		"www.example.co.uk":              "www.example.co.uk",
		"bücher.example":                 "xn--bcher-kva.example",
		"a-b.c-d.example":                "a-b.c-d.example",
		"1password.com":                  "1password.com",
		"123.example":                    "123.example",
		"localhost":                      "localhost", // one label: the caller decides
		strings.Repeat("a", 63) + ".com": strings.Repeat("a", 63) + ".com",
		"例え.テスト":                         "xn--r8jz45g.xn--zckzah",
		"a.xn--p1ai":                     "a.xn--p1ai",
		"example.com。":                   "example.com", // ideographic full stop maps to a dot
	}
	for in, want := range ok {
		if got, err := ToASCII(in); err != nil || got != want {
			t.Errorf("ToASCII(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	long := strings.Repeat("abcdefghi.", 25) + "example" // 257 characters
	for _, in := range []string{"", ".", "..", "a..com", ".a.com", "a.com..", "-a.com", "a-.com",
		"a_b.com", "a b.com", "a\x00.com", "a.com/", "[::1]", "xn--zz.com",
		strings.Repeat("a", 64) + ".com", long} {
		if got, err := ToASCII(in); !errors.Is(err, ErrInvalid) {
			t.Errorf("ToASCII(%q) = %q, %v; want ErrInvalid", in, got, err)
		}
	}
	for _, in := range []string{"127.1", "127.0.0.1", "127.0.0.1.", "2130706433", "0x7f.1", "0x7f000001",
		"0177.0.0.1", "1.0x7f", "example.0x", "a.123", "10.0.0.010"} {
		if got, err := ToASCII(in); !errors.Is(err, ErrNumeric) {
			t.Errorf("ToASCII(%q) = %q, %v; want ErrNumeric", in, got, err)
		}
	}
}
