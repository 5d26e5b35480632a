package report

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The proof audits real HTML nobody here wrote, the books shipped with the Rust toolchain,
// through the real builder and crawler, and compares every finding with an independent
// reading of the files on disk: golang.org/x/net/html's tree parser and the rules of
// docs/analysis.md, none of the crawler's code. `make audit-proof` runs it verbosely and
// prints the table.

// proofBooks are the books audited, each served alone with a sitemap listing every .html
// file of the book.
var proofBooks = []string{"cargo", "book", "reference", "rustc", "nomicon", "edition-guide", "embedded-book", "rustdoc", "style-guide"}

// proofTrees are other HTML trees found on a machine, audited the same way when present:
// the Node.js API docs and npm's docs (shipped with Node), libxslt's and valgrind's
// manuals, Go's spec.
var proofTrees = [][2]string{
	{"nodejs-api", "/usr/share/doc/nodejs/api"},
	{"npm-docs", "/usr/lib/node_modules/npm/docs/output"},
	{"libxslt", "/usr/share/doc/libxslt1-dev/html"},
	{"valgrind", "/usr/share/doc/valgrind/html"},
	{"go-doc", "/usr/local/go/doc"},
}

// proofExplained are the differences understood and left as they are, by tree/type.
var proofExplained = map[string]string{}

// proofMaxPages is the audit's max_pages: the largest request allowed.
const proofMaxPages = 500

// proofDoc is what the independent reading takes from one file.
type proofDoc struct {
	url         string // as the sitemap lists it: a directory's index.html as the directory
	title       string // the first title outside svg, whitespace folded
	description string
	noindex     bool
	canonical   string   // the first, resolved; "" when none
	canonicals  []string // every <link rel=canonical> href, as written
	h1s         int      // h1 elements with text
	links       []string
	hreflang    []string // resolved alternates' URLs
	hreflangRaw []string // their hrefs as written
	file        string
	anchors     []proofAnchor   // every <a> outside svg (and <area> with href, for fragments)
	targets     map[string]bool // element ids and <a name>s
	base        *url.URL
}

// proofAnchor is one <a> as the tree shows it.
type proofAnchor struct {
	area                      bool
	href                      string
	hasHref, hrefAssoc        bool
	name, id, role, current   string
	labelled, named, nofollow bool
	text                      string // its text, whitespace folded
}

// proofBook is one book read from disk, served under base.
type proofBook struct {
	root, base string
	docs       []proofDoc
	listed     []string // every .html file's URL, for the sitemap
	oversized  int      // files over proofMaxBody, read up to it
	tooLarge   []string // their URLs
}

// proofMaxBody is the audit's documented bound on a page's body (docs/api.md): a larger
// file is audited as far as read, and is page_too_large.
const proofMaxBody = 2 << 20

// proofCheck is one issue type compared: the URLs the independent reading finds for it.
// A type the audit does not report (not in summary.issues) is shown as "not reported yet",
// so a check added to the audit later plugs in by its type name.
type proofCheck struct {
	typ         string
	independent func(b *proofBook) []string
}

var proofChecks = []proofCheck{
	{IssueBrokenInternalLink, func(b *proofBook) []string {
		return slices.DeleteFunc(b.brokenLinks(), isFileURL)
	}},
	{"broken_file_link", func(b *proofBook) []string {
		return slices.DeleteFunc(b.brokenLinks(), func(u string) bool { return !isFileURL(u) })
	}},
	{"page_too_large", func(b *proofBook) []string { return slices.Sorted(slices.Values(b.tooLarge)) }},
	{"broken_fragment", (*proofBook).brokenFragments},
	{"link_not_crawlable", (*proofBook).linkNotCrawlable},
	{"link_text_empty", (*proofBook).linkTextEmpty},
	{"link_text_generic", (*proofBook).linkTextGeneric},
	{IssueDuplicateTitle, (*proofBook).duplicateTitles},
	// Content checks judge every page, canonicalised and noindex ones too.
	{IssueMissingMetaDescription, func(b *proofBook) []string {
		return b.where(func(d proofDoc) bool { return d.description == "" })
	}},
	{IssueMissingH1, func(b *proofBook) []string { return b.where(func(d proofDoc) bool { return d.h1s == 0 }) }},
	{IssueMultipleH1, func(b *proofBook) []string { return b.where(func(d proofDoc) bool { return d.h1s > 1 }) }},
	{IssueSitemapCanonicalised, func(b *proofBook) []string {
		return b.where(func(d proofDoc) bool { return d.canonical != "" && !sameURL(d.canonical, d.url) })
	}},
	// The canonical and hreflang checks, by the names the audit gives them; a
	// branch without them shows "not reported yet".
	{"canonical_missing", func(b *proofBook) []string { return b.where(func(d proofDoc) bool { return len(d.canonicals) == 0 }) }},
	{"canonical_multiple", func(b *proofBook) []string { return b.where(func(d proofDoc) bool { return len(d.canonicals) > 1 }) }},
	{"canonical_relative", func(b *proofBook) []string {
		return b.where(func(d proofDoc) bool { return len(d.canonicals) > 0 && !absolute(d.canonicals[0]) })
	}},
	{"canonical_to_other_host", func(b *proofBook) []string {
		return b.where(func(d proofDoc) bool { return d.canonical != "" && !strings.HasPrefix(d.canonical, b.base+"/") })
	}},
	{"canonical_to_non_200", func(b *proofBook) []string {
		return b.where(func(d proofDoc) bool {
			return d.canonical != "" && !sameURL(d.canonical, d.url) && !b.exists(d.canonical)
		})
	}},
	{"hreflang_relative", func(b *proofBook) []string {
		return b.where(func(d proofDoc) bool { return !all(d.hreflangRaw, absolute) })
	}},
	{"hreflang_to_error", func(b *proofBook) []string {
		return b.where(func(d proofDoc) bool { return !all(d.hreflang, b.exists) })
	}},
}

// fetchesTargets are the types judged by fetching linked URLs, which the page limit also
// bounds: when the audit warns that links were left unchecked, what it reports must be
// found on disk, but it may report less.
var fetchesTargets = map[string]bool{IssueBrokenInternalLink: true, "canonical_to_non_200": true, "hreflang_to_error": true}

// TestAuditProofRustBooks audits each Rust book (max_pages 500) and requires every
// reported finding to equal the independent reading's, URL for URL where the answer lists
// them all. Broken links are compared only when every linked URL was checked (the page
// limit also bounds link checks; the audit then warns).
func TestAuditProofRustBooks(t *testing.T) {
	docs := rustDocs(t)
	var trees [][2]string // name, directory
	for _, name := range proofBooks {
		trees = append(trees, [2]string{name, filepath.Join(docs, name)})
	}
	trees = append(trees, proofTrees...)
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', tabwriter.AlignRight|tabwriter.Debug)
	fmt.Fprintln(tw, "book\tpages (ours/disk), audit time\tissue type\tours\tindependent\tverdict\t")
	for _, tree := range trees {
		name := tree[0]
		if _, err := os.Stat(tree[1]); err != nil {
			t.Logf("%s: not installed, skipped", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			b, srv := serveBook(t, tree[1])
			maxPages := proofMaxPages
			r := normalized(t, &AuditRequest{Domain: srv.Listener.Addr().String(), SitemapURL: srv.URL + "/proof-sitemap.xml",
				MaxPages: &maxPages})
			start := time.Now()
			res, err := newBuilder(t).Audit(context.Background(), r.deref())
			if err != nil {
				t.Fatal(err)
			}
			took := time.Since(start).Round(10 * time.Millisecond)
			linksUnchecked := slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "not checked for broken links") })
			b.acceptPages(t, res)
			pages := fmt.Sprintf("%d/%d", res.PagesCrawled, len(b.docs))
			if b.oversized > 0 {
				pages += fmt.Sprintf(" (%d over 2 MiB)", b.oversized)
			}
			pages += fmt.Sprintf(" in %s", took)
			for _, c := range proofChecks {
				want := c.independent(b)
				count, reported := res.Summary.Issues[c.typ]
				verdict := "equal"
				switch {
				case !reported:
					verdict = "not reported yet"
					fmt.Fprintf(tw, "%s\t%s\t%s\t-\t%d\t%s\t\n", name, pages, c.typ, len(want), verdict)
					continue
				case fetchesTargets[c.typ] && linksUnchecked:
					verdict = "links left unchecked (page limit)"
					if got := issueURLs(res, c.typ); !subset(got, want) {
						verdict = "DIFFERENT"
						t.Errorf("%s: reported and not found on disk: %v", c.typ, missing(got, want))
					}
				default:
					if diff := compareFinding(issueURLs(res, c.typ), count, want); diff != "" {
						verdict = "DIFFERENT"
						if why, ok := proofExplained[name+"/"+c.typ]; ok {
							verdict = "explained: " + why
							t.Logf("%s: %d found, %d on disk: %s (%s)", c.typ, count, len(want), diff, why)
						} else {
							t.Errorf("%s: %d found, %d on disk: %s", c.typ, count, len(want), diff)
						}
					}
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t\n", name, pages, c.typ, count, len(want), verdict)
			}
		})
	}
	tw.Flush()
	t.Logf("audit proof (max_pages %d) against an independent reading of the files:\n%s", proofMaxPages, table.String())
}

// acceptPages checks the answer's pages and errors against the disk: every page beyond the
// sitemap's (found by following links) must be a link of the book to a file that exists,
// and is then read as well; every error must be a file over 2 MiB or a link to no file.
func (b *proofBook) acceptPages(t *testing.T, res AuditResult) {
	t.Helper()
	known := map[string]bool{}
	for _, d := range b.docs {
		known[d.url] = true
	}
	for _, p := range res.Pages {
		if known[p.URL] {
			continue
		}
		if !slices.ContainsFunc(b.docs, func(d proofDoc) bool { return slices.Contains(d.links, p.URL) }) || !b.exists(p.URL) {
			t.Errorf("page %s is not in the sitemap, nor a link of the book to a file", p.URL)
			continue
		}
		doc, err := readDoc(b.file(p.URL), p.URL)
		if err != nil {
			t.Fatal(err)
		}
		b.docs = append(b.docs, doc)
		known[p.URL] = true
	}
	if res.PagesCrawled != len(b.docs) {
		t.Errorf("%d pages audited, %d on disk (sitemap and linked)", res.PagesCrawled, len(b.docs))
	}
	broken := b.brokenLinks()
	for _, e := range res.Errors {
		home := e.URL == b.base+"/" && !b.exists(e.URL) // the crawl always asks for the home page
		if !home && !slices.Contains(broken, e.URL) && !(b.exists(e.URL) && strings.HasPrefix(e.Error, "not an HTML page")) {
			t.Errorf("error %s (%s) is neither a link to no file nor a file that is not HTML", e.URL, e.Error)
		}
	}
}

// rustDocs is the Rust toolchain's html documentation directory; the test is skipped when
// there is none.
func rustDocs(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("rustc", "--print", "sysroot").Output()
	if err != nil {
		t.Skipf("no Rust toolchain (rustc --print sysroot: %v): the proof needs its html books", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "share", "doc", "rust", "html")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("the Rust toolchain has no html documentation at %s (rustup component add rust-docs)", dir)
	}
	return dir
}

// serveBook serves the book's directory alone at the root of a local server, as a site of
// its own: its links to the other books and to std (../std/...) are then broken links of
// the site, on disk as for the crawler. A sitemap lists every .html file of the book, and
// robots.txt allows everything. It reads the book's files independently.
func serveBook(t *testing.T, root string) (*proofBook, *httptest.Server) {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	b := &proofBook{root: root, base: srv.URL}
	err := filepath.WalkDir(b.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".html") {
			return err
		}
		rel, err := filepath.Rel(b.root, p)
		if err != nil {
			return err
		}
		u := srv.URL + "/" + filepath.ToSlash(rel)
		if strings.HasSuffix(u, "/index.html") {
			u = strings.TrimSuffix(u, "index.html") // http.FileServer redirects .../index.html there
		}
		b.listed = append(b.listed, u)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Size() > proofMaxBody {
			b.oversized++ // audited as far as read: 2 MiB of its body, and page_too_large
			b.tooLarge = append(b.tooLarge, u)
		}
		doc, err := readDoc(p, u)
		b.docs = append(b.docs, doc)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "User-agent: *\nDisallow:\n") })
	mux.HandleFunc("/proof-sitemap.xml", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		for _, u := range b.listed {
			fmt.Fprintf(w, "<url><loc>%s</loc></url>", html.EscapeString(u))
		}
		fmt.Fprint(w, `</urlset>`)
	})
	// As a static server without directory listings: a directory without index.html is
	// no page (http.FileServer would make one up).
	files := http.FileServer(http.Dir(b.root))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if !b.exists(b.base + r.URL.Path) {
			http.NotFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	})
	return b, srv
}

// readDoc parses one file into a tree and reads it.
func readDoc(file, pageURL string) (proofDoc, error) {
	f, err := os.Open(file)
	if err != nil {
		return proofDoc{}, err
	}
	defer f.Close()
	// A file over the body limit is read up to it, as the audit reads it (page_too_large).
	root, err := html.Parse(io.LimitReader(f, proofMaxBody))
	if err != nil {
		return proofDoc{}, fmt.Errorf("%s: %w", file, err)
	}
	d := proofDoc{url: pageURL, file: file, targets: map[string]bool{}}
	base, _ := url.Parse(pageURL)
	var titleSeen, baseSeen bool
	var walk func(n *html.Node, inSVG bool)
	var links []string
	walk = func(n *html.Node, inSVG bool) {
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.Svg:
				inSVG = true
			case atom.Title:
				if !inSVG && !titleSeen {
					titleSeen, d.title = true, fold(nodeText(n))
				}
			case atom.Meta:
				switch strings.ToLower(strings.TrimSpace(attr(n, "name"))) {
				case "description":
					if d.description == "" {
						d.description = fold(attr(n, "content"))
					}
				case "robots", "googlebot":
					for _, v := range strings.FieldsFunc(strings.ToLower(attr(n, "content")), func(r rune) bool { return r == ',' || r == ' ' }) {
						d.noindex = d.noindex || v == "noindex" || v == "none"
					}
				}
			case atom.Link:
				rel := strings.Fields(strings.ToLower(attr(n, "rel")))
				if slices.Contains(rel, "canonical") {
					d.canonicals = append(d.canonicals, strings.TrimSpace(attr(n, "href")))
				}
				if slices.Contains(rel, "alternate") && attr(n, "hreflang") != "" {
					d.hreflangRaw = append(d.hreflangRaw, strings.TrimSpace(attr(n, "href")))
				}
			case atom.Base:
				if !baseSeen {
					baseSeen = true
					if u, err := base.Parse(strings.TrimSpace(attr(n, "href"))); err == nil {
						base = u
					}
				}
			case atom.H1:
				if strings.TrimSpace(nodeText(n)) != "" {
					d.h1s++
				}
			case atom.A, atom.Area:
				if href, ok := hasAttr(n, "href"); ok {
					links = append(links, href)
				}
				if !inSVG {
					d.anchors = append(d.anchors, readAnchor(n))
				}
			}
			if id := attr(n, "id"); id != "" {
				d.targets[id] = true
			}
			if n.DataAtom == atom.A && attr(n, "name") != "" {
				d.targets[attr(n, "name")] = true
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inSVG)
		}
	}
	walk(root, false)
	d.base = base
	resolve := func(href string) string {
		u, err := base.Parse(strings.TrimSpace(href))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			return ""
		}
		u.Fragment, u.RawFragment = "", ""
		return u.String()
	}
	if len(d.canonicals) > 0 {
		d.canonical = resolve(d.canonicals[0])
	}
	for _, l := range links {
		if u := resolve(l); u != "" {
			d.links = append(d.links, u)
		}
	}
	for _, l := range d.hreflangRaw {
		if u := resolve(l); u != "" {
			d.hreflang = append(d.hreflang, u)
		}
	}
	return d, nil
}

func attr(n *html.Node, key string) string {
	v, _ := hasAttr(n, key)
	return v
}

func hasAttr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && strings.EqualFold(a.Key, key) {
			return a.Val, true
		}
	}
	return "", false
}

// nodeText is the text of a node and its descendants.
func nodeText(n *html.Node) string {
	var sb strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			sb.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return sb.String()
}

// absolute reports an href written with scheme and host.
func absolute(href string) bool {
	u, err := url.Parse(href)
	return err == nil && u.Scheme != "" && u.Host != ""
}

func all(list []string, ok func(string) bool) bool {
	return !slices.ContainsFunc(list, func(s string) bool { return !ok(s) })
}

func fold(s string) string { return strings.Join(strings.Fields(s), " ") }

// exists reports whether http.FileServer answers the URL of the book's server with 200:
// an existing file, or a directory (its index.html or listing). Other hosts count as
// existing: they are not the site's.
func (b *proofBook) exists(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	if "http://"+u.Host != b.base {
		return true
	}
	f := filepath.Join(b.root, filepath.FromSlash(path.Clean("/"+u.Path)))
	info, err := os.Stat(f)
	if err == nil && info.IsDir() {
		_, err = os.Stat(filepath.Join(f, "index.html")) // no listing without one
	}
	return err == nil
}

// isFileURL reports a URL the audit checks as a linked file, not a page: by its extension,
// as docs/audit-checks.md lists them (images, PDF, JSON, CSS, JS, archives, XML, ...).
func isFileURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	switch strings.ToLower(path.Ext(u.Path)) {
	case ".7z", ".apk", ".avi", ".avif", ".bmp", ".css", ".csv", ".dmg", ".doc", ".docx", ".eot", ".exe",
		".gif", ".gz", ".ico", ".jpeg", ".jpg", ".js", ".json", ".mov", ".mp3", ".mp4", ".ogg", ".pdf",
		".png", ".ppt", ".pptx", ".rar", ".rss", ".svg", ".tar", ".ttf", ".txt", ".wav", ".webm", ".webp",
		".woff", ".woff2", ".xls", ".xlsx", ".xml", ".zip":
		return true
	}
	return false
}

// file is the file http.FileServer answers a URL of the book's server with.
func (b *proofBook) file(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	f := filepath.Join(b.root, filepath.FromSlash(path.Clean("/"+u.Path)))
	if info, err := os.Stat(f); err == nil && info.IsDir() {
		f = filepath.Join(f, "index.html")
	}
	return f
}

// brokenLinks are the site's URLs linked from the book's pages that do not exist.
func (b *proofBook) brokenLinks() []string {
	var out []string
	for _, d := range b.docs {
		for _, l := range d.links {
			if strings.HasPrefix(l, b.base+"/") && !b.exists(l) {
				out = append(out, l)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// indexable reports a page meant to rank: not noindex, canonical naming itself or nothing.
func (d proofDoc) indexable() bool {
	return !d.noindex && (d.canonical == "" || sameURL(d.canonical, d.url))
}

func sameURL(a, b string) bool {
	trim := func(s string) string { return strings.TrimSuffix(strings.TrimSuffix(s, "index.html"), "/") }
	return trim(a) == trim(b)
}

func (b *proofBook) where(keep func(proofDoc) bool) []string {
	var out []string
	for _, d := range b.docs {
		if keep(d) {
			out = append(out, d.url)
		}
	}
	slices.Sort(out)
	return out
}

// duplicateTitles are the indexable pages whose title (case and whitespace folded) another
// indexable page has too.
func (b *proofBook) duplicateTitles() []string {
	byTitle := map[string][]string{}
	for _, d := range b.docs {
		if d.indexable() && d.title != "" {
			k := strings.ToLower(d.title)
			byTitle[k] = append(byTitle[k], d.url)
		}
	}
	var out []string
	for _, urls := range byTitle {
		if len(urls) > 1 {
			out = append(out, urls...)
		}
	}
	slices.Sort(out)
	return out
}

// issueURLs are the URLs the answer lists for an issue type.
func issueURLs(res AuditResult, typ string) []string {
	for _, is := range res.Issues {
		if is.Type == typ {
			return is.URLs
		}
	}
	return nil
}

// compareFinding says how the answer's finding differs from the independent one: the count,
// and the URLs when the answer lists them all (otherwise the listed ones must be found too).
func compareFinding(got []string, count int, want []string) string {
	if count != len(want) {
		return fmt.Sprintf("only reported %v; only on disk %v", first(missing(got, want), 5), first(missing(want, got), 5))
	}
	if count <= MaxIssueURLs && !slices.Equal(sorted(got), want) || !subset(got, want) {
		return fmt.Sprintf("only reported %v; only on disk %v", first(missing(got, want), 5), first(missing(want, got), 5))
	}
	return ""
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

func subset(a, b []string) bool { return len(missing(a, b)) == 0 }

// missing are the elements of a not in b.
func missing(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func first(s []string, n int) []string { return s[:min(len(s), n)] }
