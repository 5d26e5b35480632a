package crawler

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCrawlDiscoversEveryLinkKind: pages reachable only through an iframe, rel=next, an
// hreflang alternate or a meta refresh are found; a nofollow link is not followed; files are
// checked by HEAD (GET when HEAD is refused) with their type and length; redirect chains,
// loops and timeouts are told apart.
func TestCrawlDiscoversEveryLinkKind(t *testing.T) {
	s := newTestSite(t)
	s.robots("User-agent: *\nDisallow: /private/\n")
	s.page("/{$}", htmlPage("Home", `<iframe src="/framed"></iframe><a href="/list">list</a>
		<a href="/hidden" rel="nofollow">hidden</a> <a href="/hop1">chain</a> <a href="/loop-a">loop</a>
		<a href="/slow">slow</a> <a href="/private/x">private</a> <img src="/logo.png">
		<a href="/doc.pdf">pdf</a> <a href="/gone.pdf">gone</a> <a href="/nohead.json">data</a>`))
	s.page("/framed", htmlPage("Framed", "in a frame"))
	s.page("/list", `<html><head><title>List</title><link rel="next" href="/list-2">
		<link rel="alternate" hreflang="de" href="/de/list"></head><body>x</body></html>`)
	s.page("/list-2", `<html><head><title>List 2</title><meta http-equiv="refresh" content="5; URL='/refreshed'"></head><body>y</body></html>`)
	s.page("/de/list", htmlPage("Liste", "z"))
	s.page("/refreshed", htmlPage("Refreshed", "r"))
	s.page("/hidden", htmlPage("Hidden", "never fetched"))
	s.redirect("/hop1", "/hop2", http.StatusMovedPermanently)
	s.redirect("/hop2", "/end", http.StatusFound)
	s.page("/end", htmlPage("End", "e"))
	s.redirect("/loop-a", "/loop-b", http.StatusFound)
	s.redirect("/loop-b", "/loop-a", http.StatusFound)
	s.mux.HandleFunc("/slow", func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	s.serve("/logo.png", "image/png", make([]byte, 300<<10), "Content-Length", strconv.Itoa(300<<10))
	s.serve("/doc.pdf", "application/pdf", make([]byte, 1234))
	s.mux.HandleFunc("/nohead.json", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	})

	c := testCrawler(Config{RequestTimeout: 300 * time.Millisecond})
	res, err := c.Crawl(context.Background(), Request{Domain: s.domain(), MaxPages: 50, CheckLinks: true})
	if err != nil {
		t.Fatal(err)
	}
	pages := pagesByPath(res)
	depth := map[string]int{}
	for p, page := range pages {
		depth[p] = page.Depth
	}
	want := map[string]int{"/": 0, "/framed": 1, "/list": 1, "/hop1": 1, "/loop-a": 1, "/slow": 1,
		"/list-2": 2, "/refreshed": 3,
		"/de/list": -1, // found through an hreflang alternate, which is no link between pages
	}
	if !maps.Equal(depth, want) {
		t.Errorf("pages and depths = %v\nwant %v", depth, want)
	}
	// The nofollow link is not followed (its status is checked, with HEAD); the disallowed
	// one is never requested.
	if _, ok := pages["/hidden"]; ok || len(s.hitTimes("/private/x")) != 0 {
		t.Error("a nofollow link was followed or a disallowed one requested")
	}
	if p := pages["/list-2"]; p.MetaRefresh != "5; URL='/refreshed'" {
		t.Errorf("meta refresh = %q", p.MetaRefresh)
	}
	wantChain := []Hop{{URL: s.URL + "/hop1", Status: 301}, {URL: s.URL + "/hop2", Status: 302}}
	if p := pages["/hop1"]; !slices.Equal(p.RedirectChain, wantChain) || pathOf(p.FinalURL) != "/end" || p.Status != 200 {
		t.Errorf("/hop1 = %+v, want chain %v", p, wantChain)
	}
	if p := pages["/loop-a"]; p.ErrorKind != ErrorRedirectLoop || len(p.RedirectChain) != 2 {
		t.Errorf("/loop-a = %+v, want a redirect loop of 2 hops", p)
	}
	if p := pages["/slow"]; p.ErrorKind != ErrorTimeout || p.Status != 0 {
		t.Errorf("/slow = %+v, want a timeout", p)
	}
	if o := pages["/"].Outlinks; o == nil || o.Nofollow != 1 || o.Internal < 10 || pathOf(o.NofollowURLs[0]) != "/hidden" {
		t.Errorf("home outlinks = %+v", o)
	}
	got := map[string]string{}
	for _, r := range res.Resources {
		got[pathOf(r.URL)] = fmt.Sprintf("%d %s %d %v", r.Status, r.ContentType, r.ContentLength, r.Image)
	}
	wantRes := map[string]string{
		"/logo.png":    "200 image/png 307200 true",
		"/doc.pdf":     "200 application/pdf 1234 false",
		"/gone.pdf":    "404 text/plain 19 false",
		"/nohead.json": "200 application/json 11 false",
	}
	if !maps.Equal(got, wantRes) {
		t.Errorf("resources = %v\nwant %v", got, wantRes)
	}
	if heads := s.hitTimes("/doc.pdf"); len(heads) != 1 {
		t.Errorf("/doc.pdf asked %d times, want one HEAD", len(heads))
	}
	if len(res.Blocked) != 1 || len(res.Blocked[0].LinkedFrom) != 1 {
		t.Errorf("blocked = %+v", res.Blocked)
	}
}

// TestCrawlHostileSites: link loops, endless calendars, 10 MB pages, 100,000 links on a
// page and malformed hreflang each end in a bounded crawl whose findings say what happened.
func TestCrawlHostileSites(t *testing.T) {
	tests := []struct {
		name     string
		maxPages int
		setup    func(s *testSite)
		check    func(t *testing.T, s *testSite, res *Result)
	}{
		{"relative link loop", 20, func(s *testSite) {
			// Every path answers with a relative link one level deeper: /a/, /a/a/, ...
			s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				_, _ = w.Write([]byte(htmlPage("Loop", `<a href="a/">deeper</a>`)))
			})
		}, func(t *testing.T, s *testSite, res *Result) {
			if len(res.Pages) != 3 || len(res.Traps) != 1 || res.Traps[0].Kind != TrapPathRepetition || !slices.Contains(res.Limits, LimitTraps) {
				t.Errorf("%d pages %q, traps %+v, limits %q", len(res.Pages), pagePaths(res), res.Traps, res.Limits)
			}
		}},
		{"endless calendar", 100, func(s *testSite) {
			s.page("/{$}", htmlPage("Home", `<a href="/calendar?day=0">calendar</a>`))
			s.mux.HandleFunc("/calendar", func(w http.ResponseWriter, r *http.Request) {
				d, _ := strconv.Atoi(r.URL.Query().Get("day"))
				w.Header().Set("Content-Type", "text/html")
				_, _ = fmt.Fprintf(w, `<a href="?day=%d">prev</a> <a href="?day=%d">next</a>`, d-1, d+1)
			})
		}, func(t *testing.T, s *testSite, res *Result) {
			if len(res.Pages) != 1+maxQueryVariants || len(res.Traps) != 1 || res.Traps[0].Kind != TrapQueryVariants || res.Traps[0].Path != "/calendar" {
				t.Errorf("%d pages, traps %+v", len(res.Pages), res.Traps)
			}
		}},
		{"10 MB page", 20, func(s *testSite) {
			s.page("/{$}", htmlPage("Home", `<a href="/huge">huge</a>`))
			s.page("/early", htmlPage("Early", "linked from the part read"))
			s.page("/late", htmlPage("Late", "linked past the limit"))
			s.serve("/huge", "text/html", []byte(htmlPage("Huge", `<a href="/early">early</a>`+strings.Repeat("<p>"+words(100)+"</p>", 17000)+`<a href="/late">late</a>`)))
		}, func(t *testing.T, s *testSite, res *Result) {
			// Read up to the limit: its links there are followed, those past it are not.
			pages := pagesByPath(res)
			if p := pages["/huge"]; !p.BodyCut || p.Error != "" || p.Title != "Huge" || !slices.Contains(res.Limits, LimitBytes) || !hasWarning(res, "over the body limit") {
				t.Errorf("/huge = %+v, limits %q", p, res.Limits)
			}
			if _, ok := pages["/early"]; !ok {
				t.Error("/early, linked from the part read, not crawled")
			}
			if _, ok := pages["/late"]; ok {
				t.Error("/late, linked past the limit, crawled")
			}
		}},
		{"100,000 links", 20, func(s *testSite) {
			var b strings.Builder
			for i := range 100000 {
				fmt.Fprintf(&b, `<a href=/p%d></a>`, i)
			}
			s.page("/{$}", htmlPage("Links", b.String()))
			s.mux.HandleFunc("/p", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
		}, func(t *testing.T, s *testSite, res *Result) {
			o := pagesByPath(res)["/"].Outlinks
			if o == nil || o.Total != 100000 || o.Read != maxLinks || !slices.Contains(res.Limits, LimitLinksPerPage) || !hasWarning(res, "has 100000 links") {
				t.Errorf("outlinks %+v, limits %q, warnings %q", o, res.Limits, res.Warnings)
			}
			if len(res.Pages) != 20 || !slices.Contains(res.Limits, LimitPages) {
				t.Errorf("%d pages, limits %q; want the page limit of 20", len(res.Pages), res.Limits)
			}
		}},
		{"malformed hreflang", 20, func(s *testSite) {
			s.page("/{$}", `<html><head><link rel="alternate" hreflang="xx_INVALID!!" href="::::">
				<link rel="alternate" hreflang="" href="/no-lang"><link rel="alternate" hreflang="de" href="javascript:alert(1)">
				<link rel="alternate" hreflang="fr" href="http://[::1">
				<link rel="alternate" hreflang="en-GB" href="/en-gb/"></head><body>x</body></html>`)
			s.page("/en-gb/", htmlPage("GB", "gb"))
		}, func(t *testing.T, s *testSite, res *Result) {
			if got := pagePaths(res); !slices.Equal(got, []string{"/", "/en-gb/"}) {
				t.Errorf("pages = %q, want the home page and its valid alternate", got)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestSite(t)
			tt.setup(s)
			// Bodies up to 4 MiB: the 100,000 links fit, the 10 MB page does not.
			res, err := testCrawler(Config{MaxBodyBytes: 4 << 20}).Crawl(context.Background(), Request{Domain: s.domain(), MaxPages: tt.maxPages, CheckLinks: true})
			if err != nil {
				t.Fatal(err)
			}
			checkResultBounded(t, res)
			tt.check(t, s, res)
		})
	}
}

// TestCrawlChecksExternalLinks: with CheckExternal, links to other sites are checked by
// status, each once, under the crawl's address rules; without it, none is requested.
func TestCrawlChecksExternalLinks(t *testing.T) {
	other := newTestSite(t)
	other.page("/ok", htmlPage("OK", "fine"))
	s := newTestSite(t)
	s.page("/{$}", htmlPage("Home", `<a href="`+other.URL+`/ok">ok</a> <a href="`+other.URL+`/missing">missing</a>
		<a href="http://10.1.2.3/">private</a> <a href="/a">a</a>`))
	s.page("/a", htmlPage("A", `<a href="`+other.URL+`/missing">missing again</a>`))

	res, err := testCrawler(Config{}).Crawl(context.Background(), Request{Domain: s.domain(), MaxPages: 10, CheckExternal: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range res.Resources {
		if !r.External {
			t.Errorf("site resource %+v", r)
		}
		got[r.URL] = fmt.Sprintf("%d %d", r.Status, r.LinkedFromTotal)
		if r.Status == 0 && !strings.Contains(r.Error, "forbidden address") {
			t.Errorf("%s: %q, want the address refused", r.URL, r.Error)
		}
	}
	want := map[string]string{other.URL + "/ok": "200 1", other.URL + "/missing": "404 2", "http://10.1.2.3/": "0 1"}
	if !maps.Equal(got, want) {
		t.Errorf("external resources = %v, want %v", got, want)
	}
	if len(other.hitTimes("/missing")) != 1 {
		t.Errorf("/missing asked %d times, want once", len(other.hitTimes("/missing")))
	}

	res, err = testCrawler(Config{}).Crawl(context.Background(), Request{Domain: s.domain(), MaxPages: 10})
	if err != nil || len(res.Resources) != 0 || len(other.hitTimes("/ok")) != 1 {
		t.Errorf("without CheckExternal: %v, resources %+v, /ok asked %d times", err, res.Resources, len(other.hitTimes("/ok")))
	}
}
