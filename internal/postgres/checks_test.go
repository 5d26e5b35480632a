package postgres_test

import (
	"context"
	"errors"
	"regexp"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/contentapi/contentapi/internal/testenv"
)

// The keyword tables' market checks (migration 00045) accept exactly the two-letter
// lower-case codes: every string of up to three characters over an alphabet of letters,
// their neighbours in ASCII, digits, white space and multi-byte characters is run through
// each constraint's stored expression and compared with Go's regexp.
func TestMarketChecksAcceptTwoLowerCaseLetters(t *testing.T) {
	pool := testenv.Postgres(t)
	ctx := context.Background()
	alphabet := []string{"a", "m", "z", "A", "Z", "`", "{", "@", "0", " ", "\n", "é", "ß", "日", "_", "ａ"}
	corpus := []string{""}
	for n, from := 0, 0; n < 3; n++ {
		to := len(corpus)
		for _, s := range corpus[from:to] {
			for _, c := range alphabet {
				corpus = append(corpus, s+c)
			}
		}
		from = to
	}
	code := regexp.MustCompile(`^[a-z]{2}$`)
	for _, c := range []struct{ table, column string }{
		{"domain_rankings", "country"}, {"domain_rankings", "language"},
		{"keyword_metrics", "country"}, {"keyword_metrics", "language"},
	} {
		var expr string
		if err := pool.QueryRow(ctx, `SELECT pg_get_expr(conbin, conrelid) FROM pg_constraint
			WHERE conrelid = $1::regclass AND conname = $1 || '_' || $2 || '_check'`, c.table, c.column).Scan(&expr); err != nil {
			t.Fatalf("%s.%s: %v", c.table, c.column, err)
		}
		rows, err := pool.Query(ctx, `SELECT `+c.column+`, coalesce(`+expr+`, true) FROM unnest($1::text[]) AS v(`+c.column+`)`, corpus)
		if err != nil {
			t.Fatalf("%s.%s: %v", c.table, c.column, err)
		}
		n := 0
		for rows.Next() {
			var s string
			var ok bool
			if err := rows.Scan(&s, &ok); err != nil {
				t.Fatal(err)
			}
			if n++; ok != code.MatchString(s) {
				t.Errorf("%s.%s: %q passes %v, want %v (%s)", c.table, c.column, s, ok, !ok, expr)
			}
		}
		if err := rows.Err(); err != nil || n != len(corpus) {
			t.Fatalf("%s.%s: %d of %d strings (%v)", c.table, c.column, n, len(corpus), err)
		}
	}
	// And the constraints are in force.
	_, err := pool.Exec(ctx, `INSERT INTO domain_rankings (domain, keyword, country, language, position, source)
		VALUES ('checks.example', 'a keyword', 'u1', 'en', 1, 'test')`)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.ConstraintName != "domain_rankings_country_check" {
		t.Fatalf("a ranking in country u1: %v, want domain_rankings_country_check violated", err)
	}
}
