package httpapi_test

import (
	"cmp"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// TestAuditIssuesThroughAPI: the audit's issues and their counts reach the caller (do()
// also checks the answer against the OpenAPI document). The site has a page without a
// title, a sitemap URL that redirects, a page nothing links to and a broken link.
func TestAuditIssuesThroughAPI(t *testing.T) {
	s := startStack(t, stackConfig{})
	key := register(t, s.testServer)
	page := func(title string, links ...string) string {
		var a string
		for _, l := range links {
			a += `<a href="` + l + `">link</a> `
		}
		return fmt.Sprintf(`<html><head><title>%s</title><meta name="description" content="About %s"></head><body><nav>%s</nav><main><h1>%s</h1><p>%s</p></main></body></html>`,
			title, title, a, cmp.Or(title, "Untitled"), strings.Repeat("coffee brewing words ", 120))
	}
	pages := map[string]string{
		"/":         page("Home", "/untitled", "/old", "/dead"),
		"/untitled": page("", "/"),
		"/target":   page("Target", "/"),
		"/lonely":   page("Lonely", "/"),
	}
	var base string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nAllow: /\nSitemap: %s/sitemap.xml\n", base)
		case "/sitemap.xml":
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprint(w, `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
			for _, p := range []string{"/", "/untitled", "/old", "/lonely"} {
				fmt.Fprintf(w, "<url><loc>%s%s</loc></url>", base, p)
			}
			fmt.Fprint(w, `</urlset>`)
		case "/old":
			http.Redirect(w, r, "/target", http.StatusMovedPermanently)
		default:
			p, ok := pages[r.URL.Path]
			if !ok {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, p)
		}
	}))
	t.Cleanup(srv.Close)
	base = srv.URL

	r := do(t, "POST", s.URL+"/v1/content/audit", key, map[string]any{"domain": strings.TrimPrefix(srv.URL, "http://")})
	if r.Status != 200 {
		t.Fatalf("audit: %d %s", r.Status, r.Raw)
	}
	d := r.data()
	counts := d["summary"].(map[string]any)["issues"].(map[string]any)
	found := map[string][]string{}
	first := []string{"missing_title", "duplicate_title", "missing_meta_description", "duplicate_meta_description", "missing_h1",
		"multiple_h1", "sitemap_non_200", "sitemap_redirect", "sitemap_noindex", "sitemap_canonicalised", "broken_internal_link", "orphan_page"}
	var types []string // of the first audits' types; docs/audit-checks.md's others are tested in internal/audit
	for _, it := range d["issues"].([]any) {
		is := it.(map[string]any)
		typ := is["type"].(string)
		if items, _ := is["items"].([]any); is["category"] == "" || len(items) != len(is["urls"].([]any)) {
			t.Errorf("%s: category %v, %d items for %d urls", typ, is["category"], len(items), len(is["urls"].([]any)))
		}
		if slices.Contains(first, typ) {
			types = append(types, typ)
		}
		for _, u := range is["urls"].([]any) {
			found[typ] = append(found[typ], strings.TrimPrefix(u.(string), srv.URL))
		}
		if counts[typ] != is["count"] || is["count"] != float64(len(found[typ])) {
			t.Errorf("%s: count %v, summary %v, urls %v", typ, is["count"], counts[typ], found[typ])
		}
	}
	// The discovery checks see /old redirecting and linked, and /lonely reached by no link;
	// /dead, linked and answering 404, is one fault, reported once as broken_internal_link
	// (below), not also as a 4xx page.
	for typ, paths := range map[string][]string{"status_4xx": nil, "status_3xx": {"/old"}, "link_to_redirect": {"/old"}, "sitemap_only_page": {"/lonely"}} {
		if !slices.Equal(found[typ], paths) {
			t.Errorf("%s = %v, want %v", typ, found[typ], paths)
		}
	}
	if want := []string{"missing_title", "broken_internal_link", "sitemap_redirect", "orphan_page"}; !slices.Equal(types, want) {
		t.Fatalf("issue types %v, want %v: %s", types, want, r.Raw)
	}
	if !slices.Equal(found["broken_internal_link"], []string{"/dead"}) || !slices.Equal(found["orphan_page"], []string{"/lonely"}) ||
		!slices.Equal(found["sitemap_redirect"], []string{"/old"}) || !slices.Equal(found["missing_title"], []string{"/untitled"}) {
		t.Errorf("issues %v", found)
	}
	// Every type is counted: the checks framework's 74 and discovery's 22 at least.
	if len(counts) < 74+22 || counts["multiple_h1"] != float64(0) || counts["crawl_trap"] != float64(0) {
		t.Errorf("summary.issues %v, want every type", counts)
	}
}
