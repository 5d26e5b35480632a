package main

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
)

// headWords are the frequent words of the generated keywords, most frequent first: the
// words the fixed queries ask about. The tail of the vocabulary is made-up words.
var headWords = strings.Fields(`best coffee how to make for home espresso machine bean grinder tea
cold brew maker recipe cup french press pour over kettle milk frother latte cappuccino
drip filter roast dark light medium organic decaf iced near me cheap review vs
manual electric burr blade single serve pod capsule descale clean water ratio
grind size temperature caffeine mocha americano macchiato flat white cortado
arabica robusta ethiopian colombian brazil sumatra kenya guatemala blend shop
cafe barista training course mug thermos travel portable camping office
subscription gift set wholesale bulk green unroasted home roaster machine parts`)

// dataset is a generated keyword set and ranking set.
type dataset struct {
	keywords []string
	domains  []string
	sizes    []int // rankings per domain
	// shape is shapeSpread or shapeSkewed; repeat is each domain's share of ranking rows
	// that repeat one of its (domain, keyword) keys with another URL.
	shape  string
	repeat []float64
}

// The data-set shapes every run measures.
const (
	// shapeSpread: log-uniform volumes, one big domain (24% of rankings by default), the
	// others falling off with their rank, 1 in 50 rankings with a second URL.
	shapeSpread = "spread"
	// shapeSkewed: Pareto volumes snapped to the buckets keyword tools report (many ties);
	// the three biggest domains hold 43%, 16% and 9% of the rankings, and 24% of the ranking
	// rows repeat a (domain, keyword) key, most of them the biggest domain's (727k distinct
	// keywords in 1.29M rows at 3M), so the import goes through its merge path.
	shapeSkewed = "skewed"
)

// skewedShares are the shares of all rankings of the skewed shape's three biggest domains,
// and skewedRepeat the repeated-key share of the biggest one's rows and of the others'.
var (
	skewedShares              = []float64{0.43, 0.16, 0.09}
	skewedRepeatBig           = 0.436
	skewedRepeatOther float64 = 0.092
)

// generateSkewed makes the skewed shape's data set: the keywords as generate makes them,
// the three biggest domains holding skewedShares of the rankings and the rest shared by
// the others, falling off with their rank.
func generateSkewed(seed uint64, n, rankings, domains int) *dataset {
	d := generate(seed, n, rankings, int(float64(rankings)*skewedShares[0]), domains)
	d.shape = shapeSkewed
	d.sizes[1] = int(float64(rankings) * skewedShares[1])
	d.sizes[2] = int(float64(rankings) * skewedShares[2])
	rest := rankings - d.sizes[0] - d.sizes[1] - d.sizes[2]
	var total float64
	for i := 3; i < domains; i++ {
		total += 1 / math.Pow(float64(i-2), 1.1)
	}
	left := rest
	for i := 3; i < domains; i++ {
		s := int(float64(rest) / math.Pow(float64(i-2), 1.1) / total)
		s = min(max(s, 1), n, left-(domains-1-i))
		d.sizes[i] = s
		left -= s
	}
	d.sizes[3] += left
	d.repeat = make([]float64, domains)
	for i := range d.repeat {
		d.repeat[i] = skewedRepeatOther
	}
	d.repeat[0] = skewedRepeatBig
	return d
}

// volumeBuckets are the values keyword tools report monthly volumes as.
var volumeBuckets = []int{0, 10, 20, 30, 40, 50, 70, 90, 110, 140, 170, 210, 260, 320, 390, 480, 590, 720, 880,
	1000, 1300, 1600, 1900, 2400, 2900, 3600, 4400, 5400, 6600, 8100, 9900, 12100, 14800, 18100, 22200,
	27100, 33100, 40500, 49500, 60500, 74000, 90500, 110000, 135000, 165000, 201000, 246000, 301000,
	368000, 450000, 550000, 673000, 823000, 1000000}

// paretoVolume draws a Pareto volume (scale 10, shape 1.1) and snaps it down to a bucket.
func paretoVolume(r *rand.Rand) int {
	v := 10 / math.Pow(1-r.Float64(), 1/1.1)
	if r.IntN(5) == 0 {
		v = 0 // a fifth too rare to count
	}
	i, _ := slices.BinarySearch(volumeBuckets, int(min(v, 2e6)))
	if i == len(volumeBuckets) || volumeBuckets[i] > int(v) {
		i--
	}
	return volumeBuckets[max(i, 0)]
}

// vocabulary returns n words: the head words, then made-up ones.
func vocabulary(r *rand.Rand, n int) []string {
	syll := strings.Fields("ka lo mi re tu sa ne po vi da ru zo fe li ba mo te gu ha ni")
	seen := map[string]bool{}
	var words []string
	for _, w := range headWords {
		if !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	for len(words) < n {
		var b strings.Builder
		for i := 2 + r.IntN(3); i > 0; i-- {
			b.WriteString(syll[r.IntN(len(syll))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	return words
}

// generate makes n distinct keywords of 1–5 words drawn Zipf-like from the vocabulary,
// and the ranking counts of the domains: one big domain with big rankings, the others
// sharing the rest with sizes falling off with their rank.
func generate(seed uint64, n, rankings, big, domains int) *dataset {
	r := rand.New(rand.NewPCG(seed, 1)) //nolint:gosec // a seeded generator: the data set must be reproducible
	words := vocabulary(r, 20000)
	zipf := rand.NewZipf(r, 1.07, 8, uint64(len(words)-1))
	d := &dataset{}
	seen := make(map[string]struct{}, n)
	for len(d.keywords) < n {
		k := 1 + r.IntN(4)
		if r.IntN(10) == 0 {
			k = 5
		}
		parts := make([]string, k)
		for i := range parts {
			parts[i] = words[zipf.Uint64()]
		}
		kw := strings.Join(parts, " ")
		if _, ok := seen[kw]; ok {
			continue
		}
		seen[kw] = struct{}{}
		d.keywords = append(d.keywords, kw)
	}
	d.domains = make([]string, domains)
	d.sizes = make([]int, domains)
	d.domains[0] = "bigpublisher.example"
	d.sizes[0] = big
	var total float64
	for i := 1; i < domains; i++ {
		d.domains[i] = fmt.Sprintf("site%04d.example", i)
		total += 1 / math.Pow(float64(i), 0.9)
	}
	rest := rankings - big
	left := rest
	for i := 1; i < domains; i++ {
		s := int(float64(rest) / math.Pow(float64(i), 0.9) / total)
		s = min(max(s, 1), n, left-(domains-1-i))
		d.sizes[i] = s
		left -= s
	}
	d.sizes[1] += left
	return d
}

// writeKeywords writes the keyword file, gzip-compressed, in the importer's own columns.
func (d *dataset) writeKeywords(path string, seed uint64) error {
	r := rand.New(rand.NewPCG(seed, 2)) //nolint:gosec // a seeded generator: the data set must be reproducible
	intents := []string{"informational", "commercial", "transactional", "navigational", ""}
	return writeGzip(path, func(w *bufio.Writer) {
		_, _ = w.WriteString("keyword,search_volume,keyword_difficulty,cpc,competition,search_intent\n") // a write error sticks in w; Flush returns it
		for _, k := range d.keywords {
			vol := int(math.Exp(r.Float64()*11)) - 1
			if d.shape == shapeSkewed {
				vol = paretoVolume(r)
			}
			fmt.Fprintf(w, "%s,%d,%d,%.2f,%.2f,%s\n", k, vol, r.IntN(101), r.Float64()*8, r.Float64(), intents[r.IntN(len(intents))])
		}
	})
}

// writeRankings writes the ranking file: each domain ranks for distinct keywords (an
// affine walk over the keyword list), about 1 in 50 rankings (the skewed shape: the
// domain's repeat share) with another URL of the same domain for the same keyword, as a
// Search Console export lists it.
func (d *dataset) writeRankings(path string, seed uint64) error {
	r := rand.New(rand.NewPCG(seed, 3)) //nolint:gosec // a seeded generator: the data set must be reproducible
	n := len(d.keywords)
	return writeGzip(path, func(w *bufio.Writer) {
		_, _ = w.WriteString("domain,keyword,position,url\n") // a write error sticks in w; Flush returns it
		for i, dom := range d.domains {
			step := coprimeStep(r, n)
			start := r.IntN(n)
			rows := 0
			for j := 0; rows < d.sizes[i]; j++ {
				k := d.keywords[(start+j*step)%n]
				pos := 1 + r.IntN(100)
				slug := strings.ReplaceAll(k, " ", "-")
				fmt.Fprintf(w, "%s,%s,%d,https://%s/%s\n", dom, k, pos, dom, slug)
				rows++
				if d.repeat == nil {
					if rows < d.sizes[i] && r.IntN(50) == 0 {
						fmt.Fprintf(w, "%s,%s,%d,https://%s/blog/%s\n", dom, k, pos+1+r.IntN(20), dom, slug)
						rows++
					}
					continue
				}
				// Each row is followed by one more URL for its keyword with the chance
				// repeat[i], so that repeats make up that share of the rows.
				for extra := 1; rows < d.sizes[i] && r.Float64() < d.repeat[i]; extra++ {
					fmt.Fprintf(w, "%s,%s,%d,https://%s/p%d/%s\n", dom, k, min(pos+1+r.IntN(20), 100), dom, extra, slug)
					rows++
				}
			}
		}
	})
}

// coprimeStep returns a step coprime with n, so that an affine walk visits distinct items.
func coprimeStep(r *rand.Rand, n int) int {
	for {
		s := 1 + r.IntN(n-1)
		if gcd(s, n) == 1 {
			return s
		}
	}
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// compress says whether the files are written gzip-compressed (the default) or plain.
var compress = true

func writeGzip(path string, write func(w *bufio.Writer)) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var zw *gzip.Writer
	w := bufio.NewWriterSize(f, 1<<20)
	if compress {
		zw, _ = gzip.NewWriterLevel(f, gzip.BestSpeed)
		w = bufio.NewWriterSize(zw, 1<<20)
	}
	write(w)
	if err := w.Flush(); err != nil {
		return err
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return err
		}
	}
	return f.Close()
}
