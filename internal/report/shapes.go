package report

// ShapeOf is the query shape of an analysis: the filters and order fields its endpoint
// takes, as Normalize checks them; ok is false for an analysis with no keyword query.
// Forms and schemas built from it offer exactly what the endpoint accepts.
func ShapeOf(k Kind) (shape QueryShape, ok bool) {
	switch k {
	case KindResearch:
		return ResearchShape, true
	case KindGaps:
		return GapsShape, true
	case KindRankings:
		return RankingsShape, true
	case KindCompetitors:
		return CompetitorsShape, true
	}
	return QueryShape{}, false
}
