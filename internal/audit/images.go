package audit

import "strconv"

// Images: what describes them and what reserves their room. Broken and large images need
// the images' own answers: they belong to the link checks.

// Image issue types.
const (
	ImageMissingAlt   = "image_missing_alt"
	ImageAltTooLong   = "image_alt_too_long"
	ImageNoDimensions = "image_no_dimensions"
)

func init() {
	register(Check{Type: ImageMissingAlt, Severity: SeverityWarning, Category: CategoryImages, Scope: Every,
		Threshold: "an <img> without an alt attribute (alt=\"\" marks a decorative image: fine); first 1,000 images of a page",
		Page:      imageCount(func(p *Page) (int, string) { return p.Facts.ImagesNoAlt, p.Facts.FirstNoAlt })})
	register(Check{Type: ImageAltTooLong, Severity: SeverityNotice, Category: CategoryImages, Scope: Every,
		Threshold: "an alt text over 125 characters (screen readers cut it)",
		Page:      imageCount(func(p *Page) (int, string) { return p.Facts.LongAlts, p.Facts.FirstLongAlt })})
	register(Check{Type: ImageNoDimensions, Severity: SeverityNotice, Category: CategoryImages, Scope: Every,
		Threshold: "an <img> without both width and height attributes: the layout shifts as it loads",
		Page:      imageCount(func(p *Page) (int, string) { return p.Facts.ImagesNoSize, p.Facts.FirstNoSize })})
}

// imageCount reports a page with images at fault: how many (value) and the first one's
// src (target).
func imageCount(count func(p *Page) (n int, first string)) func(*Page) (Item, bool) {
	return func(p *Page) (Item, bool) {
		n, first := count(p)
		return Item{Target: first, Value: strconv.Itoa(n) + " images"}, n > 0
	}
}
