package audit

import (
	"strings"

	"golang.org/x/text/language"

	"github.com/contentapi/contentapi/internal/analysis"
	"github.com/contentapi/contentapi/internal/crawler"
)

// Hreflang and language: the page's language and its alternates in other languages.

// Hreflang and language issue types.
const (
	HreflangInvalidCode     = "hreflang_invalid_code"
	HreflangToError         = "hreflang_to_error"
	HreflangMissingReturn   = "hreflang_missing_return"
	HreflangMissingSelf     = "hreflang_missing_self"
	HreflangRelative        = "hreflang_relative"
	HreflangToRedirect      = "hreflang_to_redirect"
	HreflangToNonCanonical  = "hreflang_to_non_canonical"
	HreflangMissingXDefault = "hreflang_missing_x_default"
	MissingHTMLLang         = "missing_html_lang"
	InvalidHTMLLang         = "invalid_html_lang"
)

func init() {
	register(Check{Type: HreflangInvalidCode, Severity: SeverityError, Category: CategoryHreflang, Scope: Every,
		Threshold: "an hreflang that is not x-default nor a BCP 47 language[-region] code (golang.org/x/text/language), or uses _",
		Page:      firstHreflang(func(p *Page, h crawler.Hreflang) bool { return !validHreflang(h.Lang) })})
	register(Check{Type: HreflangToError, Severity: SeverityError, Category: CategoryHreflang, Scope: Every,
		Threshold: "an hreflang URL that was crawled and answers other than 200, or not at all",
		Page:      hreflangTarget(func(t *crawler.Page) bool { return t.Status != 200 })})
	register(Check{Type: HreflangMissingReturn, Severity: SeverityWarning, Category: CategoryHreflang, Scope: Every,
		Threshold: "a crawled page this page lists as alternate does not list this page back",
		Page: firstHreflang(func(p *Page, h crawler.Hreflang) bool {
			t := p.site.ContentPage(h.URL)
			return t != nil && t != p && !listsHreflang(t, p.FinalURL)
		})})
	register(Check{Type: HreflangMissingSelf, Severity: SeverityWarning, Category: CategoryHreflang, Scope: Every,
		Threshold: "the page has hreflang alternates but none names itself",
		Page: func(p *Page) (Item, bool) {
			return Item{}, len(p.Facts.Hreflangs) > 0 && !listsHreflang(p, p.FinalURL)
		}})
	register(Check{Type: HreflangRelative, Severity: SeverityWarning, Category: CategoryHreflang, Scope: Every,
		Threshold: "an hreflang URL written without scheme and host (must be absolute)",
		Page:      firstHreflang(func(p *Page, h crawler.Hreflang) bool { return h.Relative })})
	register(Check{Type: HreflangToRedirect, Severity: SeverityWarning, Category: CategoryHreflang, Scope: Every,
		Threshold: "an hreflang URL that was crawled and redirects",
		Page:      hreflangTarget(func(t *crawler.Page) bool { return t.Redirected })})
	register(Check{Type: HreflangToNonCanonical, Severity: SeverityWarning, Category: CategoryHreflang, Scope: Every,
		Threshold: "an hreflang URL that was crawled and names another URL as canonical",
		Page:      hreflangTarget(func(t *crawler.Page) bool { return IsContent(*t) && CanonicalElsewhere(*t) })})
	register(Check{Type: InvalidHTMLLang, Severity: SeverityWarning, Category: CategoryHreflang, Scope: Every,
		Threshold: "<html lang> that is blank or not a BCP 47 code",
		Page: func(p *Page) (Item, bool) {
			return Item{Value: p.Facts.Lang}, p.Facts.HasLang && !validLang(p.Facts.Lang)
		}})
	register(Check{Type: HreflangMissingXDefault, Severity: SeverityNotice, Category: CategoryHreflang, Scope: Every,
		Threshold: "the page has hreflang alternates but no x-default",
		Page: func(p *Page) (Item, bool) {
			for _, h := range p.Facts.Hreflangs {
				if strings.EqualFold(h.Lang, "x-default") {
					return Item{}, false
				}
			}
			return Item{}, len(p.Facts.Hreflangs) > 0
		}})
	register(Check{Type: MissingHTMLLang, Severity: SeverityNotice, Category: CategoryHreflang, Scope: Every,
		Threshold: "no lang attribute on <html>",
		Page:      func(p *Page) (Item, bool) { return Item{}, !p.Facts.HasLang }})
}

// firstHreflang finds the page's first hreflang alternate that is at fault: the item
// names its URL (target) and code (value).
func firstHreflang(bad func(p *Page, h crawler.Hreflang) bool) func(*Page) (Item, bool) {
	return func(p *Page) (Item, bool) {
		for _, h := range p.Facts.Hreflangs {
			if bad(p, h) {
				return Item{Target: h.URL, Value: h.Lang}, true
			}
		}
		return Item{}, false
	}
}

// hreflangTarget finds the page's first hreflang URL (not the page itself) that was crawled
// and is at fault.
func hreflangTarget(bad func(t *crawler.Page) bool) func(*Page) (Item, bool) {
	return firstHreflang(func(p *Page, h crawler.Hreflang) bool {
		if h.URL == "" || analysis.NormalizeURL(h.URL) == analysis.NormalizeURL(p.FinalURL) {
			return false
		}
		t := p.site.Fetched(h.URL)
		return t != nil && bad(t)
	})
}

func listsHreflang(p *Page, u string) bool {
	k := analysis.NormalizeURL(u)
	for _, h := range p.Facts.Hreflangs {
		if analysis.NormalizeURL(h.URL) == k {
			return true
		}
	}
	return false
}

func validHreflang(code string) bool {
	return strings.EqualFold(code, "x-default") || validLang(code)
}

// validLang reports a BCP 47 tag written with hyphens whose region, when given, is a
// country or a group of them (es-419).
func validLang(code string) bool {
	if strings.TrimSpace(code) == "" || strings.Contains(code, "_") {
		return false
	}
	tag, err := language.Parse(code)
	if err != nil {
		return false
	}
	r, conf := tag.Region()
	return conf != language.Exact || r.IsCountry() || r.IsGroup()
}
