package dashboard_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/contentapi/contentapi/internal/dashboard"
)

// discardMailer accepts every e-mail and sends none.
type discardMailer struct{}

func (discardMailer) Send(context.Context, string, string, string) error { return nil }

// BenchmarkSignIn times the sign-in form's request (POST /dashboard/signin through the API's
// middleware, over PostgreSQL and Redis on this machine) for an address with an account and
// for one without. Both do the same work, so their medians should be within a few percent:
// a difference would tell an attacker who has an account. The two are asked in turn (in
// alternating order), so that a change of the machine's load weighs on both alike; then
// each sub-benchmark reports its address's median (also as ns/op) and 90th percentile.
// E-mails go through the outbox, as in production, to a mailer that drops them.
func BenchmarkSignIn(b *testing.B) {
	const warmup, requests = 50, 300
	outbox := dashboard.NewOutbox(discardMailer{}, slog.New(slog.DiscardHandler), dashboard.OutboxConfig{})
	b.Cleanup(func() { _ = outbox.Close(context.Background()) })
	e := startEnv(b, withDash(func(d *dashboard.Deps) {
		d.Mailer = outbox
		d.SignInPerEmail, d.SignInPerAddress = 1<<30, 1<<30
	}))
	email := uniqueEmail("bench")
	e.register(b, email)
	br := e.newBrowser(b)
	csrf := br.Get("/dashboard/signin").CSRF(b)
	ask := func(addr string) time.Duration {
		start := time.Now()
		if p := br.Post("/dashboard/signin", url.Values{"csrf": {csrf}, "email": {addr}}); p.Status != http.StatusOK {
			b.Fatalf("sign-in request: %d %s", p.Status, p.Body)
		}
		return time.Since(start)
	}
	addrs := []string{email, "nobody-" + email}
	took := make([][]time.Duration, len(addrs))
	for i := range warmup + requests {
		for j := range addrs {
			k := (i + j) % len(addrs)
			if d := ask(addrs[k]); i >= warmup {
				took[k] = append(took[k], d)
			}
		}
	}
	for k, name := range []string{"known", "unknown"} {
		b.Run(name, func(b *testing.B) {
			slices.Sort(took[k])
			median := took[k][len(took[k])/2]
			b.ReportMetric(float64(median.Nanoseconds()), "ns/op")
			b.ReportMetric(float64(median.Microseconds())/1000, "ms-median")
			b.ReportMetric(float64(took[k][len(took[k])*9/10].Microseconds())/1000, "ms-p90")
		})
	}
}
