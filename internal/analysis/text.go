package analysis

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/contentapi/contentapi/internal/stem"
)

// jaccard is |a∩b| / |a∪b| for two sorted, de-duplicated sets, and the size of a∩b.
func jaccard(a, b []string) (float64, int) {
	if len(a) == 0 && len(b) == 0 {
		return 0, 0
	}
	shared := intersect(a, b)
	return float64(shared) / float64(len(a)+len(b)-shared), shared
}

// intersect counts the elements common to two sorted, de-duplicated sets.
func intersect(a, b []string) int {
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			n++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return n
}

// subset reports whether every element of the sorted set a is in the sorted set b.
func subset(a, b []string) bool {
	return intersect(a, b) == len(a)
}

// smallWords stay lower-case inside a title (articles, conjunctions, short prepositions),
// unless first or last.
var smallWords = stem.WordSet("a an and as at but by for from in into nor of on onto or per than the to via vs vs. with")

// properCase spells words whose casing a lower-case keyword loses.
var properCase = map[string]string{
	"seo": "SEO", "sem": "SEM", "ppc": "PPC", "cpc": "CPC", "api": "API", "apis": "APIs",
	"crm": "CRM", "erp": "ERP", "saas": "SaaS", "b2b": "B2B", "b2c": "B2C", "roi": "ROI",
	"kpi": "KPI", "kpis": "KPIs", "faq": "FAQ", "faqs": "FAQs", "pdf": "PDF", "html": "HTML",
	"css": "CSS", "sql": "SQL", "url": "URL", "urls": "URLs", "ui": "UI", "ux": "UX",
	"ai": "AI", "diy": "DIY", "usa": "USA", "uk": "UK", "eu": "EU", "nyc": "NYC",
	"tv": "TV", "pc": "PC", "usb": "USB", "hdmi": "HDMI", "gps": "GPS", "vpn": "VPN",
	"4k": "4K", "8k": "8K", "3d": "3D", "mp3": "MP3", "hr": "HR", "llc": "LLC",
	"ios": "iOS", "macos": "macOS", "iphone": "iPhone", "ipad": "iPad", "imac": "iMac",
	"youtube": "YouTube", "wordpress": "WordPress", "linkedin": "LinkedIn", "tiktok": "TikTok",
	"github": "GitHub", "javascript": "JavaScript", "typescript": "TypeScript",
	"paypal": "PayPal", "ebay": "eBay", "shopify": "Shopify", "google": "Google",
	"amazon": "Amazon", "facebook": "Facebook", "instagram": "Instagram", "wifi": "Wi-Fi",
	"chatgpt": "ChatGPT", "openai": "OpenAI", "hubspot": "HubSpot", "mailchimp": "Mailchimp",
}

// TitleCase capitalises a phrase for a headline: every word's first letter upper-case except
// small words (a, an, the, and, or, for, of, to, in, on, with, vs, …) that are neither first
// nor last; known acronyms and brands get their usual spelling (SEO, iPhone); a word the
// input already spells with capitals (an acronym, a brand) is kept as written; each part of
// a hyphenated word is capitalised ("Step-by-Step").
func TitleCase(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		edge := i == 0 || i == len(words)-1
		if i > 0 && (strings.HasSuffix(words[i-1], ":") || strings.HasSuffix(words[i-1], "?")) {
			edge = true
		}
		words[i] = titleWord(w, edge)
	}
	return strings.Join(words, " ")
}

func titleWord(w string, edge bool) string {
	if w != strings.ToLower(w) {
		return w // the input's own capitals (SEO, iPhone, McDonald's)
	}
	// Keep surrounding punctuation ("(2026)", "best?") while casing the core.
	start := strings.IndexFunc(w, stem.IsWordRune)
	if start < 0 {
		return w
	}
	end := strings.LastIndexFunc(w, stem.IsWordRune)
	_, size := utf8.DecodeRuneInString(w[end:])
	prefix, core, suffix := w[:start], w[start:end+size], w[end+size:]
	if p, ok := properCase[core]; ok {
		return prefix + p + suffix
	}
	if !edge && smallWords[core] {
		return w
	}
	parts := strings.Split(core, "-")
	for j, p := range parts {
		if j > 0 && j < len(parts)-1 && smallWords[p] {
			continue // "step-by-step"
		}
		if cp, ok := properCase[p]; ok {
			parts[j] = cp
			continue
		}
		parts[j] = UpperFirst(p)
	}
	return prefix + strings.Join(parts, "-") + suffix
}

// UpperFirst upper-cases the first letter of s.
func UpperFirst(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return s
	}
	return string(unicode.ToUpper(r)) + s[size:]
}
