package audit

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/contentapi/contentapi/internal/crawler"
)

// Performance and mobile: what makes a page slow to arrive, to parse, or to show on a
// phone.

// Performance and mobile issue types.
const (
	SlowTTFB             = "slow_ttfb"
	LargeHTML            = "large_html"
	PageTooLarge         = "page_too_large"
	ExcessiveDOM         = "excessive_dom"
	RenderBlockingScript = "render_blocking_script"
	MissingViewport      = "missing_viewport"
)

// MaxTTFB is the time to first byte over which a page is slow: Google's "good" is under
// 800 ms; 600 leaves room. The crawl asks a page found slower again (Request.TTFBResampleOver),
// and the check judges the median of crawler.TTFBSamples samples.
const MaxTTFB = 600 * time.Millisecond

const (
	maxHTMLBytes   = 1 << 20 // 1 MiB of HTML: ten times a typical page
	maxDOMElements = 1500    // Lighthouse warns over 1,500 elements
)

func init() {
	register(Check{Type: SlowTTFB, Severity: SeverityWarning, Category: CategoryPerformance, Scope: Every,
		Threshold: "median time to first byte of 3 samples over 600 ms (from the connection's request to the answer's first byte)",
		Page: func(p *Page) (Item, bool) {
			samples := p.Facts.TTFBSamples
			if len(samples) < crawler.TTFBSamples || p.Facts.TTFB <= MaxTTFB {
				return Item{}, false // fast at once, or not sampled enough to tell
			}
			ms := make([]string, len(samples))
			for i, d := range samples {
				ms[i] = strconv.FormatInt(d.Milliseconds(), 10)
			}
			return Item{Value: fmt.Sprintf("%d ms (median of %s ms)", p.Facts.TTFB.Milliseconds(), strings.Join(ms, ", "))}, true
		}})
	register(Check{Type: PageTooLarge, Severity: SeverityError, Category: CategoryPerformance, Scope: Every,
		Threshold: "HTML over the crawl's body limit (2 MiB): read, judged and its links checked up to the limit only",
		Page: func(p *Page) (Item, bool) {
			if p.BodyBytes > 0 {
				return Item{Value: sizeValue(p.BodyBytes)}, p.BodyCut
			}
			return Item{Value: "over " + sizeValue(int64(p.Facts.HTMLBytes))}, p.BodyCut
		}})
	register(Check{Type: LargeHTML, Severity: SeverityWarning, Category: CategoryPerformance, Scope: Every,
		Threshold: "HTML over 1 MiB (over the 2 MiB body limit: page_too_large instead)",
		Page: func(p *Page) (Item, bool) {
			return Item{Value: fmt.Sprintf("%d KiB", p.Facts.HTMLBytes>>10)}, p.Facts.HTMLBytes > maxHTMLBytes && !p.BodyCut
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

// sizeValue writes a byte count as people read it: "8.1 MB" (decimal, as browsers and
// servers show sizes), "2.0 MB".
func sizeValue(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
