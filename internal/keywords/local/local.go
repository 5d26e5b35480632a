// Package local is the keyword provider over the service's own PostgreSQL tables
// keyword_metrics and domain_rankings, filled by the CSV importers and the sample set.
package local

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/postgres"
)

// Name is the provider's name.
const Name = keywords.LocalName

// Provider answers keyword questions from PostgreSQL.
type Provider struct {
	pool *pgxpool.Pool
	cols *columnStore // columns.go
	// words are the markets' word indexes (wordindex.go), nil when off; waitWords makes a
	// question wait for its market's index to be built rather than use SQL meanwhile.
	words     *wordStore
	waitWords bool

	// trigrams is whether the database computes trigram similarities as the worker does
	// (trigramsAsPostgres), asked once.
	trigrams struct {
		sync.Mutex
		known, agree bool
	}
}

// trigramsAgree reports whether similarities computed in the worker are the database's,
// asking it (through q) the first time.
func (p *Provider) trigramsAgree(ctx context.Context, q postgres.Querier) (bool, error) {
	p.trigrams.Lock()
	defer p.trigrams.Unlock()
	if !p.trigrams.known {
		agree, err := trigramsAsPostgres(ctx, q)
		if err != nil {
			return false, err
		}
		p.trigrams.known, p.trigrams.agree = true, agree
	}
	return p.trigrams.agree, nil
}

var _ keywords.Provider = (*Provider)(nil)

// New returns a provider reading the pool's keyword tables.
func New(pool *pgxpool.Pool, opts ...Option) *Provider {
	p := &Provider{pool: pool, cols: &columnStore{budget: DefaultColumnsBudget, markets: map[market]*columnsEntry{}},
		words: &wordStore{}}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Name reports "local".
func (p *Provider) Name() string { return Name }

var _ keywords.Versioned = (*Provider)(nil)

// DataVersion is the generation of the keyword data (keyword_data_state): every write to
// the rankings or the keyword metrics moves it on in its own transaction, by a statement
// trigger or, for a table an import replaced, at the switch.
func (p *Provider) DataVersion(ctx context.Context) (string, error) {
	var g int64
	if err := p.pool.QueryRow(ctx, `SELECT generation FROM keyword_data_state`).Scan(&g); err != nil {
		return "", fmt.Errorf("local: data version: %w", err)
	}
	return strconv.FormatInt(g, 10), nil
}

// inSnapshot runs fn in a read-only repeatable-read transaction whose snapshot is taken
// after it holds the keyword tables: an import's switch (which drops a table and renames a
// new one in its place) either committed before the snapshot, whose versions then name the
// new rows, or waits for fn to end. Without the lock, a transaction whose snapshot came
// first would read the new table's rows beside the old versions (DDL is not versioned).
func inSnapshot(ctx context.Context, pool *pgxpool.Pool, fn func(pgx.Tx) error) error {
	return pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{AccessMode: pgx.ReadOnly, IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
		// LOCK takes no snapshot: the first query after it does.
		if _, err := tx.Exec(ctx, `LOCK TABLE domain_rankings, keyword_metrics IN ACCESS SHARE MODE`); err != nil {
			return err
		}
		return fn(tx)
	})
}

func collectKeys(rows pgx.Rows, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// rankingKeyword is the keyword of the ranking row r as written: stored only where it
// differs from its norm, NULL otherwise (migration 00048). The norm compares under "C",
// the keyword under the database's collation, and the coalesce needs one.
const rankingKeyword = `coalesce(r.keyword, r.keyword_norm COLLATE "default")`

const rankedSQL = `
SELECT ` + rankingKeyword + `, k.search_volume, k.keyword_difficulty, k.cpc, k.competition,
       k.search_intent, k.serp_urls, r.position, r.url, r.synthetic OR coalesce(k.synthetic, false)
FROM domain_rankings r
LEFT JOIN keyword_metrics k
       ON k.country = r.country AND k.language = r.language AND k.keyword_norm = r.keyword_norm
WHERE r.domain = $1 AND r.country = $2 AND r.language = $3
ORDER BY r.position, k.search_volume DESC NULLS LAST, r.keyword_norm
LIMIT $4`

// RanksKeywords reports that Ranked reads only RankedRequest.Keywords' rankings when given:
// the provider is a keywords.KeywordRanked.
func (p *Provider) RanksKeywords() bool { return true }

// rankedForSQL is rankedSQL for the keywords $5 only: a probe of the rankings' key each.
var rankedForSQL = strings.Replace(rankedSQL, "WHERE r.domain = $1 AND r.country = $2 AND r.language = $3",
	"WHERE r.domain = $1 AND r.country = $2 AND r.language = $3\n  AND r.keyword_norm = ANY (SELECT keyword_normalize(k) FROM unnest($5::text[]) AS k)", 1)

// Ranked returns the keywords the domain ranks for (of req.Keywords, when set), best
// position first; Limit 0 returns all of them. A keyword the domain ranks for with several URLs comes once per URL. Metrics the keyword table does not have stay nil.
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
	sql, args := rankedSQL, []any{domain, country, language, limit}
	if len(req.Keywords) > 0 {
		sql, args = rankedForSQL, append(args, req.Keywords)
	}
	rows, err := p.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("local: ranked: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanRanking(rows)
		if err != nil {
			return nil, fmt.Errorf("local: ranked: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("local: ranked: %w", err)
	}
	return out, nil
}

// scanRanking reads a row of keyword, metrics, position, URL and synthetic flag.
func scanRanking(rows pgx.Rows) (keywords.Ranking, error) {
	var r keywords.Ranking
	var intent, u *string
	if err := rows.Scan(&r.Keyword.Keyword, &r.SearchVolume, &r.Difficulty, &r.CPC, &r.Competition,
		&intent, &r.SERPURLs, &r.Position, &u, &r.Synthetic); err != nil {
		return r, err
	}
	if intent != nil {
		r.Intent = *intent
	}
	if u != nil {
		r.URL = *u
	}
	return r, nil
}

// syntheticSQL picks, of the keywords $3, those whose row in the market is made up: one
// primary-key probe each.
const syntheticSQL = `
SELECT k.keyword FROM unnest($3::text[]) AS k(keyword)
WHERE EXISTS (
    SELECT 1 FROM keyword_metrics m
    WHERE m.country = $1 AND m.language = $2 AND m.keyword_norm = keyword_normalize(k.keyword) AND m.synthetic)`

// LabelSynthetic sets Synthetic on the keywords whose row in the market is synthetic (the
// sample set). Ideas read them from keyword_metrics, so each has a row.
func (p *Provider) LabelSynthetic(ctx context.Context, country, language string, ks []keywords.Keyword) error {
	country, language = Market(country, language)
	texts := make([]string, len(ks))
	for i, k := range ks {
		texts[i] = k.Keyword
	}
	made, err := collectKeys(p.pool.Query(ctx, syntheticSQL, country, language, texts))
	if err != nil {
		return fmt.Errorf("local: synthetic labels: %w", err)
	}
	set := make(map[string]bool, len(made))
	for _, k := range made {
		set[k] = true
	}
	for i := range ks {
		ks[i].Synthetic = set[ks[i].Keyword]
	}
	return nil
}

// popularSQL reads the market's highest-volume keywords from keyword_metrics_volume_idx.
const popularSQL = `
SELECT keyword FROM keyword_metrics
WHERE country = $1 AND language = $2
ORDER BY search_volume DESC NULLS LAST, keyword_norm
LIMIT $3`

// Popular returns up to n keywords of the market, highest search volume first.
func (p *Provider) Popular(ctx context.Context, country, language string, n int) ([]string, error) {
	country, language = Market(country, language)
	out, err := collectKeys(p.pool.Query(ctx, popularSQL, country, language, n))
	if err != nil {
		return nil, fmt.Errorf("local: popular: %w", err)
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
