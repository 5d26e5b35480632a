package analysis

import (
	"math/rand/v2"

	"github.com/contentapi/contentapi/internal/keywords"
)

func i64(v int64) *int64     { return &v }
func f64(v float64) *float64 { return &v }
func kwv(s string, vol int64) keywords.Keyword {
	return keywords.Keyword{Keyword: s, SearchVolume: i64(vol)}
}
func kwvd(s string, vol int64, kd float64) keywords.Keyword {
	return keywords.Keyword{Keyword: s, SearchVolume: i64(vol), Difficulty: f64(kd)}
}

// shuffled returns a copy of xs in a seeded random order.
func shuffled[T any](xs []T, seed uint64) []T {
	out := append([]T(nil), xs...)
	r := rand.New(rand.NewPCG(seed, seed+1))
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func names(cs []Cluster) [][]string {
	var out [][]string
	for _, c := range cs {
		var ks []string
		for _, k := range c.Keywords {
			ks = append(ks, k.Keyword)
		}
		out = append(out, ks)
	}
	return out
}
