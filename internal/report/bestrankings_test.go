package report

import (
	"testing"

	"github.com/contentapi/contentapi/internal/keywords"
)

func TestBestRankings(t *testing.T) {
	rk := func(kw string, pos int, url string) keywords.Ranking {
		return keywords.Ranking{Keyword: keywords.Keyword{Keyword: kw}, Position: pos, URL: url}
	}
	tests := []struct {
		name string
		in   []keywords.Ranking
		want []keywords.Ranking
	}{
		{"empty", nil, []keywords.Ranking{}},
		{"one URL each", []keywords.Ranking{rk("a", 1, "/a"), rk("b", 2, "/b")}, []keywords.Ranking{rk("a", 1, "/a"), rk("b", 2, "/b")}},
		{"two URLs, better second", []keywords.Ranking{rk("a", 7, "/a2"), rk("b", 2, "/b"), rk("A", 3, "/a")}, []keywords.Ranking{rk("A", 3, "/a"), rk("b", 2, "/b")}},
		{"tie keeps the first", []keywords.Ranking{rk("a", 3, "/x"), rk("a", 3, "/y")}, []keywords.Ranking{rk("a", 3, "/x")}},
	}
	for _, tt := range tests {
		got := bestRankings(tt.in)
		if len(got) != len(tt.want) {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
			continue
		}
		for i := range got {
			if got[i].Keyword.Keyword != tt.want[i].Keyword.Keyword || got[i].Position != tt.want[i].Position || got[i].URL != tt.want[i].URL {
				t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
				break
			}
		}
	}
}
