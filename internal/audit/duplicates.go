package audit

import (
	"slices"
	"strings"
)

// duplicates lists the indexable pages whose text (title, description, ...) another
// indexable page shares, compared with fold; blank texts are left to the missing checks.
// Pages sharing a text are listed together, groups ordered by their first URL; each item's
// Twin is another page of its group.
func duplicates(s *Site, text func(*Page) string) []Item {
	groups := map[string][]string{}
	for _, p := range s.Pages {
		if !p.Indexable {
			continue
		}
		if k := fold(text(p)); k != "" {
			groups[k] = append(groups[k], p.FinalURL)
		}
	}
	return twins(groups)
}

// twins turns groups of URLs sharing something into items, each naming a twin: the first
// URL of its group, or the second for the first. Groups of one are dropped.
func twins(groups map[string][]string) []Item {
	var dups [][]string
	for _, urls := range groups {
		if len(urls) > 1 {
			dups = append(dups, urls) // pages come sorted by URL, so each group is too
		}
	}
	slices.SortFunc(dups, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	var items []Item
	for _, g := range dups {
		for i, u := range g {
			twin := g[0]
			if i == 0 {
				twin = g[1]
			}
			items = append(items, Item{URL: u, Twin: twin})
		}
	}
	return items
}
