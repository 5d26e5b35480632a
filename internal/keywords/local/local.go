// Package local is the keyword provider over the service's own PostgreSQL tables
// keyword_metrics and domain_rankings, filled by the CSV importers and the sample set.
package local

import (
	"context"
	"fmt"
	"math"
	"strings"
	"unicode"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/contentapi/contentapi/internal/keywords"
)

// Name is the provider's name.
const Name = "local"

// DefaultIdeasLimit is the number of ideas returned when a request sets no limit.
const DefaultIdeasLimit = 50

// Provider answers keyword questions from PostgreSQL.
type Provider struct {
	pool *pgxpool.Pool
}

var _ keywords.Provider = (*Provider)(nil)

// New returns a provider reading the pool's keyword tables.
func New(pool *pgxpool.Pool) *Provider { return &Provider{pool: pool} }

// Name reports "local".
func (p *Provider) Name() string { return Name }

// Keyword ideas rank a bounded candidate set. A keyword matches a term when it is the term
// itself, when its stemmed words contain the term's (full-text search with the language's
// configuration), or when it is trigram-similar to the term (pg_trgm's % operator,
// similarity ≥ 0.3 by default). Its relevance is its best score over the terms:
//
//	relevance = 2 × (keyword is the term) + ts_rank(tsv, query) + similarity(keyword, term)
//
// so exact seeds come first, then keywords sharing the term's words, closer phrasings
// before longer ones; ties go to the higher search volume.
//
// Ranking every match does not scale: a common word matches 5% of a million keywords, and
// a trigram search for a long phrase rechecks thousands of rows. The formula therefore
// ranks a bounded candidate set, gathered per term, the terms concurrently:
//
//   - full-text matches: at most want of them; a term with more is searched again by
//     number of words, fewest first (ideasTiers; a keyword holding the term's words in
//     fewer words is closer to it: higher similarity, the same full-text rank), until want
//     are found. Each tier is one scan of a GIN index that carries the word count.
//   - trigram matches: at most want at the default similarity threshold (0.3); a term with
//     more is searched again at higher thresholds (ideasThresholds), which yield its most
//     similar keywords.
//
// A term with fewer matches than want (any small data set) has all of them ranked, so the
// answer is exactly the full ranking.

// ideasTiers are the word-count ranges searched in turn.
var ideasTiers = [][2]int16{{1, 1}, {2, 2}, {3, 3}, {4, 5}, {6, math.MaxInt16}}

// ideasThresholds are the trigram similarity thresholds searched after the default one.
var ideasThresholds = []string{"0.6", "0.45"}

// ideasCandidates is how many candidates of each kind a term gathers.
func ideasCandidates(limit int) int { return max(8*limit, 400) }

// ideasFullTextSQL finds a term's ($3) full-text matches with $4–$5 words.
const ideasFullTextSQL = `
SELECT keyword_norm FROM keyword_metrics
WHERE country = $1 AND language = $2 AND words BETWEEN $4 AND $5
  AND tsv @@ websearch_to_tsquery(keyword_ts_config($2), $3)
LIMIT $6`

// ideasAllFullTextSQL is ideasFullTextSQL for every word count (a range over all of them
// would make the index read every word count's entries).
const ideasAllFullTextSQL = `
SELECT keyword_norm FROM keyword_metrics
WHERE country = $1 AND language = $2 AND tsv @@ websearch_to_tsquery(keyword_ts_config($2), $3)
LIMIT $4`

const ideasTrigramSQL = `
SELECT keyword_norm FROM keyword_metrics
WHERE country = $1 AND language = $2 AND keyword % $3
LIMIT $4`

// candidates gathers the keys of the terms' matches (see above).
func (p *Provider) candidates(ctx context.Context, country, language string, terms []string, want int) ([]string, error) {
	found := make([][]string, 2*len(terms))
	var eg errgroup.Group
	eg.SetLimit(4)
	for i, term := range terms {
		eg.Go(func() error {
			var err error
			found[2*i], err = p.fullTextCandidates(ctx, country, language, term, want)
			return err
		})
		eg.Go(func() error {
			var err error
			found[2*i+1], err = p.trigramCandidates(ctx, country, language, term, want)
			return err
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	var keys []string
	seen := make(map[string]bool)
	for _, f := range found {
		for _, k := range f {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	return keys, nil
}

func (p *Provider) fullTextCandidates(ctx context.Context, country, language, term string, want int) ([]string, error) {
	var keys []string
	err := p.withIndexes(ctx, func(tx pgx.Tx) error {
		var err error
		keys, err = collectKeys(tx.Query(ctx, ideasAllFullTextSQL, country, language, term, want))
		if err != nil || len(keys) < want {
			return err
		}
		tiered := 0
		for _, tier := range ideasTiers {
			k, err := collectKeys(tx.Query(ctx, ideasFullTextSQL, country, language, term, tier[0], tier[1], want-tiered))
			if err != nil {
				return err
			}
			keys, tiered = append(keys, k...), tiered+len(k)
			if tiered >= want {
				break
			}
		}
		return nil
	})
	return keys, err
}

func (p *Provider) trigramCandidates(ctx context.Context, country, language, term string, want int) ([]string, error) {
	var keys []string
	err := p.withIndexes(ctx, func(tx pgx.Tx) error {
		var err error
		keys, err = collectKeys(tx.Query(ctx, ideasTrigramSQL, country, language, term, want))
		if err != nil || len(keys) < want {
			return err
		}
		// pg_trgm's % reads its threshold from the session: set it for this transaction.
		for _, t := range ideasThresholds {
			if _, err := tx.Exec(ctx, "SET LOCAL pg_trgm.similarity_threshold = "+t); err != nil {
				return err
			}
			k, err := collectKeys(tx.Query(ctx, ideasTrigramSQL, country, language, term, want))
			if err != nil {
				return err
			}
			keys = append(keys, k...)
			if len(k) >= want/2 {
				return nil
			}
		}
		return nil
	})
	return keys, err
}

// withIndexes runs f in a read-only transaction in which the planner does not scan the
// whole table: with a LIMIT it expects a common term's matches early in a sequential scan,
// and for a rare term that scan reads a million rows (seconds) where the GIN index finds
// the few matches in milliseconds.
func (p *Provider) withIndexes(ctx context.Context, f func(tx pgx.Tx) error) error {
	return pgx.BeginTxFunc(ctx, p.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
			return err
		}
		return f(tx)
	})
}

func (p *Provider) keys(ctx context.Context, sql string, args ...any) ([]string, error) {
	return collectKeys(p.pool.Query(ctx, sql, args...))
}

func collectKeys(rows pgx.Rows, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// ideasSQL ranks the candidates ($4) and the terms ($3) themselves.
const ideasSQL = `
WITH terms AS (
    SELECT t.term,
           keyword_normalize(t.term) AS norm,
           websearch_to_tsquery(keyword_ts_config($2), t.term) AS tsq
    FROM unnest($3::text[]) AS t(term)
), keys AS (
    SELECT unnest($4::text[]) AS keyword_norm
    UNION
    SELECT norm FROM terms
), matched AS (
    SELECT k.keyword_norm,
           max(CASE WHEN k.keyword_norm = terms.norm THEN 2 ELSE 0 END
               + ts_rank(k.tsv, terms.tsq)
               + similarity(k.keyword, terms.term)) AS relevance
    FROM keys
    JOIN keyword_metrics k ON k.country = $1 AND k.language = $2 AND k.keyword_norm = keys.keyword_norm
    JOIN terms ON k.keyword_norm = terms.norm OR k.tsv @@ terms.tsq OR k.keyword % terms.term
    GROUP BY k.keyword_norm
)
SELECT k.keyword, k.search_volume, k.keyword_difficulty, k.cpc, k.competition,
       k.search_intent, k.serp_urls, m.relevance
FROM matched m
JOIN keyword_metrics k ON k.country = $1 AND k.language = $2 AND k.keyword_norm = m.keyword_norm
ORDER BY m.relevance DESC, k.search_volume DESC NULLS LAST, k.keyword_norm
LIMIT $5`

// Ideas returns keywords matching the topic or seeds, most relevant first, at most
// req.Limit (DefaultIdeasLimit when 0). Seeds and topic together are searched as one list.
func (p *Provider) Ideas(ctx context.Context, req keywords.IdeasRequest) ([]keywords.Keyword, error) {
	country, language := Market(req.Country, req.Language)
	terms := make([]string, 0, len(req.Seeds)+1)
	seen := make(map[string]bool)
	for _, t := range append(append([]string{}, req.Seeds...), req.Topic) {
		t = CleanKeyword(t)
		if t == "" || seen[strings.ToLower(t)] {
			continue
		}
		seen[strings.ToLower(t)] = true
		terms = append(terms, t)
	}
	out := []keywords.Keyword{}
	if len(terms) == 0 {
		return out, nil
	}
	limit := req.Limit
	if limit <= 0 {
		limit = DefaultIdeasLimit
	}
	keys, err := p.candidates(ctx, country, language, terms, ideasCandidates(limit))
	if err != nil {
		return nil, fmt.Errorf("local: ideas: %w", err)
	}
	rows, err := p.pool.Query(ctx, ideasSQL, country, language, terms, keys, limit)
	if err != nil {
		return nil, fmt.Errorf("local: ideas: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k keywords.Keyword
		var intent *string
		if err := rows.Scan(&k.Keyword, &k.SearchVolume, &k.Difficulty, &k.CPC, &k.Competition,
			&intent, &k.SERPURLs, &k.Relevance); err != nil {
			return nil, fmt.Errorf("local: ideas: %w", err)
		}
		if intent != nil {
			k.Intent = *intent
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("local: ideas: %w", err)
	}
	return out, nil
}

const rankedSQL = `
SELECT r.keyword, k.search_volume, k.keyword_difficulty, k.cpc, k.competition,
       k.search_intent, k.serp_urls, r.position, r.url
FROM domain_rankings r
LEFT JOIN keyword_metrics k
       ON k.country = r.country AND k.language = r.language AND k.keyword_norm = r.keyword_norm
WHERE r.domain = $1 AND r.country = $2 AND r.language = $3
ORDER BY r.position, k.search_volume DESC NULLS LAST, r.keyword_norm
LIMIT $4`

// Ranked returns the keywords the domain ranks for, best position first; Limit 0 returns
// all of them. A keyword the domain ranks for with several URLs comes once per URL. Metrics the keyword table does not have stay nil.
func (p *Provider) Ranked(ctx context.Context, req keywords.RankedRequest) ([]keywords.Ranking, error) {
	country, language := Market(req.Country, req.Language)
	out := []keywords.Ranking{}
	domain := NormalizeDomain(req.Domain)
	if domain == "" {
		return out, nil
	}
	var limit *int // NULL: no limit
	if req.Limit > 0 {
		limit = &req.Limit
	}
	rows, err := p.pool.Query(ctx, rankedSQL, domain, country, language, limit)
	if err != nil {
		return nil, fmt.Errorf("local: ranked: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r keywords.Ranking
		var intent, u *string
		if err := rows.Scan(&r.Keyword.Keyword, &r.SearchVolume, &r.Difficulty, &r.CPC, &r.Competition,
			&intent, &r.SERPURLs, &r.Position, &u); err != nil {
			return nil, fmt.Errorf("local: ranked: %w", err)
		}
		if intent != nil {
			r.Intent = *intent
		}
		if u != nil {
			r.URL = *u
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("local: ranked: %w", err)
	}
	return out, nil
}

// Market returns the lower-case country and language codes, us/en when empty; "gb" becomes
// "uk", the API's code for the United Kingdom.
func Market(country, language string) (string, string) {
	country = strings.ToLower(strings.TrimSpace(country))
	language = strings.ToLower(strings.TrimSpace(language))
	if country == "" {
		country = "us"
	}
	if country == "gb" {
		country = "uk"
	}
	if language == "" {
		language = "en"
	}
	return country, language
}

// NormalizeDomain is keywords.Domain: the key under which keyword data stores a domain.
// Importers and queries both use it so that the two always agree.
func NormalizeDomain(s string) string { return keywords.Domain(s) }

// CleanKeyword trims a keyword and collapses each run of white space to one space, keeping
// its case; keyword_normalize in SQL then only has to lower-case it.
func CleanKeyword(s string) string {
	return strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
}
