package keywords

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Market is a country and language pair, the unit keyword data is imported and asked in.
type Market struct{ Country, Language string }

func (m Market) String() string { return m.Country + "/" + m.Language }

// Markets is a Provider that sends each question to the provider holding its market: a
// keyword store split across databases (or machines) by market, every question and import
// being of one market. Markets not listed go to Default. It passes on the optional
// interfaces (Versioned, Suggester, SyntheticLabeler, TrendLabeler) to the provider of the
// question's market; a provider without one answers as a provider without it would.
type Markets struct {
	Default  Provider
	ByMarket map[Market]Provider
	// order lists Default and the others once each, for DataVersion and RanksKeywords.
	order []Provider
}

// NewMarkets routes the markets of byMarket to their providers and every other to def.
func NewMarkets(def Provider, byMarket map[Market]Provider) *Markets {
	m := &Markets{Default: def, ByMarket: byMarket, order: []Provider{def}}
	seen := map[Provider]bool{def: true}
	for _, key := range sortedMarkets(byMarket) {
		if p := byMarket[key]; !seen[p] {
			seen[p] = true
			m.order = append(m.order, p)
		}
	}
	return m
}

func sortedMarkets(byMarket map[Market]Provider) []Market {
	return slices.SortedFunc(maps.Keys(byMarket), func(a, b Market) int { return cmp.Compare(a.String(), b.String()) })
}

// For is the provider holding the market.
func (m *Markets) For(country, language string) Provider {
	if p, ok := m.ByMarket[Market{strings.ToLower(country), strings.ToLower(language)}]; ok {
		return p
	}
	return m.Default
}

func (m *Markets) Name() string { return m.Default.Name() }

func (m *Markets) Ideas(ctx context.Context, req IdeasRequest) (IdeaList, error) {
	return m.For(req.Country, req.Language).Ideas(ctx, req)
}

func (m *Markets) Ranked(ctx context.Context, req RankedRequest) ([]Ranking, error) {
	return m.For(req.Country, req.Language).Ranked(ctx, req)
}

func (m *Markets) Gaps(ctx context.Context, req GapsRequest) (GapList, error) {
	return m.For(req.Country, req.Language).Gaps(ctx, req)
}

func (m *Markets) Rankings(ctx context.Context, req RankingsRequest) (RankingList, error) {
	return m.For(req.Country, req.Language).Rankings(ctx, req)
}

func (m *Markets) Competitors(ctx context.Context, req CompetitorsRequest) (CompetitorList, error) {
	return m.For(req.Country, req.Language).Competitors(ctx, req)
}

// DataVersion is every provider's version, Default's first: a write to any of them moves
// it. A provider that is not Versioned makes the whole unversioned (an error), since an
// answer cache keyed by the others' versions would outlive its data.
func (m *Markets) DataVersion(ctx context.Context) (string, error) {
	parts := make([]string, len(m.order))
	for i, p := range m.order {
		v, ok := p.(Versioned)
		if !ok {
			return "", fmt.Errorf("keywords: markets: provider %d (%s) has no data version", i, p.Name())
		}
		s, err := v.DataVersion(ctx)
		if err != nil {
			return "", err
		}
		parts[i] = s
	}
	return strings.Join(parts, "+"), nil
}

func (m *Markets) Popular(ctx context.Context, country, language string, n int) ([]string, error) {
	if s, ok := m.For(country, language).(Suggester); ok {
		return s.Popular(ctx, country, language, n)
	}
	return nil, nil
}

func (m *Markets) LabelSynthetic(ctx context.Context, country, language string, ks []Keyword) error {
	if l, ok := m.For(country, language).(SyntheticLabeler); ok {
		return l.LabelSynthetic(ctx, country, language, ks)
	}
	return nil
}

func (m *Markets) LabelTrends(ctx context.Context, country, language string, ks []*Keyword) error {
	if l, ok := m.For(country, language).(TrendLabeler); ok {
		return l.LabelTrends(ctx, country, language, ks)
	}
	return nil
}

// RanksKeywords is true when every provider it routes to ranks keywords (KeywordRanked).
func (m *Markets) RanksKeywords() bool {
	for _, p := range m.order {
		if k, ok := p.(KeywordRanked); !ok || !k.RanksKeywords() {
			return false
		}
	}
	return true
}

// MinSeedChars is Default's, when it has one.
func (m *Markets) MinSeedChars() int {
	if s, ok := m.Default.(SeedMinimum); ok {
		return s.MinSeedChars()
	}
	return 0
}
