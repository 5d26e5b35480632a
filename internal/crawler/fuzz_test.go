package crawler

import (
	"bytes"
	"io"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkText fails unless s is text a result may hold: valid UTF-8, no NUL, at most n bytes.
func checkText(t *testing.T, field, s string, n int) {
	t.Helper()
	if len(s) > n || !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
		t.Fatalf("%s: %d bytes (max %d), valid UTF-8 %v, NUL %v: %.80q", field, len(s), n,
			utf8.ValidString(s), strings.IndexByte(s, 0) >= 0, s)
	}
}

// checkURL fails unless u is an http(s) URL of at most maxURLBytes.
func checkURL(t *testing.T, field, u string) {
	t.Helper()
	if len(u) > maxURLBytes || !(strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://")) {
		t.Fatalf("%s: %d bytes: %.80q", field, len(u), u)
	}
}

func FuzzParseSitemap(f *testing.F) {
	f.Add([]byte(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://example.com/a</loc></url><url><loc>/b</loc></url></urlset>`))
	f.Add([]byte(`<sitemapindex><sitemap><loc>s1.xml</loc></sitemap><sitemap><loc> https://example.com/s2.xml.gz </loc></sitemap></sitemapindex>`))
	f.Add([]byte(`<?xml version="1.0" encoding="ISO-8859-1"?><urlset><url><loc>/caf` + "\xe9" + `</loc></url></urlset>`))
	f.Add([]byte("\xef\xbb\xbf<urlset><url><loc><![CDATA[/x?a=1&b=2]]></loc></url><!-- c --><url><loc>/\x00</loc></url></urlset>"))
	f.Add([]byte(`<urlset><url><loc>/` + strings.Repeat("a", maxURLBytes) + `</loc></url><url><loc>/ok</loc></url></urlset>`))
	f.Add([]byte(`<urlset><url><loc>/a</loc><loc>/b</loc></url><url><image:image><loc>/img</loc></image:image></url></urlset><urlset/>`))
	f.Add(gzipBytes(f, []byte(`<urlset><url><loc>/zipped</loc></url></urlset>`)))
	f.Add([]byte(`<html><body>not a sitemap</body></html>`))
	base, _ := url.Parse("https://example.com/maps/sitemap.xml")
	f.Fuzz(func(t *testing.T, data []byte) {
		body, err := sitemapBody(bytes.NewReader(data))
		if err != nil {
			return
		}
		xmlDoc, _ := io.ReadAll(body) // gzip may have inflated it
		pages := 0
		doc, _ := parseSitemap(bytes.NewReader(xmlDoc), base, func(u *url.URL) bool {
			checkURL(t, "page", u.String())
			pages++
			return pages < 1000
		}, 10)
		if len(doc.children) > 10 {
			t.Fatalf("%d children, max 10", len(doc.children))
		}
		for _, c := range doc.children {
			checkURL(t, "child", c)
		}
		// An entry takes at least <url><loc>x</loc></url>, a long one more than maxURLBytes.
		if 23*pages > len(xmlDoc) || maxURLBytes*doc.longURLs > len(xmlDoc) {
			t.Fatalf("%d pages, %d long URLs from %d bytes", pages, doc.longURLs, len(xmlDoc))
		}
	})
}

func FuzzRobots(f *testing.F) {
	f.Add(200, []byte("User-agent: *\nDisallow: /private/\nAllow: /private/ok\nCrawl-delay: 2\n\nSitemap: https://example.com/sitemap.xml\n"))
	f.Add(200, []byte("User-agent: ContentStrategyBot\nDisallow: /\n\nUser-agent: *\nAllow: /\nSITEMAP: /relative.xml # comment\n"))
	f.Add(200, []byte("User-agent: *\nDisallow: /*.pdf$\nDisallow: /a*b\nCrawl-delay: -5\nCrawl-delay: 1e9\nSitemap:\nSitemap: "+strings.Repeat("x", 3000)+"\n"))
	f.Add(200, []byte("\xef\xbb\xbfuser-agent:*\r\ndisallow:/\x00\r\n"))
	f.Add(503, []byte(""))
	f.Add(404, []byte("<html>not found</html>"))
	base, _ := url.Parse("https://example.com/")
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if len(body) > maxRobotsBytes {
			body = body[:maxRobotsBytes] // fetchRobots reads no more
		}
		p, _ := newRobotsPolicy(status, body, DefaultUserAgent)
		if len(p.sitemaps) > maxRobotsSitemaps {
			t.Fatalf("%d sitemaps, max %d", len(p.sitemaps), maxRobotsSitemaps)
		}
		res := &Result{}
		s := &sitemapReader{res: res}
		for _, src := range s.roots(base, p.sitemaps, false) {
			checkURL(t, "sitemap", src.url)
		}
		for _, e := range res.SitemapErrors {
			if len(e.URL) > maxURLBytes {
				t.Fatalf("sitemap error URL of %d bytes", len(e.URL))
			}
		}
		if d, _ := politeDelay(0, p.crawlDelay()); d < 0 || d > maxCrawlDelay {
			t.Fatalf("delay %s", d)
		}
		for _, path := range []string{"/", "/private/x", "/a?b=c", "/%00"} {
			u, err := base.Parse(path)
			if err == nil {
				p.allows(u)
			}
		}
	})
}

func FuzzExtractPage(f *testing.F) {
	f.Add([]byte(htmlPage("Title | Site", `<main><h1>Head</h1><p>Some words here, don't stop.</p><h2>One</h2><h2>Two</h2></main>`)))
	f.Add([]byte(`<html><head><meta name="description" content="desc"><meta name="robots" content="noindex, nofollow">
		<link rel="canonical" href="/canon"><base href="https://cdn.example.com/"></head>
		<body><a href="/a">a</a><area href="b"><a href="javascript:x">j</a></body></html>`))
	f.Add([]byte("<title>Ti\x00tle\xff</title><h1>He\x00ad</h1><h2>\x00</h2><h2>two\xfe</h2><p>word\x00s</p>"))
	f.Add([]byte(`<svg><title>icon</title></svg><title>Real</title><nav>menu</nav><article><p>text</p></article><script>var a = "<h1>x</h1>";</script>`))
	f.Add([]byte(`<h1>unterminated <h2>nested</h1></h2><title>` + strings.Repeat("&lt;", 600) + `</title>` + strings.Repeat("<h2>long heading text</h2>", 200)))
	f.Add([]byte(`<link rel="canonical" href="/` + strings.Repeat("x", 3000) + `">`))
	base, _ := url.Parse("https://example.com/dir/page")
	f.Fuzz(func(t *testing.T, doc []byte) {
		info := extractPage(doc, true)
		checkText(t, "title", info.title, maxTextLen)
		checkText(t, "description", info.description, maxTextLen)
		checkText(t, "h1", info.h1, maxTextLen)
		total := 0
		for _, h := range info.h2s {
			checkText(t, "h2", h, maxTextLen)
			if h == "" {
				t.Fatal("empty h2 kept")
			}
			total += len(h)
		}
		if len(info.h2s) > maxH2s || total > maxH2Bytes {
			t.Fatalf("%d h2s of %d bytes", len(info.h2s), total)
		}
		if len(info.links) > maxLinks || info.words < 0 || info.words > len(doc) {
			t.Fatalf("%d links, %d words from %d bytes", len(info.links), info.words, len(doc))
		}
		if info.words != CountWords(doc) {
			t.Fatalf("words %d, CountWords %d", info.words, CountWords(doc))
		}
		var p Page
		p.fill(info, base)
		if p.Canonical != "" {
			checkURL(t, "canonical", p.Canonical)
		}
		links := resolveLinks(base, info.links)
		for _, l := range links {
			checkURL(t, "link", l.u.String())
		}
		if (info.h1 == "") != (info.h1s == 0) {
			t.Fatalf("h1 %q, %d h1s", info.h1, info.h1s)
		}
		g := newLinkGraph(maxLinkTargets)
		ids := g.addPage(base.String(), siteKey(base), links, true)
		if len(ids) > len(info.links) || len(g.urls) != len(ids) {
			t.Fatalf("%d ids, %d URLs from %d links", len(ids), len(g.urls), len(info.links))
		}
		for _, u := range g.urls {
			checkURL(t, "graph link", u)
		}
	})
}
