package analysis

import "testing"

func TestMatchTopic(t *testing.T) {
	tests := []struct {
		keyword, topic, lang string
		want                 TopicMatch
	}{
		{"cold brew ratio", "cold brew", "", OnTopicAll},
		{"how long to steep cold brew", "Cold-Brew", "", OnTopicAll},
		{"brewing cold coffee", "cold brew", "", OnTopicAll}, // any order, inflected
		{"french press coffee ratio", "french press", "", OnTopicAll},
		{"vegetable garden layout", "home gardening", "", OnTopicHead}, // the head word: gardening
		{"container gardening ideas", "home gardening", "", OnTopicHead},
		{"home office ideas", "home gardening", "", OffTopic}, // the modifier alone is not the topic
		{"cold brew at home", "home gardening", "", OffTopic},
		{"gardening tips", "gardening", "", OnTopicAll},
		{"matcha latte", "cold brew", "", OffTopic},
		{"espresso machine price", "french press", "", OffTopic},
		{"dog training collar", "how to do dog training", "", OnTopicAll}, // stopwords left out
		{"puppy training schedule", "dog training", "", OnTopicHead},
		{"jardinería vertical", "jardinería casera", "es", OnTopicHead}, // head first in Spanish
		{"recetas caseras", "jardinería casera", "es", OffTopic},
		{"anything", "", "", OffTopic},
	}
	for _, tt := range tests {
		if got := MatchTopic(tt.keyword, tt.topic, tt.lang); got != tt.want {
			t.Errorf("MatchTopic(%q, %q, %q) = %d, want %d", tt.keyword, tt.topic, tt.lang, got, tt.want)
		}
	}
}

func TestMatchTopics(t *testing.T) {
	if got := MatchTopics("nitro cold brew", []string{"french press", "cold brew"}, ""); got != OnTopicAll {
		t.Errorf("MatchTopics = %d, want OnTopicAll", got)
	}
}
