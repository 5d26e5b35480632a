package crawler

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

func gzipBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestParseSitemap(t *testing.T) {
	base, _ := url.Parse("https://example.com/maps/sitemap.xml")
	tests := []struct {
		name     string
		doc      string
		pages    []string
		children []string
		err      error
	}{
		{
			name: "urlset with relative and odd locs",
			doc: `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <url><loc> https://example.com/a </loc><lastmod>2024-01-01</lastmod>
    <image:image><image:loc>https://cdn.example.com/i.png</image:loc></image:image></url>
  <url><loc>/b#frag</loc></url>
  <url><loc>c?x=1</loc></url>
  <url><loc><![CDATA[https://example.com/d]]></loc></url>
  <url><loc>mailto:x@example.com</loc></url>
  <url></url>
</urlset>`,
			pages: []string{"https://example.com/a", "https://example.com/b", "https://example.com/maps/c?x=1", "https://example.com/d"},
		},
		{
			name:     "index",
			doc:      `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>/s1.xml</loc></sitemap><sitemap><loc>s2.xml.gz</loc></sitemap></sitemapindex>`,
			children: []string{"https://example.com/s1.xml", "https://example.com/maps/s2.xml.gz"},
		},
		{
			name:  "no namespace, latin-1",
			doc:   `<?xml version="1.0" encoding="ISO-8859-1"?><urlset><url><loc>/caf` + "\xe9" + `</loc></url></urlset>`,
			pages: []string{"https://example.com/caf%C3%A9"},
		},
		{name: "html page", doc: `<html><body>Not found</body></html>`, err: errNotSitemap},
		{name: "empty", doc: ``, err: errNotSitemap},
		{name: "truncated", doc: `<urlset><url><loc>/x</loc></ur`, err: errSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var pages []string
			add := func(u *url.URL) bool { pages = append(pages, u.String()); return true }
			doc, err := parseSitemap(strings.NewReader(tt.doc), base, add, 10)
			children := doc.children
			if tt.err != nil {
				if !matchErr(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(pages, tt.pages) || !slices.Equal(children, tt.children) {
				t.Errorf("pages = %q, children = %q; want %q, %q", pages, children, tt.pages, tt.children)
			}
		})
	}
}

// errSyntax stands for any *xml.SyntaxError in the table above.
var errSyntax = errors.New("XML syntax error")

func matchErr(err, want error) bool {
	if errors.Is(want, errSyntax) {
		return err != nil && strings.Contains(err.Error(), "XML syntax error")
	}
	return errors.Is(err, want)
}

func TestParseSitemapStopsWhenBudgetSpent(t *testing.T) {
	base, _ := url.Parse("https://example.com/sitemap.xml")
	var doc strings.Builder
	doc.WriteString("<urlset>")
	for range 100 {
		doc.WriteString("<url><loc>/p</loc></url>")
	}
	doc.WriteString("<url><loc>") // broken tail never reached
	calls := 0
	_, err := parseSitemap(strings.NewReader(doc.String()), base, func(*url.URL) bool { calls++; return calls < 3 }, 10)
	if err != nil || calls != 3 {
		t.Errorf("calls = %d, err = %v; want 3, nil", calls, err)
	}
}

func TestSitemapBodyDetectsGzipByMagic(t *testing.T) {
	xmlDoc := []byte("\xef\xbb\xbf<urlset></urlset>") // with a byte-order mark
	for name, body := range map[string][]byte{"plain": xmlDoc, "gzip": gzipBytes(t, xmlDoc)} {
		r, err := sitemapBody(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, _ := io.ReadAll(r)
		if string(got) != "<urlset></urlset>" {
			t.Errorf("%s: got %q", name, got)
		}
	}
	if _, err := sitemapBody(bytes.NewReader([]byte{0x1f, 0x8b, 0, 0})); err == nil {
		t.Error("corrupt gzip header: no error")
	}
}

func TestPoliteDelay(t *testing.T) {
	tests := []struct {
		configured, crawlDelay, want time.Duration
		note                         bool
	}{
		{0, 0, 0, false},
		{2 * time.Second, time.Second, 2 * time.Second, false},
		{0, time.Second, time.Second, true},
		{time.Second, 1500 * time.Millisecond, 1500 * time.Millisecond, true},
		{0, time.Hour, maxCrawlDelay, true},
		{20 * time.Second, time.Hour, 20 * time.Second, true},
	}
	for _, tt := range tests {
		got, note := politeDelay(tt.configured, tt.crawlDelay)
		if got != tt.want || (note != "") != tt.note {
			t.Errorf("politeDelay(%s, %s) = %s, %q; want %s, note %v", tt.configured, tt.crawlDelay, got, note, tt.want, tt.note)
		}
	}
}

func TestRobotsPolicy(t *testing.T) {
	const agent = DefaultUserAgent
	body := []byte("User-agent: *\nDisallow: /\n\nUser-agent: ContentStrategyBot\nDisallow: /secret\nCrawl-delay: 2\n\nSITEMAP: https://example.com/a.xml # main\nSitemap:https://cdn.example.com/b.xml.gz\n")
	p, err := newRobotsPolicy(200, body, agent)
	if err != nil {
		t.Fatal(err)
	}
	check := func(p *robotsPolicy, path string, want bool) {
		t.Helper()
		u, _ := url.Parse("https://example.com" + path)
		if got := p.allows(u); got != want {
			t.Errorf("allows(%s) = %v, want %v", path, got, want)
		}
	}
	check(p, "/", true) // our group replaces the * group
	check(p, "/secret/x", false)
	if p.crawlDelay() != 2*time.Second {
		t.Errorf("crawl delay = %s", p.crawlDelay())
	}
	if want := []string{"https://example.com/a.xml", "https://cdn.example.com/b.xml.gz"}; !slices.Equal(p.sitemaps, want) {
		t.Errorf("sitemaps = %q, want %q", p.sitemaps, want)
	}

	p5, _ := newRobotsPolicy(503, nil, agent)
	check(p5, "/", false)
	p404, _ := newRobotsPolicy(404, nil, agent)
	check(p404, "/anything", true)
	bad, err := newRobotsPolicy(200, []byte("Disallow: /x\nSitemap: https://example.com/s.xml\n"), agent)
	if err == nil {
		t.Error("rule before User-agent: no error")
	}
	check(bad, "/x", true)
	if len(bad.sitemaps) != 1 {
		t.Errorf("sitemaps of unparsable file = %q", bad.sitemaps)
	}
}

func TestSiteKeyAndNormalize(t *testing.T) {
	same := [][2]string{
		{"https://example.com/", "http://www.example.com/x"},
		{"https://EXAMPLE.com:443/", "https://example.com/"},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8080/a"},
	}
	for _, p := range same {
		a, _ := url.Parse(p[0])
		b, _ := url.Parse(p[1])
		if siteKey(a) != siteKey(b) {
			t.Errorf("siteKey(%s) = %q != siteKey(%s) = %q", p[0], siteKey(a), p[1], siteKey(b))
		}
	}
	different := [][2]string{
		{"https://example.com/", "https://blog.example.com/"},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8081/"},
		{"https://example.com/", "https://example.com.evil.net/"},
	}
	for _, p := range different {
		a, _ := url.Parse(p[0])
		b, _ := url.Parse(p[1])
		if siteKey(a) == siteKey(b) {
			t.Errorf("siteKey(%s) == siteKey(%s)", p[0], p[1])
		}
	}
	base, _ := url.Parse("https://example.com/dir/page")
	for ref, want := range map[string]string{
		"":                                    "",
		"  other ":                            "https://example.com/dir/other",
		"HTTPS://User:pw@Example.COM:443#top": "https://example.com/",
		"http://example.com:80/x?q=1#f":       "http://example.com/x?q=1",
		"//cdn.example.com/a":                 "https://cdn.example.com/a",
		"mailto:a@example.com":                "",
		"javascript:void(0)":                  "",
		"ftp://example.com/file":              "",
	} {
		got := ""
		if u := resolveHTTP(base, ref); u != nil {
			got = u.String()
		}
		if got != want {
			t.Errorf("resolveHTTP(%q) = %q, want %q", ref, got, want)
		}
	}
}
