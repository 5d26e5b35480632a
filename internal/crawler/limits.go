package crawler

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"unicode/utf8"
)

// Bounds on the text a crawl keeps besides a page's extracted text (see extract.go).
const (
	// maxMessageLen bounds an error or warning: room for one full URL and a reason.
	maxMessageLen = maxURLBytes + 1024
	// maxMediaTypeLen bounds a page's content type, taken from a response header.
	maxMediaTypeLen = 128
)

// cleanText makes crawled text storable and bounded: invalid UTF-8 and NUL bytes are
// removed (PostgreSQL's jsonb refuses \u0000, so one NUL would make a whole result
// unstorable) and at most n bytes are kept, without splitting a character.
func cleanText(s string, n int) string {
	if len(s) > 4*n {
		s = s[:4*n] // no more is needed, however much cleaning removes
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "")
	}
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "")
	}
	return truncate(s, n)
}

// clean bounds and cleans the page's fields taken from headers and errors; its extracted
// text is clean already and its URLs are escaped by net/url.
func (p *Page) clean() {
	p.ContentType = cleanText(p.ContentType, maxMediaTypeLen)
	p.Error = cleanText(p.Error, maxMessageLen)
}

// cleanMessages bounds and cleans the result's warnings and sitemap reports.
func (r *Result) cleanMessages() {
	for i, w := range r.Warnings {
		r.Warnings[i] = cleanText(w, maxMessageLen)
	}
	for i, u := range r.Sitemaps {
		r.Sitemaps[i] = cleanText(u, maxURLBytes)
	}
	for i, e := range r.SitemapErrors {
		r.SitemapErrors[i] = SitemapError{URL: cleanText(e.URL, maxURLBytes), Error: cleanText(e.Error, maxMessageLen)}
	}
}

// jsonSize is the length of v's JSON encoding, the form a result is stored in.
func jsonSize(v any) int64 {
	b, err := json.Marshal(v)
	if err != nil {
		return 0 // only strings, numbers and booleans here: cannot fail
	}
	return int64(len(b))
}

// errorText is err's message for a page or sitemap report. net/http's errors start with the
// URL asked for, which after a refused redirect is the over-long Location: it is cut so
// the reason stays readable.
func errorText(err error) string {
	if ue, ok := errors.AsType[*url.Error](err); ok && len(ue.URL) > maxURLBytes {
		short := *ue
		short.URL = truncate(ue.URL, 64) + "..."
		return cleanText(short.Error(), maxMessageLen)
	}
	return cleanText(err.Error(), maxMessageLen)
}
