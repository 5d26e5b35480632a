package analysis

import (
	"slices"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/stem"
)

// GenericWords name a kind of thing or a modifier rather than a subject: "tools" in "seo
// tools" and in "remote work tools" says nothing about what either is about. English
// words, compared by stem. The list is short and fixed on purpose (docs/decisions.md).
var GenericWords = []string{
	"tool", "tools", "software", "app", "apps", "application", "applications", "program", "programs",
	"tip", "tips", "idea", "ideas", "guide", "guides", "tutorial", "tutorials", "example", "examples",
	"template", "templates", "resource", "resources", "service", "services", "product", "products",
	"solution", "solutions", "platform", "platforms", "system", "systems", "website", "websites", "site", "sites",
	"online", "free", "best", "top", "cheap", "new", "near", "list", "review", "reviews", "course", "courses",
	"job", "jobs", "company", "companies", "agency", "agencies", "service", "cost", "price", "prices",
}

var genericStems = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range GenericWords {
		for _, s := range stem.Stems(w, "en") {
			m[s] = true
		}
	}
	return m
}()

// IsGeneric reports whether a word's stem is one of GenericWords'.
func IsGeneric(word, language string) bool {
	for _, s := range stem.Stems(word, language) {
		if !genericStems[s] {
			return false
		}
	}
	return true
}

// SplitOffTopic splits ideas for a topic into those about it and those that share with it only
// generic words: an idea sharing at least one word (by stem) with the topic, every one of
// them generic, is off topic ("remote work tools" for "seo tools"). An idea sharing no word
// is kept (a provider may relate keywords by meaning), and a topic of generic words alone
// keeps everything: the caller asked about the generic thing. The generic words shared are
// returned, as the topic writes them, for the message.
func SplitOffTopic(topic, language string, ideas []keywords.Keyword) (kept, off []keywords.Keyword, shared []string) {
	topicStems := splitting(topic, language)
	if topicStems == nil {
		return ideas, nil, nil
	}
	seenShared := map[string]bool{}
	for _, k := range ideas {
		matched, isOff := offTopic(topicStems, k.Keyword, language)
		if isOff {
			off = append(off, k)
			for _, w := range matched {
				seenShared[w] = true
			}
			continue
		}
		kept = append(kept, k)
	}
	// Name the shared words as the topic writes them.
	var words []string
	for _, tok := range stem.Tokens(topic) {
		for _, s := range stem.Stems(tok, language) {
			if seenShared[s] && !slices.Contains(words, tok) {
				words = append(words, tok)
			}
		}
	}
	return kept, off, words
}

// splitting returns the stems of a topic whose ideas may be off topic: nil for a topic of
// one stem or of generic words alone, which keeps everything.
func splitting(topic, language string) map[string]bool {
	topicStems := map[string]bool{}
	specific := false
	for _, s := range stem.Stems(topic, language) {
		topicStems[s] = true
		specific = specific || !genericStems[s]
	}
	if !specific || len(topicStems) < 2 {
		return nil
	}
	return topicStems
}

// offTopic reports whether a keyword shares with the topic's stems only generic ones, and
// which it shares.
func offTopic(topicStems map[string]bool, keyword, language string) (matched []string, off bool) {
	onlyGeneric := true
	for _, s := range stem.Set(keyword, language) {
		if topicStems[s] {
			if !genericStems[s] {
				onlyGeneric = false
			}
			matched = append(matched, s)
		}
	}
	return matched, len(matched) > 0 && onlyGeneric
}

// OnTopic is SplitOffTopic's rule as a test of one idea, true when the idea is kept; nil
// when the topic keeps every idea.
func OnTopic(topic, language string) func(keywords.Keyword) bool {
	topicStems := splitting(topic, language)
	if topicStems == nil {
		return nil
	}
	return func(k keywords.Keyword) bool {
		_, off := offTopic(topicStems, k.Keyword, language)
		return !off
	}
}
