package auth

import (
	"strings"
	"testing"
)

func TestKeyFormat(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		k, err := NewKey()
		if err != nil {
			t.Fatal(err)
		}
		if len(k) != 35 || !strings.HasPrefix(k, "ap_") || !WellFormed(k) || seen[k] {
			t.Fatalf("key %q", k)
		}
		seen[k] = true
		if len(Digest(k)) != 32 || DisplayPrefix(k) != k[:8] {
			t.Fatal("digest or prefix")
		}
	}
}

func TestWellFormedRefusesTampering(t *testing.T) {
	k, _ := NewKey()
	cases := map[string]string{
		"empty":          "",
		"no prefix":      "xx_" + k[3:],
		"short":          k[:34],
		"long":           k + "a",
		"bad character":  k[:10] + "-" + k[11:],
		"changed body":   k[:5] + string(other(k[5])) + k[6:],
		"bad checksum":   k[:34] + string(other(k[34])),
		"lower checksum": k[:29] + strings.ToLower(k[29:]) + "",
	}
	for name, c := range cases {
		if c == k {
			continue // lower-casing may leave an all-digit checksum unchanged
		}
		if WellFormed(c) {
			t.Errorf("%s: %q accepted", name, c)
		}
	}
}

func other(b byte) byte {
	if b == 'a' {
		return 'b'
	}
	return 'a'
}

func TestNormalizeEmail(t *testing.T) {
	cases := map[string]string{
		" Ann@Example.COM ":       "Ann@example.com",
		"bob@bücher.example":      "bob@xn--bcher-kva.example",
		"x.y+tag@sub.example.org": "x.y+tag@sub.example.org",
	}
	for in, want := range cases {
		got, err := NormalizeEmail(in)
		if err != nil || got != want {
			t.Errorf("NormalizeEmail(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "plain", "a@b", "a@", "@example.com", "A <a@example.com>", strings.Repeat("a", 250) + "@example.com",
		"a@127.0.0.1", "a@127.1", "a@0x7f.1", "a@exa_mple.com", "a@-a.com", "a@[127.0.0.1]"} {
		if _, err := NormalizeEmail(bad); err == nil {
			t.Errorf("NormalizeEmail(%q) accepted", bad)
		}
	}
}

// KeyName is the one check of key names (the JSON API's and the dashboard's): NUL, invalid
// UTF-8, control characters and bidirectional-text controls are refused; any script is not.
func TestKeyNameRefusesControlAndBidiCharacters(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"", DefaultKeyName, true},
		{"  production server ", "production server", true},
		{"café ☕ שרת 本番", "café ☕ שרת 本番", true},
		{"a\x00b", "", false},
		{"a\xffb", "", false},
		{"a\x01b", "", false},
		{"a\tb", "", false},
		{"a\nb", "", false},
		{"a\x7fb", "", false},
		{"a\u0085b", "", false},
		{"a\u202eb", "", false},
		{"a\u200fb", "", false},
		{"a\u2066b", "", false},
		{"a\u061cb", "", false},
		{"a\u2028b", "", false},
		{strings.Repeat("n", 101), "", false},
	} {
		got, err := KeyName(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("KeyName(%q) = %q, %v", c.in, got, err)
		}
	}
}
