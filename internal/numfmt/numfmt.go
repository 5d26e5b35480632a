// Package numfmt writes numbers for people: the one formatter of counts that answers' texts
// and the dashboard share. It is x/text's printer for English (golang.org/x/text/message),
// so grouping is a maintained library's, not a hand-written loop's.
package numfmt

import (
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// english is made once: a Printer is only read when it prints (each call copies it into a
// pooled buffer of its own), so every goroutine may share it.
var english = message.NewPrinter(language.English)

// Count writes n with thousands separators: 1,850; -1,234,567.
func Count(n int64) string { return english.Sprintf("%d", n) }
