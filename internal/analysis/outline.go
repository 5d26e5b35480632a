package analysis

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/numfmt"
	"github.com/contentapi/contentapi/internal/stem"
)

// Section is one H2 of an outline with what it should cover.
type Section struct {
	H2            string   `json:"h2"`
	TalkingPoints []string `json:"talking_points"`
}

// Outline limits.
const (
	MinSections         = 3 // sections every outline has
	MaxSections         = 8 // sections no outline exceeds
	maxQuestionSections = 3 // question keywords that get their own H2
	maxModifierSections = 3 // modifier keywords that get their own H2
	maxKeywordSections  = 5 // question and modifier H2s together
	maxCompetitorH2s    = 2 // competitor headings adopted
	maxFAQ              = 5 // questions listed under "Frequently Asked Questions"
)

// faqHeading is the H2 of the questions that get no section of their own.
const faqHeading = "Frequently Asked Questions"

// Sections a title promises, always in the outline.
const (
	howWeChose = "How We Chose"              // "Best X: Tested and Compared"
	stepByStep = "Step-by-Step Instructions" // "How to X: A Step-by-Step Guide"
)

// outlineLanguage is the language outlines are written in.
const outlineLanguage = "en"

// BuildOutline writes the H2 sections of an article targeting target, from its cluster's
// keywords, the headings of competing pages and the brand. intent is one of the four ("" =
// Intent(target)); brand is the brand_context (see ParseBrand). Sections, in order:
//
//  1. Keyword sections, at most 5, strongest keyword first (a "what is/are …" question
//     leads): up to 3 question keywords (who/what/why/how/can/does/is/…) sharing a core
//     word with the target (others are left out: another page's subject) as the question,
//     title-cased, with a "?"; up to 3 modifier keywords, those adding words to the target
//     ("cold brew coffee ratio" for "cold brew coffee"), as the title-cased keyword. Cluster
//     keywords that only re-order or inflect the target's words get no section.
//  2. Competitor headings, at most 2: headings of competing pages, numbering stripped,
//     grouped by normalised phrase; those on two or more pages first, then others sharing a
//     word with the target. Boilerplate (comments, newsletter, related posts, conclusion,
//     FAQ, …) and headings that only restate the target are skipped. A heading equal to a
//     keyword section adds its "covered by competitors" note to that section instead.
//  3. Standard sections for the intent ("How We Chose" for commercial, "Pricing and Where to
//     Buy" for transactional, "What You'll Need" for how-to, "The Short Answer" for
//     questions, …), only to reach 3 sections; except the sections a title promises,
//     always present: "How We Chose" for "best X", "Step-by-Step Instructions" for how-to,
//     "The Short Answer" for duration, amount, frequency and yes/no questions, all four
//     for "X vs Y" (the table, where each wins, the verdict).
//     An intent's opening stock sections ("What You'll Need", "What Is X?") go first.
//  4. "Frequently Asked Questions" listing the questions that did not get a section (≤ 5).
//
// Talking points name the keyword, its monthly search volume when known, and the brand when
// given (one point in the most fitting section). No two sections have the same normalised
// H2; there are at least 3 and at most 8 (keyword and competitor sections give way first).
func BuildOutline(target keywords.Keyword, cluster []keywords.Keyword, competitorH2s []string, brand string, intent string) []Section {
	in := NormalizeIntent(intent)
	if in == "" {
		in = Intent(target)
	}
	o := outline{target: readablePhrase(target.Keyword), targetSet: stem.Set(target.Keyword, outlineLanguage)}
	core := coreStems(target.Keyword)

	var questions, modifiers []keywords.Keyword
	seen := map[string]bool{stem.Normalize(target.Keyword, outlineLanguage): true}
	sorted := slices.Clone(cluster)
	SortKeywords(sorted)
	for _, k := range sorted {
		key := stem.Normalize(k.Keyword, outlineLanguage)
		if key == "" || seen[key] {
			continue
		}
		seen[key] = true
		switch {
		case IsQuestion(k.Keyword):
			// A question sharing no core word with the target is another page's subject,
			// even when search results group them ("how much caffeine in a cup of coffee"
			// for "latte vs cappuccino").
			if intersect(core, stem.Set(k.Keyword, outlineLanguage)) > 0 {
				questions = append(questions, k)
			}
		case isModifier(stem.Set(k.Keyword, outlineLanguage), o.targetSet, core, in):
			modifiers = append(modifiers, k)
		}
	}
	// A definition question leads; the rest keep volume order.
	slices.SortStableFunc(questions, func(a, b keywords.Keyword) int {
		return cmp.Compare(definitionRank(a.Keyword), definitionRank(b.Keyword))
	})

	var keywordSecs []keywords.Keyword
	var faq []keywords.Keyword
	for i, q := range questions {
		if i < maxQuestionSections {
			keywordSecs = append(keywordSecs, q)
		} else {
			faq = append(faq, q)
		}
	}
	keywordSecs = append(keywordSecs, modifiers[:min(len(modifiers), maxModifierSections)]...)
	slices.SortStableFunc(keywordSecs, func(a, b keywords.Keyword) int {
		if c := cmp.Compare(definitionRank(a.Keyword), definitionRank(b.Keyword)); c != 0 {
			return c
		}
		return compareKeywords(a, b)
	})
	if len(keywordSecs) > maxKeywordSections {
		for _, k := range keywordSecs[maxKeywordSections:] {
			if IsQuestion(k.Keyword) {
				faq = append(faq, k)
			}
		}
		keywordSecs = keywordSecs[:maxKeywordSections]
	}
	SortKeywords(faq)
	for _, k := range keywordSecs {
		if IsQuestion(k.Keyword) {
			o.add(QuestionHeading(k.Keyword), questionPoints(k))
		} else {
			o.add(TitleCase(readablePhrase(k.Keyword)), modifierPoints(k, o.target))
		}
	}

	for _, h := range competitorHeadings(competitorH2s, o.targetSet) {
		note := "Covered by a competing page; match its depth, then add what it misses."
		if h.count > 1 {
			note = fmt.Sprintf("Covered by %d competing pages; match their depth, then add what they miss.", h.count)
		}
		if i := o.find(h.heading); i >= 0 {
			o.secs[i].TalkingPoints = append(o.secs[i].TalkingPoints, note)
			continue
		}
		o.add(h.heading, []string{note, fmt.Sprintf("Tie it back to %s so the section serves the main topic.", quote(o.target))})
	}

	var faqSec []Section
	if len(faq) > 0 {
		s := Section{H2: faqHeading}
		for _, q := range faq[:min(len(faq), maxFAQ)] {
			s.TalkingPoints = append(s.TalkingPoints, fmt.Sprintf("Answer %s%s in two or three sentences.", quote(readablePhrase(q.Keyword)), volumeNote(q)))
		}
		faqSec = []Section{s}
	}

	// Stock sections: the essential ones always, the others only to reach MinSections.
	st := standardSections(in, o.target, target.Keyword)
	use := make([]bool, len(st))
	count := len(o.secs) + len(faqSec)
	for i, sec := range st {
		if sec.essential && o.find(sec.H2) < 0 {
			use[i] = true
			count++
		}
	}
	for i, sec := range st {
		if count >= MinSections {
			break
		}
		if !use[i] && o.find(sec.H2) < 0 {
			use[i] = true
			count++
		}
	}
	var lead, tail []Section
	for i, sec := range st {
		if !use[i] {
			continue
		}
		if sec.lead {
			lead = append(lead, sec.Section)
		} else {
			tail = append(tail, sec.Section)
		}
	}
	// Over the limit, drop the last keyword or competitor sections.
	if over := len(lead) + len(o.secs) + len(tail) + len(faqSec) - MaxSections; over > 0 {
		o.secs = o.secs[:len(o.secs)-over]
	}
	o.secs = slices.Concat(lead, o.secs, tail, faqSec)
	o.addBrand(in, ParseBrand(brand))
	return o.secs
}

// coreStems are the target's stems without intent modifiers ("best cold brew maker" →
// brew cold maker); the full stems when nothing is left.
func coreStems(target string) []string {
	full := stem.Set(target, outlineLanguage)
	mods := modifierStems(outlineLanguage)
	core := slices.DeleteFunc(slices.Clone(full), func(s string) bool { return mods[s] })
	if len(core) == 0 {
		return full
	}
	return core
}

// isModifier reports whether a keyword narrows the target: it adds stems to the target's
// and contains the target's core stems; for informational targets, sharing two core stems
// is enough ("cold brew concentrate" for "cold brew coffee").
func isModifier(set, targetSet, core []string, intent string) bool {
	if subset(set, targetSet) {
		return false
	}
	if subset(core, set) {
		return true
	}
	return intent == Informational && len(core) >= 2 && intersect(core, set) >= 2
}

// outline accumulates sections without duplicate H2s.
type outline struct {
	target    string
	targetSet []string
	secs      []Section
}

// find is the index of the section whose H2 normalises like h2, or -1.
func (o *outline) find(h2 string) int {
	key := stem.Normalize(h2, outlineLanguage)
	return slices.IndexFunc(o.secs, func(s Section) bool { return stem.Normalize(s.H2, outlineLanguage) == key })
}

// add appends a section unless its H2 duplicates one already there.
func (o *outline) add(h2 string, points []string) bool {
	if h2 == "" || o.find(h2) >= 0 {
		return false
	}
	o.secs = append(o.secs, Section{H2: h2, TalkingPoints: points})
	return true
}

// addBrand puts one brand talking point in the section that fits the intent best.
func (o *outline) addBrand(intent string, b Brand) {
	label := b.Label()
	if label == "" || len(o.secs) == 0 {
		return
	}
	i := 0
	var point string
	switch intent {
	case Commercial:
		i = o.lastContentSection()
		point = fmt.Sprintf("If %s is a real option here, mention it and say plainly that it is yours.", label)
		if j := o.find(howWeChose); j >= 0 {
			i = j
			point = fmt.Sprintf("Where %s fits, include it, say plainly that it is yours and hold it to the same criteria as the rest.", label)
		}
	case Transactional:
		point = fmt.Sprintf("Point readers to %s with current prices and availability.", label)
	case Navigational:
		point = fmt.Sprintf("Link to %s's own pages where they answer the reader's question.", b.nameOr(label))
	default:
		i = o.lastContentSection()
		point = fmt.Sprintf("Show where %s helps readers searching %s, briefly and without turning the section into an ad.", label, quote(o.target))
	}
	o.secs[i].TalkingPoints = append(o.secs[i].TalkingPoints, point)
}

// lastContentSection is the index of the last section before the FAQ.
func (o *outline) lastContentSection() int {
	i := len(o.secs) - 1
	if i > 0 && o.secs[i].H2 == faqHeading {
		i--
	}
	return i
}

// nameOr is the brand's name, or def.
func (b Brand) nameOr(def string) string {
	if b.Name != "" {
		return b.Name
	}
	return def
}

// definitionRank is 0 for "what is/are …" questions, 1 otherwise.
func definitionRank(phrase string) int {
	t := stem.Tokens(phrase)
	if len(t) > 1 && (t[0] == "what" && (t[1] == "is" || t[1] == "are") || t[0] == "what's" || t[0] == "whats") {
		return 0
	}
	return 1
}

// QuestionHeading writes a question keyword as an H2: title case, "?" at the end ("how long
// does cold brew last" → "How Long Does Cold Brew Last?"), except for "how to …"-style
// phrases, which are not questions ("How to Make Cold Brew").
func QuestionHeading(q string) string {
	q = strings.TrimRight(readablePhrase(q), "? ")
	if q == "" {
		return ""
	}
	if !needsQuestionMark(q) {
		return TitleCase(q)
	}
	return TitleCase(q) + "?"
}

// needsQuestionMark reports whether a question phrase reads as a question: "how to …",
// "how long to …", "what to …" and the like are headings, not questions.
func needsQuestionMark(phrase string) bool {
	t := stem.Tokens(phrase)
	for i := 1; i < len(t) && i <= 2; i++ {
		if t[i] == "to" && questionWords[t[0]] {
			return false
		}
	}
	return IsQuestion(phrase)
}

// questionKind is what a question asks for; it decides the question's talking points and,
// for a question target, the outline's stock sections.
type questionKind int

const (
	otherQuestion      questionKind = iota
	howToQuestion                   // how to X, how do I X, best way to X: steps
	durationQuestion                // how long …: a time
	amountQuestion                  // how much / how many …: a number
	frequencyQuestion               // how often …, when to …: an interval or a moment
	definitionQuestion              // what is / what are …: a definition
	reasonQuestion                  // why …: causes
	yesNoQuestion                   // is / can / does / should …: yes or no
	choiceQuestion                  // which / who …: a named pick
	placeQuestion                   // where …: places or options
)

// kindOf classifies a question phrase by its opening words ("how long to steep cold brew"
// asks for a duration, not for steps); otherQuestion for anything else.
func kindOf(phrase string) questionKind {
	t := stem.Tokens(phrase)
	if len(t) == 0 {
		return otherQuestion
	}
	second := ""
	if len(t) > 1 {
		second = t[1]
	}
	switch {
	case t[0] == "how" && (second == "long" || second == "many" && len(t) > 2 && slices.Contains([]string{"hours", "minutes", "days", "weeks", "months", "years"}, t[2])):
		return durationQuestion
	case t[0] == "how" && (second == "much" || second == "many" || second == "big" || second == "far" || second == "hot" || second == "cold" || second == "strong" || second == "old"):
		return amountQuestion
	case t[0] == "how" && second == "often", t[0] == "when":
		return frequencyQuestion
	case t[0] == "how" && (second == "to" || len(t) > 3 && slices.Contains([]string{"do", "can", "should"}, second) && slices.Contains([]string{"i", "you", "we"}, t[2])),
		hasPrefixWords(t, "best", "way", "to"), hasPrefixWords(t, "best", "ways", "to"):
		return howToQuestion
	case definitionRank(phrase) == 0:
		return definitionQuestion
	case t[0] == "why":
		return reasonQuestion
	case slices.Contains([]string{"can", "could", "does", "do", "did", "is", "are", "was", "were", "should", "will", "would"}, t[0]):
		return yesNoQuestion
	case t[0] == "which" || t[0] == "who":
		return choiceQuestion
	case t[0] == "where":
		return placeQuestion
	}
	return otherQuestion
}

// answerPoint says how a section answers a question of the kind.
func answerPoint(kind questionKind) string {
	switch kind {
	case durationQuestion:
		return "Give the time as a specific range (minutes, hours or days) in the first sentence, then what makes it shorter or longer; no step list."
	case amountQuestion:
		return "Give a specific number or range with its unit up front, then what changes it."
	case frequencyQuestion:
		return "Give a specific interval or moment up front, then the signs that call for sooner or later."
	case howToQuestion:
		return "Walk through it in numbered steps, one action per step."
	case yesNoQuestion:
		return "Open with a clear yes or no, then the conditions that change the answer."
	case reasonQuestion:
		return "Explain the cause first, then what it means for the reader."
	case definitionQuestion:
		return "Define it in one sentence, then give a concrete example."
	case choiceQuestion:
		return "Name a specific answer and who it suits best."
	case placeQuestion:
		return "Point to specific places, options or settings."
	}
	return "Answer it in the first two sentences, then add detail."
}

// questionPoints are the talking points of a question section: steps under a how-to
// heading, else a snippet-length answer of the kind the question asks for.
func questionPoints(k keywords.Keyword) []string {
	phrase := readablePhrase(k.Keyword)
	kind := kindOf(k.Keyword)
	if kind == howToQuestion {
		return []string{
			fmt.Sprintf("Targets %s%s; put the steps in a numbered list right under this heading, a featured-snippet candidate.", quote(phrase), volumeNote(k)),
			"Keep one action per step, with the times, amounts or settings each needs.",
		}
	}
	return []string{
		fmt.Sprintf("Answer %s%s in the first 40–60 words under this heading; it is a featured-snippet candidate.", quote(phrase), volumeNote(k)),
		answerPoint(kind),
	}
}

// modifierAngles map a modifier word to what its section must deliver.
var modifierAngles = []struct {
	words []string
	point string
}{
	{[]string{"ratio", "ratios", "measurement", "measurements", "proportion", "proportions", "amount", "amounts"}, "State exact amounts and the ratio, and when to adjust them."},
	{[]string{"recipe", "recipes"}, "Give ingredients with quantities and numbered steps."},
	{[]string{"price", "prices", "pricing", "cost", "costs", "cheap", "budget"}, "Give current price ranges and what drives the difference."},
	{[]string{"vs", "versus", "difference", "differences", "compare", "comparison"}, "Compare them side by side on the points readers decide on; a short table works well."},
	{[]string{"best", "top", "review", "reviews", "alternatives", "alternative"}, "Name specific picks and say who each one suits."},
	{[]string{"benefits", "benefit", "pros", "advantages"}, "List the main benefits with the evidence behind each."},
	{[]string{"risks", "risk", "dangers", "side", "cons", "disadvantages", "safe", "safety"}, "Be specific about the risks and who should be careful."},
	{[]string{"time", "long", "hours", "minutes", "days", "steep", "steeping"}, "Give specific times and what changes if you go shorter or longer."},
	{[]string{"temperature", "temp", "hot", "heat"}, "Give the exact temperature range and why it matters."},
	{[]string{"tips", "hacks", "mistakes", "tricks"}, "Give concrete tips readers can act on today, not general advice."},
	{[]string{"ideas", "examples", "inspiration"}, "Show several concrete examples, each with a line on why it works."},
	{[]string{"beginners", "beginner", "starter", "easy", "simple"}, "Assume no prior knowledge: define terms and keep the steps short."},
}

// modifierPoints are the talking points of a modifier keyword's section.
func modifierPoints(k keywords.Keyword, target string) []string {
	phrase := readablePhrase(k.Keyword)
	points := []string{fmt.Sprintf("Targets %s%s; use the phrase in this heading and the section's first paragraph.", quote(phrase), volumeNote(k))}
	words := stem.Tokens(phrase)
	for _, a := range modifierAngles {
		if containsAny(words, a.words...) {
			return append(points, a.point)
		}
	}
	if i := slices.Index(words, "for"); i >= 0 && i+1 < len(words) {
		return append(points, fmt.Sprintf("Tailor the advice to %s: what is different for them and why.", strings.Join(words[i+1:], " ")))
	}
	targetWords := stem.Tokens(target)
	var extra []string
	for _, w := range words {
		if !slices.Contains(targetWords, w) {
			extra = append(extra, w)
		}
	}
	if len(extra) == 0 {
		extra = words
	}
	return append(points, fmt.Sprintf("Cover the %s angle of %s specifically, with numbers, steps or named examples rather than general statements.", quote(strings.Join(extra, " ")), target))
}

// volumeNote is " (about N searches a month)" when the volume is known.
func volumeNote(k keywords.Keyword) string {
	if k.SearchVolume == nil || *k.SearchVolume <= 0 {
		return ""
	}
	return " (about " + numfmt.Count(*k.SearchVolume) + " searches a month)"
}

// quote puts a phrase in typographic quotes.
func quote(s string) string { return "“" + s + "”" }

// competitorHeading is a competitor H2 adopted into an outline.
type competitorHeading struct {
	heading string
	count   int
}

// headingNumbering matches list numbering in front of a heading ("1.", "Step 2:", "#3").
var headingNumbering = regexp.MustCompile(`(?i)^\s*(?:step\s+\d+\s*[.:)\-–—]?|#?\d+\s*[.:)\-–—]|#\d+)\s*`)

// boilerplateHeadings are headings of page furniture, not content.
var boilerplateHeadings = []string{
	"related", "comment", "comments", "leave a reply", "leave a comment", "share", "subscribe",
	"newsletter", "table of contents", "contents", "about the author", "you may also like",
	"recent posts", "popular posts", "latest posts", "categories", "tags", "archives",
	"follow us", "contact", "contact us", "sign up", "menu", "search", "cookie", "cookies",
	"privacy", "disclaimer", "disclosure", "read more", "conclusion", "final thoughts",
	"summary", "wrapping up", "bottom line", "introduction", "faq", "faqs",
	"frequently asked questions", "in this article", "sponsored", "advertisement",
}

// competitorHeadings picks the competitor headings worth adopting (see BuildOutline).
func competitorHeadings(h2s []string, targetSet []string) []competitorHeading {
	type group struct {
		forms    map[string]int    // lower-case spelling → occurrences
		spelling map[string]string // lower-case spelling → as written
		count    int
		related  bool
	}
	groups := make(map[string]*group)
	for _, raw := range h2s {
		h := strings.Join(strings.Fields(headingNumbering.ReplaceAllString(raw, "")), " ")
		h = strings.TrimRight(h, ":.-–— ")
		words := strings.Fields(h)
		if len(words) == 0 || len(words) > 12 || len(h) > 90 || isBoilerplate(h) {
			continue
		}
		set := stem.Set(h, outlineLanguage)
		if len(set) == 0 || subset(set, targetSet) {
			continue // restates the target
		}
		key := strings.Join(set, " ")
		g := groups[key]
		if g == nil {
			g = &group{forms: make(map[string]int), spelling: make(map[string]string), related: intersect(set, targetSet) > 0}
			groups[key] = g
		}
		g.forms[strings.ToLower(h)]++
		if prev, ok := g.spelling[strings.ToLower(h)]; !ok || prev == strings.ToLower(prev) && h != strings.ToLower(h) {
			g.spelling[strings.ToLower(h)] = h // prefer a spelling with capitals
		}
		g.count++
	}
	type scored struct {
		key string
		g   *group
	}
	var list []scored
	for k, g := range groups {
		if g.count >= 2 || g.related {
			list = append(list, scored{k, g})
		}
	}
	slices.SortFunc(list, func(a, b scored) int {
		if c := cmp.Compare(b.g.count, a.g.count); c != 0 {
			return c
		}
		if a.g.related != b.g.related {
			if a.g.related {
				return -1
			}
			return 1
		}
		return strings.Compare(a.key, b.key)
	})
	var out []competitorHeading
	for _, s := range list[:min(len(list), maxCompetitorH2s)] {
		// The most common spelling, then the shortest, then alphabetical.
		best, bestN := "", 0
		for f, n := range s.g.forms {
			if n > bestN || n == bestN && (len(f) < len(best) || len(f) == len(best) && f < best) {
				best, bestN = f, n
			}
		}
		best = s.g.spelling[best]
		heading := TitleCase(best)
		if needsQuestionMark(best) && !strings.HasSuffix(heading, "?") {
			heading += "?"
		}
		out = append(out, competitorHeading{heading: heading, count: s.g.count})
	}
	return out
}

// isBoilerplate reports whether a heading is page furniture.
func isBoilerplate(h string) bool {
	t := stem.Tokens(h)
	for _, b := range boilerplateHeadings {
		bw := strings.Fields(b)
		if len(t) <= len(bw)+2 && containsWords(t, bw...) {
			return true
		}
	}
	return false
}

// stockSection is one of an intent's standard sections.
type stockSection struct {
	Section
	lead      bool // goes before the keyword sections
	essential bool // always in the outline: the title promises it
}

// stock builds stock sections: the first lead ones lead, those named in essential are
// always used.
func stock(secs []Section, lead int, essential ...string) []stockSection {
	out := make([]stockSection, len(secs))
	for i, s := range secs {
		out[i] = stockSection{Section: s, lead: i < lead, essential: slices.Contains(essential, s.H2)}
	}
	return out
}

// standardSections are the intent's stock sections (see BuildOutline).
//
// The keyword's shape comes before its intent: "X vs Y" gets the comparison's sections and
// "best X" the picks' whatever the provider's intent label; a question gets the sections of
// what it asks for (kindOf: a duration, an amount, a definition, yes or no, …).
func standardSections(intent, target, rawTarget string) []stockSection {
	lw := stem.Tokens(target)
	subject := TitleCase(target)
	if i := slices.IndexFunc(lw, func(w string) bool { return w == "vs" || w == "versus" }); i > 0 && i < len(lw)-1 && intent != Navigational {
		a, b := strings.Join(lw[:i], " "), strings.Join(lw[i+1:], " ")
		ta, tb := TitleCase(a), TitleCase(b)
		return stock([]Section{
			{ta + " vs " + tb + " at a Glance", []string{fmt.Sprintf("Put the key differences between %s and %s in one table: price, strengths and who each suits.", a, b)}},
			{"Where " + ta + " Wins", []string{fmt.Sprintf("Give the concrete cases where %s is the better choice.", a)}},
			{"Where " + tb + " Wins", []string{fmt.Sprintf("Give the concrete cases where %s is the better choice.", b)}},
			{"Which Should You Choose?", []string{"Give a clear recommendation for each type of reader."}},
		}, 1, ta+" vs "+tb+" at a Glance", "Where "+ta+" Wins", "Where "+tb+" Wins", "Which Should You Choose?")
	}
	if intent == Informational && len(lw) > 1 && (lw[0] == "best" || lw[0] == "top") && ClassifyIntent(target) == Commercial {
		intent = Commercial
	}
	switch intent {
	case Commercial:
		s := strings.Join(withoutWords(lw, lw, "best", "top", "review", "reviews", "alternatives", "alternative", "comparison", "compare"), " ")
		if s == "" {
			s = target
		}
		return stock([]Section{
			{howWeChose, []string{
				fmt.Sprintf("State the criteria used to judge each %s and how the options were tested or researched.", s),
				"Say how many options were considered and why the others did not make the cut.",
			}},
			{"What to Look For in " + TitleCase(s), []string{fmt.Sprintf("Explain the features that separate a good %s from a poor one, most important first.", s)}},
			{"Our Top Picks Compared", []string{fmt.Sprintf("Compare the picks for %s in one table: price, key specs and who each suits.", quote(target))}},
		}, 0, howWeChose)
	case Transactional:
		s := strings.Join(withoutWords(lw, lw, "buy", "order", "purchase", "shop", "cheap", "price", "prices", "pricing", "deal", "deals", "coupon", "coupons", "discount", "near", "me", "for", "sale", "online"), " ")
		if s == "" {
			s = target
		}
		return stock([]Section{
			{"Pricing and Where to Buy", []string{fmt.Sprintf("Give current price ranges for %s, where to buy and what moves the price.", s)}},
			{"What to Check Before You Buy", []string{fmt.Sprintf("List the specs, sizes or options that matter when buying %s.", s)}},
			{"How to Get the Best Deal", []string{fmt.Sprintf("Cover sale periods, bundles and cheaper alternatives to %s.", s)}},
		}, 1)
	case Navigational:
		s := TitleCase(strings.Join(withoutWords(lw, lw, "login", "log", "in", "sign", "signin", "up", "signup", "official", "site", "website", "homepage"), " "))
		if s == "" {
			s = subject
		}
		return stock([]Section{
			{"How to Sign In to " + s, []string{fmt.Sprintf("Give the exact steps and the official address for %s.", s)}},
			{"Troubleshooting Common Problems", []string{fmt.Sprintf("Cover forgotten passwords, locked accounts and error messages people hit with %s.", s)}},
			{"Official Links and Contact Options", []string{fmt.Sprintf("List %s's official pages and support contacts so readers avoid look-alike sites.", s)}},
		}, 1)
	}
	if hasPrefixWords(lw, "how", "to") && len(lw) > 2 {
		task := strings.Join(lw[2:], " ")
		return stock([]Section{
			{"What You'll Need", []string{fmt.Sprintf("List every tool and ingredient needed to %s, with amounts where they matter.", task)}},
			{stepByStep, []string{fmt.Sprintf("Number the steps to %s; one action per step, with times and quantities.", task)}},
			{"Common Mistakes to Avoid", []string{fmt.Sprintf("Cover the mistakes people make when they %s and how to fix each.", task)}},
		}, 2, stepByStep)
	}
	if IsQuestion(rawTarget) {
		return questionSections(target, kindOf(rawTarget))
	}
	first := Section{subject + " Explained", []string{fmt.Sprintf("Explain %s in one or two plain sentences before going deeper.", target)}}
	if len(lw) <= 2 {
		first = Section{"What Is " + subject + "?", []string{fmt.Sprintf("Define %s in one or two sentences before going deeper.", target)}}
	}
	return stock(append([]Section{first}, generalSections(target)...), 1)
}

// generalSections are sections any article on target can carry, whatever its intent: the
// informational stock sections, and what tops up an outline whose own stock sections
// higher-priority recommendations all took (they are stock headings, so they may repeat).
func generalSections(target string) []Section {
	return []Section{
		{"Common Mistakes to Avoid", []string{fmt.Sprintf("List the mistakes people make with %s and how to avoid each.", target)}},
		{"Key Takeaways", []string{fmt.Sprintf("Sum up the three or four points a reader searching %s should remember.", quote(target))}},
		{"Next Steps", []string{fmt.Sprintf("Tell readers what to do once they understand %s, with one concrete first action.", target)}},
	}
}

// questionSections are the stock sections of a question target, by what it asks for.
func questionSections(target string, kind questionKind) []stockSection {
	short := Section{"The Short Answer", []string{
		fmt.Sprintf("Answer %s in the first two sentences, as precisely as the evidence allows.", quote(target)), answerPoint(kind)}}
	takeaways := Section{"Practical Takeaways", []string{fmt.Sprintf("Turn the answer to %s into concrete advice the reader can act on.", quote(target))}}
	switch kind {
	case durationQuestion:
		return stock([]Section{short,
			{"What Makes It Shorter or Longer", []string{"Go through the factors that change the time one by one (strength, temperature, size, method), each with its effect in numbers."}},
			{"How to Tell When It's Done", []string{"Give the signs (taste, colour, texture, a simple test) that show it is ready, and what happens past that point."}},
			{"Times at a Glance", []string{"Put the times for the common cases in one table readers can scan."}},
		}, 1, short.H2)
	case amountQuestion:
		return stock([]Section{short,
			{"What Changes the Amount", []string{"Go through the factors that raise or lower the number one by one, with figures for each."}},
			{"How to Measure It", []string{"Say how to measure or count it at home, with the tools and units to use."}},
			{"Amounts at a Glance", []string{"Put the amounts for the common cases in one table readers can scan."}},
		}, 1, short.H2)
	case frequencyQuestion:
		return stock([]Section{short,
			{"What Changes the Timing", []string{"Go through what calls for sooner or later one by one, with intervals for each."}},
			{"Signs It's Time", []string{"List the signs that say it is time, so readers need not rely on the calendar alone."}},
		}, 1, short.H2)
	case definitionQuestion:
		s := strings.Join(withoutWords(stem.Tokens(target), stem.Tokens(target), "what", "what's", "whats", "is", "are", "a", "an", "the"), " ")
		if s == "" {
			s = target
		}
		ts := TitleCase(s)
		return stock([]Section{
			{ts + " in One Sentence", []string{fmt.Sprintf("Define %s in one plain sentence a newcomer understands, then give a concrete example.", s)}},
			{"How " + ts + " Works", []string{fmt.Sprintf("Explain how %s works or is made, step by step where that helps understanding.", s)}},
			{ts + " vs Similar Options", []string{fmt.Sprintf("Set %s against the options it is most often confused with, in a short table.", s)}},
			{"When to Choose " + ts, []string{fmt.Sprintf("Say who %s suits and when something else is the better choice.", s)}},
		}, 1)
	case yesNoQuestion:
		return stock([]Section{short,
			{"When the Answer Changes", []string{"Go through the conditions that turn the answer around, one by one, with specifics for each."}},
			{"What the Evidence Says", []string{"Cite the tests, studies or measurements behind the answer and what they found."}},
			takeaways,
		}, 1, short.H2)
	case reasonQuestion:
		return stock([]Section{
			{"The Main Reasons", []string{fmt.Sprintf("List the causes behind %s, the most common first, each with how to recognise it.", quote(target))}},
			{"What It Means for You", []string{"Say what each cause means in practice for the reader."}},
			{"What to Do About It", []string{"Give a concrete fix or next step for each cause."}},
		}, 1)
	}
	return stock([]Section{short,
		{"What Changes the Answer", []string{"Go through the factors that change the answer one by one, with specifics for each."}},
		takeaways,
	}, 1)
}
