package analysis

import (
	"slices"

	"github.com/contentapi/contentapi/internal/stem"
)

// TopicMatch is how closely a keyword matches a topic by its words.
type TopicMatch int

// The degrees of TopicMatch, weakest first.
const (
	// OffTopic: the keyword holds neither every stem of the topic nor its head word's.
	OffTopic TopicMatch = iota
	// OnTopicHead: the keyword holds the stem of the topic's head word ("vegetable garden
	// layout" for "home gardening") but not every stem of the topic; a generic head word
	// (GenericWords) does not count.
	OnTopicHead
	// OnTopicAll: the keyword holds every stem of the topic ("cold brew ratio" for "cold
	// brew"), in any order and inflection.
	OnTopicAll
)

// MatchTopic rates how a keyword matches a topic by their words (see TopicMatch): a
// keyword matches a topic when its stems include all of the topic's, or, for a topic of
// several words, its head word's stem (TopicHead).
func MatchTopic(keyword, topic, language string) TopicMatch {
	ts := stem.Set(topic, language)
	if len(ts) == 0 {
		return OffTopic
	}
	ks := stem.Set(keyword, language)
	if subset(ts, ks) {
		return OnTopicAll
	}
	// A generic head word ("tools" in "seo tools", see GenericWords) matches keywords of
	// any subject: it is no match.
	if head := stem.TopicHead(topic, language); head != "" {
		hs := stem.Stems(head, language)
		if len(hs) > 0 && !genericStems[hs[0]] && slices.Contains(ks, hs[0]) {
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
