package analysis

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/contentapi/contentapi/internal/stem"
)

// Brand is what a free-text brand_context says about the caller's brand.
type Brand struct {
	// Name is the brand's name ("Acme Coffee"), or "" when the text names none.
	Name string
	// Offering is what the brand sells or is ("small-batch cold brew concentrate",
	// "a specialty coffee roaster"), or "".
	Offering string
}

// brandStarters are words a brand description opens with before the name.
var brandStarters = stem.WordSet("we we're were our i i'm at welcome to this my hi hello a an are is am")

// brandVerbs introduce the offering after the name.
var brandVerbs = stem.WordSet("sells sell makes make offers offer provides provide builds build creates create produces produce roasts roast designs design develops develop delivers deliver brews brew crafts craft manufactures manufacture runs run is are")

// offeringStops end the offering phrase.
var offeringStops = stem.WordSet("to for in at with that which who whom since across from by so because while based where when through via")

// trailingConnectors are dropped from the end of a cut phrase.
var trailingConnectors = stem.WordSet("and or of the a an & with for to")

// ParseBrand derives a short brand name and offering from free text, simply:
//
//   - Only the first sentence is read (up to ". ", "!", "?", ";" or a line break).
//   - Up to 3 words with no verb are taken as the name as written ("Acme Coffee").
//   - Name: after skipping opening words such as "We are", "Our", "Welcome to", the first run
//     of up to 4 capitalised words that starts within the next 3 words ("We are Acme Coffee,
//     …" → "Acme Coffee"; "The Coffee Lab is …" → "The Coffee Lab").
//   - Offering: the words after the first of sells/makes/offers/provides/builds/creates/
//     roasts/is/are/… up to punctuation or a preposition, at most 8 words ("… sells
//     small-batch cold brew concentrate to cafés" → "small-batch cold brew concentrate").
//   - Without a name or a verb, the offering is the sentence's first 6 words.
func ParseBrand(context string) Brand {
	sentence := firstSentence(context)
	words := strings.Fields(sentence)
	if len(words) == 0 {
		return Brand{}
	}
	hasVerb := slices.ContainsFunc(words, func(w string) bool { return brandVerbs[strings.ToLower(trimWord(w))] })
	if len(words) <= 3 && !hasVerb {
		return Brand{Name: strings.TrimFunc(sentence, func(r rune) bool { return !stem.IsWordRune(r) && r != '&' })}
	}
	var b Brand
	i := 0
	for i < len(words) && brandStarters[strings.ToLower(trimWord(words[i]))] {
		i++
	}
	nameEnd := i
	for start := i; start < len(words) && start < i+3; start++ {
		var name []string
		j := start
		for j < len(words) && len(name) < 4 {
			w := words[j]
			core := trimWord(w)
			if core == "&" && len(name) > 0 && j+1 < len(words) && isCapitalised(trimWord(words[j+1])) {
				name = append(name, core)
				j++
				continue
			}
			if !isCapitalised(core) || brandVerbs[strings.ToLower(core)] {
				break
			}
			possessive := false
			for _, suf := range []string{"'s", "’s"} {
				if strings.HasSuffix(core, suf) {
					core, possessive = strings.TrimSuffix(core, suf), true
				}
			}
			name = append(name, core)
			j++
			if possessive || endsClause(w) {
				break
			}
		}
		if len(name) == 1 && strings.EqualFold(name[0], "the") {
			name = nil // "The best coffee in town"
		}
		if len(name) > 0 {
			b.Name = strings.Join(name, " ")
			nameEnd = j
			break
		}
	}
	for v := nameEnd; v < len(words); v++ {
		if !brandVerbs[strings.ToLower(trimWord(words[v]))] {
			continue
		}
		b.Offering = cutPhrase(words[v+1:], 8, true)
		break
	}
	if b.Offering == "" && b.Name != "" && nameEnd < len(words) {
		// An apposition: "Acme Coffee, a small-batch roaster in Portland".
		if a := strings.ToLower(words[nameEnd]); a == "a" || a == "an" {
			b.Offering = cutPhrase(words[nameEnd:], 8, true)
		}
	}
	if b.Name == "" && b.Offering == "" {
		b.Offering = cutPhrase(words, 6, false)
	}
	return b
}

// Label is how talking points refer to the brand: "Acme Coffee (small-batch cold brew
// concentrate)", the name alone, or the offering alone.
func (b Brand) Label() string {
	switch {
	case b.Name != "" && b.Offering != "":
		return b.Name + " (" + b.Offering + ")"
	case b.Name != "":
		return b.Name
	default:
		return b.Offering
	}
}

// abbreviations do not end a sentence.
var abbreviations = stem.WordSet("inc co ltd corp llc plc gmbh st dr mr mrs ms no vs e.g i.e etc")

// firstSentence is s up to its first sentence end, with spaces collapsed.
func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\n;!?"); i >= 0 {
		s = s[:i]
	}
	words := strings.Fields(s)
	for i, w := range words {
		if strings.HasSuffix(w, ".") && !abbreviations[strings.ToLower(strings.TrimSuffix(w, "."))] {
			words = words[:i+1]
			break
		}
	}
	return strings.TrimSuffix(strings.Join(words, " "), ".")
}

// cutPhrase takes up to max words, stopping at punctuation or (when stops) a preposition,
// and drops trailing connectors.
func cutPhrase(words []string, max int, stops bool) string {
	var out []string
	for _, w := range words {
		core := trimWord(w)
		if core == "" || len(out) == max || (stops && offeringStops[strings.ToLower(core)]) {
			break
		}
		out = append(out, core)
		if endsClause(w) {
			break
		}
	}
	for len(out) > 0 && trailingConnectors[strings.ToLower(out[len(out)-1])] {
		out = out[:len(out)-1]
	}
	return strings.Join(out, " ")
}

// endsClause reports whether a word ends with punctuation that closes a phrase.
func endsClause(w string) bool {
	r, _ := utf8.DecodeLastRuneInString(w)
	return strings.ContainsRune(",:;—()", r)
}

// trimWord trims punctuation (but not & or inner apostrophes) from a word's ends.
func trimWord(w string) string {
	return strings.TrimFunc(w, func(r rune) bool { return !stem.IsWordRune(r) && r != '&' })
}

// isCapitalised reports whether a word starts with an upper-case letter or has one inside
// ("Acme", "iRobot").
func isCapitalised(w string) bool {
	for i, r := range w {
		if unicode.IsUpper(r) {
			return true
		}
		if i == 0 && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return false
		}
	}
	return false
}

// Title writes an article title for a keyword, by intent (one of the four; "" or anything
// else means ClassifyIntent's), in title case. brand is the brand_context (see ParseBrand);
// year > 0 dates commercial titles and replaces a year in the keyword; 0 leaves them undated.
//
//	informational  how to X / how do I X   → "How to X: A Step-by-Step Guide"
//	               what is/are X           → "What Is X? Everything You Need to Know"
//	               why …                   → "Why …? The Reasons Explained"
//	               how long/much/many/often, when …
//	                                       → "How Long Does X Last? The Short Answer and What Changes It"
//	                                         ("How Long to Steep X: …" without "?")
//	               other questions         → "Question? What You Need to Know"
//	               … tips / ideas / recipe → "X Tips: Practical Advice That Works",
//	                                         "X Ideas: Inspiration and Examples to Try",
//	                                         "X Recipe: Step-by-Step Instructions"
//	               best way(s) to X        → "The Best Way to X: A Step-by-Step Guide"
//	               … guide / tutorial …    → "X Guide: Everything You Need to Know"
//	               otherwise               → "X: The Complete Guide"
//	commercial     X vs Y                  → "X vs Y: Which Should You Choose?"
//	               X review(s)             → "X Review(s) (2026): Pros, Cons and Our Verdict"
//	               X alternatives          → "Best X Alternatives in 2026: Compared Side by Side"
//	               X comparison            → "X Comparison: A Side-by-Side Breakdown"
//	               top N X                 → "Top N X in 2026: Tested and Compared"
//	               otherwise (best X, …)   → "Best X in 2026: Tested and Compared"
//	transactional  X near me               → "X Near Me: How to Find the Best Local Options"
//	               X price(s)/cost         → "X Prices: What You'll Pay and Where to Buy"
//	               X coupon/deal/discount  → "X Deals: How to Get the Best Price"
//	               where to buy X          → "Where to Buy X: The Best Places Online and in Stores"
//	               cheap(est) X            → "Cheap X: How to Find the Lowest Prices"
//	               X for sale              → "X for Sale: Prices, Options and Where to Get the Best Deal"
//	               otherwise               → "Buy X: Prices, Options and Where to Get the Best Deal"
//	navigational   X login / sign in       → "X Login: How to Sign In and Fix Common Problems"
//	               X sign up               → "X Sign Up: How to Create an Account"
//	               X customer service      → "X Customer Service: How to Get Help Fast"
//	               otherwise               → "X: Official Website and Key Links"
//
// When the brand has a name (and the keyword does not already contain it), "best",
// "top" and "alternatives" titles end with " (from the <Name> team)".
func Title(keyword, intent, brand string, year int) string {
	words := strings.Fields(keyword)
	for i, w := range words {
		words[i] = strings.TrimFunc(w, func(r rune) bool {
			return !stem.IsWordRune(r) && r != '&' && r != '+' && r != '#' && r != '$'
		})
	}
	words = slices.DeleteFunc(words, func(w string) bool { return w == "" })
	if len(words) == 0 {
		return ""
	}
	in := NormalizeIntent(intent)
	if in == "" {
		in = ClassifyIntent(keyword)
	}
	lw := make([]string, len(words))
	for i, w := range words {
		lw[i] = strings.ToLower(w)
	}
	tc := func(ws []string) string { return TitleCase(strings.Join(ws, " ")) }
	switch in {
	case Commercial:
		return commercialTitle(words, lw, ParseBrand(brand), year)
	case Transactional:
		return transactionalTitle(words, lw)
	case Navigational:
		return navigationalTitle(words, lw)
	}
	last := lw[len(lw)-1]
	switch {
	case hasPrefixWords(lw, "how", "to") && len(lw) > 2:
		return tc(append([]string{"how", "to"}, words[2:]...)) + ": A Step-by-Step Guide"
	case len(lw) > 3 && lw[0] == "how" && (lw[1] == "do" || lw[1] == "can" || lw[1] == "should") &&
		(lw[2] == "i" || lw[2] == "you" || lw[2] == "we"):
		return tc(append([]string{"how", "to"}, words[3:]...)) + ": A Step-by-Step Guide"
	case len(lw) > 3 && (hasPrefixWords(lw, "best", "way", "to") || hasPrefixWords(lw, "best", "ways", "to")):
		return tc(append([]string{"the"}, words...)) + ": A Step-by-Step Guide"
	case len(lw) > 2 && lw[0] == "what" && (lw[1] == "is" || lw[1] == "are"):
		return tc(append([]string{"what", lw[1]}, words[2:]...)) + "? Everything You Need to Know"
	case len(lw) > 1 && (lw[0] == "what's" || lw[0] == "whats"):
		return tc(append([]string{"what", "is"}, words[1:]...)) + "? Everything You Need to Know"
	case lw[0] == "why" && len(lw) > 1:
		return tc(words) + "? The Reasons Explained"
	case IsQuestion(keyword):
		sep, suffix := "? ", "What You Need to Know"
		if !needsQuestionMark(keyword) {
			sep = ": " // "how long to …" is a heading, not a question
		}
		switch kindOf(keyword) {
		case durationQuestion, amountQuestion, frequencyQuestion:
			suffix = "The Short Answer and What Changes It"
		}
		return tc(words) + sep + suffix
	case last == "tips" && len(lw) > 1:
		return tc(words) + ": Practical Advice That Works"
	case last == "ideas" && len(lw) > 1:
		return tc(words) + ": Inspiration and Examples to Try"
	case (last == "recipe" || last == "recipes") && len(lw) > 1:
		return tc(words) + ": Step-by-Step Instructions"
	case containsAny(lw, "guide", "tutorial"):
		return tc(words) + ": Everything You Need to Know"
	}
	return tc(words) + ": The Complete Guide"
}

func commercialTitle(words, lw []string, b Brand, year int) string {
	tc := func(ws []string) string { return TitleCase(strings.Join(ws, " ")) }
	inYear := ""
	if year > 0 {
		// The given year replaces a stale one in the keyword ("best laptops 2024").
		keep := make([]int, 0, len(words))
		for i, w := range lw {
			if !isYear(w) {
				keep = append(keep, i)
			}
		}
		if len(keep) > 0 && len(keep) < len(words) {
			words, lw = pick(words, keep), pick(lw, keep)
		}
		inYear = fmt.Sprintf(" in %d", year)
	}
	suffix := ""
	if b.Name != "" && !strings.Contains(strings.ToLower(strings.Join(words, " ")), strings.ToLower(b.Name)) {
		suffix = " (from the " + b.Name + " team)"
	}
	for i, w := range lw {
		if (w == "vs" || w == "versus" || w == "v") && i > 0 && i < len(lw)-1 {
			return tc(words[:i]) + " vs " + tc(words[i+1:]) + ": Which Should You Choose?"
		}
	}
	last := lw[len(lw)-1]
	subject := words
	if lw[0] == "best" && len(words) > 1 {
		subject = words[1:]
	}
	switch {
	case (last == "review" || last == "reviews") && len(words) > 1:
		dated := ""
		if year > 0 {
			dated = fmt.Sprintf(" (%d)", year)
		}
		return tc(words[:len(words)-1]) + " " + UpperFirst(last) + dated + ": Pros, Cons and Our Verdict"
	case (last == "alternatives" || last == "alternative") && len(subject) > 1:
		return "Best " + tc(subject[:len(subject)-1]) + " Alternatives" + inYear + ": Compared Side by Side" + suffix
	case (last == "comparison" || last == "compared") && len(words) > 1:
		return tc(words[:len(words)-1]) + " Comparison: A Side-by-Side Breakdown"
	case lw[0] == "compare" && len(words) > 1:
		return tc(words[1:]) + " Comparison: A Side-by-Side Breakdown"
	case lw[0] == "top" && len(words) > 1:
		return "Top " + tc(words[1:]) + inYear + ": Tested and Compared" + suffix
	}
	return "Best " + tc(subject) + inYear + ": Tested and Compared" + suffix
}

func transactionalTitle(words, lw []string) string {
	tc := func(ws []string) string { return TitleCase(strings.Join(ws, " ")) }
	switch {
	case containsWords(lw, "near", "me"):
		if s := withoutWords(words, lw, "near", "me"); len(s) > 0 {
			return tc(s) + " Near Me: How to Find the Best Local Options"
		}
	case containsAny(lw, "price", "prices", "pricing", "cost", "costs"):
		if s := withoutWords(words, lw, "price", "prices", "pricing", "cost", "costs"); len(s) > 0 {
			return tc(s) + " Prices: What You'll Pay and Where to Buy"
		}
	case containsAny(lw, "coupon", "coupons", "discount", "discounts", "deal", "deals", "voucher", "promo"):
		if s := withoutWords(words, lw, "coupon", "coupons", "discount", "discounts", "deal", "deals", "voucher", "promo", "code", "codes"); len(s) > 0 {
			return tc(s) + " Deals: How to Get the Best Price"
		}
	}
	if len(lw) > 3 && (hasPrefixWords(lw, "where", "to", "buy") || hasPrefixWords(lw, "where", "can", "i", "buy")) {
		return "Where to Buy " + tc(words[slices.Index(lw, "buy")+1:]) + ": The Best Places Online and in Stores"
	}
	if len(lw) > 1 && (lw[0] == "cheap" || lw[0] == "cheapest") {
		return tc(words) + ": How to Find the Lowest Prices"
	}
	s := words
	if len(lw) > 1 && (lw[0] == "buy" || lw[0] == "order" || lw[0] == "purchase" || lw[0] == "shop") {
		s = words[1:]
	}
	if n := len(s); n > 2 && strings.EqualFold(s[n-2], "for") && strings.EqualFold(s[n-1], "sale") {
		return tc(s) + ": Prices, Options and Where to Get the Best Deal"
	}
	if n := len(s); n > 1 && strings.EqualFold(s[n-1], "online") {
		s = s[:n-1]
	}
	return "Buy " + tc(s) + ": Prices, Options and Where to Get the Best Deal"
}

func navigationalTitle(words, lw []string) string {
	tc := func(ws []string) string { return TitleCase(strings.Join(ws, " ")) }
	switch {
	case containsAny(lw, "login", "signin") || containsWords(lw, "log", "in") || containsWords(lw, "sign", "in"):
		if s := withoutWords(words, lw, "login", "signin", "log", "sign", "in", "account"); len(s) > 0 {
			return tc(s) + " Login: How to Sign In and Fix Common Problems"
		}
	case containsAny(lw, "signup") || containsWords(lw, "sign", "up"):
		if s := withoutWords(words, lw, "signup", "sign", "up"); len(s) > 0 {
			return tc(s) + " Sign Up: How to Create an Account"
		}
	case containsWords(lw, "customer", "service") || containsWords(lw, "phone", "number"):
		if s := withoutWords(words, lw, "customer", "service", "phone", "number"); len(s) > 0 {
			return tc(s) + " Customer Service: How to Get Help Fast"
		}
	}
	s := withoutWords(words, lw, "official", "site", "website", "homepage")
	if len(s) == 0 {
		s = words
	}
	return tc(s) + ": Official Website and Key Links"
}

func hasPrefixWords(lw []string, prefix ...string) bool {
	return len(lw) >= len(prefix) && slices.Equal(lw[:len(prefix)], prefix)
}

func containsWords(lw []string, seq ...string) bool {
	for i := 0; i+len(seq) <= len(lw); i++ {
		if slices.Equal(lw[i:i+len(seq)], seq) {
			return true
		}
	}
	return false
}

func containsAny(lw []string, ws ...string) bool {
	return slices.ContainsFunc(lw, func(w string) bool { return slices.Contains(ws, w) })
}

// withoutWords drops the words whose lower-case form is in drop.
func withoutWords(words, lw []string, drop ...string) []string {
	var out []string
	for i, w := range words {
		if !slices.Contains(drop, lw[i]) {
			out = append(out, w)
		}
	}
	return out
}

func pick(ws []string, idx []int) []string {
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = ws[j]
	}
	return out
}

func isYear(w string) bool {
	return len(w) == 4 && isNumber(w) && (strings.HasPrefix(w, "19") || strings.HasPrefix(w, "20"))
}

// questionWords open a question keyword.
var questionWords = stem.WordSet("who what what's whats why how when where which can could does do did is are was were should will would")

// IsQuestion reports whether a phrase is a question: it ends with "?" or opens with a
// question word (who, what, why, how, when, where, which, can, does, do, is, are, should,
// will, …).
func IsQuestion(phrase string) bool {
	if strings.HasSuffix(strings.TrimSpace(phrase), "?") {
		return true
	}
	toks := stem.Tokens(phrase)
	return len(toks) > 1 && questionWords[toks[0]]
}
