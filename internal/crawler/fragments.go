package crawler

import (
	"cmp"
	"slices"
	"strings"
)

// Fragments: a link to #part of a page of the site promises an element with id "part"
// (or an <a name="part">) there. URLs are normalised without their fragment for crawling;
// the fragments of a page's anchors are kept beside, and judged against the target
// page's ids once every page was read.

// Bounds on the fragment links kept.
const (
	maxFragmentLinks  = 1000 // fragment links kept per page
	maxFragmentIssues = 1000 // broken fragments listed per crawl; BrokenFragmentsTotal counts all
)

// fragLink is one link of a page to a fragment of a URL of the site.
type fragLink struct {
	target   int32 // linkGraph id of the URL without the fragment
	fragment string
}

// BrokenFragment is a link to #fragment of a crawled page of the site that has no element
// with that id and no <a name> of it.
type BrokenFragment struct {
	URL      string `json:"url"`    // the target with its fragment
	Target   string `json:"target"` // the page linked to
	Fragment string `json:"fragment"`
	// LinkedFrom names the first pages linking to it; LinkedFromTotal counts them all.
	LinkedFrom      []string `json:"linked_from"`
	LinkedFromTotal int      `json:"linked_from_total"`
}

// linkFragment is the fragment of an href as written, "" when it has none. Text
// fragments (#:~:text=) point to words, not to an element, and are not judged.
func linkFragment(href string) string {
	_, frag, ok := strings.Cut(href, "#")
	if !ok || strings.HasPrefix(frag, ":~:") {
		return ""
	}
	return strings.TrimSpace(frag)
}

// fragments records the page's anchors to fragments of the site's URLs, each once.
func (g *linkGraph) fragments(site string, links []resolvedLink) []fragLink {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []fragLink
	for _, l := range links {
		if l.fragment == "" || l.kind != linkAnchor || siteKey(l.u) != site || len(out) >= maxFragmentLinks {
			continue
		}
		if id, ok := g.intern(l.u); ok {
			f := fragLink{target: id, fragment: l.fragment}
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

// brokenFragments judges every fragment link against the page it targets, when that page
// was crawled as HTML and read whole (a page cut at the body limit, or with more ids than
// are kept, may have the id beyond). Links to the page itself count too.
func (lc *linkCheck) brokenFragments(g *linkGraph, res *Result) {
	type key struct {
		target   int32
		fragment string
	}
	sources := map[key][]string{}
	for _, v := range lc.visits {
		for _, f := range v.frags {
			j, ok := lc.pageOf[g.keys[f.target]]
			if !ok {
				continue
			}
			t := lc.visits[j].page
			if t.Status/100 != 2 || t.Error != "" || t.OffSite || !isHTMLType(t.ContentType) || t.BodyCut ||
				slices.Contains(t.Facts.Limits, LimitTargets) || t.Facts.HasTarget(f.fragment) {
				continue
			}
			k := key(f)
			sources[k] = append(sources[k], pageName(v.page))
		}
	}
	res.BrokenFragments = []BrokenFragment{}
	for k, from := range sources {
		slices.Sort(from)
		b := BrokenFragment{URL: g.urls[k.target] + "#" + k.fragment, Target: g.urls[k.target], Fragment: k.fragment}
		b.LinkedFrom, b.LinkedFromTotal = namedSources(slices.Compact(from))
		res.BrokenFragments = append(res.BrokenFragments, b)
	}
	slices.SortFunc(res.BrokenFragments, func(a, b BrokenFragment) int { return cmp.Compare(a.URL, b.URL) })
	res.BrokenFragmentsTotal = len(res.BrokenFragments)
	res.BrokenFragments = res.BrokenFragments[:min(len(res.BrokenFragments), maxFragmentIssues)]
}
