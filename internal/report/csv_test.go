package report

import "testing"

func TestDefuse(t *testing.T) {
	cases := map[string]string{
		"=HYPERLINK(\"x\")": "'=HYPERLINK(\"x\")",
		"+cmd":              "'+cmd",
		"@SUM(A1)":          "'@SUM(A1)",
		"-12.5":             "-12.5",
		"cold brew":         "cold brew",
		"":                  "",
	}
	for in, want := range cases {
		if got := defuse(in); got != want {
			t.Errorf("defuse(%q) = %q, want %q", in, got, want)
		}
	}
}
