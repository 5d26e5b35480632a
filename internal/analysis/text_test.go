package analysis

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

func TestNormalizePhrase(t *testing.T) {
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
		a, b := NormalizePhrase(tt.a, "en"), NormalizePhrase(tt.b, "en")
		if (a == b) != tt.same {
			t.Errorf("NormalizePhrase(%q)=%q, NormalizePhrase(%q)=%q; same=%v, want %v", tt.a, a, tt.b, b, a == b, tt.same)
		}
	}
	if got := NormalizePhrase("coffee cold brew coffee", "en"); got != "brew coffe cold" {
		t.Errorf("NormalizePhrase = %q, want sorted unique stems", got)
	}
}

func TestLanguageCode(t *testing.T) {
	for in, want := range map[string]string{"": "en", "EN": "en", "en-US": "en", "english": "en", "pt_BR": "pt", "French": "fr", "tr": "tr"} {
		if got := LanguageCode(in); got != want {
			t.Errorf("LanguageCode(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTitleCase(t *testing.T) {
	tests := []struct{ in, want string }{
		{"how to make cold brew at home", "How to Make Cold Brew at Home"},
		{"seo tools for small business", "SEO Tools for Small Business"},
		{"iphone vs android", "iPhone vs Android"},
		{"step-by-step guide to the best coffee", "Step-by-Step Guide to the Best Coffee"},
		{"what is it for", "What Is It For"},
		{"the art of war", "The Art of War"},
		{"NASA and the moon", "NASA and the Moon"},
		{"women's running shoes", "Women's Running Shoes"},
		{"a guide: of mice and men", "A Guide: Of Mice and Men"},
	}
	for _, tt := range tests {
		if got := TitleCase(tt.in); got != tt.want {
			t.Errorf("TitleCase(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNormalizeURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://www.Example.com/a/", "example.com/a"},
		{"http://example.com/a", "example.com/a"},
		{"example.com/a/", "example.com/a"},
		{"https://example.com:443/a?b=1#top", "example.com/a?b=1"},
		{"https://example.com/", "example.com"},
		{"https://example.com/Case", "example.com/Case"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := NormalizeURL(tt.in); got != tt.want {
			t.Errorf("NormalizeURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRelativePath(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://example.com/guides/cold-brew/", "/guides/cold-brew"},
		{"https://example.com", "/"},
		{"https://example.com/?p=1", "/?p=1"},
		{"/blog/x/", "/blog/x"},
	}
	for _, tt := range tests {
		if got := RelativePath(tt.in); got != tt.want {
			t.Errorf("RelativePath(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
