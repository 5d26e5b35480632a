package crawler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gocolly/colly/v2"
	"golang.org/x/net/html/atom"
)

// Bounds on the facts one page yields, so a hostile page costs bounded time and memory.
const (
	maxImages        = 1000      // <img> elements judged per page; the rest are counted only
	maxJSONLDBytes   = 256 << 10 // JSON-LD bytes parsed per page; blocks beyond are skipped
	maxHreflangs     = 200       // hreflang alternates kept per page
	maxHreflangBytes = 32 << 10  // bytes of their URLs together
	maxCanonicals    = 10        // canonical links kept per page
	maxSchemaIssues  = 20        // schema.org problems kept per page
	maxExampleLen    = 300       // bytes kept of an example (an image src, an error)
	maxHashedWords   = 20000     // main-text words hashed per page
	maxAltChars      = 125       // an alt text longer than this is overlong
)

// PageFacts are the facts of one HTML page the audit's checks read, gathered in the same
// tokenizer pass as the rest of the page (extract.go) and from the answer's headers. They
// are working data for the checks, bounded per page, and not part of a stored result.
type PageFacts struct {
	HTMLBytes, TextBytes int // the document's size, and the visible text's (outside scripts, styles...)
	Elements             int // start tags: the DOM's size

	TitleTags, DescriptionTags     int  // <title> and <meta name=description> elements
	TitleInBody, DescriptionInBody bool // one of them appears after <body> starts
	HasLang                        bool // <html lang> is present
	Lang                           string
	Viewport                       bool // <meta name=viewport>

	Canonicals      []string // every canonical link, as written (at most maxCanonicals)
	CanonicalHeader string   // the Link: rel=canonical header's URL, resolved; "" when none
	Hreflangs       []Hreflang

	HeadingOrder  string // the first heading out of order, e.g. "h4 after h2"; "" when none
	EmptyHeadings int    // h1-h6 with neither text nor image

	Images, ImagesNoAlt, ImagesNoSize, LongAlts int    // judged on the first maxImages
	FirstNoAlt, FirstNoSize, FirstLongAlt       string // an example src of each

	JSONLDBlocks, JSONLDInvalid int
	JSONLDSkipped               int    // blocks beyond maxJSONLDBytes, not parsed
	JSONLDError                 string // the first parse error
	SchemaIssues                []SchemaIssue

	RenderBlocking      int // <script src> in <head> without async, defer or type=module
	FirstRenderBlocking string
	HTTPResources       int // img/script/stylesheet/iframe loaded over http://
	FirstHTTPResource   string
	InsecureForms       int // <form action="http://...">
	FirstInsecureForm   string

	Nofollow, Nosnippet, Noimageindex bool // meta robots/googlebot or X-Robots-Tag
	HSTS                              bool // Strict-Transport-Security header
	TTFB                              time.Duration
	// TTFBSamples are the times to first byte measured, when the first was slow enough
	// to ask again (Request.TTFBResampleOver); TTFB is then their median.
	TTFBSamples []time.Duration

	// Anchors (anchors.go): links search engines cannot follow (Lighthouse's
	// crawlable-anchors rule), links whose text is generic (Lighthouse's English list;
	// links to the page itself left out) or empty (no text, no image alt, no
	// aria-label or title); and the page's fragment targets, hashes of its element ids
	// and <a name>s, sorted.
	NotCrawlableLinks, GenericTextLinks, EmptyTextLinks LinkProblems
	Targets                                             []uint64

	// Limits names the per-page bounds this page reached (LimitImages, ...), each once:
	// what lies beyond was not judged.
	Limits []string

	// MainWords counts the words hashed; TextHash and SimHash fingerprint the main text
	// (the region the word count reads): exact, and 64-bit SimHash over 3-word shingles.
	MainWords         int
	TextHash, SimHash uint64
}

// Per-page bounds a page can reach, as named in PageFacts.Limits.
const (
	LimitImages    = "images"    // more than 1,000 <img>
	LimitJSONLD    = "json-ld"   // more than 256 KiB of JSON-LD
	LimitHreflangs = "hreflang"  // more than 200 alternates, or 32 KiB of their URLs
	LimitWords     = "text-hash" // more than 20,000 words of text hashed
)

// LimitReason says what reaching a bound means, for a warning: "3 page(s) had " + it.
func LimitReason(name string) string {
	switch name {
	case LimitImages:
		return fmt.Sprintf("more than %d images; the rest were not checked", maxImages)
	case LimitJSONLD:
		return fmt.Sprintf("more than %d KiB of JSON-LD; the blocks beyond were not parsed", maxJSONLDBytes>>10)
	case LimitHreflangs:
		return fmt.Sprintf("more than %d hreflang alternates (or %d KiB of their URLs); the rest were not checked", maxHreflangs, maxHreflangBytes>>10)
	case LimitWords:
		return fmt.Sprintf("more than %d words; duplicate content was judged on the first %d", maxHashedWords, maxHashedWords)
	}
	return "more " + name + " than the audit reads"
}

// limit notes that a bound was reached.
func (f *PageFacts) limit(name string) {
	if !slices.Contains(f.Limits, name) {
		f.Limits = append(f.Limits, name)
	}
}

// Hreflang is one <link rel=alternate hreflang> of a page.
type Hreflang struct {
	Lang     string // as written
	URL      string // resolved against the page; "" when it does not resolve
	Relative bool   // written without scheme and host
}

// SchemaIssue is a schema.org object of a JSON-LD block lacking a required property.
type SchemaIssue struct {
	Type    string // Article, Product, FAQPage, BreadcrumbList, Organization
	Missing string // the property, or "offers|review|aggregateRating"
}

// ParsePage reads an HTML document as the crawl reads a page answering at rawURL with
// header (which may be nil): for tests of the audit's checks, and for HTML obtained another
// way (rendered).
func ParsePage(rawURL string, header http.Header, doc []byte) Page {
	p := Page{URL: rawURL, FinalURL: rawURL, Status: http.StatusOK, ContentType: "text/html", H2s: []string{}}
	base, err := url.Parse(rawURL)
	if err != nil {
		return p
	}
	info := extractPage(doc, false)
	if b := resolveHTTP(base, info.base); b != nil {
		base = b
	}
	p.fill(info, base)
	p.Facts.readResponse(header, nil, base)
	return p
}

// resolve completes the facts with what needs the page's base URL.
func (f *PageFacts) resolve(base *url.URL) {
	for i, h := range f.Hreflangs {
		if u := resolveHTTP(base, h.URL); u != nil {
			f.Hreflangs[i].URL = u.String()
		} else {
			f.Hreflangs[i].URL = ""
		}
	}
}

// readResponse takes the facts an answer's headers give: X-Robots-Tag directives, a
// canonical Link header, HSTS, and the time to first byte.
func (f *PageFacts) readResponse(h http.Header, trace *colly.HTTPTrace, base *url.URL) {
	if trace != nil {
		f.TTFB = trace.FirstByteDuration
	}
	for _, v := range h.Values("X-Robots-Tag") {
		f.addRobots(v)
	}
	f.HSTS = h.Get("Strict-Transport-Security") != ""
	for _, v := range h.Values("Link") {
		if ref := canonicalLink(v); ref != "" && f.CanonicalHeader == "" {
			if u := resolveHTTP(base, ref); u != nil {
				f.CanonicalHeader = u.String()
			}
		}
	}
}

func (f *PageFacts) addRobots(value string) {
	d := parseRobots(value)
	f.Nofollow = f.Nofollow || d.nofollow
	f.Nosnippet = f.Nosnippet || d.nosnippet
	f.Noimageindex = f.Noimageindex || d.noimageindex
}

// canonicalLink returns the URL of a Link header's rel=canonical entry, "" when none.
func canonicalLink(header string) string {
	for _, part := range strings.Split(header, ",") {
		ref, params, ok := strings.Cut(strings.TrimSpace(part), ">")
		if !ok || !strings.HasPrefix(ref, "<") {
			continue
		}
		for _, p := range strings.Split(params, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(strings.TrimSpace(k), "rel") && hasToken(strings.Trim(strings.TrimSpace(v), `"`), "canonical") {
				return ref[1:]
			}
		}
	}
	return ""
}

// example bounds a URL or message kept as an example.
func example(s string) string { return cleanText(strings.TrimSpace(s), maxExampleLen) }

// tagAttrs are the attributes the extractor reads, from the elements it reads them of.
type tagAttrs struct {
	name, content, rel, href, src, alt, lang, hreflang, typ, action string
	equiv                                                           string // http-equiv, for meta refresh
	hasAlt, hasWidth, hasHeight, hasLang, async, deferred           bool
	// Of anchors (anchors.go): the name as written, and what Lighthouse's checks read.
	rawName, id, role, ariaLabel, ariaCurrent, title string
	hasHref, hrefAssoc                               bool
}

func (at *tagAttrs) set(k, v []byte) {
	switch string(k) {
	case "name":
		at.name = strings.ToLower(strings.TrimSpace(string(v)))
		at.rawName = truncate(string(v), maxURLBytes)
	case "id":
		at.id = truncate(string(v), maxURLBytes)
	case "role":
		at.role = truncate(string(v), 64)
	case "aria-label", "aria-labelledby":
		at.ariaLabel += truncate(string(v), 64)
	case "aria-current":
		at.ariaCurrent = strings.ToLower(strings.TrimSpace(truncate(string(v), 64)))
	case "title":
		at.title = truncate(string(v), 64)
	case "target", "download", "ping", "referrerpolicy":
		at.hrefAssoc = true
	case "content":
		at.content = string(v)
	case "rel":
		at.rel = string(v)
	case "href":
		at.href, at.hasHref = string(v), true
	case "src":
		at.src = string(v)
	case "alt":
		at.alt, at.hasAlt = string(v), true
	case "width":
		at.hasWidth = true
	case "height":
		at.hasHeight = true
	case "lang":
		at.lang, at.hasLang = truncate(strings.TrimSpace(string(v)), 64), true
	case "hreflang":
		at.hreflang = truncate(strings.TrimSpace(string(v)), 64)
	case "type":
		at.typ = strings.ToLower(strings.TrimSpace(string(v)))
	case "http-equiv":
		at.equiv = strings.ToLower(strings.TrimSpace(string(v)))
	case "action":
		at.action = string(v)
	case "async":
		at.async = true
	case "defer":
		at.deferred = true
	}
}

// isHTTP reports a URL written with the http scheme: insecure from an https page.
func isHTTP(ref string) bool {
	ref = strings.TrimSpace(ref)
	return len(ref) > 7 && strings.EqualFold(ref[:7], "http://")
}

// isAbsolute reports a reference written with a scheme.
func isAbsolute(ref string) bool {
	u, err := url.Parse(strings.TrimSpace(ref))
	return err == nil && u.Scheme != "" && u.Host != ""
}

// factElement reads the facts of one element's attributes (see extractor.attrs).
func (e *extractor) factElement(a atom.Atom, at *tagAttrs) {
	f := &e.info.facts
	switch a {
	case atom.Html:
		if !e.sawHTML {
			e.sawHTML = true
			f.HasLang, f.Lang = at.hasLang, at.lang
		}
	case atom.Img:
		f.Images++
		if f.Images > maxImages {
			f.limit(LimitImages)
			return
		}
		if !at.hasAlt {
			f.ImagesNoAlt++
			setFirst(&f.FirstNoAlt, at.src)
		} else if utf8.RuneCountInString(at.alt) > maxAltChars {
			f.LongAlts++
			setFirst(&f.FirstLongAlt, at.src)
		}
		if !at.hasWidth || !at.hasHeight {
			f.ImagesNoSize++
			setFirst(&f.FirstNoSize, at.src)
		}
		e.httpResource(at.src)
	case atom.Script:
		if at.typ == "application/ld+json" {
			e.jsonld = true
			e.jsonldBuf.Reset()
			return
		}
		if at.src != "" && e.inHead && !at.async && !at.deferred && at.typ != "module" {
			f.RenderBlocking++
			setFirst(&f.FirstRenderBlocking, at.src)
		}
		e.httpResource(at.src)
	case atom.Iframe:
		e.httpResource(at.src)
	case atom.Form:
		if isHTTP(at.action) {
			f.InsecureForms++
			setFirst(&f.FirstInsecureForm, at.action)
		}
	case atom.Link:
		switch {
		case hasToken(at.rel, "canonical"):
			if len(f.Canonicals) < maxCanonicals {
				f.Canonicals = append(f.Canonicals, example(at.href))
			}
		case hasToken(at.rel, "alternate") && at.hreflang != "":
			if len(f.Hreflangs) >= maxHreflangs || e.hreflangBytes+len(at.href) > maxHreflangBytes {
				f.limit(LimitHreflangs)
				break
			}
			e.hreflangBytes += len(at.href)
			f.Hreflangs = append(f.Hreflangs, Hreflang{Lang: at.hreflang, URL: at.href, Relative: !isAbsolute(at.href)})
		case hasToken(at.rel, "stylesheet"):
			e.httpResource(at.href)
		}
	case atom.Meta:
		switch at.name {
		case "description":
			f.DescriptionTags++
			f.DescriptionInBody = f.DescriptionInBody || e.sawBody
		case "viewport":
			f.Viewport = true
		case "robots", "googlebot":
			f.addRobots(at.content)
		}
	}
}

func (e *extractor) httpResource(ref string) {
	if isHTTP(ref) {
		e.info.facts.HTTPResources++
		setFirst(&e.info.facts.FirstHTTPResource, ref)
	}
}

func setFirst(s *string, v string) {
	if *s == "" {
		*s = example(v)
	}
}

// jsonldText collects a JSON-LD block's text within the page's budget.
func (e *extractor) jsonldText(t []byte) {
	if e.jsonldSkip {
		return
	}
	if e.jsonldBytes+len(t) > maxJSONLDBytes {
		e.jsonldSkip = true
		e.info.facts.limit(LimitJSONLD)
		return
	}
	e.jsonldBytes += len(t)
	e.jsonldBuf.Write(t)
}

// endJSONLD parses a finished JSON-LD block and checks its schema.org objects.
func (e *extractor) endJSONLD() {
	f := &e.info.facts
	e.jsonld = false
	f.JSONLDBlocks++
	if e.jsonldSkip {
		f.JSONLDSkipped++
		e.jsonldSkip = false
		return
	}
	var v any
	if err := json.Unmarshal(bytes.TrimSpace(e.jsonldBuf.Bytes()), &v); err != nil {
		f.JSONLDInvalid++
		setFirst(&f.JSONLDError, err.Error())
		return
	}
	for _, obj := range topObjects(v) {
		for _, typ := range schemaTypes(obj["@type"]) {
			typ = strings.TrimPrefix(strings.TrimPrefix(typ, "https://schema.org/"), "http://schema.org/")
			for _, missing := range requiredMissing(typ, obj) {
				if len(f.SchemaIssues) < maxSchemaIssues {
					f.SchemaIssues = append(f.SchemaIssues, SchemaIssue{Type: typ, Missing: missing})
				}
			}
		}
	}
}

// topObjects are a JSON-LD block's top-level objects: the block itself, the elements of a
// top-level array, and the members of an @graph.
func topObjects(v any) []map[string]any {
	var out []map[string]any
	switch x := v.(type) {
	case map[string]any:
		if g, ok := x["@graph"]; ok {
			out = append(out, topObjects(g)...)
		}
		out = append(out, x)
	case []any:
		for _, el := range x {
			if m, ok := el.(map[string]any); ok {
				out = append(out, topObjects(m)...)
			}
		}
	}
	return out
}

func schemaTypes(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, el := range x {
			if s, ok := el.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// schemaRequired are the properties Google's rich results need of the common schema.org
// types (one of the alternatives joined by "|"); type names are compared without a
// "https://schema.org/" prefix.
var schemaRequired = map[string][]string{
	"Article":        {"headline"},
	"NewsArticle":    {"headline"},
	"BlogPosting":    {"headline"},
	"Product":        {"name", "offers|review|aggregateRating"},
	"FAQPage":        {"mainEntity"},
	"BreadcrumbList": {"itemListElement"},
	"Organization":   {"name", "url"},
}

// SchemaFamily names the family a checked schema.org type belongs to: Article for
// NewsArticle and BlogPosting, else the type itself.
func SchemaFamily(typ string) string {
	switch typ {
	case "NewsArticle", "BlogPosting":
		return "Article"
	}
	return typ
}

func requiredMissing(typ string, obj map[string]any) []string {
	var out []string
	for _, props := range schemaRequired[typ] {
		found := false
		for _, p := range strings.Split(props, "|") {
			if v, ok := obj[p]; ok && v != nil && v != "" {
				found = true
			}
		}
		if !found {
			out = append(out, props)
		}
	}
	return out
}

// robotsFlags are the directives of a meta robots content or X-Robots-Tag value.
type robotsFlags struct{ noindex, nofollow, nosnippet, noimageindex bool }

// parseRobots parses a meta robots content or an X-Robots-Tag value. A value scoped to a
// crawler ("otherbot: noindex") counts only for Googlebot: the audit asks whether the page
// can appear in search results.
func parseRobots(value string) robotsFlags {
	var d robotsFlags
	v := strings.ToLower(strings.TrimSpace(value))
	if name, rest, ok := strings.Cut(v, ":"); ok && !strings.ContainsAny(name, ", ") && !colonDirectives[name] {
		if name != "googlebot" {
			return d
		}
		v = rest
	}
	for _, dir := range strings.Split(v, ",") {
		switch strings.TrimSpace(dir) {
		case "noindex":
			d.noindex = true
		case "nofollow":
			d.nofollow = true
		case "none":
			d.noindex, d.nofollow = true, true
		case "nosnippet":
			d.nosnippet = true
		case "noimageindex":
			d.noimageindex = true
		}
	}
	return d
}

// FNV-1a, for word hashes.
const (
	fnvOffset uint64 = 14695981039346656037
	fnvPrime  uint64 = 1099511628211
)

// The low bits of a kept word hash mark the regions the word was in.
const (
	regionMain    uint64 = 1
	regionArticle uint64 = 2
)

// lowerRune folds case, cheaply for ASCII.
func lowerRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return r
	}
	return unicode.ToLower(r)
}

// fingerprint hashes the main text's words (those in region, or all when region is 0):
// TextHash chains them exactly; SimHash is the 64-bit SimHash of the 3-word shingles, so
// texts differing in a few words differ in a few bits.
func (f *PageFacts) fingerprint(words []uint64, region uint64) {
	var sim simHasher
	var prev [2]uint64
	text := fnvOffset
	n := 0
	for _, w := range words {
		if region != 0 && w&region == 0 {
			continue
		}
		w &^= regionMain | regionArticle
		text = (text ^ w) * fnvPrime
		if n >= 2 {
			sim.add(mix64(prev[0]*31 ^ prev[1]*17 ^ w))
		}
		prev[0], prev[1] = prev[1], w
		n++
	}
	f.MainWords = n
	if n > 0 {
		f.TextHash, f.SimHash = text, sim.sum()
	}
}

// simHasher counts, for each of 64 bit positions, the hashes having that bit set. The
// counts are kept eight to a word (one byte lane per bit position) and flushed before a
// lane can overflow: 8 additions per hash instead of 64.
type simHasher struct {
	lanes          [8]uint64 // lanes[k] byte j counts bit 8j+k
	ones           [64]int32
	pending, total int32
}

const laneBits = 0x0101010101010101

func (s *simHasher) add(h uint64) {
	for k := range s.lanes {
		s.lanes[k] += h >> k & laneBits
	}
	s.total++
	if s.pending++; s.pending == 255 {
		s.flush()
	}
}

func (s *simHasher) flush() {
	for k, l := range s.lanes {
		for j := range 8 {
			s.ones[8*j+k] += int32(l >> (8 * j) & 0xff)
		}
		s.lanes[k] = 0
	}
	s.pending = 0
}

// sum sets each bit that most hashes have.
func (s *simHasher) sum() uint64 {
	s.flush()
	var out uint64
	for i, c := range s.ones {
		if 2*c > s.total {
			out |= 1 << i
		}
	}
	return out
}

// mix64 spreads a hash's bits (the SplitMix64 finaliser), so every shingle bit is fair.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
