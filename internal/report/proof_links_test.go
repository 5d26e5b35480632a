package report

import (
	"net/url"
	"os"
	"slices"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The independent reading of links for the proof (proof_test.go): link text, crawlable
// anchors and #fragments, from golang.org/x/net/html's tree and the rules as
// docs/audit-checks.md states them (Lighthouse's, for link text and crawlable anchors),
// written again here without the crawler's code.

// readAnchor reads an <a> (or <area>) element and its descendants.
func readAnchor(n *html.Node) proofAnchor {
	a := proofAnchor{area: n.DataAtom == atom.Area}
	a.href, a.hasHref = hasAttr(n, "href")
	for _, k := range []string{"target", "download", "ping", "rel", "hreflang", "type", "referrerpolicy"} {
		if _, ok := hasAttr(n, k); ok {
			a.hrefAssoc = true
		}
	}
	a.name, a.id, a.role, a.current = attr(n, "name"), attr(n, "id"), attr(n, "role"), strings.ToLower(strings.TrimSpace(attr(n, "aria-current")))
	for _, k := range []string{"aria-label", "aria-labelledby", "title"} {
		a.labelled = a.labelled || strings.TrimSpace(attr(n, k)) != ""
	}
	for _, r := range strings.Fields(strings.ToLower(attr(n, "rel"))) {
		a.nofollow = a.nofollow || r == "nofollow"
	}
	var sb strings.Builder
	var walk func(c *html.Node, svg, title bool)
	walk = func(c *html.Node, svg, title bool) {
		switch c.Type {
		case html.TextNode:
			if svg && title && strings.TrimSpace(c.Data) != "" {
				a.named = true
			} else if !svg || !title {
				sb.WriteString(c.Data)
			}
		case html.ElementNode:
			switch c.DataAtom {
			case atom.Script, atom.Style, atom.Template, atom.Noscript:
				return
			case atom.Svg:
				svg = true
			case atom.Title:
				title = true
			case atom.Img:
				a.named = a.named || strings.TrimSpace(attr(c, "alt")) != ""
			}
			if c != n && (strings.TrimSpace(attr(c, "aria-label")) != "" || strings.TrimSpace(attr(c, "aria-labelledby")) != "") {
				a.named = true
			}
		}
		for k := c.FirstChild; k != nil; k = k.NextSibling {
			walk(k, svg, title)
		}
	}
	walk(n, false, false)
	a.text = strings.Join(strings.Fields(sb.String()), " ")
	return a
}

var proofGenericTexts = []string{"click here", "click this", "go", "here", "information", "learn more", "more",
	"more info", "more information", "right here", "read more", "see more", "start", "this"}

// linkTextGeneric: Lighthouse's link-text audit (12.8: its list; no rule for URLs as text).
func (b *proofBook) linkTextGeneric() []string {
	return b.where(func(d proofDoc) bool {
		return slices.ContainsFunc(d.anchors, func(a proofAnchor) bool {
			if a.area || !a.hasHref || a.nofollow {
				return false
			}
			h := strings.ToLower(strings.TrimSpace(a.href))
			if strings.HasPrefix(h, "javascript:") || strings.HasPrefix(h, "mailto:") {
				return false
			}
			if u, err := d.base.Parse(strings.TrimSpace(a.href)); err == nil {
				u.Fragment, u.RawFragment = "", ""
				if u.String() == d.url {
					return false // the page itself
				}
			}
			return slices.Contains(proofGenericTexts, strings.ToLower(a.text))
		})
	})
}

// linkTextEmpty: a link with nothing to name it.
func (b *proofBook) linkTextEmpty() []string {
	return b.where(func(d proofDoc) bool {
		return slices.ContainsFunc(d.anchors, func(a proofAnchor) bool {
			return !a.area && a.hasHref && a.text == "" && !a.named && !a.labelled
		})
	})
}

// linkNotCrawlable: Lighthouse's crawlable-anchors audit.
func (b *proofBook) linkNotCrawlable() []string {
	return b.where(func(d proofDoc) bool {
		return slices.ContainsFunc(d.anchors, func(a proofAnchor) bool {
			if a.area {
				return false
			}
			raw := strings.Join(strings.Fields(a.href), "")
			if strings.TrimSpace(a.role) != "" || strings.HasPrefix(raw, "mailto:") || (raw == "" && a.id != "") {
				return false
			}
			if strings.HasPrefix(raw, "file:") {
				return true
			}
			if strings.TrimSpace(a.name) != "" {
				return false
			}
			if !a.hasHref {
				return a.hrefAssoc || (a.current != "page" && a.current != "location")
			}
			for _, v := range []string{"javascript:void(0)", "javascript:void0)", "javascript:void(0", "javascript:void0"} {
				if strings.Contains(raw, v) {
					return true
				}
			}
			_, err := url.Parse(raw)
			return err != nil
		})
	})
}

// brokenFragments: links to #fragment of the book's pages that have no such id or name.
func (b *proofBook) brokenFragments() []string {
	byFile := map[string]*proofDoc{}
	for i := range b.docs {
		byFile[b.docs[i].file] = &b.docs[i]
	}
	var out []string
	for _, d := range b.docs {
		for _, a := range d.anchors {
			raw, frag, ok := strings.Cut(a.href, "#")
			frag = strings.TrimSpace(frag)
			if !a.hasHref || !ok || frag == "" || strings.EqualFold(frag, "top") || strings.HasPrefix(frag, ":~:") {
				continue
			}
			u, err := d.base.Parse(strings.TrimSpace(raw))
			if err != nil || "http://"+u.Host != b.base {
				continue
			}
			t := byFile[b.file(u.String())]
			if t == nil {
				continue // no page: a broken link, or not HTML
			}
			if info, err := os.Stat(t.file); err != nil || info.Size() > proofMaxBody {
				continue // read in part: its ids may lie beyond
			}
			dec, _ := url.PathUnescape(frag)
			if !t.targets[frag] && !t.targets[dec] {
				out = append(out, u.String()+"#"+frag)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
