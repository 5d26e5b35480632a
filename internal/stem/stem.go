// Package stem splits keyword phrases into words and stems them per language, so that two
// spellings of one topic compare equal. It is below both the keyword providers (the local
// provider finds a topic's head word with it) and package analysis, and imports neither.
package stem

import (
	"slices"
	"strings"
	"unicode"

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
		case IsWordRune(r):
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

// IsWordRune reports whether r belongs in a word: a letter, a digit or a combining mark.
func IsWordRune(r rune) bool {
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
	"de": {nil, inSet(WordSet(stopwordsDE))},
	"it": {nil, inSet(WordSet(stopwordsIT))},
	"pt": {nil, inSet(WordSet(stopwordsPT))},
	"nl": {nil, inSet(WordSet(stopwordsNL))},
	"tr": {nil, inSet(WordSet(stopwordsTR))},
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

// Normalize is the sorted, de-duplicated stems of s joined by single spaces; two phrases
// that normalise equally target the same thing ("Cold-brew coffees" and "coffee cold brew"
// both give "brew coffe cold").
func Normalize(s, language string) string {
	return strings.Join(Set(s, language), " ")
}

// Set is the sorted, de-duplicated stems of s.
func Set(s, language string) []string {
	st := Stems(s, language)
	slices.Sort(st)
	return slices.Compact(st)
}

// headFirst are the languages whose noun phrases put the head word first ("jardinería
// casera", "dressage de chien"); the others put it last ("home gardening", "Hundetraining").
var headFirst = WordSet("es fr it pt")

// prepositions end the phrase a head word is looked for in: "how to make cold brew at
// home" is about cold brew, "best coffee for cold brew" about coffee.
var prepositions = WordSet("at for in on with without from of by near into about under over " +
	"de para con en sin pour avec sans à für mit ohne von zu im per da di con senza com sem")

// TopicHead returns the head word of a topic of two or more content words, as Tokens
// writes it: the last word that is not a stopword ("gardening" in "home gardening",
// "press" in "french press") before the first preposition that follows a content word
// ("brew" in "how to make cold brew at home"); the first such word in Spanish, French,
// Italian and Portuguese. A topic of one content word has no head word: "".
func TopicHead(topic, language string) string {
	var content []string
	cut := -1 // content words before the first preposition
	for _, t := range Tokens(topic) {
		if cut < 0 && len(content) > 0 && prepositions[t] {
			cut = len(content)
		}
		if !isStopword(t, language) && !prepositions[t] {
			content = append(content, t)
		}
	}
	if len(content) < 2 {
		return ""
	}
	if headFirst[LanguageCode(language)] {
		return content[0]
	}
	if cut > 0 {
		return content[cut-1]
	}
	return content[len(content)-1]
}

// isStopword reports whether the language's stopword list holds w.
func isStopword(w, language string) bool {
	st := stemmers[LanguageCode(language)]
	return st.stopword != nil && st.stopword(w)
}

// WordSet builds a set from space-separated words.
func WordSet(words string) map[string]bool {
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
