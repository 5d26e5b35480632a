package audit

import "strconv"

// Content: headings and the amount of main text.

// Content issue types.
const (
	MissingH1  = "missing_h1"
	MultipleH1 = "multiple_h1"
)

func init() {
	register(Check{Type: MissingH1, Severity: SeverityWarning, Category: CategoryContent,
		Threshold: "no <h1> with text",
		Page:      func(p *Page) (Item, bool) { return Item{}, p.H1Count == 0 }})
	register(Check{Type: MultipleH1, Severity: SeverityNotice, Category: CategoryContent,
		Threshold: "more than one <h1> with text",
		Page:      func(p *Page) (Item, bool) { return Item{Value: strconv.Itoa(p.H1Count) + " h1"}, p.H1Count > 1 }})
}
