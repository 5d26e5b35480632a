package audit

// Titles and meta descriptions: what a search result shows.

// Title and description issue types.
const (
	MissingTitle             = "missing_title"
	DuplicateTitle           = "duplicate_title"
	MissingMetaDescription   = "missing_meta_description"
	DuplicateMetaDescription = "duplicate_meta_description"
)

func init() {
	register(Check{Type: MissingTitle, Severity: SeverityError, Category: CategoryTitles,
		Threshold: "no <title> with text",
		Page:      func(p *Page) (Item, bool) { return Item{}, blank(p.Title) }})
	register(Check{Type: DuplicateTitle, Severity: SeverityWarning, Category: CategoryTitles,
		Threshold: "title shared with another indexable page (case-insensitive, whitespace folded)",
		Site:      func(s *Site) []Item { return duplicates(s, func(p *Page) string { return p.Title }) }})
	register(Check{Type: MissingMetaDescription, Severity: SeverityWarning, Category: CategoryTitles,
		Threshold: "no meta description with text",
		Page:      func(p *Page) (Item, bool) { return Item{}, blank(p.MetaDescription) }})
	register(Check{Type: DuplicateMetaDescription, Severity: SeverityNotice, Category: CategoryTitles,
		Threshold: "description shared with another indexable page (case-insensitive, whitespace folded)",
		Site:      func(s *Site) []Item { return duplicates(s, func(p *Page) string { return p.MetaDescription }) }})
}
