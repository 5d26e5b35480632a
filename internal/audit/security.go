package audit

import (
	"strconv"
	"strings"
)

// Security: what an https page loads or sends over plain http, and HSTS.

// Security issue types.
const (
	MixedContent    = "mixed_content"
	FormPostsToHTTP = "form_posts_to_http"
	MissingHSTS     = "missing_hsts"
)

func init() {
	register(Check{Type: MixedContent, Severity: SeverityError, Category: CategorySecurity, Scope: Every,
		Threshold: "an https page loading an img, script, stylesheet or iframe over http://: browsers block or flag it",
		Page: httpsOnly(func(p *Page) (Item, bool) {
			return Item{Target: p.Facts.FirstHTTPResource, Value: strconv.Itoa(p.Facts.HTTPResources) + " resources"}, p.Facts.HTTPResources > 0
		})})
	register(Check{Type: FormPostsToHTTP, Severity: SeverityError, Category: CategorySecurity, Scope: Every,
		Threshold: "an https page with a <form action=\"http://...\">: what users type leaves unencrypted",
		Page: httpsOnly(func(p *Page) (Item, bool) {
			return Item{Target: p.Facts.FirstInsecureForm}, p.Facts.InsecureForms > 0
		})})
	register(Check{Type: MissingHSTS, Severity: SeverityNotice, Category: CategorySecurity, Scope: Every,
		Threshold: "an https page answered without a Strict-Transport-Security header",
		Page:      httpsOnly(func(p *Page) (Item, bool) { return Item{}, !p.Facts.HSTS })})
}

// httpsOnly runs a check on https pages only.
func httpsOnly(check func(p *Page) (Item, bool)) func(*Page) (Item, bool) {
	return func(p *Page) (Item, bool) {
		if !strings.HasPrefix(p.FinalURL, "https://") {
			return Item{}, false
		}
		return check(p)
	}
}
