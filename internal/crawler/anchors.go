package crawler

import (
	"bytes"
	"net/url"
	"slices"
	"strings"
)

// Anchors: what a page's <a> elements say of themselves (their text, whether a search
// engine can follow them) and the fragment targets the page offers (element ids and
// <a name>), read in the extractor's one pass.

// Bounds on what one page's anchors add.
const (
	maxAnchorText   = 256   // bytes of an anchor's text kept to judge it
	maxTargets      = 20000 // element ids and <a name>s kept per page (as hashes)
	maxLinkProblems = 100   // anchors with generic or empty text kept per page to judge
)

// LimitTargets is the per-page bound on fragment targets (PageFacts.Limits): links to a
// fragment of such a page are not judged.
const LimitTargets = "targets"

// nonDescriptive is Lighthouse's list of English link texts that say nothing of where the
// link leads (its SEO audit "Links do not have descriptive text", link-text.js), compared
// trimmed, whitespace folded and lower-cased.
var nonDescriptive = map[string]bool{
	"click here": true, "click this": true, "go": true, "here": true, "information": true,
	"learn more": true, "more": true, "more info": true, "more information": true,
	"right here": true, "read more": true, "see more": true, "start": true, "this": true,
}

// LinkProblem is one anchor of a page with generic or empty text, or one search engines
// cannot follow: its href as written and its text.
type LinkProblem struct {
	Href string
	Text string
}

// anchorAttrs are the attributes of an <a> that Lighthouse's crawlable-anchors audit reads.
type anchorAttrs struct {
	hasHref, hrefAssoc        bool // href present; target, download, ping, rel, hreflang, type or referrerpolicy present
	href, name, id, role, cur string
	labelled                  bool // aria-label, aria-labelledby or title with text
	nofollow                  bool
}

// anchor is the <a> being read.
type anchor struct {
	open  bool
	attrs anchorAttrs
	text  []byte // reused from anchor to anchor
	named bool   // a descendant gives it a name: an img alt, an svg title, an aria-label
}

// startAnchor judges the anchor being read, if any (an <a> cannot hold another: the
// parser closes it), and opens a new one.
func (e *extractor) startAnchor(at *tagAttrs) {
	e.endAnchor()
	e.anchor.open = true
	e.anchor.attrs = anchorAttrs{hasHref: at.hasHref, hrefAssoc: at.hrefAssoc || at.rel != "" || at.hreflang != "" || at.typ != "",
		href: at.href, name: at.rawName, id: at.id, role: at.role, cur: at.ariaCurrent,
		labelled: strings.TrimSpace(at.ariaLabel) != "" || strings.TrimSpace(at.title) != "", nofollow: hasToken(at.rel, "nofollow")}
	e.anchor.text = e.anchor.text[:0]
	e.anchor.named = false
}

// anchorText adds text read inside the open anchor.
func (e *extractor) anchorText(t []byte) {
	if room := maxAnchorText - len(e.anchor.text); e.anchor.open && room > 0 {
		e.anchor.text = append(e.anchor.text, t[:min(len(t), room)]...)
	}
}

// anchorNamed notes a descendant of the open anchor that names it.
func (e *extractor) anchorNamed() {
	if e.anchor.open {
		e.anchor.named = true
	}
}

// endAnchor judges the anchor being read, once.
func (e *extractor) endAnchor() {
	if !e.anchor.open {
		return
	}
	e.anchor.open = false
	a := e.anchor.attrs
	f := &e.info.facts
	// Most anchors are sound: the text is folded (and allocated) only for a problem.
	var folded [maxGenericText]byte
	text := foldLower(folded[:0], e.anchor.text)
	if !crawlable(a) {
		addProblem(&f.NotCrawlableLinks, a.href, cleanCollapse(string(e.anchor.text)))
	}
	if !a.hasHref {
		return
	}
	switch {
	case len(bytes.TrimSpace(e.anchor.text)) == 0 && !e.anchor.named && !a.labelled:
		addProblem(&f.EmptyTextLinks, a.href, "")
	case text == nil || !nonDescriptive[string(text)] || a.nofollow:
	case hasPrefixFold(a.href, "javascript:"), hasPrefixFold(a.href, "mailto:"):
	default:
		addProblem(&f.GenericTextLinks, a.href, string(text))
	}
}

// maxGenericText bounds the folded text compared with the generic list: the longest entry
// ("more information") is 16 bytes.
const maxGenericText = 24

// foldLower appends src to dst lower-cased, trimmed, with whitespace runs as one space;
// nil when it would not fit in dst's capacity (so no generic text).
func foldLower(dst, src []byte) []byte {
	space := false
	for _, c := range bytes.TrimSpace(src) {
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			space = true
			continue
		case space:
			if len(dst) == cap(dst) {
				return nil
			}
			dst = append(dst, ' ')
			space = false
		}
		if len(dst) == cap(dst) {
			return nil
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// hasPrefixFold reports s, leading whitespace trimmed, starting with the lower-case prefix
// in any case.
func hasPrefixFold(s, prefix string) bool {
	s = strings.TrimLeft(s, " \t\n\r\f")
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// crawlable is Lighthouse's crawlable-anchors rule (crawlable-anchors.js): an anchor with
// a role, a mailto: href, an id and no href, or a name passes; one whose href is a file:
// URL, javascript:void(0), no URL at all, or missing (a placeholder without
// aria-current="page"/"location") fails.
func crawlable(a anchorAttrs) bool {
	raw := a.href
	if strings.ContainsAny(raw, " \t\n\r\f") {
		raw = strings.Join(strings.Fields(raw), "")
	}
	switch {
	case strings.TrimSpace(a.role) != "", strings.HasPrefix(raw, "mailto:"), raw == "" && a.id != "":
		return true
	case strings.HasPrefix(raw, "file:"):
		return false
	case strings.TrimSpace(a.name) != "":
		return true
	case !a.hasHref && !a.hrefAssoc && (a.cur == "page" || a.cur == "location"):
		return true
	case !a.hasHref:
		return false // its href property is "": no destination
	case javascriptVoid(raw):
		return false
	}
	if !strings.ContainsAny(raw, "%:[]\\") && !hasControl(raw) {
		return true // a relative reference of plain characters always parses
	}
	_, err := url.Parse(raw)
	return err == nil
}

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
}

// javascriptVoid matches Lighthouse's /javascript:void(\(|)0(\)|)/ anywhere in the href.
func javascriptVoid(raw string) bool {
	for _, p := range []string{"javascript:void(0)", "javascript:void0)", "javascript:void(0", "javascript:void0"} {
		if strings.Contains(raw, p) {
			return true
		}
	}
	return false
}

func addProblem(list *LinkProblems, href, text string) {
	list.Count++
	if len(list.Examples) < maxLinkProblems {
		list.Examples = append(list.Examples, LinkProblem{Href: example(href), Text: example(text)})
	}
}

// LinkProblems counts a page's anchors with one problem and keeps the first of them.
type LinkProblems struct {
	Count    int
	Examples []LinkProblem
}

// union adds the anchors of other, another reading of the same page (its rendered DOM),
// that l lacks: an anchor both list, by href and text, counts once. When l kept only the
// first of its anchors, those of other beyond them cannot be told apart: the count is then
// the larger of the two.
func (l *LinkProblems) union(other LinkProblems) {
	cut := l.Count > len(l.Examples)
	have := make(map[LinkProblem]int, len(l.Examples))
	for _, p := range l.Examples {
		have[p]++
	}
	added := 0
	for _, p := range other.Examples {
		if have[p] > 0 {
			have[p]--
			continue
		}
		added++
		if len(l.Examples) < maxLinkProblems {
			l.Examples = append(l.Examples, p)
		}
	}
	if cut {
		added = 0 // the anchors l did not keep may be these
	}
	l.Count = max(l.Count+added, other.Count)
}

// dropSamePage leaves out the links to the page itself (fragments of it, or its own URL):
// Lighthouse does not judge their text either. Count loses as many.
func (l *LinkProblems) dropSamePage(base *url.URL, page string) {
	self := urlKey(page)
	kept := l.Examples[:0]
	for _, p := range l.Examples {
		if strings.HasPrefix(strings.TrimSpace(p.Href), "#") {
			l.Count--
			continue
		}
		if u := resolveHTTP(base, p.Href); u != nil && dedupeKey(u) == self {
			l.Count--
			continue
		}
		kept = append(kept, p)
	}
	l.Examples = kept
}

// addTarget records an element id or <a name> a fragment may point to.
func (e *extractor) addTarget(name string) {
	if name != "" {
		e.addTargetHash(fnv64(name))
	}
}

func (e *extractor) addTargetHash(h uint64) {
	if len(e.info.facts.Targets) >= maxTargets {
		e.info.facts.limit(LimitTargets)
		return
	}
	e.info.facts.Targets = append(e.info.facts.Targets, h)
}

// HasTarget reports whether the page has an element with id (or an <a name>) fragment,
// as written in a link (percent-encoded or not). "top" and the empty fragment need none.
func (f *PageFacts) HasTarget(fragment string) bool {
	if fragment == "" || strings.EqualFold(fragment, "top") {
		return true
	}
	if _, ok := slices.BinarySearch(f.Targets, fnv64(fragment)); ok {
		return true
	}
	if dec, err := url.PathUnescape(fragment); err == nil && dec != fragment {
		_, ok := slices.BinarySearch(f.Targets, fnv64(dec))
		return ok
	}
	return false
}

func fnv64[T string | []byte](s T) uint64 {
	h := fnvOffset
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}
