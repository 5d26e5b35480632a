package crawler

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Bounds on what one page may add to a Result, so a hostile page cannot bloat it.
const (
	maxTextLen = 1000 // bytes kept of a title, description or heading
	maxH2s     = 100
	maxH2Bytes = 8 << 10 // bytes of all of a page's h2s together
	maxLinks   = 5000    // links read per page; Page.Outlinks.Total counts them all
)

// pageInfo is what one HTML document yields.
type pageInfo struct {
	title, description, h1 string // h1: the first h1 with text
	h1s                    int    // h1 elements with text
	h2s                    []string
	canonical, base        string // raw hrefs, resolved by the caller
	noindex, nofollow      bool
	words                  int
	links                  []link // only when asked for, at most maxLinks
	linksSeen              int    // links on the page, read or not
	refresh                string // <meta http-equiv=refresh> content
}

// CountWords returns the number of words in an HTML document's main content: the text of
// its <main> elements if any, else of its <article> elements if any, else of its body,
// leaving out navigation, headers, footers, asides, forms, scripts and other non-prose.
// A word is a run of letters, digits and marks; an apostrophe or hyphen inside a word
// (don't, state-of-the-art) does not split it.
func CountWords(htmlDoc []byte) int {
	return extractPage(htmlDoc, false).words
}

// extractPage reads an HTML document in one tokenizer pass, without building a tree:
// the crawl's cost per page is dominated by this function.
func extractPage(doc []byte, wantLinks bool) pageInfo {
	e := &extractor{wantLinks: wantLinks}
	z := html.NewTokenizer(bytes.NewReader(doc))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return e.finish()
		case html.TextToken:
			e.text(z.Text())
		case html.StartTagToken:
			e.start(z, false)
		case html.SelfClosingTagToken:
			e.start(z, true)
		case html.EndTagToken:
			name, _ := z.TagName()
			e.end(atom.Lookup(name))
		}
	}
}

// Elements the extractor tracks, as indexes into extractor.open.
const (
	tNav = iota
	tHeader
	tFooter
	tAside
	tForm
	tIframe
	tSvg
	tScript
	tStyle
	tNoscript
	tTemplate
	tTitle
	tMain
	tArticle
	tH1
	tH2
	numTracked
)

var trackedTags = map[atom.Atom]int{
	atom.Nav: tNav, atom.Header: tHeader, atom.Footer: tFooter, atom.Aside: tAside,
	atom.Form: tForm, atom.Iframe: tIframe, atom.Svg: tSvg, atom.Script: tScript,
	atom.Style: tStyle, atom.Noscript: tNoscript, atom.Template: tTemplate,
	atom.Title: tTitle, atom.Main: tMain, atom.Article: tArticle, atom.H1: tH1, atom.H2: tH2,
}

// isSkipped marks elements whose text is not main content (tNav..tTitle).
func isSkipped(t int) bool { return t <= tTitle }

// isCode marks elements whose text is code or markup, not prose, even inside a heading.
func isCode(t int) bool { return t >= tScript && t <= tTemplate }

// inlineTags do not separate words: "Hel<b>lo</b>" is one word. Every other tag does.
var inlineTags = map[atom.Atom]bool{
	atom.A: true, atom.Abbr: true, atom.B: true, atom.Bdi: true, atom.Bdo: true,
	atom.Cite: true, atom.Code: true, atom.Data: true, atom.Dfn: true, atom.Em: true,
	atom.Font: true, atom.I: true, atom.Kbd: true, atom.Mark: true, atom.Q: true,
	atom.S: true, atom.Samp: true, atom.Small: true, atom.Span: true, atom.Strong: true,
	atom.Sub: true, atom.Sup: true, atom.Time: true, atom.U: true, atom.Var: true,
}

type extractor struct {
	info      pageInfo
	wantLinks bool
	// open counts currently open tracked elements; counting per element (not one stack)
	// makes a stray end tag harmless.
	open                  [numTracked]int
	skipped, code         int // open skipped / code elements
	sawMain, sawArticle   bool
	title                 strings.Builder
	titleDone             bool
	heading               int // tH1 or tH2 while heading text is collected, else 0
	headingText           strings.Builder
	h2Bytes               int
	inWord, joinPending   bool
	body, inMain, inArtcl int // word counts per region
}

func (e *extractor) finish() pageInfo {
	e.endHeading()
	e.info.title = cleanCollapse(e.title.String())
	switch {
	case e.sawMain:
		e.info.words = e.inMain
	case e.sawArticle:
		e.info.words = e.inArtcl
	default:
		e.info.words = e.body
	}
	return e.info
}

func (e *extractor) start(z *html.Tokenizer, selfClosing bool) {
	name, hasAttr := z.TagName()
	a := atom.Lookup(name)
	if !inlineTags[a] {
		e.breakWord()
	}
	if hasAttr {
		e.attrs(z, a)
	}
	t, tracked := trackedTags[a]
	if !tracked || selfClosing {
		return
	}
	e.open[t]++
	switch {
	case isCode(t):
		e.code++
		e.skipped++
	case isSkipped(t):
		e.skipped++
	case t == tMain:
		e.sawMain = true
	case t == tArticle:
		e.sawArticle = true
	case t == tH1 || t == tH2:
		e.endHeading() // a heading cannot contain another: the parser would close it
		e.heading = t
	}
}

func (e *extractor) end(a atom.Atom) {
	if !inlineTags[a] {
		e.breakWord()
	}
	t, tracked := trackedTags[a]
	if !tracked || e.open[t] == 0 {
		return
	}
	e.open[t]--
	switch {
	case isCode(t):
		e.code--
		e.skipped--
	case t == tTitle:
		e.skipped--
		if e.open[tSvg] == 0 && e.title.Len() > 0 {
			e.titleDone = true
		}
	case isSkipped(t):
		e.skipped--
	case t == e.heading:
		e.endHeading()
	}
}

func (e *extractor) text(t []byte) {
	if e.open[tTitle] > 0 {
		if e.open[tSvg] == 0 && !e.titleDone {
			appendBounded(&e.title, t)
		}
		return
	}
	if e.code > 0 {
		return
	}
	if e.heading > 0 {
		appendBounded(&e.headingText, t)
	}
	if e.skipped > 0 {
		e.breakWord()
		return
	}
	e.countWords(t)
}

func (e *extractor) endHeading() {
	if e.heading <= 0 {
		return
	}
	text := cleanCollapse(e.headingText.String())
	e.headingText.Reset()
	switch {
	case e.heading == tH1 && text != "":
		if e.info.h1s == 0 {
			e.info.h1 = text
		}
		e.info.h1s++
	case e.heading == tH2 && text != "" && len(e.info.h2s) < maxH2s && e.h2Bytes+len(text) <= maxH2Bytes:
		e.info.h2s = append(e.info.h2s, text)
		e.h2Bytes += len(text)
	}
	e.heading = 0
}

// attrs reads the attributes the audit needs: meta description and robots, canonical
// link, base href and, when asked for, anchors (for link discovery and the link graph).
func (e *extractor) attrs(z *html.Tokenizer, a atom.Atom) {
	switch a {
	case atom.Meta, atom.Link, atom.Base, atom.A, atom.Area, atom.Iframe, atom.Img, atom.Script:
	default:
		return
	}
	var name, content, rel, href, src, hreflang, equiv string
	for more := true; more; {
		var k, v []byte
		k, v, more = z.TagAttr()
		switch string(k) {
		case "name":
			name = strings.ToLower(strings.TrimSpace(string(v)))
		case "content":
			content = string(v)
		case "rel":
			rel = string(v)
		case "href":
			href = string(v)
		case "src":
			src = string(v)
		case "hreflang":
			hreflang = string(v)
		case "http-equiv":
			equiv = string(v)
		}
	}
	switch a {
	case atom.Meta:
		e.meta(name, content)
		if strings.EqualFold(strings.TrimSpace(equiv), "refresh") && e.info.refresh == "" {
			e.info.refresh = cleanText(content, maxURLBytes)
			e.addLink(refreshTarget(content), linkRefresh, false)
		}
	case atom.Link:
		if e.info.canonical == "" && hasToken(rel, "canonical") {
			e.info.canonical = strings.TrimSpace(href)
		}
		e.addLink(href, linkRelKind(rel, hreflang), false)
	case atom.Base:
		if e.info.base == "" {
			e.info.base = strings.TrimSpace(href)
		}
	case atom.Iframe:
		e.addLink(src, linkFrame, false)
	case atom.Img:
		e.addLink(src, linkImage, false)
	case atom.Script:
		e.addLink(src, linkScript, false)
	default:
		e.addLink(href, linkAnchor, hasToken(rel, "nofollow"))
	}
}

// addLink keeps a link when links are wanted, up to maxLinks; every one is counted.
func (e *extractor) addLink(href string, kind linkKind, nofollow bool) {
	if !e.wantLinks || kind == linkNone || strings.TrimSpace(href) == "" {
		return
	}
	e.info.linksSeen++
	if len(e.info.links) < maxLinks {
		e.info.links = append(e.info.links, link{href: href, kind: kind, nofollow: nofollow})
	}
}

func (e *extractor) meta(name, content string) {
	switch name {
	case "description":
		if e.info.description == "" {
			e.info.description = cleanCollapse(content)
		}
	case "robots", "googlebot":
		noindex, nofollow := robotsDirectives(content)
		e.info.noindex = e.info.noindex || noindex
		// Link following is ours to decide only by the generic robots meta.
		e.info.nofollow = e.info.nofollow || (nofollow && name == "robots")
	}
}

// countWords counts word starts in t. The word state carries across text tokens split by
// inline tags; breakWord ends it at every other tag.
func (e *extractor) countWords(t []byte) {
	for len(t) > 0 {
		r, size := rune(t[0]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(t)
		}
		t = t[size:]
		switch {
		case isWordRune(r):
			if !e.inWord {
				e.inWord = true
				e.countWord()
			}
			e.joinPending = false
		case e.inWord && !e.joinPending && isJoiner(r):
			e.joinPending = true
		default:
			e.inWord, e.joinPending = false, false
		}
	}
}

func (e *extractor) countWord() {
	e.body++
	if e.open[tMain] > 0 {
		e.inMain++
	}
	if e.open[tArticle] > 0 {
		e.inArtcl++
	}
}

func (e *extractor) breakWord() { e.inWord, e.joinPending = false, false }

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

// isJoiner reports apostrophes and hyphens, which join word parts: don't, e-mail.
func isJoiner(r rune) bool {
	switch r {
	case '\'', '-', '\u2019', '\u2010', '\u2011':
		return true
	}
	return false
}

// colonDirectives are robots directives with a value, not crawler names.
var colonDirectives = map[string]bool{
	"unavailable_after": true, "max-snippet": true, "max-image-preview": true, "max-video-preview": true,
}

// robotsDirectives parses a meta robots content or an X-Robots-Tag value. A value scoped
// to a crawler ("otherbot: noindex") counts only for Googlebot: the audit asks whether the
// page can appear in search results.
func robotsDirectives(value string) (noindex, nofollow bool) {
	v := strings.ToLower(strings.TrimSpace(value))
	if name, rest, ok := strings.Cut(v, ":"); ok && !strings.ContainsAny(name, ", ") && !colonDirectives[name] {
		if name != "googlebot" {
			return false, false
		}
		v = rest
	}
	for _, d := range strings.Split(v, ",") {
		switch strings.TrimSpace(d) {
		case "noindex":
			noindex = true
		case "nofollow":
			nofollow = true
		case "none":
			noindex, nofollow = true, true
		}
	}
	return noindex, nofollow
}

// hasToken reports whether the space-separated list has tok, case-insensitively.
func hasToken(list, tok string) bool {
	for _, f := range strings.Fields(list) {
		if strings.EqualFold(f, tok) {
			return true
		}
	}
	return false
}

func appendBounded(b *strings.Builder, t []byte) {
	if room := maxTextLen - b.Len(); room > 0 {
		b.WriteString(truncate(string(t), room))
	}
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// cleanCollapse makes extracted text storable (see cleanText), at most maxTextLen bytes,
// trimmed and with its whitespace runs folded into single spaces.
func cleanCollapse(s string) string {
	return strings.Join(strings.Fields(cleanText(s, maxTextLen)), " ")
}
