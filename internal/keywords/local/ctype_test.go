package local_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/local"
	"github.com/contentapi/contentapi/internal/postgres"
	"github.com/contentapi/contentapi/internal/testenv"
)

// ctypeCDatabase creates and migrates a database whose LC_CTYPE is C, dropped when the test
// ends.
func ctypeCDatabase(t *testing.T) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, testenv.ServerDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close(context.Background()) })
	name := fmt.Sprintf("contentapi_test_ctype_c_%d", time.Now().UnixNano())
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'"); err != nil {
		t.Fatal(err)
	}
	cfg, err := pgxpool.ParseConfig(testenv.ServerDSN())
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Database = name
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		pool.Close()
		_, _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	if _, err := postgres.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	return pool
}

// The probe tells a database whose similarities the worker computes exactly (the test
// database, C.UTF-8) from one created with LC_CTYPE C, where pg_trgm takes letters outside
// ASCII for separators: research then ranks with PostgreSQL's own similarities.
func TestTrigramProbeFollowsTheDatabase(t *testing.T) {
	ctx := context.Background()
	if ok, err := local.TrigramsAsPostgres(ctx, testenv.Postgres(t)); err != nil || !ok {
		t.Fatalf("the test database: agree %v, %v; want true", ok, err)
	}
	if ok, err := local.TrigramsAsPostgres(ctx, ctypeCDatabase(t)); err != nil || ok {
		t.Fatalf("a database of LC_CTYPE C: agree %v, %v; want false", ok, err)
	}
}

// On a database of LC_CTYPE C, pg_trgm takes every letter outside ASCII for a separator, so
// the worker's trigrams would score "café crème" otherwise than PostgreSQL does. Research
// finds that out (its probe) and ranks the word index's candidates with PostgreSQL's own
// similarities: the answers are still the full ranking's, relevance for relevance.
func TestIdeasOnADatabaseOfCtypeC(t *testing.T) {
	pool := ctypeCDatabase(t)
	ctx := context.Background()
	kws := []string{"café crème", "Café Noir", "crème brûlée", "cafe latte", "café au lait",
		"caffè latte", "kaffee süß", "crêpe café", "CAFÉ CRÈME glacé", "cafe creme", "latte macchiato",
		"café", "crème fraîche", "brûlée torch", "iced café latte", "café crème recipe"}
	for i := range 60 {
		kws = append(kws, fmt.Sprintf("coffee filler %d", i))
	}
	if _, err := pool.Exec(ctx, `INSERT INTO keyword_metrics (keyword, country, language, search_volume, source)
		SELECT k, 'fr', 'fr', 100 + i, 'test' FROM unnest($1::text[]) WITH ORDINALITY AS t(k, i)`, kws); err != nil {
		t.Fatal(err)
	}
	requests := []keywords.IdeasRequest{
		{Topic: "café crème", Country: "fr", Language: "fr", Limit: 10},
		{Topic: "café", Country: "fr", Language: "fr", Limit: 10},
		{Seeds: []string{"crème brûlée", "caffè latte"}, Country: "fr", Language: "fr", Limit: 10},
	}
	answer := func(p *local.Provider, r keywords.IdeasRequest) []string {
		got, err := ideasOf(p.Ideas(ctx, r))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, k := range got {
			out = append(out, fmt.Sprintf("%s %v", k.Keyword, k.Relevance))
		}
		return out
	}
	p := local.New(pool)
	local.WordIndexes(t, true)
	var full [][]string
	for _, r := range requests {
		full = append(full, answer(p, r))
	}
	local.BoundIdeas(t, nil)
	for i, r := range requests {
		if got := answer(p, r); !slices.Equal(got, full[i]) {
			t.Errorf("%+v:\nword index %v\nfull       %v", r, got, full[i])
		}
	}
}
