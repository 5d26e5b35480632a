package report

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/contentapi/contentapi/internal/crawler"
)

// TestAuditAgreementDump writes, for each HTML tree of the proof, what the audit's crawl
// found (every broken link, file and fragment, and per page the facts the meta
// description and link checks judge), by path, into $AUDIT_AGREEMENT_DIR/<tree>.json: to
// be compared with tools nobody here wrote (linkinator, Lighthouse), see
// docs/audit-checks.md ("Agreement"). Skipped without the variable.
func TestAuditAgreementDump(t *testing.T) {
	out := os.Getenv("AUDIT_AGREEMENT_DIR")
	if out == "" {
		t.Skip("AUDIT_AGREEMENT_DIR not set")
	}
	docs := rustDocs(t)
	var trees [][2]string
	for _, name := range proofBooks {
		trees = append(trees, [2]string{name, filepath.Join(docs, name)})
	}
	for _, tree := range append(trees, proofTrees...) {
		if _, err := os.Stat(tree[1]); err != nil {
			continue
		}
		t.Run(tree[0], func(t *testing.T) {
			_, srv := serveBook(t, tree[1])
			c := crawler.New(crawler.Config{AllowPrivate: true, RequestTimeout: 5e9})
			u, _ := url.Parse(srv.URL)
			res, err := c.Crawl(context.Background(), crawler.Request{Domain: u.Host, SitemapURL: srv.URL + "/proof-sitemap.xml",
				MaxPages: 5000, CheckLinks: true})
			if err != nil {
				t.Fatal(err)
			}
			p := func(raw string) string {
				v, err := url.Parse(raw)
				if err != nil {
					return raw
				}
				s := v.EscapedPath()
				if v.RawQuery != "" {
					s += "?" + v.RawQuery
				}
				return s
			}
			type page struct {
				Path                                    string
				MetaDescription                         bool
				Generic, Empty, NotCrawlable            int
				GenericHrefs, EmptyHrefs, NotCrawlHrefs []string
			}
			dump := struct {
				Broken, Files, Fragments []string
				Pages                    []page
			}{Broken: []string{}, Files: []string{}, Fragments: []string{}}
			for _, b := range res.BrokenLinks {
				dump.Broken = append(dump.Broken, p(b.URL))
			}
			for _, r := range res.Resources {
				if r.Status >= 400 || (r.Status == 0 && r.Error != "") {
					dump.Files = append(dump.Files, p(r.URL))
				}
			}
			for _, f := range res.BrokenFragments {
				dump.Fragments = append(dump.Fragments, p(f.Target)+"#"+f.Fragment)
			}
			for _, pg := range res.Pages {
				if pg.Status != 200 || pg.ContentType != "text/html" {
					continue
				}
				hrefs := func(l crawler.LinkProblems) []string {
					var out []string
					for _, e := range l.Examples {
						out = append(out, e.Href)
					}
					return out
				}
				f := pg.Facts
				dump.Pages = append(dump.Pages, page{Path: p(pg.FinalURL), MetaDescription: pg.MetaDescription != "",
					Generic: f.GenericTextLinks.Count, Empty: f.EmptyTextLinks.Count, NotCrawlable: f.NotCrawlableLinks.Count,
					GenericHrefs: hrefs(f.GenericTextLinks), EmptyHrefs: hrefs(f.EmptyTextLinks), NotCrawlHrefs: hrefs(f.NotCrawlableLinks)})
			}
			b, _ := json.MarshalIndent(dump, "", " ")
			if err := os.WriteFile(filepath.Join(out, tree[0]+".json"), b, 0o600); err != nil {
				t.Fatal(err)
			}
		})
	}
}
