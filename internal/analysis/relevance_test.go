package analysis

import (
	"testing"

	"github.com/contentapi/contentapi/internal/keywords"
)

func TestSplitOffTopic(t *testing.T) {
	kw := func(ss ...string) []keywords.Keyword {
		out := make([]keywords.Keyword, len(ss))
		for i, s := range ss {
			out[i] = keywords.Keyword{Keyword: s}
		}
		return out
	}
	names := func(ks []keywords.Keyword) []string {
		var out []string
		for _, k := range ks {
			out = append(out, k.Keyword)
		}
		return out
	}
	kept, off, shared := SplitOffTopic("seo tools", "en", kw("remote work tools", "seo audit", "best seo tools", "keyword planner"))
	if got := names(kept); len(got) != 3 || got[0] != "seo audit" || got[1] != "best seo tools" || got[2] != "keyword planner" {
		t.Errorf("kept %v", got)
	}
	if got := names(off); len(got) != 1 || got[0] != "remote work tools" || len(shared) != 1 || shared[0] != "tools" {
		t.Errorf("off %v shared %v", got, shared)
	}
	// A topic of generic words, or of one word, keeps everything.
	if kept, _, _ := SplitOffTopic("best tools", "en", kw("remote work tools")); len(kept) != 1 {
		t.Error("a generic topic must keep its matches")
	}
	if kept, _, _ := SplitOffTopic("tools", "en", kw("remote work tools")); len(kept) != 1 {
		t.Error("a one-word topic must keep its matches")
	}
	// A specific head word is no generic word.
	if _, off, _ := SplitOffTopic("home gardening", "en", kw("gardening gloves", "vegetable gardening")); len(off) != 0 {
		t.Errorf("gardening is specific: off %v", names(off))
	}
}
