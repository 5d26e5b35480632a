package crawler

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestCrawlFragments: links to #fragment are crawled as their page, and each fragment is
// judged against the target's ids and <a name>s; a missing one names its target, fragment
// and the pages linking to it.
func TestCrawlFragments(t *testing.T) {
	s := newTestSite(t)
	s.page("/{$}", htmlPage("Home", `<a href="/guide#install">ok by id</a>
		<a href="/guide#legacy">ok by a name</a>
		<a href="/guide#caf%C3%A9">ok percent-encoded</a>
		<a href="/guide#gone">missing</a>
		<a href="/guide#top">top</a>
		<a href="/guide#:~:text=brew">text fragment</a>
		<a href="#nowhere">missing on the page itself</a>
		<a href="#here">on the page itself</a><h2 id="here">Here</h2>`))
	s.page("/guide", htmlPage("Guide", `<h2 id="install">Install</h2><a name="legacy"></a><p id="café">x</p>
		<a href="/#nowhere">missing, from another page</a><a href="/guide#gone">missing, self</a>`))
	res, err := testCrawler(Config{}).Crawl(context.Background(), Request{Domain: s.domain(), CheckLinks: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := pagePaths(res); !slices.Equal(got, []string{"/", "/guide"}) {
		t.Fatalf("pages %q: fragments must not make pages of their own", got)
	}
	var got []string
	for _, b := range res.BrokenFragments {
		got = append(got, strings.TrimPrefix(b.URL, s.URL)+" "+b.Fragment+" "+strings.TrimPrefix(b.Target, s.URL)+" from "+strings.Join(trimAll(b.LinkedFrom, s.URL), ","))
	}
	want := []string{"/#nowhere nowhere / from /,/guide", "/guide#gone gone /guide from /,/guide"}
	if !slices.Equal(got, want) || res.BrokenFragmentsTotal != 2 {
		t.Errorf("broken fragments %q (total %d), want %q", got, res.BrokenFragmentsTotal, want)
	}
	if len(res.BrokenLinks) != 0 {
		t.Errorf("broken links %+v", res.BrokenLinks)
	}
}

func trimAll(urls []string, prefix string) []string {
	out := make([]string, len(urls))
	for i, u := range urls {
		out[i] = strings.TrimPrefix(u, prefix)
		if out[i] == "" {
			out[i] = "/"
		}
	}
	return out
}
