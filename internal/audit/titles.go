package audit

import (
	"strconv"
	"unicode/utf8"
)

// Titles and meta descriptions: what a search result shows.

// Title and description issue types.
const (
	MissingTitle             = "missing_title"
	DuplicateTitle           = "duplicate_title"
	MissingMetaDescription   = "missing_meta_description"
	DuplicateMetaDescription = "duplicate_meta_description"
	EmptyTitle               = "empty_title"
	TitleTooShort            = "title_too_short"
	TitleTooLong             = "title_too_long"
	MultipleTitles           = "multiple_titles"
	TitleInBody              = "title_in_body"
	EmptyMetaDescription     = "empty_meta_description"
	MetaDescriptionTooShort  = "meta_description_too_short"
	MetaDescriptionTooLong   = "meta_description_too_long"
	MultipleMetaDescriptions = "multiple_meta_descriptions"
	MetaDescriptionInBody    = "meta_description_in_body"
)

// Length limits, in characters: what a search result shows without cutting, and the
// least that says what a page is about.
const (
	minTitleChars       = 30
	maxTitleChars       = 60
	minDescriptionChars = 70
	maxDescriptionChars = 160
)

func init() {
	register(Check{Type: MissingTitle, Severity: SeverityError, Category: CategoryTitles,
		Threshold: "no <title> with text",
		Page:      func(p *Page) (Item, bool) { return Item{}, blank(p.Title) }})
	register(Check{Type: EmptyTitle, Severity: SeverityWarning, Category: CategoryTitles,
		Threshold: "a <title> element without text (also missing_title)",
		Page:      func(p *Page) (Item, bool) { return Item{}, p.Facts.TitleTags > 0 && blank(p.Title) }})
	register(Check{Type: MultipleTitles, Severity: SeverityWarning, Category: CategoryTitles,
		Threshold: "more than one <title> element (outside <svg>)",
		Page:      over(func(p *Page) int { return p.Facts.TitleTags }, 1, "titles")})
	register(Check{Type: TitleInBody, Severity: SeverityWarning, Category: CategoryTitles,
		Threshold: "a <title> after <body> starts: browsers and search engines may ignore it",
		Page:      func(p *Page) (Item, bool) { return Item{}, p.Facts.TitleInBody }})
	register(Check{Type: DuplicateTitle, Severity: SeverityWarning, Category: CategoryTitles,
		Threshold: "title shared with another indexable page (case-insensitive, whitespace folded)",
		Site:      func(s *Site) []Item { return duplicates(s, func(p *Page) string { return p.Title }) }})
	register(Check{Type: MissingMetaDescription, Severity: SeverityWarning, Category: CategoryTitles,
		Threshold: "no meta description with text",
		Page:      func(p *Page) (Item, bool) { return Item{}, blank(p.MetaDescription) }})
	register(Check{Type: MultipleMetaDescriptions, Severity: SeverityWarning, Category: CategoryTitles,
		Threshold: "more than one <meta name=description>",
		Page:      over(func(p *Page) int { return p.Facts.DescriptionTags }, 1, "descriptions")})
	register(Check{Type: MetaDescriptionInBody, Severity: SeverityWarning, Category: CategoryTitles,
		Threshold: "a <meta name=description> after <body> starts",
		Page:      func(p *Page) (Item, bool) { return Item{}, p.Facts.DescriptionInBody }})
	register(Check{Type: TitleTooShort, Severity: SeverityNotice, Category: CategoryTitles,
		Threshold: "title under 30 characters",
		Page:      lengthOutside(func(p *Page) string { return p.Title }, minTitleChars, 0)})
	register(Check{Type: TitleTooLong, Severity: SeverityNotice, Category: CategoryTitles,
		Threshold: "title over 60 characters (search results cut it)",
		Page:      lengthOutside(func(p *Page) string { return p.Title }, 0, maxTitleChars)})
	register(Check{Type: EmptyMetaDescription, Severity: SeverityNotice, Category: CategoryTitles,
		Threshold: "a meta description whose content is blank (also missing_meta_description)",
		Page:      func(p *Page) (Item, bool) { return Item{}, p.Facts.DescriptionTags > 0 && blank(p.MetaDescription) }})
	register(Check{Type: MetaDescriptionTooShort, Severity: SeverityNotice, Category: CategoryTitles,
		Threshold: "meta description under 70 characters",
		Page:      lengthOutside(func(p *Page) string { return p.MetaDescription }, minDescriptionChars, 0)})
	register(Check{Type: MetaDescriptionTooLong, Severity: SeverityNotice, Category: CategoryTitles,
		Threshold: "meta description over 160 characters (search results cut it)",
		Page:      lengthOutside(func(p *Page) string { return p.MetaDescription }, 0, maxDescriptionChars)})
	register(Check{Type: DuplicateMetaDescription, Severity: SeverityNotice, Category: CategoryTitles,
		Threshold: "description shared with another indexable page (case-insensitive, whitespace folded)",
		Site:      func(s *Site) []Item { return duplicates(s, func(p *Page) string { return p.MetaDescription }) }})
}

// lengthOutside finds a non-blank text shorter than least or longer than most characters
// (a bound of 0 is not checked); blank texts are left to the missing checks.
func lengthOutside(text func(*Page) string, least, most int) func(*Page) (Item, bool) {
	return func(p *Page) (Item, bool) {
		t := text(p)
		if blank(t) {
			return Item{}, false
		}
		n := utf8.RuneCountInString(t)
		return Item{Value: strconv.Itoa(n) + " chars"}, (least > 0 && n < least) || (most > 0 && n > most)
	}
}

// over finds a page whose count exceeds limit; the value gives the count and its unit.
func over(count func(p *Page) int, limit int, unit string) func(*Page) (Item, bool) {
	return func(p *Page) (Item, bool) {
		n := count(p)
		return Item{Value: strconv.Itoa(n) + " " + unit}, n > limit
	}
}
