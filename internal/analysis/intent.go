package analysis

import (
	"strings"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/stem"
)

// The four search intents.
const (
	Informational = "informational"
	Commercial    = "commercial"
	Transactional = "transactional"
	Navigational  = "navigational"
)

// intentRule is one row of the intent table: the modifiers that signal an intent.
type intentRule struct {
	intent    string
	modifiers []string
}

// intentTable is checked top to bottom; the first intent with a modifier in the phrase wins.
// Modifiers match whole words or whole word sequences. Exceptions, applied in matchIntent:
// "order" followed by "of" is not transactional ("order of operations"); "top" counts only
// as the first word or before a number or "rated" ("top 10 …", not "tank top"); "shop" only
// as the first word; "best" before way/ways/time/practice/practices is not commercial
// ("best way to …"); transactional words in a phrase that opens with how/what/why are a
// question about the process and stay informational ("how to buy a house").
var intentTable = []intentRule{
	{Navigational, []string{"login", "log in", "sign in", "signin", "sign up", "signup",
		"official site", "official website", "homepage", "customer service", "phone number"}},
	{Transactional, []string{"buy", "purchase", "order", "price", "prices", "pricing", "cheap",
		"cheaper", "cheapest", "deal", "deals", "discount", "discounts", "coupon", "coupons",
		"promo code", "voucher", "near me", "for sale", "shop",
		// es, fr, de, it, nl, pt, tr
		"comprar", "precio", "precios", "barato", "acheter", "prix", "kaufen", "preis",
		"preise", "günstig", "comprare", "prezzo", "prezzi", "kopen", "prijs", "goedkoop",
		"preço", "preços", "fiyat", "fiyatı", "ucuz"}},
	{Commercial, []string{"best", "top", "vs", "versus", "review", "reviews", "comparison",
		"compare", "compared", "alternative", "alternatives", "buying guide", "top rated",
		"mejor", "mejores", "meilleur", "meilleurs", "meilleure", "meilleures", "beste",
		"besten", "bester", "migliore", "migliori", "melhor", "melhores", "vergleich",
		"comparativa", "comparatif", "confronto", "vergelijken"}},
	{Informational, []string{"how", "what", "why", "when", "where", "who", "guide",
		"tutorial", "tips", "ideas", "examples", "meaning", "definition", "learn"}},
}

// ClassifyIntent assigns a search intent to a phrase with the modifier table above
// (navigational, then transactional, then commercial, then informational); a phrase with
// no modifier is informational.
func ClassifyIntent(phrase string) string {
	toks := stem.Tokens(phrase)
	question := len(toks) > 0 && (toks[0] == "how" || toks[0] == "what" || toks[0] == "why" ||
		toks[0] == "what's" || toks[0] == "whats")
	for _, rule := range intentTable {
		if rule.intent == Transactional && question {
			continue
		}
		for _, m := range rule.modifiers {
			if matchModifier(toks, strings.Fields(m)) {
				return rule.intent
			}
		}
	}
	return Informational
}

// matchModifier reports whether the word sequence mod occurs in toks, with the table's
// exceptions for order, top, shop and best.
func matchModifier(toks, mod []string) bool {
	for i := 0; i+len(mod) <= len(toks); i++ {
		if !equalWords(toks[i:i+len(mod)], mod) {
			continue
		}
		next := ""
		if i+len(mod) < len(toks) {
			next = toks[i+len(mod)]
		}
		switch strings.Join(mod, " ") {
		case "order":
			if next == "of" {
				continue
			}
		case "top":
			if i != 0 && !isNumber(next) && next != "rated" {
				continue
			}
		case "shop":
			if i != 0 {
				continue
			}
		case "best":
			switch next {
			case "way", "ways", "time", "practice", "practices":
				continue
			}
		}
		return true
	}
	return false
}

func equalWords(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// NormalizeIntent maps a provider's intent label to one of the four intents ("Commercial
// Investigation" → commercial; "Informational, Transactional" → informational, the first
// recognised), or "" when it names none.
func NormalizeIntent(s string) string {
	for _, part := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return r == ',' || r == ';' || r == '/' || r == '|' || r == '+'
	}) {
		part = strings.TrimSpace(part)
		switch {
		case strings.HasPrefix(part, "inform"):
			return Informational
		case strings.HasPrefix(part, "commerc"):
			return Commercial
		case strings.HasPrefix(part, "transact"):
			return Transactional
		case strings.HasPrefix(part, "navig"):
			return Navigational
		}
	}
	return ""
}

// Intent is the keyword's provider intent when it names one of the four, else
// ClassifyIntent of the phrase.
func Intent(k keywords.Keyword) string {
	in, _ := IntentOf(k)
	return in
}

// IntentOf is Intent and whether it was inferred: true when the data source gave none (or
// none of the four) and the phrase classifier guessed it.
func IntentOf(k keywords.Keyword) (intent string, inferred bool) {
	if in := NormalizeIntent(k.Intent); in != "" {
		return in, false
	}
	return ClassifyIntent(k.Keyword), true
}
