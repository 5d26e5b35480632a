package crawler

import (
	"net"
	"net/url"
	"path"
	"strings"
)

// maxURLBytes bounds every URL the crawler keeps or follows: links, sitemap <loc>s,
// canonicals and redirects. Longer URLs are junk or an attempt to bloat the result; they
// are dropped.
const maxURLBytes = 2048

// resolveHTTP resolves ref against base and normalises it; nil when ref is not an http(s)
// URL or is longer than maxURLBytes, before or after resolving.
func resolveHTTP(base *url.URL, ref string) *url.URL {
	u, _ := resolveBounded(base, ref)
	return u
}

// resolveBounded is resolveHTTP also telling whether it refused a URL for its length.
func resolveBounded(base *url.URL, ref string) (u *url.URL, tooLong bool) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, false
	}
	if len(ref) > maxURLBytes {
		return nil, true
	}
	parsed, err := base.Parse(ref)
	if err != nil {
		return nil, false
	}
	u = normalizeURL(parsed)
	if u != nil && len(u.String()) > maxURLBytes {
		return nil, true
	}
	return u, false
}

// normalizeURL lower-cases scheme and host, drops the fragment, credentials and default
// port, and gives an empty path "/". It returns nil for anything but http(s) with a host.
func normalizeURL(u *url.URL) *url.URL {
	scheme := strings.ToLower(u.Scheme)
	if (scheme != "http" && scheme != "https") || u.Hostname() == "" {
		return nil
	}
	n := *u
	n.Scheme = scheme
	n.User = nil
	n.Fragment, n.RawFragment = "", ""
	n.Host = strings.ToLower(n.Host)
	if port := n.Port(); port == defaultPort(scheme) {
		n.Host = bracketIPv6(n.Hostname())
	}
	if n.Path == "" && n.Opaque == "" {
		n.Path, n.RawPath = "/", ""
	}
	return &n
}

func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

func bracketIPv6(host string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]"
	}
	return host
}

// siteKey names the site a URL belongs to: host without "www." plus any non-default port.
// The www and bare hosts count as one site, and so do http and https.
func siteKey(u *url.URL) string {
	host := strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
	port := u.Port()
	if port == "" || port == defaultPort(strings.ToLower(u.Scheme)) {
		return host
	}
	return net.JoinHostPort(host, port)
}

// dedupeKey identifies a page across the scheme and www variants of its URL.
func dedupeKey(u *url.URL) string {
	return siteKey(u) + u.RequestURI()
}

// assetExts are file types that are never audit pages; link discovery skips them rather
// than spend the page budget on them.
var assetExts = map[string]bool{
	".7z": true, ".apk": true, ".avi": true, ".avif": true, ".bmp": true, ".css": true,
	".csv": true, ".dmg": true, ".doc": true, ".docx": true, ".eot": true, ".exe": true,
	".gif": true, ".gz": true, ".ico": true, ".jpeg": true, ".jpg": true, ".js": true,
	".json": true, ".mov": true, ".mp3": true, ".mp4": true, ".ogg": true, ".pdf": true,
	".png": true, ".ppt": true, ".pptx": true, ".rar": true, ".rss": true, ".svg": true,
	".tar": true, ".ttf": true, ".txt": true, ".wav": true, ".webm": true, ".webp": true,
	".woff": true, ".woff2": true, ".xls": true, ".xlsx": true, ".xml": true, ".zip": true,
}

func isAsset(u *url.URL) bool {
	return assetExts[strings.ToLower(path.Ext(u.Path))]
}

// robotsPath is the part of a URL robots.txt rules match against.
func robotsPath(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return p
}
