package audit

import (
	"strconv"

	"github.com/contentapi/contentapi/internal/crawler"
)

// Resources: the files pages link to or load (images, PDFs, scripts, stylesheets) and,
// when the request asks, links to other sites, checked by status alone.

// largeImageBytes: images over 200 KB (by Content-Length) slow pages down; PageSpeed's
// "properly size images" audits flag savings from about this size.
const largeImageBytes = 200 << 10

// Resource issue types.
const (
	BrokenFileLink     = "broken_file_link"
	BrokenImage        = "broken_image"
	LargeImage         = "large_image"
	BrokenExternalLink = "broken_external_link"
)

func init() {
	register(Check{Type: BrokenFileLink, Severity: SeverityError, Category: CategoryLinks,
		Threshold: "a linked file of the site (PDF, JSON, CSS, script, ... by extension or element) answering 4xx/5xx or not at all",
		Site:      resources(func(r crawler.Resource) bool { return !r.External && !r.Image && broken(r) })})
	register(Check{Type: BrokenImage, Severity: SeverityError, Category: CategoryImages,
		Threshold: "an image of the site (<img> or image/* type) answering 4xx/5xx or not at all",
		Site:      resources(func(r crawler.Resource) bool { return !r.External && r.Image && broken(r) })})
	register(Check{Type: BrokenExternalLink, Severity: SeverityWarning, Category: CategoryLinks,
		Threshold: "with check_external: a link to another site answering 4xx/5xx or not at all (first 100 external URLs)",
		Site:      resources(func(r crawler.Resource) bool { return r.External && broken(r) })})
	register(Check{Type: LargeImage, Severity: SeverityWarning, Category: CategoryImages,
		Threshold: "an image over 200 KB by its Content-Length",
		Site:      resources(func(r crawler.Resource) bool { return r.Image && r.ContentLength > largeImageBytes })})
}

// broken reports a resource that answered 4xx or 5xx, or gave no answer.
func broken(r crawler.Resource) bool {
	return r.Status >= 400 || (r.Status == 0 && r.Error != "")
}

// resources runs a check over the checked resources, by URL; items name the first page
// linking (source) and the status, error or size (value).
func resources(match func(r crawler.Resource) bool) func(s *Site) []Item {
	return func(s *Site) []Item {
		var items []Item
		for _, r := range s.Result.Resources {
			if !match(r) {
				continue
			}
			it := Item{URL: r.URL, Value: r.Error}
			switch {
			case r.Status >= 400:
				it.Value = strconv.Itoa(r.Status)
			case r.Status > 0:
				it.Value = strconv.FormatInt(r.ContentLength/1024, 10) + " KB"
			}
			if len(r.LinkedFrom) > 0 {
				it.Source = r.LinkedFrom[0]
			}
			items = append(items, it)
		}
		return items
	}
}
