package dashboard_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// hostileTitle is a page title that would run script on a page that did not escape it.
const hostileTitle = `</title><script>alert("crawled")</script><img src=x onerror=alert(1)>`

// localSite is a small site on a loopback port, for audits: a home page whose title is
// hostile, linking to a few articles, one of them thin. It returns its host:port.
func localSite(t testing.TB) string {
	t.Helper()
	words := func(n int) string { return strings.Repeat("coffee brewing guide words ", n/4) }
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, `<!doctype html><html><head><title>%s</title></head><body><h1>Home</h1><p>%s</p>
<a href="/cold-brew">Cold brew</a> <a href="/espresso">Espresso</a> <a href="/thin">Thin</a></body></html>`,
			strings.ReplaceAll(hostileTitle, "</title>", "&lt;/title&gt;"), words(400))
	})
	for _, p := range []struct {
		path, title string
		words       int
	}{{"/cold-brew", "Cold brew coffee guide", 900}, {"/espresso", "Espresso guide", 700}, {"/thin", "Thin", 40}} {
		mux.HandleFunc(p.path, func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `<!doctype html><html><head><title>%s</title><meta name="description" content="%s"></head><body><h1>%s</h1><p>%s</p><a href="/">Home</a></body></html>`,
				p.title, p.title, p.title, words(p.words))
		})
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

var shareLinkRE = regexp.MustCompile(`id="share-link" readonly value="([^"]+)"`)

// under is the address of path under a share link ("/result.json"): the token stays in
// the query.
func under(link, path string) string {
	return strings.Replace(link, "/shared?", "/shared"+path+"?", 1)
}

// A report shared by link: the link opens it without a session and shows nothing of the
// account, downloads work through it, the expiry is bounded, the forms want their CSRF
// token, another account cannot revoke it, and once revoked or expired it is gone (410).
func TestShareLinks(t *testing.T) {
	e := startEnv(t)
	b := e.newBrowser(t)
	email := uniqueEmail("share")
	key := e.signIn(t, b, email)
	site := localSite(t)
	status, body := e.call(t, key, http.MethodPost, "/v1/content/audit", `{"domain":"`+site+`","max_pages":10}`)
	if status != http.StatusOK {
		t.Fatalf("audit: %d %s", status, body)
	}
	id := jobLinkRE.FindStringSubmatch(b.Get("/dashboard/jobs").Body)[1]
	jobPath := "/dashboard/jobs/" + id
	jobPage := b.Get(jobPath)
	if jobPage.Status != http.StatusOK || !strings.Contains(jobPage.Body, `data-kind="audit"`) || !strings.Contains(jobPage.Body, `id="health-score"`) {
		t.Fatalf("job page: %d %s", jobPage.Status, jobPage.Body)
	}
	// Everything crawled is escaped: the hostile title shows as text.
	if strings.Contains(jobPage.Body, `<script>alert("crawled")`) || strings.Contains(jobPage.Body, "<img src=x") ||
		!strings.Contains(jobPage.Body, "&lt;script&gt;alert(&#34;crawled&#34;)&lt;/script&gt;") {
		t.Fatalf("the crawled title is not escaped: %s", jobPage.Body)
	}
	csrf := jobPage.CSRF(t)

	for _, days := range []string{"0", "31", "x", ""} {
		if p := b.Post(jobPath+"/shares", url.Values{"csrf": {csrf}, "days": {days}}); p.Status != http.StatusBadRequest ||
			!strings.Contains(p.Body, `id="share-error"`) || strings.Contains(p.Body, `id="share-link"`) {
			t.Errorf("days %q: %d", days, p.Status)
		}
	}
	if p := b.Post(jobPath+"/shares", url.Values{"days": {"7"}}); p.Status != http.StatusForbidden {
		t.Fatalf("no CSRF token: %d", p.Status)
	}
	if strings.Contains(b.Get(jobPath).Body, `data-share-id=`) {
		t.Fatal("a refused form made a link")
	}
	made := b.Post(jobPath+"/shares", url.Values{"csrf": {csrf}, "days": {"7"}})
	m := shareLinkRE.FindStringSubmatch(made.Body)
	if made.Status != http.StatusCreated || m == nil {
		t.Fatalf("create: %d %s", made.Status, made.Body)
	}
	link := m[1]
	if !strings.HasPrefix(link, e.URL+"/dashboard/shared?token=") || strings.Contains(b.Get(jobPath).Body, link) {
		t.Fatalf("link %q, or shown again", link)
	}

	// A browser with no cookies at all.
	anon := e.newBrowser(t)
	shared := anon.Get(link)
	if shared.Status != http.StatusOK || !strings.Contains(shared.Body, `data-kind="audit"`) {
		t.Fatalf("shared page: %d %s", shared.Status, shared.Body)
	}
	for _, private := range []string{email, "Sign out", `name="csrf"`, "/dashboard/keys", id, "Share this report"} {
		if strings.Contains(shared.Body, private) {
			t.Errorf("the shared page shows %q", private)
		}
	}
	if strings.Contains(shared.Body, `<script>alert("crawled")`) {
		t.Fatal("the shared page does not escape the crawled title")
	}
	res, err := anon.c.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.Header.Get("Set-Cookie") != "" || res.Header.Get("Referrer-Policy") != "no-referrer" || !strings.Contains(res.Header.Get("X-Robots-Tag"), "noindex") {
		t.Fatalf("shared page headers %v", res.Header)
	}
	for _, dl := range []string{"/result.json", "/result.csv"} {
		if p := anon.Get(under(link, dl)); p.Status != http.StatusOK || !strings.Contains(p.Body, site) {
			t.Errorf("%s through the link: %d", dl, p.Status)
		}
	}
	// The link opens its report and nothing else.
	for _, path := range []string{jobPath, jobPath + "/result.json", "/dashboard/jobs", "/dashboard"} {
		if p := anon.Get(path); p.Status != http.StatusOK || !strings.HasSuffix(p.URL, "/dashboard/signin") {
			t.Errorf("%s without a session: %d %s", path, p.Status, p.URL)
		}
	}
	if p := anon.Get(link[:len(link)-2] + "AA"); p.Status != http.StatusNotFound {
		t.Errorf("another token: %d", p.Status)
	}
	// The token is a credential: the access log masks it.
	token := strings.TrimPrefix(link, e.URL+"/dashboard/shared?token=")
	if strings.Contains(e.logText(), token) || !strings.Contains(e.logText(), `"query":"token=****"`) {
		t.Fatal("the share token is in the log")
	}

	// An issue's page lists its URLs, for the owner and through the link.
	for _, p := range []page{b.Get(jobPath + "/issues/missing_viewport"), anon.Get(under(link, "/issues/missing_viewport"))} {
		if p.Status != http.StatusOK || !strings.Contains(p.Body, `id="issue-urls"`) || !strings.Contains(p.Body, site+"/thin") {
			t.Fatalf("issue page %s: %d %s", p.URL, p.Status, p.Body)
		}
	}
	if p := anon.Get(under(link, "/issues/no_such_issue")); p.Status != http.StatusNotFound {
		t.Errorf("unknown issue: %d", p.Status)
	}

	// Another account sees neither the job nor its links, and cannot revoke them.
	shareID := regexp.MustCompile(`data-share-id="([0-9a-f-]{36})"`).FindStringSubmatch(b.Get(jobPath).Body)[1]
	other := e.newBrowser(t)
	e.signIn(t, other, uniqueEmail("share-other"))
	otherCSRF := other.Get("/dashboard/keys").CSRF(t)
	if p := other.Get(jobPath + "/issues/missing_viewport"); p.Status != http.StatusNotFound {
		t.Errorf("another account's issue page: %d", p.Status)
	}
	if p := other.Post(jobPath+"/shares/"+shareID+"/revoke", url.Values{"csrf": {otherCSRF}}); p.Status != http.StatusNotFound {
		t.Fatalf("another account's revoke: %d", p.Status)
	}
	if p := anon.Get(link); p.Status != http.StatusOK {
		t.Fatalf("after another account's attempt: %d", p.Status)
	}

	// Revoked: gone, downloads too.
	if p := b.Post(jobPath+"/shares/"+shareID+"/revoke", url.Values{"csrf": {csrf}}); p.Status != http.StatusOK ||
		!strings.Contains(p.Body, ">revoked<") {
		t.Fatalf("revoke: %d %s", p.Status, p.Body)
	}
	for _, path := range []string{"", "/result.json", "/result.csv", "/issues/missing_viewport"} {
		if p := anon.Get(under(link, path)); p.Status != http.StatusGone {
			t.Errorf("revoked link%s: %d", path, p.Status)
		}
	}

	// A one-day link ends after a day.
	made = b.Post(jobPath+"/shares", url.Values{"csrf": {csrf}, "days": {"1"}})
	day := shareLinkRE.FindStringSubmatch(made.Body)[1]
	if p := anon.Get(day); p.Status != http.StatusOK {
		t.Fatalf("one-day link: %d", p.Status)
	}
	e.Clock.Advance(24*time.Hour + time.Second)
	if p := anon.Get(day); p.Status != http.StatusGone {
		t.Fatalf("one-day link after a day: %d", p.Status)
	}
}
