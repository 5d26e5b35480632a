package analysis

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
	"github.com/kljensen/snowball/french"
	"github.com/kljensen/snowball/hungarian"
	"github.com/kljensen/snowball/norwegian"
	"github.com/kljensen/snowball/russian"
	"github.com/kljensen/snowball/spanish"
	"github.com/kljensen/snowball/swedish"
)

// Tokens splits s into lower-case words. A word is a run of letters, digits and combining
// marks; an apostrophe between letters stays in the word ("women's"), a dot between digits
// too ("2.0"); hyphens and all other punctuation separate words.
func Tokens(s string) []string {
	runes := []rune(strings.ToLower(s))
	var out []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			out = append(out, b.String())
			b.Reset()
		}
	}
	for i, r := range runes {
		switch {
		case isWordRune(r):
			b.WriteRune(r)
		case (r == '\'' || r == '’') && b.Len() > 0 && i+1 < len(runes) && unicode.IsLetter(runes[i+1]):
			b.WriteRune('\'')
		case r == '.' && b.Len() > 0 && i > 0 && unicode.IsDigit(runes[i-1]) && i+1 < len(runes) && unicode.IsDigit(runes[i+1]):
			b.WriteRune('.')
		default:
			flush()
		}
	}
	flush()
	return out
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

// stemmer is one language's stemming function and stopword test; stem is nil when
// snowball has no stemmer for the language (tokens are then used as they are).
type stemmer struct {
	stem     func(string, bool) string
	stopword func(string) bool
}

// stemmers maps a language code to its stemmer. snowball v0.10 stems English, Spanish,
// French, Russian, Swedish, Norwegian and Hungarian; German, Italian, Portuguese, Dutch and
// Turkish get stopword removal only.
var stemmers = map[string]stemmer{
	"en": {english.Stem, english.IsStopWord},
	"es": {spanish.Stem, spanish.IsStopWord},
	"fr": {french.Stem, french.IsStopWord},
	"ru": {russian.Stem, russian.IsStopWord},
	"sv": {swedish.Stem, swedish.IsStopWord},
	"no": {norwegian.Stem, norwegian.IsStopWord},
	"hu": {hungarian.Stem, hungarian.IsStopWord},
	"de": {nil, inSet(setOf(stopwordsDE))},
	"it": {nil, inSet(setOf(stopwordsIT))},
	"pt": {nil, inSet(setOf(stopwordsPT))},
	"nl": {nil, inSet(setOf(stopwordsNL))},
	"tr": {nil, inSet(setOf(stopwordsTR))},
}

// languageNames maps snowball's language names and regional codes to the codes above.
var languageNames = map[string]string{
	"english": "en", "spanish": "es", "french": "fr", "russian": "ru", "swedish": "sv",
	"norwegian": "no", "nb": "no", "nn": "no", "hungarian": "hu", "german": "de",
	"italian": "it", "portuguese": "pt", "dutch": "nl", "turkish": "tr",
}

// LanguageCode normalises a language ("EN", "en-US", "english", "") to a lower-case
// two-letter code; the empty string becomes "en".
func LanguageCode(language string) string {
	l := strings.ToLower(strings.TrimSpace(language))
	if l == "" {
		return "en"
	}
	if code, ok := languageNames[l]; ok {
		return code
	}
	if i := strings.IndexAny(l, "-_"); i > 0 {
		l = l[:i]
	}
	if code, ok := languageNames[l]; ok {
		return code
	}
	return l
}

// Stems returns the stems of the words of s, in order, without stopwords. English is the
// default; languages snowball cannot stem keep their lower-case tokens. When every word is
// a stopword, all words are kept so that a phrase never normalises to nothing.
func Stems(s, language string) []string {
	code := LanguageCode(language)
	st := stemmers[code]
	toks := Tokens(s)
	out := make([]string, 0, len(toks))
	for pass := 0; pass < 2 && len(out) == 0; pass++ {
		for _, t := range toks {
			if code == "fr" || code == "it" {
				// Elided articles: "l'eau" → "eau".
				if i := strings.LastIndexByte(t, '\''); i >= 0 && i+1 < len(t) {
					t = t[i+1:]
				}
			}
			if pass == 0 && st.stopword != nil && st.stopword(t) {
				continue
			}
			if st.stem != nil {
				t = st.stem(t, true)
			}
			out = append(out, t)
		}
	}
	return out
}

// NormalizePhrase is the sorted, de-duplicated stems of s joined by single spaces; two
// phrases that normalise equally target the same thing ("Cold-brew coffees" and "coffee
// cold brew" both give "brew coffe cold").
func NormalizePhrase(s, language string) string {
	return strings.Join(stemSet(s, language), " ")
}

// stemSet is the sorted, de-duplicated stems of s.
func stemSet(s, language string) []string {
	st := Stems(s, language)
	slices.Sort(st)
	return slices.Compact(st)
}

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
var smallWords = setOf("a an and as at but by for from in into nor of on onto or per than the to via vs vs. with")

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
	start := strings.IndexFunc(w, isWordRune)
	if start < 0 {
		return w
	}
	end := strings.LastIndexFunc(w, isWordRune)
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

// setOf builds a set from space-separated words.
func setOf(words string) map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// inSet turns a set into a membership test.
func inSet(m map[string]bool) func(string) bool {
	return func(w string) bool { return m[w] }
}

//nolint:gosec // G101 takes these word lists for credentials
const (
	stopwordsDE = "aber alle als am an auch auf aus bei bin bis bist da damit dann das dass dem den der des die dies diese dieser dir doch du durch ein eine einem einen einer eines er es für hat hatte ich ihr im in ist ja kann man mein mich mir mit nach nicht noch nur ob oder sich sie sind so um und uns unter vom von vor war was wenn wer wie wir wird zu zum zur über"
	stopwordsIT = "a ai al alla alle allo agli anche che chi ci con da dal dalla dei del della delle dello di e ed gli ha ho i il in la le lo ma mi ne nei nel nella non o per più se si sono su sua suo tra tu un una uno è"
	stopwordsPT = "a ao aos as até com como da das de do dos e ela ele em entre era essa esse está eu foi isso mais mas me na nas no nos não o os ou para pela pelo por que se sem seu sua são também um uma à é"
	stopwordsNL = "aan al als bij dan dat de die dit door een en er had heb heeft het hij hoe hun ik in is je kan maar me met mijn na naar niet nog of om ons ook op over te tot uit van voor was wat we wie wij zal ze zijn zo zou"
	stopwordsTR = "acaba ama ancak bir biraz bu da daha de defa diye en gibi hem hep her hiç ile ise için kez ki mi mu mü mı nasıl ne neden nerede niye o sanki şey siz şu tüm ve veya ya"
)
