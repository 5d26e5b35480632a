package crawler

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
)

// gunzipBounded returns at most limit bytes of r's content, inflated when it starts with
// gzip's magic bytes, whatever its name or Content-Type says. Go's transport has already
// undone a gzip Content-Encoding (its output is bounded here too), so this catches .xml.gz
// files and gzip served as plain HTML or XML. Nothing ever inflates past limit.
func gunzipBounded(r io.Reader, limit int64) (*bufio.Reader, error) {
	br := bufio.NewReader(io.LimitReader(r, limit))
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		br = bufio.NewReader(io.LimitReader(zr, limit))
	}
	return br, nil
}

// pageTransport hands colly page bodies that are already inflated and bounded. Colly
// inflates, with no size limit, any body whose Content-Type mentions gzip or whose path
// ends in .xml.gz unless the response says it was decompressed (Uncompressed): that is
// set on every response so colly never inflates, and the body is inflated here instead,
// to at most limit bytes.
type pageTransport struct {
	next  http.RoundTripper
	limit int64
}

func (t *pageTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	resp.Uncompressed = true
	resp.Body = &inflatingBody{src: resp.Body, limit: t.limit}
	return resp, nil
}

// inflatingBody inflates on first read, so a body left unread (colly aborting after the
// headers) costs nothing.
type inflatingBody struct {
	src   io.ReadCloser
	limit int64
	r     io.Reader
}

func (b *inflatingBody) Read(p []byte) (int, error) {
	if b.r == nil {
		r, err := gunzipBounded(b.src, b.limit)
		if err != nil {
			return 0, err
		}
		b.r = r
	}
	return b.r.Read(p)
}

func (b *inflatingBody) Close() error { return b.src.Close() }
