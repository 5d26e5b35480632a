package dashboard_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/testenv"
)

// BenchmarkUsagePage times the usage page over 90 days of a busy account (20 calls a day
// over 5 endpoints and 10 keys, 1,800 reservations, a tenth of them from the dashboard),
// through the API's middleware over PostgreSQL on this machine, and reports the page's size.
func BenchmarkUsagePage(b *testing.B) {
	e := startEnv(b)
	br := e.newBrowser(b)
	email := uniqueEmail("bench-usage")
	e.signIn(b, br, email)
	acct := e.account(b, email)
	ctx := context.Background()
	var keys []uuid.UUID
	for i := range 10 {
		k, _, err := e.Accounts.CreateKey(ctx, acct.ID, "key "+string(rune('a'+i)), 0)
		if err != nil {
			b.Fatal(err)
		}
		keys = append(keys, k.ID)
	}
	endpoints := []string{"/v1/keywords/research", "/v1/keywords/gaps", "/v1/content/audit", "/v1/content/recommend", "/v1/content-map"}
	pool := testenv.Postgres(b)
	now := e.Clock.Now()
	for day := range 90 {
		for n := range 20 {
			source, key := "api", &keys[n%len(keys)]
			if n%10 == 0 {
				source, key = "dashboard", nil
			}
			_, err := pool.Exec(ctx, `INSERT INTO reservations (id, account_id, amount, endpoint, status, created_at, finished_at, source, api_key_id)
				VALUES ($1, $2, $3, $4, 'settled', $5, $5, $6, $7)`, uuid.New(), acct.ID, 5+n%3*5, endpoints[n%len(endpoints)],
				now.Add(-time.Duration(day)*24*time.Hour-time.Duration(n)*time.Minute), source, key)
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	var size int
	for b.Loop() {
		p := br.Get("/dashboard/usage?days=90")
		if p.Status != http.StatusOK {
			b.Fatalf("usage: %d %s", p.Status, p.Body)
		}
		size = len(p.Body)
	}
	b.ReportMetric(float64(size)/1024, "KiB-page")
}

// BenchmarkCheckLowBalance times the check every committed credit change runs in the API
// process, in its common case: the balance is above the line.
func BenchmarkCheckLowBalance(b *testing.B) {
	e := startEnv(b)
	email := uniqueEmail("bench-low")
	e.register(b, email)
	acct := e.account(b, email)
	ctx := context.Background()
	for b.Loop() {
		e.Dash.CheckLowBalance(ctx, acct.ID)
	}
}
