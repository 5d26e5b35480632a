package audit

import (
	"strconv"

	"github.com/contentapi/contentapi/internal/crawler"
)

// Structured data: JSON-LD blocks, and the schema.org types rich results need most often.

// Structured data issue types.
const (
	JSONLDInvalid              = "jsonld_invalid"
	SchemaArticleIncomplete    = "schema_article_incomplete"
	SchemaProductIncomplete    = "schema_product_incomplete"
	SchemaFAQPageIncomplete    = "schema_faqpage_incomplete"
	SchemaBreadcrumbIncomplete = "schema_breadcrumblist_incomplete"
	SchemaOrgIncomplete        = "schema_organization_incomplete"
)

func init() {
	register(Check{Type: JSONLDInvalid, Severity: SeverityError, Category: CategoryStructuredData, Scope: Every,
		Threshold: "a <script type=application/ld+json> that does not parse as JSON (first 256 KiB of JSON-LD per page)",
		Page: func(p *Page) (Item, bool) {
			return Item{Value: p.Facts.JSONLDError}, p.Facts.JSONLDInvalid > 0
		}})
	for _, s := range []struct{ typ, schema, needs string }{
		{SchemaArticleIncomplete, "Article", "headline (also NewsArticle, BlogPosting)"},
		{SchemaProductIncomplete, "Product", "name, and one of offers, review, aggregateRating"},
		{SchemaFAQPageIncomplete, "FAQPage", "mainEntity"},
		{SchemaBreadcrumbIncomplete, "BreadcrumbList", "itemListElement"},
		{SchemaOrgIncomplete, "Organization", "name and url"},
	} {
		register(Check{Type: s.typ, Severity: SeverityWarning, Category: CategoryStructuredData, Scope: Every,
			Threshold: "a top-level " + s.schema + " object (or @graph member) lacking " + s.needs,
			Page:      schemaMissing(s.schema)})
	}
}

// schemaMissing finds the page's schema.org objects of a family lacking a required
// property; the value names the first property missing and how many objects lack one.
func schemaMissing(family string) func(*Page) (Item, bool) {
	return func(p *Page) (Item, bool) {
		var first crawler.SchemaIssue
		n := 0
		for _, is := range p.Facts.SchemaIssues {
			if crawler.SchemaFamily(is.Type) == family {
				if n == 0 {
					first = is
				}
				n++
			}
		}
		if n == 0 {
			return Item{}, false
		}
		v := first.Type + " lacks " + first.Missing
		if n > 1 {
			v += " (+" + strconv.Itoa(n-1) + " more)"
		}
		return Item{Value: v}, true
	}
}
