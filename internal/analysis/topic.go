package analysis

import (
	"slices"
)

// TopicMatch is how closely a keyword matches a topic by its words.
type TopicMatch int

// The degrees of TopicMatch, weakest first.
const (
	// OffTopic: the keyword holds neither every stem of the topic nor its head word's.
	OffTopic TopicMatch = iota
	// OnTopicHead: the keyword holds the stem of the topic's head word ("vegetable garden
	// layout" for "home gardening") but not every stem of the topic.
	OnTopicHead
	// OnTopicAll: the keyword holds every stem of the topic ("cold brew ratio" for "cold
	// brew"), in any order and inflection.
	OnTopicAll
)

// headFirst are the languages whose noun phrases put the head word first ("jardinería
// casera", "dressage de chien"); the others put it last ("home gardening", "Hundetraining").
var headFirst = setOf("es fr it pt")

// prepositions end the phrase a head word is looked for in: "how to make cold brew at
// home" is about cold brew, "best coffee for cold brew" about coffee.
var prepositions = setOf("at for in on with without from of by near into about under over " +
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

// MatchTopic rates how a keyword matches a topic by their words (see TopicMatch): a
// keyword matches a topic when its stems include all of the topic's, or, for a topic of
// several words, its head word's stem (TopicHead).
func MatchTopic(keyword, topic, language string) TopicMatch {
	ts := stemSet(topic, language)
	if len(ts) == 0 {
		return OffTopic
	}
	ks := stemSet(keyword, language)
	if subset(ts, ks) {
		return OnTopicAll
	}
	if head := TopicHead(topic, language); head != "" {
		hs := Stems(head, language)
		if len(hs) > 0 && slices.Contains(ks, hs[0]) {
			return OnTopicHead
		}
	}
	return OffTopic
}

// MatchTopics is the best MatchTopic of the keyword over the topics.
func MatchTopics(keyword string, topics []string, language string) TopicMatch {
	best := OffTopic
	for _, t := range topics {
		best = max(best, MatchTopic(keyword, t, language))
	}
	return best
}
