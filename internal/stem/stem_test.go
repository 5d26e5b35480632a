package stem

import (
	"slices"
	"testing"
)

func TestTokens(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Cold-Brew Coffee: The GUIDE!", []string{"cold", "brew", "coffee", "the", "guide"}},
		{"women's shoes", []string{"women's", "shoes"}},
		{"web 2.0 tools", []string{"web", "2.0", "tools"}},
		{"Café crème  à Paris", []string{"café", "crème", "à", "paris"}},
		{"  ", nil},
		{"'quoted'", []string{"quoted"}},
	}
	for _, tt := range tests {
		if got := Tokens(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Tokens(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestStems(t *testing.T) {
	tests := []struct {
		in, lang string
		want     []string
	}{
		{"How to make cold brew coffees", "", []string{"make", "cold", "brew", "coffe"}},
		{"running shoes for runners", "en", []string{"run", "shoe", "runner"}},
		{"the", "en", []string{"the"}}, // only stopwords: kept
		{"les meilleures cafetières", "fr", []string{"le", "meilleur", "cafeti"}},
		{"l'eau minérale", "FR", []string{"eau", "minéral"}},
		{"beste Kaffeemaschine für zuhause", "de", []string{"beste", "kaffeemaschine", "zuhause"}},
		{"mejores cafeteras", "es-ES", []string{"mejor", "cafeter"}},
	}
	for _, tt := range tests {
		if got := Stems(tt.in, tt.lang); !slices.Equal(got, tt.want) {
			t.Errorf("Stems(%q, %q) = %q, want %q", tt.in, tt.lang, got, tt.want)
		}
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		a, b string
		same bool
	}{
		{"Cold-brew coffees", "coffee cold brew", true},
		{"How to Make Cold Brew", "make cold brew", true},
		{"cold brew", "cold brew maker", false},
		{"Running Shoes", "running shoe", true},
	}
	for _, tt := range tests {
		a, b := Normalize(tt.a, "en"), Normalize(tt.b, "en")
		if (a == b) != tt.same {
			t.Errorf("Normalize(%q)=%q, Normalize(%q)=%q; same=%v, want %v", tt.a, a, tt.b, b, a == b, tt.same)
		}
	}
	if got := Normalize("coffee cold brew coffee", "en"); got != "brew coffe cold" {
		t.Errorf("Normalize = %q, want sorted unique stems", got)
	}
}

func TestLanguageCode(t *testing.T) {
	for in, want := range map[string]string{"": "en", "EN": "en", "en-US": "en", "english": "en", "pt_BR": "pt", "French": "fr", "tr": "tr"} {
		if got := LanguageCode(in); got != want {
			t.Errorf("LanguageCode(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTopicHead(t *testing.T) {
	tests := []struct{ topic, lang, want string }{
		{"home gardening", "", "gardening"},
		{"the best French press", "", "press"},
		{"gardening", "", ""},                              // one content word: no head
		{"how to garden", "", ""},                          // "how", "to" are stopwords
		{"entrenamiento de perros", "es", "entrenamiento"}, // one content word before "de"
		{"jardinería casera", "es", "jardinería"},
		{"Hunde Training", "de", "training"},
	}
	for _, tt := range tests {
		if got := TopicHead(tt.topic, tt.lang); got != tt.want {
			t.Errorf("TopicHead(%q, %q) = %q, want %q", tt.topic, tt.lang, got, tt.want)
		}
	}
}
