package dataforseo

import (
	"context"
	"strings"

	"github.com/contentapi/contentapi/internal/keywords"
)

// fills names the metrics a fill may supply to an answer: those it shows.
type fills struct{ intent, difficulty bool }

// fillsFor is the fills of an answer showing the intent (when intent) and the difficulty,
// less a metric the query filters or orders on: DataForSEO filtered and ordered the pages by
// its own value, and a value filled after that would put rows out of the order the pages
// promise (unknown last).
func fillsFor(intent bool, f keywords.Filters, order []keywords.OrderKey) fills {
	fl := fills{intent: intent && len(f.Intents) == 0, difficulty: true}
	if _, ok := f.Ranges[keywords.FieldDifficulty]; ok {
		fl.difficulty = false
	}
	for _, k := range order {
		if k.Field == keywords.FieldDifficulty {
			fl.difficulty = false
		}
	}
	return fl
}

// fillMissing, when configured, asks search_intent for keywords without an intent and
// bulk_keyword_difficulty for those without a difficulty (at most 1,000 each, each keyword
// once), for the metrics want names. The fill is best effort: a failure is logged and the
// keywords keep their gaps.
func (c *Client) fillMissing(ctx context.Context, loc int, lang string, ks []*keywords.Keyword, want fills) {
	if !c.fill || len(ks) == 0 {
		return
	}
	var noIntent, noDifficulty []string
	byKey := map[string][]*keywords.Keyword{}
	for _, k := range ks {
		key := strings.ToLower(k.Keyword)
		if _, ok := byKey[key]; !ok {
			if want.intent && k.Intent == "" && len(noIntent) < maxLimit {
				noIntent = append(noIntent, k.Keyword)
			}
			if want.difficulty && k.Difficulty == nil && len(noDifficulty) < maxLimit {
				noDifficulty = append(noDifficulty, k.Keyword)
			}
		}
		byKey[key] = append(byKey[key], k)
	}
	if len(noIntent) > 0 {
		var results []struct {
			Items []struct {
				Keyword       string `json:"keyword"`
				KeywordIntent *struct {
					Label string `json:"label"`
				} `json:"keyword_intent"`
			} `json:"items"`
		}
		err := c.post(ctx, PathSearchIntent, map[string]any{"keywords": noIntent, "language_code": lang}, &results)
		if err != nil {
			c.log.WarnContext(ctx, "dataforseo: search intent fill failed", "error", err)
		}
		for _, r := range results {
			for _, it := range r.Items {
				if it.KeywordIntent == nil {
					continue
				}
				for _, k := range byKey[strings.ToLower(it.Keyword)] {
					if k.Intent == "" {
						k.Intent = it.KeywordIntent.Label
					}
				}
			}
		}
	}
	if len(noDifficulty) > 0 {
		var results []struct {
			Items []struct {
				Keyword           string   `json:"keyword"`
				KeywordDifficulty optFloat `json:"keyword_difficulty"`
			} `json:"items"`
		}
		err := c.post(ctx, PathBulkKeywordDifficulty, map[string]any{"keywords": noDifficulty, "location_code": loc, "language_code": lang}, &results)
		if err != nil {
			c.log.WarnContext(ctx, "dataforseo: keyword difficulty fill failed", "error", err)
		}
		for _, r := range results {
			for _, it := range r.Items {
				if it.KeywordDifficulty.v == nil {
					continue
				}
				for _, k := range byKey[strings.ToLower(it.Keyword)] {
					if k.Difficulty == nil {
						d := *it.KeywordDifficulty.v
						k.Difficulty = &d
					}
				}
			}
		}
	}
}
