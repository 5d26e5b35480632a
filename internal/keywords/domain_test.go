package keywords

import (
	"slices"
	"testing"
)

// A request's competitors are keyed, each once, in order, without the domain itself (in any
// spelling) and without those that have no host.
func TestCompetitors(t *testing.T) {
	got := Competitors("https://www.Example.com", []string{"rival.com", "", "EXAMPLE.com", "www.rival.com", "http://other.org/x", "www.example.com", "rival.com"})
	if want := []string{"rival.com", "other.org"}; !slices.Equal(got, want) {
		t.Fatalf("Competitors = %q, want %q", got, want)
	}
	if got := Competitors("example.com", nil); len(got) != 0 {
		t.Fatalf("no competitors: %q", got)
	}
}
