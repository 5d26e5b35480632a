package importer

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/contentapi/contentapi/internal/testenv"
)

// On this server Go's normalisation of ASCII keywords is keyword_normalize's, so imports
// take the fast path; the check itself and a spread of keywords agree.
func TestASCIINormMatchesServer(t *testing.T) {
	ctx, tx := serverTx(t)
	if ok, err := goNormalizes(ctx, tx); err != nil || !ok {
		t.Fatalf("goNormalizes = %v, %v; want true on this server", ok, err)
	}
	keywords := []string{normProbe, "Coffee Maker", "ESPRESSO", "k-cup", "100% Arabica", "a\x01b", "x\x1fy", "Z\x7fz",
		"C'est", "q&a", "[brackets]", "tab\tin", "double  space", " lead", "trail "}
	for _, k := range keywords {
		k, _ = cleanKeyword(k)
		if !isASCII(k) {
			t.Fatalf("%q is not ASCII", k)
		}
		var server string
		if err := tx.QueryRow(ctx, `SELECT keyword_normalize($1)`, k).Scan(&server); err != nil {
			t.Fatal(err)
		}
		if got := asciiNorm(k); got != server {
			t.Errorf("asciiNorm(%q) = %q, keyword_normalize = %q", k, got, server)
		}
	}
}

// On this server Go counts the trigrams of ASCII keywords as show_trgm does, so imports
// leave no row for PostgreSQL to count; long keywords (past the first 64 trigrams) too.
func TestTrigramCountMatchesServer(t *testing.T) {
	ctx, tx := serverTx(t)
	if ok, err := goCountsTrigrams(ctx, tx); err != nil || !ok {
		t.Fatalf("goCountsTrigrams = %v, %v; want true on this server", ok, err)
	}
	keywords := append([]string{strings.Repeat("abcdefghij", 12), strings.Repeat("ab ", 40), "Best Espresso Machine 2024",
		"iced-coffee_recipe", "a.b.c", "  padded  "}, trigramProbes...)
	for _, k := range keywords {
		var server int16
		if err := tx.QueryRow(ctx, `SELECT coalesce(array_length(show_trgm($1), 1), 0)`, k).Scan(&server); err != nil {
			t.Fatal(err)
		}
		if got := trigramCount(k); got != server {
			t.Errorf("trigramCount(%q) = %d, show_trgm has %d", k, got, server)
		}
	}
}

// serverTx returns a read-only transaction on the test database, rolled back at the end.
func serverTx(t *testing.T) (context.Context, pgx.Tx) {
	t.Helper()
	ctx := context.Background()
	tx, err := testenv.Postgres(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(ctx) })
	return ctx, tx
}
