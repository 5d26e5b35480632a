package audit

import (
	"testing"

	"github.com/contentapi/contentapi/internal/crawler"
)

// TestRenderingChecks: each rendering issue type against pages as served and as rendered.
func TestRenderingChecks(t *testing.T) {
	spa := func(p *crawler.Page) { // a shell: placeholder title, no h1, no words, no links
		p.Title, p.H1Count, p.WordCount = "Loading", 0, 0
	}
	cases := []struct {
		name  string
		page  func(p *crawler.Page)
		r     *crawler.Rendered
		types map[string]string // issue type → the item's value
	}{
		{"plain audit: never flagged", spa, nil, nil},
		{"same page served and rendered", nil,
			&crawler.Rendered{Title: "Title of https://example.com/a", H1Count: 1, WordCount: 400, Links: 3, RawLinks: 3}, nil},
		{"single-page app shell", spa,
			&crawler.Rendered{Title: "Home", H1: "Home", H1Count: 1, WordCount: 160, Links: 5, NewLinks: []string{"/b"}, NewLinksTotal: 5},
			map[string]string{ContentOnlyRendered: "0 words served, 160 rendered", TitleChangedByRendering: `"Loading" → "Home"`,
				H1OnlyRendered: "Home", LinksOnlyRendered: "5 of 5 links only after rendering"}},
		{"title written by script", func(p *crawler.Page) { p.Title = " " },
			&crawler.Rendered{Title: "Home", H1Count: 1, WordCount: 400},
			map[string]string{TitleOnlyRendered: "Home"}},
		{"content at 50% is enough", func(p *crawler.Page) { p.WordCount = 100 },
			&crawler.Rendered{Title: "Title of https://example.com/a", H1Count: 1, WordCount: 200}, nil},
		{"content just under 50%", func(p *crawler.Page) { p.WordCount = 99 },
			&crawler.Rendered{Title: "Title of https://example.com/a", H1Count: 1, WordCount: 200},
			map[string]string{ContentOnlyRendered: "99 words served, 200 rendered"}},
		{"tiny pages are not a content gap", func(p *crawler.Page) { p.WordCount = 3 },
			&crawler.Rendered{Title: "Title of https://example.com/a", H1Count: 1, WordCount: 49}, nil},
		{"console errors", nil,
			&crawler.Rendered{Title: "Title of https://example.com/a", H1Count: 1, WordCount: 400, ConsoleErrors: []string{"TypeError: x is undefined", "boom"}, ConsoleErrorsTotal: 7},
			map[string]string{ConsoleErrors: "7 error(s), first: TypeError: x is undefined"}},
		{"render failed", spa,
			&crawler.Rendered{Error: "rendering timed out after 15s"},
			map[string]string{RenderFailed: "rendering timed out after 15s"}},
		{"noindex page: only every-page checks", func(p *crawler.Page) { spa(p); p.Noindex = true },
			&crawler.Rendered{Title: "Home", H1Count: 1, WordCount: 160, ConsoleErrors: []string{"e"}, ConsoleErrorsTotal: 1},
			map[string]string{ConsoleErrors: "1 error(s), first: e"}},
	}
	rendering := map[string]bool{RenderFailed: true, ConsoleErrors: true, ContentOnlyRendered: true, TitleOnlyRendered: true,
		TitleChangedByRendering: true, H1OnlyRendered: true, LinksOnlyRendered: true}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := html("https://example.com/a", c.page)
			p.Rendered = c.r
			res := Run(site(p))
			for _, is := range res.Issues {
				if !rendering[is.Type] {
					continue
				}
				want, found := c.types[is.Type]
				switch {
				case found && (is.Count != 1 || is.Items[0].Value != want || is.Category != CategoryRendering):
					t.Errorf("%s: count %d items %+v, want one with value %q", is.Type, is.Count, is.Items, want)
				case !found && is.Count != 0:
					t.Errorf("%s: found %+v, want nothing", is.Type, is.Items)
				}
			}
			if is := issue(t, res, LinksOnlyRendered); is.Count == 1 && is.Items[0].Target != "/b" {
				t.Errorf("links_only_rendered target %q, want the first new link", is.Items[0].Target)
			}
		})
	}
}
