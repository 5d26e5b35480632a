package analysis

import (
	"slices"
	"strings"
	"testing"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/stem"
)

var coldBrewCluster = []keywords.Keyword{
	kwvd("cold brew coffee", 40500, 45),
	kwv("how to make cold brew coffee", 12100),
	kwv("cold brew coffee ratio", 2900),
	kwv("cold brew vs iced coffee", 5400),
	kwv("how long does cold brew last", 3600),
	kwv("is cold brew stronger than coffee", 1900),
	kwv("what is cold brew", 6600),
	kwv("cold brew concentrate", 4400),
	kwv("can you heat up cold brew", 880),
	kwv("coffee cold brew", 1000),
	{Keyword: "does cold brew have more caffeine"},
}

func h2s(secs []Section) []string {
	var out []string
	for _, s := range secs {
		out = append(out, s.H2)
	}
	return out
}

func checkOutline(t *testing.T, name string, secs []Section) {
	t.Helper()
	if len(secs) < MinSections || len(secs) > MaxSections {
		t.Errorf("%s: %d sections, want %d..%d: %q", name, len(secs), MinSections, MaxSections, h2s(secs))
	}
	seen := map[string]bool{}
	for _, s := range secs {
		key := stem.Normalize(s.H2, "en")
		if seen[key] {
			t.Errorf("%s: duplicate H2 %q", name, s.H2)
		}
		seen[key] = true
		if s.H2 == "" || len(s.TalkingPoints) == 0 {
			t.Errorf("%s: empty section %+v", name, s)
		}
		for _, p := range s.TalkingPoints {
			if strings.TrimSpace(p) == "" {
				t.Errorf("%s: empty talking point in %q", name, s.H2)
			}
		}
	}
}

func TestBuildOutlineQuestionsAndModifiers(t *testing.T) {
	secs := BuildOutline(coldBrewCluster[0], coldBrewCluster, nil, "", "")
	checkOutline(t, "cold brew coffee", secs)
	got := h2s(secs)
	want := []string{
		"What Is Cold Brew?",           // definition question leads
		"How to Make Cold Brew Coffee", // "how to" is not a question: no "?"
		"Cold Brew vs Iced Coffee",
		"Cold Brew Concentrate",
		"How Long Does Cold Brew Last?",
		"Frequently Asked Questions",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("H2s\n got %q\nwant %q", got, want)
	}
	if p := secs[0].TalkingPoints[0]; !strings.Contains(p, "“what is cold brew”") || !strings.Contains(p, "6,600 searches a month") {
		t.Errorf("question point should name the keyword and its volume: %q", p)
	}
	faq := secs[len(secs)-1].TalkingPoints
	if len(faq) != 3 || !strings.Contains(faq[0], "is cold brew stronger than coffee") || !strings.Contains(faq[2], "does cold brew have more caffeine") {
		t.Errorf("FAQ should list the remaining questions by volume: %q", faq)
	}
	if strings.Contains(faq[2], "searches a month") {
		t.Errorf("unknown volume must not be shown: %q", faq[2])
	}
	for _, s := range secs {
		if s.H2 == "Coffee Cold Brew" || s.H2 == "Cold Brew Coffee" {
			t.Errorf("a re-ordering of the target must not become a section: %q", s.H2)
		}
	}
}

func TestBuildOutlineModifierTalkingPoints(t *testing.T) {
	target := kwv("cold brew coffee", 40500)
	cluster := []keywords.Keyword{target, kwv("cold brew coffee ratio", 2900), kwv("cold brew coffee recipe", 2000), kwv("cold brew coffee for runners", 100)}
	secs := BuildOutline(target, cluster, nil, "", Informational)
	checkOutline(t, "modifiers", secs)
	if secs[0].H2 != "Cold Brew Coffee Ratio" {
		t.Fatalf("first H2 = %q, want the strongest modifier", secs[0].H2)
	}
	if p := strings.Join(secs[0].TalkingPoints, " "); !strings.Contains(p, "“cold brew coffee ratio” (about 2,900 searches a month)") || !strings.Contains(p, "ratio") {
		t.Errorf("modifier points not specific: %q", secs[0].TalkingPoints)
	}
	if p := strings.Join(secs[1].TalkingPoints, " "); !strings.Contains(p, "quantities") {
		t.Errorf("recipe section should ask for quantities: %q", p)
	}
	if p := strings.Join(secs[2].TalkingPoints, " "); !strings.Contains(p, "Tailor the advice to runners") {
		t.Errorf("\"for runners\" section: %q", p)
	}
}

func TestBuildOutlineCompetitorHeadings(t *testing.T) {
	target := kwv("cold brew coffee", 40500)
	competitor := []string{
		"1. How to Store Cold Brew", "Step 2: how to store cold brew", "Storing Cold Brew:",
		"Best Beans for Cold Brew", "best beans for cold brew",
		"Leave a Reply", "Related Posts", "Conclusion", "Frequently Asked Questions",
		"Our Newsletter", "Cold Brew Coffee", "Unrelated Heading About Tea",
		"What Is Cold Brew?",
	}
	cluster := []keywords.Keyword{target, kwv("what is cold brew", 6600)}
	secs := BuildOutline(target, cluster, competitor, "", "")
	checkOutline(t, "competitors", secs)
	got := h2s(secs)
	want := []string{"What Is Cold Brew?", "How to Store Cold Brew", "Best Beans for Cold Brew"}
	if !slices.Equal(got, want) {
		t.Fatalf("H2s\n got %q\nwant %q", got, want)
	}
	if p := secs[1].TalkingPoints[0]; p != "Covered by 3 competing pages; match their depth, then add what they miss." {
		t.Errorf("competitor attribution = %q", p)
	}
	if p := secs[2].TalkingPoints[0]; !strings.Contains(p, "2 competing pages") {
		t.Errorf("competitor attribution = %q", p)
	}
}

func TestBuildOutlineFillsByIntent(t *testing.T) {
	tests := []struct {
		target  string
		intent  string
		wantH2s []string
	}{
		{"how to make cold brew", "", []string{"What You'll Need", "Step-by-Step Instructions", "Common Mistakes to Avoid"}},
		{"cold brew", "", []string{"What Is Cold Brew?", "Common Mistakes to Avoid", "Key Takeaways"}},
		{"best cold brew maker", "", []string{"How We Chose", "What to Look For in Cold Brew Maker", "Our Top Picks Compared"}},
		{"cold brew vs iced coffee", "", []string{"Cold Brew vs Iced Coffee at a Glance", "Where Cold Brew Wins", "Where Iced Coffee Wins", "Which Should You Choose?"}},
		{"buy cold brew concentrate", "", []string{"Pricing and Where to Buy", "What to Check Before You Buy", "How to Get the Best Deal"}},
		{"acme login", "", []string{"How to Sign In to Acme", "Troubleshooting Common Problems", "Official Links and Contact Options"}},
	}
	for _, tt := range tests {
		secs := BuildOutline(kwv(tt.target, 100), nil, nil, "", tt.intent)
		checkOutline(t, tt.target, secs)
		if got := h2s(secs); !slices.Equal(got, tt.wantH2s) {
			t.Errorf("%s: H2s %q, want %q", tt.target, got, tt.wantH2s)
		}
	}
	// A how-to outline always has its steps, first, even when other sections reach three.
	secs := BuildOutline(kwv("how to make cold brew", 100), nil, []string{"Steeping Time for Cold Brew", "steeping time for cold brew", "Best Beans for Cold Brew", "best beans for cold brew", "Grind Size for Cold Brew", "grind size for cold brew"}, "", "")
	if got := h2s(secs); len(got) != 3 || got[0] != "Step-by-Step Instructions" {
		t.Errorf("how-to H2s %q, want the steps first", got)
	}
	// Standard sections only fill up to three.
	target := kwv("cold brew coffee", 100)
	cluster := []keywords.Keyword{kwv("cold brew coffee ratio", 10), kwv("cold brew coffee recipe", 10), kwv("cold brew coffee temperature", 10)}
	for _, s := range BuildOutline(target, cluster, nil, "", "") {
		if s.H2 == "Key Takeaways" || s.H2 == "Common Mistakes to Avoid" {
			t.Errorf("filler %q added to an outline that had 3 sections", s.H2)
		}
	}
}

func TestBuildOutlineCommercialAlwaysHasMethod(t *testing.T) {
	target := kwv("best cold brew maker", 8100)
	cluster := []keywords.Keyword{target, kwv("best cold brew maker for home", 900), kwv("best cold brew maker glass", 500),
		kwv("is a cold brew maker worth it", 400), kwv("how does a cold brew maker work", 300), kwv("cold brew coffee", 40500)}
	secs := BuildOutline(target, cluster, nil, "Acme Coffee sells cold brew kits.", "")
	checkOutline(t, "commercial", secs)
	i := slices.Index(h2s(secs), "How We Chose")
	if i < 0 {
		t.Fatalf("no How We Chose in %q", h2s(secs))
	}
	if !strings.Contains(strings.Join(secs[i].TalkingPoints, " "), "Acme Coffee (cold brew kits)") {
		t.Errorf("brand should be in the method section: %q", secs[i].TalkingPoints)
	}
	if slices.Contains(h2s(secs), "Cold Brew Coffee") {
		t.Error("a broader keyword that does not narrow the target must not be a section")
	}
}

func TestBuildOutlineBrand(t *testing.T) {
	brand := "Acme Coffee sells small-batch cold brew concentrate."
	for _, target := range []string{"cold brew coffee", "best cold brew maker", "buy cold brew concentrate", "how to make cold brew"} {
		secs := BuildOutline(kwv(target, 100), coldBrewCluster, nil, brand, "")
		checkOutline(t, target, secs)
		n := 0
		for _, s := range secs {
			for _, p := range s.TalkingPoints {
				n += strings.Count(p, "Acme Coffee")
			}
		}
		if n != 1 {
			t.Errorf("%s: brand mentioned %d times, want once", target, n)
		}
	}
	secs := BuildOutline(kwv("cold brew coffee", 100), coldBrewCluster, nil, "", "")
	for _, s := range secs {
		for _, p := range s.TalkingPoints {
			if strings.Contains(p, "Acme") {
				t.Errorf("no brand given, but %q", p)
			}
		}
	}
}

func TestBuildOutlineMaxSections(t *testing.T) {
	target := kwv("best cold brew maker", 8100)
	var cluster []keywords.Keyword
	for i, m := range []string{"for home", "glass", "large", "cheap", "with filter", "stainless steel", "for travel", "under 50"} {
		cluster = append(cluster, kwv("best cold brew maker "+m, int64(1000-i)))
	}
	for i, q := range []string{"is a cold brew maker worth it", "how does a cold brew maker work", "can you use a cold brew maker for tea", "which cold brew maker is easiest to clean", "do cold brew makers need filters", "what size cold brew maker"} {
		cluster = append(cluster, kwv(q, int64(500-i)))
	}
	competitor := []string{"Cold Brew Maker Materials", "cold brew maker materials", "Cleaning a Cold Brew Maker", "cleaning a cold brew maker"}
	secs := BuildOutline(target, cluster, competitor, "Acme", "")
	checkOutline(t, "max", secs)
	if len(secs) != MaxSections {
		t.Errorf("got %d sections, want %d", len(secs), MaxSections)
	}
	got := h2s(secs)
	if !slices.Contains(got, "How We Chose") || got[len(got)-1] != "Frequently Asked Questions" {
		t.Errorf("method and FAQ must survive the cap: %q", got)
	}
}

// Stock sections follow what the keyword asks for: a duration, an amount, a definition, a
// yes or no, causes, a comparison or picks (whatever the provider's intent label), steps.
func TestBuildOutlineByQuestionKind(t *testing.T) {
	tests := []struct {
		target, intent string
		wantH2s        []string
	}{
		{"how long to steep cold brew", "", []string{"The Short Answer", "What Makes It Shorter or Longer", "How to Tell When It's Done"}},
		{"how long does cold brew last", "informational", []string{"The Short Answer", "What Makes It Shorter or Longer", "How to Tell When It's Done"}},
		{"how much caffeine in a cup of coffee", "", []string{"The Short Answer", "What Changes the Amount", "How to Measure It"}},
		{"how often to water a vegetable garden", "", []string{"The Short Answer", "What Changes the Timing", "Signs It's Time"}},
		{"what is a flat white", "", []string{"Flat White in One Sentence", "How Flat White Works", "Flat White vs Similar Options"}},
		{"is coffee good for you", "", []string{"The Short Answer", "When the Answer Changes", "What the Evidence Says"}},
		{"why is my espresso sour", "", []string{"The Main Reasons", "What It Means for You", "What to Do About It"}},
		{"latte vs cappuccino", "informational", []string{"Latte vs Cappuccino at a Glance", "Where Latte Wins", "Where Cappuccino Wins", "Which Should You Choose?"}},
		{"latte vs cappuccino", "commercial", []string{"Latte vs Cappuccino at a Glance", "Where Latte Wins", "Where Cappuccino Wins", "Which Should You Choose?"}},
		{"best french press", "informational", []string{"How We Chose", "What to Look For in French Press", "Our Top Picks Compared"}},
		{"how to use a french press", "", []string{"What You'll Need", "Step-by-Step Instructions", "Common Mistakes to Avoid"}},
		{"where to buy cold brew", "informational", []string{"The Short Answer", "What Changes the Answer", "Practical Takeaways"}},
	}
	for _, tt := range tests {
		secs := BuildOutline(kwv(tt.target, 100), nil, nil, "", tt.intent)
		checkOutline(t, tt.target, secs)
		if got := h2s(secs); !slices.Equal(got, tt.wantH2s) {
			t.Errorf("%s (%s): H2s %q, want %q", tt.target, tt.intent, got, tt.wantH2s)
		}
		steps := false
		for _, s := range secs {
			for _, p := range s.TalkingPoints {
				steps = steps || strings.Contains(p, "numbered") || strings.Contains(p, "Number the steps")
			}
		}
		if howTo := tt.target == "how to use a french press"; steps != howTo {
			t.Errorf("%s: numbered steps %v, want %v: %q", tt.target, steps, howTo, secs)
		}
	}
}

// A duration question is answered with a time, never a step list, as a section of a
// broader outline too; a how-to question keeps its steps. Competitor headings found on
// several pages join the duration outline, numbering stripped.
func TestBuildOutlineDurationNotSteps(t *testing.T) {
	target := kwv("cold brew coffee", 40500)
	cluster := []keywords.Keyword{target, kwv("how long to steep cold brew", 2900), kwv("how to make cold brew", 9900)}
	secs := BuildOutline(target, cluster, nil, "", "")
	checkOutline(t, "cold brew coffee", secs)
	got := map[string]string{}
	for _, s := range secs {
		got[s.H2] = strings.Join(s.TalkingPoints, " ")
	}
	if p, ok := got["How Long to Steep Cold Brew"]; !ok || strings.Contains(p, "numbered") || !strings.Contains(p, "specific range") {
		t.Errorf("duration section: %q (H2s %q)", p, h2s(secs))
	}
	if p, ok := got["How to Make Cold Brew"]; !ok || !strings.Contains(p, "numbered list") {
		t.Errorf("how-to section: %q", p)
	}

	competitor := []string{"Steeping Time by Grind Size", "1. Steeping time by grind size", "Step 1: Grind the Beans", "Leave a Comment"}
	secs = BuildOutline(kwv("how long to steep cold brew", 2900), nil, competitor, "", "")
	checkOutline(t, "how long to steep cold brew", secs)
	want := []string{"The Short Answer", "Steeping Time by Grind Size", "What Makes It Shorter or Longer"}
	if g := h2s(secs); !slices.Equal(g, want) {
		t.Errorf("H2s %q, want %q", g, want)
	}
}

// A "vs" outline keeps its comparison whatever the cluster brings, and a question of the
// cluster sharing no word with the target is not one of its sections.
func TestBuildOutlineComparisonKeepsItsShape(t *testing.T) {
	target := kwv("latte vs cappuccino", 14800)
	cluster := []keywords.Keyword{target, kwv("how much caffeine in a cup of coffee", 9000), kwv("how to make iced coffee", 8000),
		kwv("what is a flat white", 7000), kwv("is a latte stronger than a cappuccino", 500)}
	secs := BuildOutline(target, cluster, nil, "", "")
	checkOutline(t, "latte vs cappuccino", secs)
	want := []string{"Latte vs Cappuccino at a Glance", "Is a Latte Stronger than a Cappuccino?", "Where Latte Wins", "Where Cappuccino Wins", "Which Should You Choose?"}
	if got := h2s(secs); !slices.Equal(got, want) {
		t.Errorf("H2s %q, want %q", got, want)
	}
}
