package report

import (
	"context"
	"fmt"

	"github.com/contentapi/contentapi/internal/analysis"
	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/keywords"
)

// suggestions is how many keywords a NO_DATA answer names as examples to try.
const suggestions = 5

// noData is the NO_DATA error of an analysis that found nothing to report: what says what
// is missing, field names what the caller can change. The advice names keywords the
// provider holds for the market, when it can name them, so the caller knows what data
// exists; with none at all it says so and how data gets in. A job failing with it is
// refunded, so the message says nothing was charged.
func (b *Builder) noData(ctx context.Context, country, language, field, what string) error {
	var advice string
	market := country + "/" + language
	if name := b.Keywords.Name(); name != keywords.LocalName {
		// An external source's data is not the operator's to import: advise what the
		// caller can change.
		return apperr.New(apperr.NoData, "%s %s found nothing for it in %s. Try %s: check the spelling, use a broader or more "+
			"commonly searched phrase, or choose another country or language. Nothing was charged.",
			what, providerLabel(name), market, field)
	}
	s, ok := b.Keywords.(keywords.Suggester)
	var popular []string
	var err error
	if ok {
		popular, err = s.Popular(ctx, country, language, suggestions)
	}
	switch {
	case !ok || err != nil:
		advice = fmt.Sprintf("Try a broader or different %s.", field)
	case len(popular) == 0:
		advice = fmt.Sprintf("This service holds no keyword data for %s at all: choose another country or language, "+
			"or have the operator import keyword data with `ctl import keywords FILE.csv` and `ctl import rankings FILE.csv`.", market)
	default:
		advice = fmt.Sprintf("Try %s with keywords this service holds for %s, such as %s.", field, market, quotedList(popular))
	}
	return apperr.New(apperr.NoData, "%s %s Nothing was charged.", what, advice)
}

// quotedList is a list of quoted phrases for messages: "a", "b" and "c".
func quotedList(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = fmt.Sprintf("%q", s)
	}
	return analysis.JoinList(quoted)
}

// noCompetitorData is the NO_DATA error of keyword gaps when no named competitor has
// ranking data: there is nothing to compare.
func noCompetitorData(unranked []string, country, language string) error {
	return apperr.New(apperr.NoData, "This service holds no ranking data for %s in %s/%s, so no keyword gap "+
		"can be found. Check the spelling of the competitor domains, name competitors that rank in this market, or have the "+
		"operator import their rankings with `ctl import rankings FILE.csv`. Nothing was charged.",
		quotedList(unranked), country, language)
}

// noPlanData is the NO_DATA error of a content plan (recommend, content map) with no keyword
// to plan from.
func (b *Builder) noPlanData(ctx context.Context, r planRequest, g *gathered) error {
	market := r.Country + "/" + r.Language
	var what string
	switch {
	case len(r.FocusTopics) > 0:
		what = fmt.Sprintf("No keyword data was found for the focus_topics %s in %s", quotedList(r.FocusTopics), market)
	case len(g.ranked) > 0:
		what = fmt.Sprintf("No keyword ideas were found from the keywords %s ranks for in %s", r.Domain, market)
	default:
		what = fmt.Sprintf("There is no ranking data for %s in %s to start from and no focus_topics were given", r.Domain, market)
	}
	if len(r.Competitors) > 0 {
		what += ", and the competitors gave no keyword gap"
	}
	return b.noData(ctx, r.Country, r.Language, "focus_topics", what+".")
}

// noCompetitorsFound is the NO_DATA error of competitor discovery: the domain has no
// rankings in the market, or no other domain ranks for any of its keywords.
func noCompetitorsFound(domain, country, language string) error {
	return apperr.New(apperr.NoData, "No domain shares a ranked keyword with %q in %s/%s: this service holds no ranking "+
		"data for it there, or no other domain ranks for its keywords. Check the spelling of the domain, choose the market "+
		"it ranks in, or have the operator import rankings with `ctl import rankings FILE.csv`. Nothing was charged.",
		domain, country, language)
}
