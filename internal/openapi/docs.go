package openapi

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
)

//go:embed docs
var docsFS embed.FS

// DocsCSP is the Content-Security-Policy of the reference page: scripts, styles, the document
// and the search worker come from the API's own origin only, so the page works offline and
// no third party sees who reads it. Redoc injects its styles and runs its search in a blob:
// worker.
const DocsCSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Asset is a file of the reference page, ready to serve.
type Asset struct {
	Name        string
	ContentType string
	Body        []byte
	Gzip        []byte // Body gzipped, for clients that accept it; nil when not worth it
	ETag        string // strong validator of Body
}

var (
	assetsOnce sync.Once
	assets     map[string]*Asset
)

// DocsAsset returns a bundled file of the reference page by its name under /docs/
// ("redoc.standalone.js"), and false for anything else. The page itself is DocsPage.
func DocsAsset(name string) (*Asset, bool) {
	assetsOnce.Do(loadAssets)
	a, ok := assets[name]
	return a, ok
}

func loadAssets() {
	assets = map[string]*Asset{}
	entries, err := docsFS.ReadDir("docs")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		if e.IsDir() || e.Name() == "index.html" {
			continue
		}
		body, err := docsFS.ReadFile("docs/" + e.Name())
		if err != nil {
			panic(err)
		}
		assets[e.Name()] = newAsset(e.Name(), contentType(e.Name()), body)
	}
}

func newAsset(name, ctype string, body []byte) *Asset {
	sum := sha256.Sum256(body)
	a := &Asset{Name: name, ContentType: ctype, Body: body, ETag: `"` + hex.EncodeToString(sum[:16]) + `"`}
	if len(body) > 1024 {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		_, _ = zw.Write(body)
		_ = zw.Close()
		if buf.Len() < len(body) {
			a.Gzip = buf.Bytes()
		}
	}
	return a
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "application/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".html":
		return "text/html; charset=utf-8"
	}
	return "text/plain; charset=utf-8"
}

// DocsPage returns the reference page. basePath is the path the API is served under behind
// a proxy ("" at the root, "/api" when PUBLIC_BASE_URL is https://host/api); the page loads
// basePath+"/v1/openapi.json" and basePath+"/docs/redoc.standalone.js".
func DocsPage(basePath string) *Asset {
	tmpl, err := docsFS.ReadFile("docs/index.html")
	if err != nil {
		panic(err)
	}
	basePath = strings.TrimRight(basePath, "/")
	page := strings.ReplaceAll(string(tmpl), "{{BASE}}", html.EscapeString(basePath))
	return newAsset("index.html", contentType("index.html"), []byte(page))
}

// ServeAsset answers a GET for a with caching validators and, when the client accepts it,
// gzip. It is for net/http users; the API adapts Asset to Fiber itself.
func ServeAsset(w http.ResponseWriter, r *http.Request, a *Asset) {
	h := w.Header()
	h.Set("Content-Type", a.ContentType)
	h.Set("ETag", a.ETag)
	h.Set("Cache-Control", "public, max-age=3600")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Add("Vary", "Accept-Encoding")
	if NotModified(r.Header.Get("If-None-Match"), a.ETag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := a.Body
	if a.Gzip != nil && AcceptsGzip(r.Header.Get("Accept-Encoding")) {
		h.Set("Content-Encoding", "gzip")
		body = a.Gzip
	}
	_, _ = w.Write(body)
}

// NotModified reports whether an If-None-Match header names etag.
func NotModified(ifNoneMatch, etag string) bool {
	for _, t := range strings.Split(ifNoneMatch, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}

// AcceptsGzip reports whether an Accept-Encoding header allows gzip (named with a q above 0).
func AcceptsGzip(acceptEncoding string) bool {
	for _, part := range strings.Split(acceptEncoding, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		for _, p := range strings.Split(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				return err == nil && q > 0
			}
		}
		return true
	}
	return false
}
