// Package sample loads a generated, clearly synthetic keyword set into the local provider's
// tables, so a fresh installation answers keyword questions before any real export is
// imported. Every row has source 'sample' and synthetic = true; every site is a made-up
// *.example domain (see Domains). The set is the same on every run: metrics come from a
// hash of the keyword, not from randomness, and loading it again updates it in place.
//
// Topics: coffee, running shoes, home gardening, personal finance, dog training and remote
// work, in country "us", language "en". Keywords of one cluster (cold brew, espresso,
// pour over, …) share most of their top-10 result URLs, and the sample sites rank unevenly
// across clusters, so SERP clustering and competitor gaps have something to find: for
// example coffee-sample.example ranks for espresso and grinder keywords while
// brewguide-sample.example and beanbox-sample.example own cold brew, pour over and beans.
package sample

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/keywords/importer"
	"github.com/contentapi/contentapi/internal/postgres"
)

// Source is the source of every sample row.
const Source = "sample"

// Country and Language are the market of the sample.
const (
	Country  = "us"
	Language = "en"
)

// Keyword is one generated keyword with its metrics.
type Keyword struct {
	Keyword     string
	Topic       string
	Cluster     string
	Volume      int64
	Difficulty  float64
	CPC         float64
	Competition float64
	Intent      string
	SERPURLs    []string
}

// Ranking is one generated position of a sample site.
type Ranking struct {
	Domain   string
	Keyword  string
	Position int
	URL      string
}

var (
	once    sync.Once
	kwSet   []Keyword
	rankSet []Ranking
	domSet  []string
	buckets = volumeBuckets()

	questionWords = []string{"how", "what", "when", "why", "is", "should", "can", "which", "where", "who", "does"}
)

func sets() { kwSet, rankSet, domSet = generate() }

// Keywords returns the generated keywords, in a fixed order.
func Keywords() []Keyword { once.Do(sets); return slices.Clone(kwSet) }

// Rankings returns the generated rankings, in a fixed order.
func Rankings() []Ranking { once.Do(sets); return slices.Clone(rankSet) }

// Domains returns every site the sample has rankings for, sorted. All are *.example
// domains, which RFC 2606 reserves and which can never be a real site.
func Domains() []string { once.Do(sets); return slices.Clone(domSet) }

// IsEmpty reports whether keyword_metrics has no rows at all, real or synthetic.
func IsEmpty(ctx context.Context, pool *pgxpool.Pool) (bool, error) {
	var empty bool
	if err := pool.QueryRow(ctx, `SELECT NOT EXISTS (SELECT 1 FROM keyword_metrics)`).Scan(&empty); err != nil {
		return false, fmt.Errorf("sample: is empty: %w", err)
	}
	return empty, nil
}

// Seed upserts the sample set and returns how many keyword and ranking rows it wrote. A
// row already holding real (non-synthetic) data for the same key is left alone.
func Seed(ctx context.Context, pool *pgxpool.Pool) (keywordRows, rankingRows int, err error) {
	kws, rks := Keywords(), Rankings()
	err = postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
		// An import may hold the tables over several transactions (a large file is
		// switched in as a new table): wait for it.
		if err := importer.LockKeywordData(ctx, tx); err != nil {
			return err
		}
		b := &pgx.Batch{}
		for _, k := range kws {
			b.Queue(`INSERT INTO keyword_metrics (keyword, country, language, search_volume,
				keyword_difficulty, cpc, competition, search_intent, serp_urls, source, synthetic, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, true, now())
			ON CONFLICT (country, language, keyword_norm) DO UPDATE SET
				keyword = EXCLUDED.keyword, search_volume = EXCLUDED.search_volume,
				keyword_difficulty = EXCLUDED.keyword_difficulty, cpc = EXCLUDED.cpc,
				competition = EXCLUDED.competition, search_intent = EXCLUDED.search_intent,
				serp_urls = EXCLUDED.serp_urls, source = EXCLUDED.source, updated_at = EXCLUDED.updated_at
			WHERE keyword_metrics.synthetic`,
				k.Keyword, Country, Language, k.Volume, k.Difficulty, k.CPC, k.Competition, k.Intent, k.SERPURLs, Source)
		}
		for _, r := range rks {
			b.Queue(`INSERT INTO domain_rankings (domain, keyword, country, language, position, url, source, synthetic, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, true, now())
			ON CONFLICT (domain, country, language, keyword_norm, url_hash) DO UPDATE SET
				keyword = EXCLUDED.keyword, position = EXCLUDED.position, url = EXCLUDED.url,
				source = EXCLUDED.source, updated_at = EXCLUDED.updated_at
			WHERE domain_rankings.synthetic`,
				r.Domain, r.Keyword, Country, Language, r.Position, r.URL, Source)
		}
		br := tx.SendBatch(ctx, b)
		for i := 0; i < b.Len(); i++ {
			tag, err := br.Exec()
			if err != nil {
				br.Close()
				return fmt.Errorf("sample: seed: %w", err)
			}
			if i < len(kws) {
				keywordRows += int(tag.RowsAffected())
			} else {
				rankingRows += int(tag.RowsAffected())
			}
		}
		return br.Close()
	})
	if err != nil {
		return 0, 0, err
	}
	return keywordRows, rankingRows, nil
}

// generate builds the sample from the topic table in data.go.
func generate() ([]Keyword, []Ranking, []string) {
	var kws []Keyword
	var rks []Ranking
	domains := map[string]bool{}
	for _, t := range topics {
		// Sites of the topic, for rankings beyond the top 10.
		var topicSites []string
		for _, c := range t.clusters {
			for _, p := range c.pool {
				if d := hostOf(p); !slices.Contains(topicSites, d) {
					topicSites = append(topicSites, d)
				}
			}
		}
		for _, c := range t.clusters {
			for _, kw := range c.keywords {
				k := metrics(t, c, kw)
				kws = append(kws, k)
				ranked := map[string]bool{}
				for i, u := range k.SERPURLs {
					d := hostOf(u)
					if ranked[d] {
						continue
					}
					ranked[d] = true
					domains[d] = true
					rks = append(rks, Ranking{Domain: d, Keyword: kw, Position: i + 1, URL: u})
				}
				// Some sites rank on pages 2–5 too: striking distance for opportunity scores.
				for _, d := range topicSites {
					if ranked[d] || unit(kw, "deep:"+d) >= 0.35 {
						continue
					}
					page := "https://" + d + "/" + slug(kw)
					for _, p := range c.pool {
						if hostOf(p) == d {
							page = "https://" + p
							break
						}
					}
					domains[d] = true
					rks = append(rks, Ranking{Domain: d, Keyword: kw, Position: 11 + int(unit(kw, "pos:"+d)*40), URL: page})
				}
			}
		}
	}
	list := make([]string, 0, len(domains))
	for d := range domains {
		list = append(list, d)
	}
	sort.Strings(list)
	return kws, rks, list
}

// metrics derives plausible metrics for a keyword from its shape and a hash of it.
func metrics(t topic, c cluster, kw string) Keyword {
	words := len(strings.Fields(kw))
	intent := intentOf(kw)
	// Search volume: log-uniform in a band set by the number of words (head terms are
	// searched far more than long phrases), questions a little less, snapped to the
	// rounded buckets keyword tools report.
	var lo, hi float64
	switch words {
	case 1:
		lo, hi = 90500, 450000
	case 2:
		lo, hi = 12100, 90500
	case 3:
		lo, hi = 2400, 27100
	case 4:
		lo, hi = 390, 14800
	default:
		lo, hi = 110, 4400
	}
	if intent == "informational" && isQuestion(kw) {
		hi *= 0.8
	}
	vol := snap(math.Exp(math.Log(lo) + unit(kw, "volume")*(math.Log(hi)-math.Log(lo))))
	// Difficulty grows with volume; buyers' keywords are contested harder.
	diff := 8 + 11*math.Log10(float64(vol)) + (unit(kw, "difficulty")-0.5)*20
	switch intent {
	case "commercial":
		diff += 8
	case "transactional":
		diff += 5
	}
	diff = math.Round(math.Min(97, math.Max(3, diff)))
	// CPC and paid competition follow intent: informational clicks are cheap.
	cpcLo, cpcHi, compLo, compHi := 0.15, 1.2, 0.02, 0.35
	switch intent {
	case "commercial":
		cpcLo, cpcHi, compLo, compHi = 0.8, 3.2, 0.4, 0.9
	case "transactional":
		cpcLo, cpcHi, compLo, compHi = 1.0, 4.5, 0.6, 1.0
	}
	cpc := round2((cpcLo + unit(kw, "cpc")*(cpcHi-cpcLo)) * t.cpcScale)
	comp := round2(compLo + unit(kw, "competition")*(compHi-compLo))
	return Keyword{
		Keyword: kw, Topic: t.name, Cluster: c.slug,
		Volume: vol, Difficulty: diff, CPC: cpc, Competition: comp, Intent: intent,
		SERPURLs: serp(c, kw),
	}
}

// serp builds a keyword's top 10: eight of its cluster's pages, in the pool's order
// shuffled a little per keyword, and two pages about the keyword itself by two of the
// cluster's stronger sites.
func serp(c cluster, kw string) []string {
	type scored struct {
		page  string
		score float64
	}
	pool := make([]scored, len(c.pool))
	for i, p := range c.pool {
		pool[i] = scored{p, float64(i) + unit(kw, "rank:"+p)*5}
	}
	sort.SliceStable(pool, func(i, j int) bool { return pool[i].score < pool[j].score })
	var urls []string
	for _, p := range pool[:min(8, len(pool))] {
		urls = append(urls, "https://"+p.page)
	}
	strong := min(6, len(c.pool))
	first := int(unit(kw, "site1") * float64(strong))
	second := (first + 1 + int(unit(kw, "site2")*float64(strong-1))) % strong
	for n, site := range []int{first, second} {
		page := "https://" + hostOf(c.pool[site]) + "/" + c.slug + "/" + slug(kw)
		at := []int{int(unit(kw, "own1") * 4), 4 + int(unit(kw, "own2")*6)}[n]
		if !slices.Contains(urls, page) {
			urls = slices.Insert(urls, min(at, len(urls)), page)
		}
	}
	for _, p := range pool[min(8, len(pool)):] { // a short pool's pages fill the rest
		if len(urls) >= 10 {
			break
		}
		urls = append(urls, "https://"+p.page)
	}
	return urls[:min(10, len(urls))]
}

// intentOf classifies the sample's keywords by their modifiers.
func intentOf(kw string) string {
	switch {
	case isQuestion(kw):
		return "informational"
	case hasAny(kw, "buy", "sale", "deals", "near me", "subscription", "kit", "online course", "online"):
		return "transactional"
	case hasAny(kw, "best", "vs", "under", "cost", "app", "apps", "maker", "machine", "grinder",
		"collar", "calculator", "loan", "account", "kettle", "shoes", "chair", "headphones",
		"webcam", "treats", "pads", "bin", "for flat feet",
		"for wide feet", "for overpronation", "for couples", "waterproof", "carbon plate"):
		return "commercial"
	}
	return "informational"
}

func isQuestion(kw string) bool {
	first, _, _ := strings.Cut(kw, " ")
	return slices.Contains(questionWords, first)
}

// hasAny reports whether kw contains one of the phrases as whole words.
func hasAny(kw string, phrases ...string) bool {
	padded := " " + kw + " "
	for _, p := range phrases {
		if strings.Contains(padded, " "+p+" ") {
			return true
		}
	}
	return false
}

// unit maps a keyword and a salt to a fixed number in [0,1).
func unit(kw, salt string) float64 {
	h := fnv.New64a()
	h.Write([]byte(salt))
	h.Write([]byte{0})
	h.Write([]byte(kw))
	return float64(h.Sum64()>>11) / (1 << 53)
}

// volumeBuckets are the rounded volumes keyword tools report (10, 20, …, 1300, 1600, …).
func volumeBuckets() []int64 {
	return []int64{10, 20, 30, 40, 50, 70, 90, 110, 140, 170, 210, 260, 320, 390, 480, 590, 720,
		880, 1000, 1300, 1600, 1900, 2400, 2900, 3600, 4400, 5400, 6600, 8100, 9900, 12100, 14800,
		18100, 22200, 27100, 33100, 40500, 49500, 60500, 74000, 90500, 110000, 135000, 165000,
		201000, 246000, 301000, 368000, 450000}
}

// snap rounds a volume to the nearest bucket on a log scale.
func snap(v float64) int64 {
	best := buckets[0]
	for _, b := range buckets {
		if math.Abs(math.Log(float64(b))-math.Log(v)) < math.Abs(math.Log(float64(best))-math.Log(v)) {
			best = b
		}
	}
	return best
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// slug turns a keyword into a URL path segment.
func slug(kw string) string { return strings.ReplaceAll(strings.ToLower(kw), " ", "-") }

// hostOf returns the host of "domain/path" or of a URL.
func hostOf(p string) string {
	if strings.Contains(p, "://") {
		u, err := url.Parse(p)
		if err == nil {
			return u.Hostname()
		}
	}
	host, _, _ := strings.Cut(p, "/")
	return host
}
