package crawler

import (
	"bufio"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/net/html/charset"
)

// maxSitemapBytes is the sitemap protocol's size limit, applied to the bytes received and
// again after decompression, so neither a huge file nor a gzip bomb can exhaust memory
// or time. Parsing streams, so memory stays small even at the limit.
const maxSitemapBytes = 50 << 20

var errNotSitemap = errors.New("not a sitemap")

// statusError is a sitemap answer other than 2xx.
type statusError struct{ code int }

func (e *statusError) Error() string { return fmt.Sprintf("HTTP status %d", e.code) }

// sitemapSource is a sitemap file to read: declared (robots.txt, the request, an index)
// or guessed (/sitemap.xml), whose absence is no error.
type sitemapSource struct {
	url     string
	depth   int // 0 for roots, +1 per index level
	guessed bool
}

// sitemapReader walks sitemap files breadth-first, feeding page URLs to the frontier.
type sitemapReader struct {
	c       *Crawler
	client  *http.Client
	front   *frontier
	res     *Result
	fetched int
	seen    map[string]bool
	// longURLs counts <loc> values dropped for their length.
	longURLs int
}

// readSitemaps fills front from the site's sitemaps: only sitemapURL when given, else the
// robots.txt Sitemap: lines, else /sitemap.xml and then /sitemap_index.xml.
func (c *Crawler) readSitemaps(ctx context.Context, client *http.Client, sitemapURL string, base *url.URL, robots *robotsPolicy, front *frontier, res *Result) {
	s := &sitemapReader{c: c, client: client, front: front, res: res, seen: make(map[string]bool)}
	defer func() {
		if s.longURLs > 0 {
			res.warn("%d sitemap URL(s) longer than %d bytes skipped", s.longURLs, maxURLBytes)
		}
	}()
	if sitemapURL != "" {
		s.walk(ctx, s.roots(base, []string{sitemapURL}, false))
		return
	}
	if len(robots.sitemaps) > 0 {
		s.walk(ctx, s.roots(base, robots.sitemaps, false))
		return
	}
	for _, guess := range []string{"/sitemap.xml", "/sitemap_index.xml"} {
		s.walk(ctx, s.roots(base, []string{guess}, true))
		if len(res.Sitemaps) > 0 {
			return
		}
	}
}

func (s *sitemapReader) roots(base *url.URL, refs []string, guessed bool) []sitemapSource {
	var out []sitemapSource
	for _, ref := range refs {
		u, long := resolveBounded(base, ref)
		switch {
		case long:
			s.res.SitemapErrors = append(s.res.SitemapErrors, SitemapError{URL: truncate(ref, maxURLBytes), Error: errURLTooLong.Error()})
			continue
		case u == nil:
			s.res.SitemapErrors = append(s.res.SitemapErrors, SitemapError{URL: ref, Error: "not an http(s) URL"})
			continue
		}
		out = append(out, sitemapSource{url: u.String(), guessed: guessed})
	}
	return out
}

// walk reads the queued sitemaps until the frontier is full or the file budget is spent.
func (s *sitemapReader) walk(ctx context.Context, queue []sitemapSource) {
	maxFiles, maxDepth := s.c.cfg.MaxSitemaps, s.c.cfg.MaxSitemapDepth
	depthWarned := false
	for len(queue) > 0 && !s.front.full() && ctx.Err() == nil {
		src := queue[0]
		queue = queue[1:]
		if s.seen[src.url] {
			continue
		}
		s.seen[src.url] = true
		if s.fetched >= maxFiles {
			s.res.warn("sitemap limit of %d files reached; %d more not read", maxFiles, len(queue)+1)
			return
		}
		s.fetched++
		doc, err := s.read(ctx, src.url, maxFiles)
		s.longURLs += doc.longURLs
		children := doc.children
		if err != nil && !(src.guessed && isNotFound(err)) {
			s.res.SitemapErrors = append(s.res.SitemapErrors, SitemapError{URL: src.url, Error: errorText(err)})
		}
		if err != nil {
			continue
		}
		s.res.Sitemaps = append(s.res.Sitemaps, src.url)
		if len(children) > 0 && src.depth >= maxDepth {
			if !depthWarned {
				s.res.warn("sitemap index nesting deeper than %d not followed (at %s)", maxDepth, src.url)
				depthWarned = true
			}
			continue
		}
		for _, child := range children {
			queue = append(queue, sitemapSource{url: child, depth: src.depth + 1})
		}
	}
}

// read fetches one sitemap file, adds its page URLs to the frontier and returns the child
// sitemaps it lists (if it is an index). URLs read before a parse error are kept.
func (s *sitemapReader) read(ctx context.Context, rawURL string, maxChildren int) (sitemapDoc, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return sitemapDoc{}, fmt.Errorf("sitemap request: %w", err)
	}
	req.Header.Set("User-Agent", s.c.cfg.UserAgent)
	req.Header.Set("Accept", "application/xml, text/xml;q=0.9, */*;q=0.5")
	resp, err := s.client.Do(req)
	if err != nil {
		return sitemapDoc{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return sitemapDoc{}, &statusError{code: resp.StatusCode}
	}
	body, err := sitemapBody(resp.Body)
	if err != nil {
		return sitemapDoc{}, err
	}
	return parseSitemap(body, resp.Request.URL, s.front.add, maxChildren)
}

func isNotFound(err error) bool {
	var se *statusError
	return errors.As(err, &se) && (se.code == http.StatusNotFound || se.code == http.StatusGone)
}

// sitemapBody bounds the body, before and after any gzip found by its magic bytes (also
// when compressed twice: Go's transport has undone a gzip Content-Encoding).
func sitemapBody(r io.Reader) (io.Reader, error) {
	br, err := gunzipBounded(r, maxSitemapBytes)
	if err != nil {
		return nil, fmt.Errorf("sitemap %w", err)
	}
	// encoding/xml rejects a byte-order mark, which some generators emit.
	if bom, _ := br.Peek(3); bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
		_, _ = br.Discard(3)
	}
	return br, nil
}

// Bounds on the XML of one sitemap, besides its size. encoding/xml holds a whole token
// (a text, comment or tag) in memory and keeps a stack of open elements, so a 50 MiB
// <loc> or endless nesting would otherwise be held whole.
const (
	maxXMLToken = 256 << 10
	maxXMLDepth = 32
)

var (
	errXMLTokenTooLong = fmt.Errorf("a text, comment or tag longer than %d bytes", maxXMLToken)
	errXMLTooDeep      = fmt.Errorf("elements nested deeper than %d", maxXMLDepth)
)

// sitemapDoc is what one sitemap file yields besides the page URLs it hands over.
type sitemapDoc struct {
	children []string // child sitemaps of an index
	longURLs int      // <loc> values dropped for being longer than maxURLBytes
}

// parseSitemap stream-decodes a <urlset> or <sitemapindex>, whatever its namespace. Page
// URLs go to addPage until it returns false; child sitemaps are returned, at most
// maxChildren. Relative <loc> values are resolved against base; those longer than
// maxURLBytes are dropped and counted.
func parseSitemap(r io.Reader, base *url.URL, addPage func(*url.URL) bool, maxChildren int) (sitemapDoc, error) {
	win := &tokenWindow{r: bufio.NewReader(r)}
	dec := xml.NewDecoder(win)
	dec.CharsetReader = charset.NewReaderLabel
	p := sitemapParser{base: base, addPage: addPage, maxChildren: maxChildren}
	for {
		win.mark()
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return p.doc, fmt.Errorf("sitemap XML: %w", err)
		}
		more, err := p.token(tok)
		if err != nil || !more {
			return p.doc, err
		}
	}
	if p.root == "" {
		return sitemapDoc{}, fmt.Errorf("%w: empty document", errNotSitemap)
	}
	return p.doc, nil
}

// sitemapParser follows the element path root > entry > loc, where an entry is a <url> of
// a urlset or a <sitemap> of an index, and takes each whole entry's first <loc>.
type sitemapParser struct {
	base        *url.URL
	addPage     func(*url.URL) bool
	maxChildren int
	doc         sitemapDoc

	root    string
	depth   int             // open elements, root included
	inEntry bool            // inside an entry, taken when it ends whole
	inLoc   bool            // inside its first <loc>
	hasLoc  bool            // that <loc> was read
	loc     strings.Builder // its text, up to maxURLBytes plus room for spaces around it
	locLong bool            // its text went past that
}

// maxLocSpace is room for white space around a <loc> value, trimmed before measuring.
const maxLocSpace = 256

// token handles one token; false stops the parse (the page budget is spent).
func (p *sitemapParser) token(tok xml.Token) (bool, error) {
	switch t := tok.(type) {
	case xml.StartElement:
		p.depth++
		if p.depth > maxXMLDepth {
			return false, fmt.Errorf("sitemap XML: %w", errXMLTooDeep)
		}
		switch p.depth {
		case 1:
			if p.root != "" {
				return false, nil // a second root: the document is over
			}
			p.root = t.Name.Local
			if p.root != "urlset" && p.root != "sitemapindex" {
				return false, fmt.Errorf("%w: root element <%s>", errNotSitemap, p.root)
			}
		case 2:
			p.inEntry, p.hasLoc = t.Name.Local == p.entryName(), false
		case 3:
			if p.inEntry && !p.hasLoc && t.Name.Local == "loc" {
				p.inLoc, p.locLong = true, false
				p.loc.Reset()
			}
		}
	case xml.CharData:
		if p.inLoc && !p.locLong {
			if p.loc.Len()+len(t) > maxURLBytes+maxLocSpace {
				p.locLong = true
			} else {
				p.loc.Write(t)
			}
		}
	case xml.EndElement:
		p.depth--
		switch {
		case p.inLoc && p.depth == 2:
			p.inLoc, p.hasLoc = false, true
		case p.inEntry && p.depth == 1:
			p.inEntry = false
			if p.hasLoc {
				return p.entry(), nil
			}
		}
	}
	return true, nil
}

func (p *sitemapParser) entryName() string {
	if p.root == "sitemapindex" {
		return "sitemap"
	}
	return "url"
}

// entry takes the <loc> of the entry just ended; false once the page budget is spent.
func (p *sitemapParser) entry() bool {
	loc := strings.TrimSpace(p.loc.String())
	if p.locLong || len(loc) > maxURLBytes {
		p.doc.longURLs++
		return true
	}
	u, long := resolveBounded(p.base, loc)
	switch {
	case long:
		p.doc.longURLs++
	case u == nil:
	case p.root == "sitemapindex":
		if len(p.doc.children) < p.maxChildren {
			p.doc.children = append(p.doc.children, u.String())
		}
	default:
		return p.addPage(u)
	}
	return true
}

// tokenWindow feeds an xml.Decoder (which then reads it byte by byte) and fails a read
// more than maxXMLToken bytes past the mark, set before each token: no token can grow
// the decoder's buffer beyond that.
type tokenWindow struct {
	r     *bufio.Reader
	read  int64
	start int64
}

func (w *tokenWindow) mark() { w.start = w.read }

func (w *tokenWindow) ReadByte() (byte, error) {
	if w.read-w.start >= maxXMLToken {
		return 0, errXMLTokenTooLong
	}
	b, err := w.r.ReadByte()
	if err == nil {
		w.read++
	}
	return b, err
}

// Read serves a charset decoder, which encoding/xml puts between itself and the window
// for documents not in UTF-8; it reads ahead a few KiB at most.
func (w *tokenWindow) Read(p []byte) (int, error) {
	room := maxXMLToken - (w.read - w.start)
	if room <= 0 {
		return 0, errXMLTokenTooLong
	}
	if int64(len(p)) > room {
		p = p[:room]
	}
	n, err := w.r.Read(p)
	w.read += int64(n)
	return n, err
}
