// Package hostname checks DNS host names strictly, for the domains callers name in requests
// (sites to analyse, competitors, callback hosts, e-mail domains).
package hostname

import (
	"errors"
	"strings"

	"golang.org/x/net/idna"
)

// Errors ToASCII returns, told apart with errors.Is.
var (
	// ErrNumeric is a name a URL parser or resolver would read as an IPv4 address
	// (127.1, 2130706433, 0x7f.1, 0177.0.0.1): its last label is a number.
	ErrNumeric = errors.New("hostname: numeric name")
	// ErrInvalid is anything else that is not a DNS host name.
	ErrInvalid = errors.New("hostname: invalid")
)

// MaxLength is the longest host name DNS carries, without the root dot.
const MaxLength = 253

// ToASCII returns host (a name without port or brackets) as lower-case ASCII (IDNA, UTS #46
// lookup), with one trailing dot (the root) removed, so "Example.COM." and "example.com" are
// the same name. It refuses anything but labels of 1 to 63 letters, digits and inner hyphens
// (no empty label, so no "..", leading dot or second trailing dot), names over 253
// characters, and, with ErrNumeric, names whose last label is a decimal or 0x-hex number.
// Whether one label is enough is the caller's choice.
func ToASCII(host string) (string, error) {
	ascii, err := idna.Lookup.ToASCII(host)
	if err != nil || ascii == "" {
		return "", ErrInvalid
	}
	ascii = strings.TrimSuffix(ascii, ".")
	if ascii == "" || len(ascii) > MaxLength {
		return "", ErrInvalid
	}
	labels := strings.Split(ascii, ".")
	for _, l := range labels {
		if !ldhLabel(l) {
			return "", ErrInvalid
		}
	}
	if numeric(labels[len(labels)-1]) {
		return "", ErrNumeric
	}
	return ascii, nil
}

// ldhLabel reports a label of 1 to 63 letters, digits and hyphens, not starting or ending
// with a hyphen (RFC 1123; IDNA's A-labels are of this form too).
func ldhLabel(l string) bool {
	if len(l) == 0 || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// numeric reports a label the WHATWG URL host parser reads as a number: decimal digits, or
// "0x" and hex digits. No top-level domain is one.
func numeric(l string) bool {
	digits := "0123456789"
	if rest, ok := strings.CutPrefix(l, "0x"); ok {
		l, digits = rest, "0123456789abcdef"
	}
	return strings.Trim(l, digits) == ""
}
