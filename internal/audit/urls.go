package audit

import (
	"net/url"
	"strconv"
	"strings"
)

// URLs: how the page's own address is written.

// URL issue types.
const (
	URLSessionID       = "url_session_id"
	URLSpaces          = "url_spaces"
	URLUnderscores     = "url_underscores"
	URLUppercase       = "url_uppercase"
	URLRepeatedSlashes = "url_repeated_slashes"
	URLTooLong         = "url_too_long"
)

// maxURLChars: longer URLs are cut in search results and hard to share.
const maxURLChars = 115

// sessionParams are query parameters that carry a session: each visitor gets another URL
// for the same page.
var sessionParams = []string{"sid", "sessionid", "session_id", "phpsessid", "jsessionid", "sessid", "aspsessionid"}

func init() {
	register(Check{Type: URLSessionID, Severity: SeverityWarning, Category: CategoryURLs, Scope: Every,
		Threshold: "a query parameter (or ;jsessionid) named sid, sessionid, session_id, phpsessid, jsessionid, sessid or aspsessionid",
		Page: func(p *Page) (Item, bool) {
			u, err := url.Parse(p.FinalURL)
			if err != nil {
				return Item{}, false
			}
			for k := range u.Query() {
				if containsFold(sessionParams, k) {
					return Item{Value: k}, true
				}
			}
			return Item{Value: "jsessionid"}, strings.Contains(strings.ToLower(u.Path), ";jsessionid=")
		}})
	register(Check{Type: URLSpaces, Severity: SeverityWarning, Category: CategoryURLs, Scope: Every,
		Threshold: "a space (%20 or +) in the path",
		Page: urlPath(func(path string) bool {
			return strings.Contains(path, "%20") || strings.Contains(path, " ") || strings.Contains(path, "+")
		})})
	register(Check{Type: URLUnderscores, Severity: SeverityNotice, Category: CategoryURLs, Scope: Every,
		Threshold: "an underscore in the path: search engines read hyphens, not underscores, as word breaks",
		Page:      urlPath(func(path string) bool { return strings.Contains(path, "_") })})
	register(Check{Type: URLUppercase, Severity: SeverityNotice, Category: CategoryURLs, Scope: Every,
		Threshold: "an upper-case letter in the path: paths are case-sensitive, so variants split signals",
		Page:      urlPath(func(path string) bool { return strings.ToLower(path) != path })})
	register(Check{Type: URLRepeatedSlashes, Severity: SeverityNotice, Category: CategoryURLs, Scope: Every,
		Threshold: "// inside the path",
		Page:      urlPath(func(path string) bool { return strings.Contains(path, "//") })})
	register(Check{Type: URLTooLong, Severity: SeverityNotice, Category: CategoryURLs, Scope: Every,
		Threshold: "a URL over 115 characters",
		Page: func(p *Page) (Item, bool) {
			return Item{Value: strconv.Itoa(len(p.FinalURL)) + " chars"}, len(p.FinalURL) > maxURLChars
		}})
}

// urlPath judges the escaped path of the page's final URL.
func urlPath(bad func(path string) bool) func(*Page) (Item, bool) {
	return func(p *Page) (Item, bool) {
		u, err := url.Parse(p.FinalURL)
		return Item{}, err == nil && bad(u.EscapedPath())
	}
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
