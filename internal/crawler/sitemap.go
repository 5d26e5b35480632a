package crawler

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

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
}

// readSitemaps fills front from the site's sitemaps: only sitemapURL when given, else the
// robots.txt Sitemap: lines, else /sitemap.xml and then /sitemap_index.xml.
func (c *Crawler) readSitemaps(ctx context.Context, client *http.Client, sitemapURL string, base *url.URL, robots *robotsPolicy, front *frontier, res *Result) {
	s := &sitemapReader{c: c, client: client, front: front, res: res, seen: make(map[string]bool)}
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
		u := resolveHTTP(base, ref)
		if u == nil {
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
		children, err := s.read(ctx, src.url, maxFiles)
		if err != nil && !(src.guessed && isNotFound(err)) {
			s.res.SitemapErrors = append(s.res.SitemapErrors, SitemapError{URL: src.url, Error: err.Error()})
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
func (s *sitemapReader) read(ctx context.Context, rawURL string, maxChildren int) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("sitemap request: %w", err)
	}
	req.Header.Set("User-Agent", s.c.cfg.UserAgent)
	req.Header.Set("Accept", "application/xml, text/xml;q=0.9, */*;q=0.5")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, &statusError{code: resp.StatusCode}
	}
	body, err := sitemapBody(resp.Body)
	if err != nil {
		return nil, err
	}
	return parseSitemap(body, resp.Request.URL, s.front.add, maxChildren)
}

func isNotFound(err error) bool {
	var se *statusError
	return errors.As(err, &se) && (se.code == http.StatusNotFound || se.code == http.StatusGone)
}

// sitemapBody bounds the body and undoes gzip found by its magic bytes, whatever the name
// or Content-Type says. Go's transport has already undone a gzip Content-Encoding, so
// this catches .xml.gz files and gzip served as plain XML, also when compressed twice.
func sitemapBody(r io.Reader) (io.Reader, error) {
	br := bufio.NewReader(io.LimitReader(r, maxSitemapBytes))
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("sitemap gzip: %w", err)
		}
		br = bufio.NewReader(io.LimitReader(zr, maxSitemapBytes))
	}
	// encoding/xml rejects a byte-order mark, which some generators emit.
	if bom, _ := br.Peek(3); bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
		_, _ = br.Discard(3)
	}
	return br, nil
}

// parseSitemap stream-decodes a <urlset> or <sitemapindex>, whatever its namespace. Page
// URLs go to addPage until it returns false; child sitemaps are returned, at most
// maxChildren. Relative <loc> values are resolved against base.
func parseSitemap(r io.Reader, base *url.URL, addPage func(*url.URL) bool, maxChildren int) ([]string, error) {
	dec := xml.NewDecoder(r)
	dec.CharsetReader = charset.NewReaderLabel
	var root string
	var children []string
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return children, fmt.Errorf("sitemap XML: %w", err)
		}
		start, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root == "" {
			root = start.Name.Local
			if root != "urlset" && root != "sitemapindex" {
				return nil, fmt.Errorf("%w: root element <%s>", errNotSitemap, root)
			}
			continue
		}
		loc, isEntry, err := entryLoc(dec, start, root)
		if err != nil {
			return children, fmt.Errorf("sitemap XML: %w", err)
		}
		u := resolveHTTP(base, loc)
		switch {
		case !isEntry || u == nil:
		case root == "sitemapindex":
			if len(children) < maxChildren {
				children = append(children, u.String())
			}
		case !addPage(u):
			return children, nil // the page budget is spent: the rest is not needed
		}
	}
	if root == "" {
		return nil, fmt.Errorf("%w: empty document", errNotSitemap)
	}
	return children, nil
}

// entryLoc decodes a <url> of a urlset or a <sitemap> of an index and returns its <loc>.
func entryLoc(dec *xml.Decoder, start xml.StartElement, root string) (string, bool, error) {
	want := "url"
	if root == "sitemapindex" {
		want = "sitemap"
	}
	if start.Name.Local != want {
		return "", false, nil
	}
	var entry struct {
		Loc string `xml:"loc"`
	}
	if err := dec.DecodeElement(&entry, &start); err != nil {
		return "", false, err
	}
	return entry.Loc, true, nil
}
