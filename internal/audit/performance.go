package audit

import (
	"fmt"
	"strconv"
	"time"
)

// Performance and mobile: what makes a page slow to arrive, to parse, or to show on a
// phone.

// Performance and mobile issue types.
const (
	SlowTTFB             = "slow_ttfb"
	LargeHTML            = "large_html"
	ExcessiveDOM         = "excessive_dom"
	RenderBlockingScript = "render_blocking_script"
	MissingViewport      = "missing_viewport"
)

const (
	maxTTFB        = 600 * time.Millisecond // Google's "good" time to first byte is under 800 ms; 600 leaves room
	maxHTMLBytes   = 1 << 20                // 1 MiB of HTML: ten times a typical page
	maxDOMElements = 1500                   // Lighthouse warns over 1,500 elements
)

func init() {
	register(Check{Type: SlowTTFB, Severity: SeverityWarning, Category: CategoryPerformance, Scope: Every,
		Threshold: "time to first byte over 600 ms (from the connection's request to the answer's first byte)",
		Page: func(p *Page) (Item, bool) {
			return Item{Value: strconv.FormatInt(p.Facts.TTFB.Milliseconds(), 10) + " ms"}, p.Facts.TTFB > maxTTFB
		}})
	register(Check{Type: LargeHTML, Severity: SeverityWarning, Category: CategoryPerformance, Scope: Every,
		Threshold: "HTML over 1 MiB (pages over the crawl's 2 MiB body limit are errors)",
		Page: func(p *Page) (Item, bool) {
			return Item{Value: fmt.Sprintf("%d KiB", p.Facts.HTMLBytes>>10)}, p.Facts.HTMLBytes > maxHTMLBytes
		}})
	register(Check{Type: ExcessiveDOM, Severity: SeverityWarning, Category: CategoryPerformance, Scope: Every,
		Threshold: "over 1,500 elements",
		Page:      over(func(p *Page) int { return p.Facts.Elements }, maxDOMElements, "elements")})
	register(Check{Type: MissingViewport, Severity: SeverityWarning, Category: CategoryPerformance, Scope: Every,
		Threshold: "no <meta name=viewport>: phones show the desktop layout shrunk",
		Page:      func(p *Page) (Item, bool) { return Item{}, !p.Facts.Viewport }})
	register(Check{Type: RenderBlockingScript, Severity: SeverityNotice, Category: CategoryPerformance, Scope: Every,
		Threshold: "a <script src> in <head> without async, defer or type=module",
		Page: func(p *Page) (Item, bool) {
			return Item{Target: p.Facts.FirstRenderBlocking, Value: strconv.Itoa(p.Facts.RenderBlocking) + " scripts"}, p.Facts.RenderBlocking > 0
		}})
}
