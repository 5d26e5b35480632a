package dashboard

import (
	"strings"

	"github.com/contentapi/contentapi/internal/report"
)

// The keyword research report: clusters with their keywords and a topic line each.

// researchView is a keyword research: its clusters' volumes as a chart, then each cluster.
type researchView struct {
	report.ResearchResult
	Chart barChart
	// Topics name the clusters by what their keywords share (clusterTopic), in Clusters'
	// order; the answer's cluster_name is its strongest keyword.
	Topics []string
}

func newResearchView(r report.ResearchResult) *researchView {
	labels := make([]string, len(r.Clusters))
	values := make([]int64, len(r.Clusters))
	for i, c := range r.Clusters {
		kws := make([]string, len(c.Keywords))
		for j, k := range c.Keywords {
			kws[j] = k.Keyword
		}
		labels[i], values[i] = clusterTopic(c.ClusterName, kws), c.TotalVolume
	}
	return &researchView{ResearchResult: r, Topics: labels,
		Chart: newBarChart("Total search volume per cluster", "Cluster", "Total volume", labels, values)}
}

// topicStopWords may not begin or end a cluster's topic: question words, articles,
// prepositions and buying words say how a keyword asks, not what it is about.
var topicStopWords = map[string]bool{
	"a": true, "an": true, "and": true, "at": true, "best": true, "buy": true, "can": true, "cheap": true, "do": true, "does": true,
	"for": true, "from": true, "how": true, "in": true, "is": true, "it": true, "my": true, "near": true, "of": true, "on": true,
	"or": true, "should": true, "the": true, "to": true, "top": true, "vs": true, "what": true, "when": true, "where": true,
	"which": true, "who": true, "why": true, "with": true, "your": true,
}

// clusterTopic names a cluster by the longest run of up to three words that at least half
// of its keywords (and two or more) hold, not beginning or ending with a stop word: the
// keywords "cold brew coffee", "how to make cold brew" and "cold brew ratio" are about
// "cold brew". A cluster whose keywords share nothing keeps its name.
func clusterTopic(name string, keywords []string) string {
	if len(keywords) < 2 {
		return name
	}
	count := map[string]int{}
	for _, k := range keywords {
		words := strings.Fields(strings.ToLower(k))
		seen := map[string]bool{}
		for n := 1; n <= 3; n++ {
			for i := 0; i+n <= len(words); i++ {
				if topicStopWords[words[i]] || topicStopWords[words[i+n-1]] {
					continue
				}
				if g := strings.Join(words[i:i+n], " "); !seen[g] {
					seen[g] = true
					count[g]++
				}
			}
		}
	}
	best, bestN, bestLen := "", 0, 0
	for g, n := range count {
		if n < 2 || 2*n < len(keywords) {
			continue
		}
		l := strings.Count(g, " ") + 1
		if l > bestLen || l == bestLen && (n > bestN || n == bestN && g < best) {
			best, bestN, bestLen = g, n, l
		}
	}
	if best == "" {
		return name
	}
	return best
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
