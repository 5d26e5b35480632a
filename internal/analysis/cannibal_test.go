package analysis

import (
	"reflect"
	"testing"

	"github.com/contentapi/contentapi/internal/keywords"
)

func page(url, title, h1 string, words int) PageSignal {
	return PageSignal{URL: url, Title: title, H1: h1, Status: 200, WordCount: words}
}

func rank(kw string, vol int64, pos int, url string) keywords.Ranking {
	return keywords.Ranking{Keyword: kwv(kw, vol), Position: pos, URL: url}
}

func TestFindCannibalization(t *testing.T) {
	const s = "https://acme.com"
	base := []PageSignal{
		page(s+"/", "Acme Coffee", "Acme Coffee", 300),
		page(s+"/about", "About Us | Acme Coffee", "About Acme", 400),
		page(s+"/shop", "Shop Coffee Beans | Acme Coffee", "Shop", 250),
	}
	tests := []struct {
		name     string
		pages    []PageSignal
		rankings []keywords.Ranking
		want     []CannibalGroup
	}{
		{
			name: "duplicate titles with brand suffixes",
			pages: append([]PageSignal{
				page(s+"/guides/cold-brew", "Cold Brew Coffee Guide | Acme Coffee", "The Cold Brew Guide", 1850),
				page(s+"/blog/cold-brew-tips", "Cold Brew Coffee Guide - Acme Coffee", "Cold brew tips", 640),
			}, base...),
			want: []CannibalGroup{{Keyword: "cold brew coffee guide", URLs: []string{s + "/blog/cold-brew-tips", s + "/guides/cold-brew"}}},
		},
		{
			name: "strongly overlapping title and H1",
			pages: append([]PageSignal{
				page(s+"/a", "How to Make Cold Brew at Home | Acme Coffee", "How to make cold brew at home", 900),
				page(s+"/b", "How to Make Cold Brew | Acme Coffee", "Making cold brew", 500),
			}, base...),
			want: []CannibalGroup{{Keyword: "how to make cold brew", URLs: []string{s + "/a", s + "/b"}}},
		},
		{
			name: "different pages are not grouped",
			pages: append([]PageSignal{
				page(s+"/cold-brew-ratio", "Cold Brew Ratio | Acme Coffee", "Cold Brew Ratio", 900),
				page(s+"/cold-brew-maker", "Cold Brew Maker | Acme Coffee", "Cold Brew Maker", 900),
				page(s+"/iced-coffee", "Iced Coffee Recipe | Acme Coffee", "Iced Coffee", 900),
			}, base...),
			want: []CannibalGroup{},
		},
		{
			name: "404 and noindex pages are excluded",
			pages: append([]PageSignal{
				page(s+"/guides/cold-brew", "Cold Brew Guide | Acme Coffee", "", 900),
				{URL: s + "/old/cold-brew", Title: "Cold Brew Guide | Acme Coffee", Status: 404},
				{URL: s + "/tag/cold-brew", Title: "Cold Brew Guide | Acme Coffee", Status: 200, Noindex: true},
				{URL: s + "/redirect", Title: "Cold Brew Guide | Acme Coffee", Status: 301},
			}, base...),
			want: []CannibalGroup{},
		},
		{
			name:  "ranking-based group",
			pages: base,
			rankings: []keywords.Ranking{
				rank("cold brew", 5000, 8, s+"/guides/cold-brew"),
				rank("cold brew", 5000, 23, "https://www.acme.com/blog/cold-brew-tips/"),
				rank("cold brew", 5000, 40, s+"/guides/cold-brew/"), // same URL again
				rank("iced coffee", 900, 12, s+"/iced"),
			},
			want: []CannibalGroup{{Keyword: "cold brew", URLs: []string{s + "/guides/cold-brew", "https://www.acme.com/blog/cold-brew-tips/"}}},
		},
		{
			name: "ranking and title groups with the same URLs are reported once, under the ranking keyword",
			pages: append([]PageSignal{
				page(s+"/a", "Cold Brew Guide | Acme Coffee", "", 900),
				page(s+"/b", "Cold Brew Guide | Acme Coffee", "", 900),
			}, base...),
			rankings: []keywords.Ranking{
				rank("cold brew recipe", 300, 9, s+"/a"), rank("cold brew recipe", 300, 14, s+"/b"),
				rank("cold brew", 5000, 11, s+"/a"), rank("cold brew", 5000, 6, s+"/b"),
			},
			want: []CannibalGroup{{Keyword: "cold brew", URLs: []string{s + "/a", s + "/b"}}},
		},
		{
			name:  "ranking URL of a noindex page is ignored",
			pages: append([]PageSignal{{URL: s + "/tag/cold-brew", Title: "Cold brew", Status: 200, Noindex: true}}, base...),
			rankings: []keywords.Ranking{
				rank("cold brew", 5000, 8, s+"/guides/cold-brew"), rank("cold brew", 5000, 30, s+"/tag/cold-brew"),
			},
			want: []CannibalGroup{},
		},
	}
	for _, tt := range tests {
		got := FindCannibalization(tt.pages, tt.rankings, "en")
		if len(got) == 0 && len(tt.want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, tt.want)
		}
	}
}

func TestFindCannibalizationDeterministic(t *testing.T) {
	const s = "https://acme.com"
	pages := []PageSignal{
		page(s+"/a", "Cold Brew Guide | Acme", "", 900), page(s+"/b", "Cold Brew Guide | Acme", "", 900),
		page(s+"/c", "Espresso Basics | Acme", "", 900), page(s+"/d", "Espresso basics | Acme", "", 900),
		page(s+"/e", "Latte Art | Acme", "", 900),
	}
	rankings := []keywords.Ranking{
		rank("latte art", 100, 5, s+"/e"), rank("latte art", 100, 9, s+"/c"),
		rank("espresso", 900, 5, s+"/c"), rank("espresso", 900, 9, s+"/e"),
	}
	want := FindCannibalization(pages, rankings, "en")
	if len(want) != 3 {
		t.Fatalf("got %d groups, want 3: %+v", len(want), want)
	}
	for seed := range uint64(10) {
		if got := FindCannibalization(shuffled(pages, seed), shuffled(rankings, seed), "en"); !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d: %+v, want %+v", seed, got, want)
		}
	}
}

func TestCannibalAdvice(t *testing.T) {
	const s = "https://acme.com"
	pages := []PageSignal{
		page(s+"/guides/cold-brew", "Cold Brew Guide", "", 1850),
		page(s+"/blog/cold-brew-tips", "Cold Brew Guide", "", 640),
		page(s+"/blog/cold-brew-faq", "Cold Brew Guide", "", 2400),
	}
	tests := []struct {
		name       string
		group      CannibalGroup
		rankings   []keywords.Ranking
		wantKeep   string
		wantAdvice string
	}{
		{
			name:     "best ranking for the keyword wins",
			group:    CannibalGroup{Keyword: "cold brew", URLs: []string{s + "/blog/cold-brew-tips", s + "/guides/cold-brew"}},
			rankings: []keywords.Ranking{rank("cold brew", 5000, 4, s+"/guides/cold-brew"), rank("cold brew", 5000, 12, s+"/blog/cold-brew-tips")},
			wantKeep: s + "/guides/cold-brew",
			wantAdvice: "Keep /guides/cold-brew (ranks #4 for “cold brew”, 1,850 words); merge /blog/cold-brew-tips (ranks #12, 640 words) " +
				"into it and 301-redirect /blog/cold-brew-tips to /guides/cold-brew.",
		},
		{
			name:       "without rankings, most words wins",
			group:      CannibalGroup{Keyword: "cold brew guide", URLs: []string{s + "/blog/cold-brew-tips", s + "/guides/cold-brew"}},
			wantKeep:   s + "/guides/cold-brew",
			wantAdvice: "Keep /guides/cold-brew (1,850 words); merge /blog/cold-brew-tips (640 words) into it and 301-redirect /blog/cold-brew-tips to /guides/cold-brew.",
		},
		{
			name:     "ranking for another keyword beats word count",
			group:    CannibalGroup{Keyword: "cold brew guide", URLs: []string{s + "/blog/cold-brew-faq", s + "/blog/cold-brew-tips"}},
			rankings: []keywords.Ranking{rank("cold brew tips", 400, 7, s+"/blog/cold-brew-tips")},
			wantKeep: s + "/blog/cold-brew-tips",
			wantAdvice: "Keep /blog/cold-brew-tips (ranks #7 for “cold brew tips”, 640 words); merge /blog/cold-brew-faq (2,400 words) " +
				"into it and 301-redirect /blog/cold-brew-faq to /blog/cold-brew-tips.",
		},
		{
			name:     "three URLs",
			group:    CannibalGroup{Keyword: "cold brew", URLs: []string{s + "/blog/cold-brew-faq", s + "/blog/cold-brew-tips", s + "/guides/cold-brew"}},
			rankings: []keywords.Ranking{rank("cold brew", 5000, 9, s+"/blog/cold-brew-faq")},
			wantKeep: s + "/blog/cold-brew-faq",
			wantAdvice: "Keep /blog/cold-brew-faq (ranks #9 for “cold brew”, 2,400 words); merge /guides/cold-brew (1,850 words) and " +
				"/blog/cold-brew-tips (640 words) into it and 301-redirect them to /blog/cold-brew-faq.",
		},
	}
	for _, tt := range tests {
		keep, advice := CannibalAdvice(tt.group, pages, tt.rankings)
		if keep != tt.wantKeep || advice != tt.wantAdvice {
			t.Errorf("%s:\n got %q\n     %q\nwant %q\n     %q", tt.name, keep, advice, tt.wantKeep, tt.wantAdvice)
		}
	}
	if keep, advice := CannibalAdvice(CannibalGroup{}, pages, nil); keep != "" || advice != "" {
		t.Error("empty group should give no advice")
	}
}
