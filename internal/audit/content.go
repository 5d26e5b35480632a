package audit

import (
	"fmt"
	"math/bits"
	"strconv"
)

// Content: headings and the main text: how much, and whether another page has it too.

// Content issue types.
const (
	MissingH1            = "missing_h1"
	MultipleH1           = "multiple_h1"
	ThinContent          = "thin_content"
	DuplicateContent     = "duplicate_content"
	NearDuplicateContent = "near_duplicate_content"
	LowTextHTMLRatio     = "low_text_html_ratio"
	HeadingsOutOfOrder   = "headings_out_of_order"
	EmptyHeading         = "empty_heading"
)

const (
	// maxSimHashDistance: SimHashes of 3-word shingles differing in at most 3 of 64 bits
	// mark texts that differ in a few words only (Manku et al., 2007, used k = 3).
	maxSimHashDistance = 3
	// minNearDuplicateWords: shorter texts are too short to compare by shingles.
	minNearDuplicateWords = 50
	// minTextRatio: visible text under 10% of the HTML's bytes.
	minTextRatio = 0.10
)

func init() {
	register(Check{Type: MissingH1, Severity: SeverityWarning, Category: CategoryContent,
		Threshold: "no <h1> with text",
		Page:      func(p *Page) (Item, bool) { return Item{}, p.H1Count == 0 }})
	register(Check{Type: ThinContent, Severity: SeverityWarning, Category: CategoryContent, Scope: OnlyIndexable,
		Threshold: "main content under thin_threshold words (default 300), as thin_content",
		Page: func(p *Page) (Item, bool) {
			return Item{Value: strconv.Itoa(p.WordCount) + " words"}, p.WordCount < p.site.ThinWords
		}})
	register(Check{Type: DuplicateContent, Severity: SeverityWarning, Category: CategoryContent,
		Threshold: "the same main text (every word, case-folded) as another indexable page",
		Site: func(s *Site) []Item {
			groups := map[string][]string{}
			for _, p := range s.Pages {
				if p.Indexable && p.Facts.MainWords > 0 {
					k := strconv.FormatUint(p.Facts.TextHash, 16)
					groups[k] = append(groups[k], p.FinalURL)
				}
			}
			return twins(groups)
		}})
	register(Check{Type: NearDuplicateContent, Severity: SeverityNotice, Category: CategoryContent,
		Threshold: "main text's 64-bit SimHash (3-word shingles) within 3 bits of another indexable page's, not an exact duplicate; pages of 50 words or more",
		Site:      nearDuplicates})
	register(Check{Type: HeadingsOutOfOrder, Severity: SeverityNotice, Category: CategoryContent,
		Threshold: "a heading skips a level (h4 after h2, or h3 before any h2)",
		Page:      func(p *Page) (Item, bool) { return Item{Value: p.Facts.HeadingOrder}, p.Facts.HeadingOrder != "" }})
	register(Check{Type: EmptyHeading, Severity: SeverityNotice, Category: CategoryContent,
		Threshold: "an h1-h6 with neither text nor image",
		Page:      over(func(p *Page) int { return p.Facts.EmptyHeadings }, 0, "empty")})
	register(Check{Type: LowTextHTMLRatio, Severity: SeverityNotice, Category: CategoryContent,
		Threshold: "visible text under 10% of the HTML's bytes",
		Page: func(p *Page) (Item, bool) {
			if p.Facts.HTMLBytes == 0 {
				return Item{}, false
			}
			r := float64(p.Facts.TextBytes) / float64(p.Facts.HTMLBytes)
			return Item{Value: fmt.Sprintf("%.1f%%", 100*r)}, r < minTextRatio
		}})
	register(Check{Type: MultipleH1, Severity: SeverityNotice, Category: CategoryContent,
		Threshold: "more than one <h1> with text",
		Page:      over(func(p *Page) int { return p.H1Count }, 1, "h1")})
}

// nearDuplicates pairs indexable pages whose SimHashes are close; each page is listed
// once, with its nearest twin. Comparing every pair of at most 500 pages is 125,000
// popcounts: cheaper than an index.
func nearDuplicates(s *Site) []Item {
	var cands []*Page
	for _, p := range s.Pages {
		if p.Indexable && p.Facts.MainWords >= minNearDuplicateWords {
			cands = append(cands, p)
		}
	}
	var items []Item
	for i, p := range cands {
		best, bestDist := "", maxSimHashDistance+1
		for j, q := range cands {
			if i == j || p.Facts.TextHash == q.Facts.TextHash {
				continue
			}
			if d := bits.OnesCount64(p.Facts.SimHash ^ q.Facts.SimHash); d < bestDist {
				best, bestDist = q.FinalURL, d
			}
		}
		if best != "" {
			items = append(items, Item{URL: p.FinalURL, Twin: best, Value: strconv.Itoa(bestDist) + " bits apart"})
		}
	}
	return items
}
