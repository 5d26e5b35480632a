package dataforseo

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"github.com/contentapi/contentapi/internal/keywords"
)

// keywordData is DataForSEO Labs' keyword object: the items of keyword_ideas, and the
// keyword_data of ranked_keywords and domain_intersection items.
type keywordData struct {
	Keyword     string `json:"keyword"`
	KeywordInfo *struct {
		SearchVolume optInt   `json:"search_volume"`
		CPC          optFloat `json:"cpc"`
		Competition  optFloat `json:"competition"` // 0–1
		// MonthlySearches are the last months' volumes, newest first; null or [] when
		// DataForSEO has none.
		MonthlySearches []struct {
			Year         int    `json:"year"`
			Month        int    `json:"month"`
			SearchVolume optInt `json:"search_volume"`
		} `json:"monthly_searches"`
	} `json:"keyword_info"`
	KeywordProperties *struct {
		KeywordDifficulty optFloat `json:"keyword_difficulty"`
	} `json:"keyword_properties"`
	SearchIntentInfo *struct {
		MainIntent string `json:"main_intent"`
	} `json:"search_intent_info"`
}

// keyword converts to the provider type; what DataForSEO does not say stays nil.
func (d keywordData) keyword() keywords.Keyword {
	k := keywords.Keyword{Keyword: d.Keyword}
	if d.KeywordInfo != nil {
		k.SearchVolume = d.KeywordInfo.SearchVolume.v
		k.CPC = d.KeywordInfo.CPC.v
		if c := d.KeywordInfo.Competition.v; c != nil && *c >= 0 && *c <= 1 {
			k.Competition = c
		}
		var ms []keywords.MonthlyVolume
		for _, m := range d.KeywordInfo.MonthlySearches {
			if m.SearchVolume.v != nil { // a month without a volume is unknown, not 0
				ms = append(ms, keywords.MonthlyVolume{Year: m.Year, Month: m.Month, SearchVolume: *m.SearchVolume.v})
			}
		}
		k.MonthlySearches = keywords.SortMonths(ms)
	}
	if d.KeywordProperties != nil {
		k.Difficulty = d.KeywordProperties.KeywordDifficulty.v
	}
	if d.SearchIntentInfo != nil {
		k.Intent = d.SearchIntentInfo.MainIntent
	}
	return k
}

// serpItem is a ranked SERP element: ranked_serp_element.serp_item, or the
// first_domain_serp_element of domain_intersection.
type serpItem struct {
	Type         string `json:"type"`
	RankGroup    int    `json:"rank_group"`
	RankAbsolute int    `json:"rank_absolute"`
	URL          string `json:"url"`
}

// position is the organic position: rank_group (the place among organic results), or
// rank_absolute when rank_group is missing.
func (s serpItem) position() int {
	if s.RankGroup > 0 {
		return s.RankGroup
	}
	return s.RankAbsolute
}

// optFloat is a number that may be null, missing, or (in older answers) a string; what is
// not a finite number decodes as nil instead of failing the whole answer.
type optFloat struct{ v *float64 }

func (o *optFloat) UnmarshalJSON(b []byte) error {
	o.v = nil
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return nil //nolint:nilerr // a malformed metric is unknown (nil), not a failed answer
		}
		b = []byte(s)
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil //nolint:nilerr // a malformed metric is unknown (nil), not a failed answer
	}
	o.v = &f
	return nil
}

// optInt is optFloat for whole numbers.
type optInt struct{ v *int64 }

func (o *optInt) UnmarshalJSON(b []byte) error {
	var f optFloat
	_ = f.UnmarshalJSON(b)
	o.v = nil
	if f.v != nil && *f.v >= 0 && *f.v < math.MaxInt64/2 {
		n := int64(math.Round(*f.v))
		o.v = &n
	}
	return nil
}
