// Package numfmt writes numbers for people: the one formatter of counts that answers' texts
// and the dashboard share. It is x/text's printer for English (golang.org/x/text/message),
// so grouping is a maintained library's, not a hand-written loop's.
package numfmt

import (
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Count writes n with thousands separators: 1,850; -1,234,567.
func Count(n int64) string {
	return message.NewPrinter(language.English).Sprintf("%d", n)
}
