package analysis

import (
	"testing"

	"github.com/contentapi/contentapi/internal/keywords"
)

func TestClassifyIntent(t *testing.T) {
	tests := []struct{ phrase, want string }{
		{"how to make cold brew", Informational},
		{"what is cold brew", Informational},
		{"why is my espresso sour", Informational},
		{"cold brew guide", Informational},
		{"cold brew tips", Informational},
		{"gift ideas for dad", Informational},
		{"cold brew", Informational}, // default
		{"best cold brew maker", Commercial},
		{"top 10 coffee grinders", Commercial},
		{"cold brew vs iced coffee", Commercial},
		{"breville barista express review", Commercial},
		{"espresso machine comparison", Commercial},
		{"notion alternatives", Commercial},
		{"buy cold brew concentrate", Transactional},
		{"cold brew maker price", Transactional},
		{"cheap espresso machine", Transactional},
		{"coffee grinder deal", Transactional},
		{"starbucks coupon", Transactional},
		{"order coffee beans online", Transactional},
		{"coffee shop near me", Transactional},
		{"espresso machine for sale", Transactional},
		{"gmail login", Navigational},
		{"paypal sign in", Navigational},
		{"acme official site", Navigational},
		// exceptions
		{"how to buy a house", Informational},
		{"order of operations", Informational},
		{"tank top", Informational},
		{"best way to make cold brew", Informational},
		{"top rated coffee makers", Commercial},
		{"where to buy cold brew", Transactional},
		{"kaffeemaschine kaufen", Transactional},
		{"meilleur café", Commercial},
	}
	for _, tt := range tests {
		if got := ClassifyIntent(tt.phrase); got != tt.want {
			t.Errorf("ClassifyIntent(%q) = %q, want %q", tt.phrase, got, tt.want)
		}
	}
}

func TestIntent(t *testing.T) {
	tests := []struct{ provider, phrase, want string }{
		{"Commercial", "how to make cold brew", Commercial},
		{"TRANSACTIONAL", "cold brew", Transactional},
		{" navigational ", "cold brew", Navigational},
		{"Commercial Investigation", "cold brew", Commercial},
		{"Informational, Transactional", "buy cold brew", Informational},
		{"", "buy cold brew", Transactional},
		{"unknown", "best cold brew", Commercial},
	}
	for _, tt := range tests {
		k := keywords.Keyword{Keyword: tt.phrase, Intent: tt.provider}
		if got := Intent(k); got != tt.want {
			t.Errorf("Intent(%q, provider %q) = %q, want %q", tt.phrase, tt.provider, got, tt.want)
		}
	}
}
