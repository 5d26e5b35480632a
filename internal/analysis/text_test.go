package analysis

import (
	"testing"
)

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
