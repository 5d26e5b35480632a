package audit

import (
	"fmt"
	"strings"

	"github.com/contentapi/contentapi/internal/crawler"
)

// Rendering: what a page's JavaScript changes, in audits that render pages in headless
// Chromium (render: javascript). A search engine reads the HTML as served first and renders
// later, if at all, so what exists only after rendering is found late or never; pages
// without a rendering (plain audits) are never flagged.

// Rendering issue types.
const (
	RenderFailed            = "render_failed"
	ConsoleErrors           = "console_errors"
	ContentOnlyRendered     = "content_only_rendered"
	TitleOnlyRendered       = "title_only_rendered"
	TitleChangedByRendering = "title_changed_by_rendering"
	H1OnlyRendered          = "h1_only_rendered"
	LinksOnlyRendered       = "links_only_rendered"
)

// Content-only-rendered thresholds: the HTML as served holds under half the rendered
// page's main-content words, and the rendered page has enough words for the gap to matter
// (a 3-word page going to 7 is not a content problem).
const (
	renderedContentShare = 0.5
	renderedMinWords     = 50
)

func init() {
	register(Check{Type: RenderFailed, Severity: SeverityError, Category: CategoryRendering, Scope: Every,
		Threshold: "the page did not render: timeout (RENDER_TIMEOUT, 15 s) or browser failure",
		Page: rendered(func(r *crawler.Rendered, _ *Page) (Item, bool) {
			return Item{Value: r.Error}, r.Error != ""
		})})
	register(Check{Type: ConsoleErrors, Severity: SeverityWarning, Category: CategoryRendering, Scope: Every,
		Threshold: "at least one uncaught exception or console.error while rendering",
		Page: rendered(func(r *crawler.Rendered, _ *Page) (Item, bool) {
			if r.ConsoleErrorsTotal == 0 {
				return Item{}, false
			}
			return Item{Value: fmt.Sprintf("%d error(s), first: %s", r.ConsoleErrorsTotal, first(r.ConsoleErrors))}, true
		})})
	register(Check{Type: ContentOnlyRendered, Severity: SeverityWarning, Category: CategoryRendering, Scope: OnlyIndexable,
		Threshold: "HTML as served has under 50% of the rendered main-content words, rendered ≥ 50 words",
		Page: rendered(func(r *crawler.Rendered, p *Page) (Item, bool) {
			ok := r.WordCount >= renderedMinWords && float64(p.WordCount) < renderedContentShare*float64(r.WordCount)
			return Item{Value: fmt.Sprintf("%d words served, %d rendered", p.WordCount, r.WordCount)}, ok
		})})
	register(Check{Type: TitleOnlyRendered, Severity: SeverityWarning, Category: CategoryRendering, Scope: OnlyIndexable,
		Threshold: "no <title> text in the HTML as served; the rendered page has one",
		Page: rendered(func(r *crawler.Rendered, p *Page) (Item, bool) {
			return Item{Value: r.Title}, blank(p.Title) && !blank(r.Title)
		})})
	register(Check{Type: TitleChangedByRendering, Severity: SeverityNotice, Category: CategoryRendering, Scope: OnlyIndexable,
		Threshold: "served and rendered titles both set and different (case-insensitive, whitespace folded)",
		Page: rendered(func(r *crawler.Rendered, p *Page) (Item, bool) {
			ok := !blank(p.Title) && !blank(r.Title) && fold(p.Title) != fold(r.Title)
			return Item{Value: fmt.Sprintf("%q → %q", p.Title, r.Title)}, ok
		})})
	register(Check{Type: H1OnlyRendered, Severity: SeverityWarning, Category: CategoryRendering, Scope: OnlyIndexable,
		Threshold: "no h1 with text in the HTML as served; the rendered page has one",
		Page: rendered(func(r *crawler.Rendered, p *Page) (Item, bool) {
			return Item{Value: r.H1}, p.H1Count == 0 && r.H1Count > 0
		})})
	register(Check{Type: LinksOnlyRendered, Severity: SeverityWarning, Category: CategoryRendering, Scope: OnlyIndexable,
		Threshold: "at least one link in the rendered DOM that the HTML as served lacks",
		Page: rendered(func(r *crawler.Rendered, _ *Page) (Item, bool) {
			if r.NewLinksTotal == 0 {
				return Item{}, false
			}
			return Item{Target: first(r.NewLinks), Value: fmt.Sprintf("%d of %d links only after rendering", r.NewLinksTotal, r.Links)}, true
		})})
}

// rendered adapts a check of a rendered page: pages not rendered (plain audits) have no
// issue. A page whose rendering failed has empty rendered fields, so only render_failed
// and console_errors can find anything on it.
func rendered(judge func(r *crawler.Rendered, p *Page) (Item, bool)) func(p *Page) (Item, bool) {
	return func(p *Page) (Item, bool) {
		if p.Rendered == nil {
			return Item{}, false
		}
		return judge(p.Rendered, p)
	}
}

func first(list []string) string {
	if len(list) == 0 {
		return ""
	}
	return strings.TrimSpace(list[0])
}
