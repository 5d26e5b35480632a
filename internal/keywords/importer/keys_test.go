package importer

import (
	"context"
	"testing"

	"github.com/contentapi/contentapi/internal/testenv"
)

// On this server Go's normalisation of ASCII keywords is keyword_normalize's, so imports
// take the fast path; the check itself and a spread of keywords agree.
func TestASCIINormMatchesServer(t *testing.T) {
	pool := testenv.Postgres(t)
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only
	if ok, err := goNormalizes(ctx, tx); err != nil || !ok {
		t.Fatalf("goNormalizes = %v, %v; want true on this server", ok, err)
	}
	keywords := []string{normProbe, "Coffee Maker", "ESPRESSO", "k-cup", "100% Arabica", "a\x01b", "x\x1fy", "Z\x7fz",
		"C'est", "q&a", "[brackets]", "tab\tin", "double  space", " lead", "trail "}
	for _, k := range keywords {
		k = cleanKeyword(k)
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
