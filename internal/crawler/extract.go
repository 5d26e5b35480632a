package crawler

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"sync"
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
	facts                  PageFacts
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
	e.info.facts.HTMLBytes = len(doc)
	buf := wordBufs.Get().(*[]uint64)
	e.words = (*buf)[:0]
	defer func() {
		*buf = e.words[:0]
		wordBufs.Put(buf)
	}()
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

// wordBufs recycles the word-hash buffers of extractPage: one per page would otherwise be
// the largest allocation of the pass.
var wordBufs = sync.Pool{New: func() any { b := make([]uint64, 0, 2048); return &b }}

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
	tH3
	tH4
	tH5
	tH6
	numTracked
)

var trackedTags = map[atom.Atom]int{
	atom.Nav: tNav, atom.Header: tHeader, atom.Footer: tFooter, atom.Aside: tAside,
	atom.Form: tForm, atom.Iframe: tIframe, atom.Svg: tSvg, atom.Script: tScript,
	atom.Style: tStyle, atom.Noscript: tNoscript, atom.Template: tTemplate,
	atom.Title: tTitle, atom.Main: tMain, atom.Article: tArticle, atom.H1: tH1, atom.H2: tH2,
	atom.H3: tH3, atom.H4: tH4, atom.H5: tH5, atom.H6: tH6,
}

// isHeading marks h1-h6.
func isHeading(t int) bool { return t >= tH1 && t <= tH6 }

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

	// Facts (facts.go): document structure, JSON-LD being read, the main text's words.
	sawHTML, sawBody, inHead bool
	headingImg               bool // the open heading holds an image
	lastLevel                int  // the last heading's level, 0 before any
	jsonld, jsonldSkip       bool // inside a JSON-LD script; over the page's budget
	jsonldBuf                bytes.Buffer
	jsonldBytes              int
	hreflangBytes            int
	anchor                   anchor   // the <a> being read (anchors.go)
	wordHash                 uint64   // FNV-1a of the word being read
	words                    []uint64 // word hashes, low bits marking the regions (regionMain, regionArticle)
}

func (e *extractor) finish() pageInfo {
	e.endAnchor()
	slices.Sort(e.info.facts.Targets)
	e.info.facts.Targets = slices.Compact(e.info.facts.Targets)
	e.endHeading()
	e.breakWord()
	e.info.title = cleanCollapse(e.title.String())
	region := uint64(0)
	switch {
	case e.sawMain:
		e.info.words, region = e.inMain, regionMain
	case e.sawArticle:
		e.info.words, region = e.inArtcl, regionArticle
	default:
		e.info.words = e.body
	}
	e.info.facts.fingerprint(e.words, region)
	return e.info
}

func (e *extractor) start(z *html.Tokenizer, selfClosing bool) {
	name, hasAttr := z.TagName()
	a := atom.Lookup(name)
	if !inlineTags[a] {
		e.breakWord()
	}
	e.info.facts.Elements++
	switch a {
	case atom.Head:
		e.inHead = !e.sawBody
	case atom.Body:
		e.sawBody, e.inHead = true, false
	case atom.Title:
		if e.open[tSvg] == 0 {
			e.info.facts.TitleTags++
			e.info.facts.TitleInBody = e.info.facts.TitleInBody || e.sawBody
		}
	case atom.Img:
		e.headingImg = e.headingImg || e.heading > 0
	}
	if hasAttr {
		e.attrs(z, a)
	} else if a == atom.Img || a == atom.Html {
		e.factElement(a, &tagAttrs{})
	} else if a == atom.A && e.open[tSvg] == 0 {
		e.startAnchor(&tagAttrs{})
	}
	if a == atom.Script && selfClosing && e.jsonld {
		e.endJSONLD() // <script/> has no text to wait for
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
	case isHeading(t):
		e.endHeading() // a heading cannot contain another: the parser would close it
		e.heading = t
		e.headingLevel(t - tH1 + 1)
	}
}

// headingLevel notes the first heading that skips a level: h3 with no h2 before it, h4
// after h2. The page's first heading may be an h1 or an h2.
func (e *extractor) headingLevel(level int) {
	prev := max(e.lastLevel, 1)
	if level > prev+1 && e.info.facts.HeadingOrder == "" {
		if e.lastLevel == 0 {
			e.info.facts.HeadingOrder = "h" + strconv.Itoa(level) + " before any h" + strconv.Itoa(level-1)
		} else {
			e.info.facts.HeadingOrder = "h" + strconv.Itoa(level) + " after h" + strconv.Itoa(prev)
		}
	}
	e.lastLevel = level
}

func (e *extractor) end(a atom.Atom) {
	if !inlineTags[a] {
		e.breakWord()
	}
	if a == atom.Head {
		e.inHead = false
	}
	if a == atom.A && e.open[tSvg] == 0 {
		e.endAnchor()
	}
	t, tracked := trackedTags[a]
	if !tracked || e.open[t] == 0 {
		return
	}
	e.open[t]--
	if t == tScript && e.jsonld {
		e.endJSONLD()
	}
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
	if e.jsonld {
		e.jsonldText(t)
		return
	}
	if e.open[tTitle] > 0 {
		if e.open[tSvg] == 0 && !e.titleDone {
			appendBounded(&e.title, t)
		} else if e.open[tSvg] > 0 && len(bytes.TrimSpace(t)) > 0 {
			e.anchorNamed() // an svg's title names the link holding it
		}
		return
	}
	if e.code > 0 {
		return
	}
	e.anchorText(t)
	e.info.facts.TextBytes += len(bytes.TrimSpace(t))
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
	if text == "" && !e.headingImg {
		e.info.facts.EmptyHeadings++
	}
	e.headingImg = false
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
// link, base href, when asked for anchors (for link discovery and the link graph), and the
// page facts of html, img, script, iframe, form, link and meta elements.
func (e *extractor) attrs(z *html.Tokenizer, a atom.Atom) {
	switch a {
	case atom.Meta, atom.Link, atom.Base, atom.A, atom.Area, atom.Html, atom.Img, atom.Script, atom.Iframe, atom.Form:
	default:
		e.idAttrs(z)
		return
	}
	var at tagAttrs
	for more := true; more; {
		var k, v []byte
		k, v, more = z.TagAttr()
		at.set(k, v)
	}
	e.addTarget(at.id)
	if (a != atom.A && strings.TrimSpace(at.ariaLabel) != "") || (a == atom.Img && strings.TrimSpace(at.alt) != "") {
		e.anchorNamed()
	}
	switch a {
	case atom.Meta:
		e.meta(at.name, at.content)
		if strings.EqualFold(at.equiv, "refresh") && e.info.refresh == "" {
			e.info.refresh = cleanText(at.content, maxURLBytes)
			e.addLink(refreshTarget(at.content), linkRefresh, false)
		}
	case atom.Link:
		if e.info.canonical == "" && hasToken(at.rel, "canonical") {
			e.info.canonical = strings.TrimSpace(at.href)
		}
		e.addLink(at.href, linkRelKind(at.rel, at.hreflang), false)
	case atom.Base:
		if e.info.base == "" {
			e.info.base = strings.TrimSpace(at.href)
		}
	case atom.Iframe:
		e.addLink(at.src, linkFrame, false)
	case atom.Img:
		e.addLink(at.src, linkImage, false)
	case atom.Script:
		e.addLink(at.src, linkScript, false)
	case atom.A, atom.Area:
		e.addLink(at.href, linkAnchor, hasToken(at.rel, "nofollow"))
		if a == atom.A && e.open[tSvg] == 0 {
			e.addTarget(at.rawName)
			e.startAnchor(&at)
		}
	}
	e.factElement(a, &at)
}

// idAttrs reads, of an element the extractor has no other use for, its id (a fragment
// target) and, inside a link, an aria-label naming it.
func (e *extractor) idAttrs(z *html.Tokenizer) {
	// Reading attributes allocates (the tokenizer unescapes them): an element whose raw tag
	// holds no "id" (and, in a link, no "aria-") has nothing to read.
	if raw := z.Raw(); !containsFold(raw, "id") && !(e.anchor.open && containsFold(raw, "aria-")) {
		return
	}
	for more := true; more; {
		var k, v []byte
		k, v, more = z.TagAttr()
		switch string(k) {
		case "id":
			if len(v) > 0 {
				e.addTargetHash(fnv64(v[:min(len(v), maxURLBytes)]))
			}
		case "aria-label", "aria-labelledby":
			if len(bytes.TrimSpace(v)) > 0 {
				e.anchorNamed()
			}
		}
	}
}

// containsFold reports whether b holds the lower-case ASCII word w in any case.
func containsFold(b []byte, w string) bool {
	for i := 0; i+len(w) <= len(b); i++ {
		j := 0
		for j < len(w) && b[i+j]|0x20 == w[j] {
			j++
		}
		if j == len(w) {
			return true
		}
	}
	return false
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
				e.wordHash = fnvOffset
			}
			e.wordHash = (e.wordHash ^ uint64(lowerRune(r))) * fnvPrime
			e.joinPending = false
		case e.inWord && !e.joinPending && isJoiner(r):
			e.joinPending = true
		default:
			e.breakWord()
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

// breakWord ends the word being read, keeping its hash for the main text's fingerprint.
func (e *extractor) breakWord() {
	if e.inWord && len(e.words) >= maxHashedWords {
		e.info.facts.limit(LimitWords)
	} else if e.inWord {
		h := e.wordHash &^ (regionMain | regionArticle)
		if e.open[tMain] > 0 {
			h |= regionMain
		}
		if e.open[tArticle] > 0 {
			h |= regionArticle
		}
		e.words = append(e.words, h)
	}
	e.inWord, e.joinPending = false, false
}

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

// robotsDirectives is parseRobots's noindex and nofollow (facts.go). A value scoped
// to a crawler ("otherbot: noindex") counts only for Googlebot: the audit asks whether the
// page can appear in search results.
func robotsDirectives(value string) (noindex, nofollow bool) {
	d := parseRobots(value)
	return d.noindex, d.nofollow
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
