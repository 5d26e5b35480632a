package billing_test

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/app/apptest"
	"github.com/contentapi/contentapi/internal/auth"
	"github.com/contentapi/contentapi/internal/billing"
	"github.com/contentapi/contentapi/internal/billing/billingtest"
	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/credits"
	"github.com/contentapi/contentapi/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// t0 is where every test's clock starts; the 31st, so month arithmetic is exercised.
var t0 = time.Date(2031, 1, 31, 9, 0, 0, 0, time.UTC)

type harness struct {
	t        *testing.T
	ctx      context.Context
	pool     *pgxpool.Pool
	clock    *clock.Manual
	ledger   *credits.Ledger
	gate     *auth.Gate
	accounts *auth.Accounts
	stripe   *billingtest.Stripe
	svc      *billing.Service
	logs     *syncBuffer
}

// newHarness builds the billing service over the test database and Redis, a movable clock
// and the fake Stripe in front of stripe-mock.
func newHarness(t *testing.T) *harness {
	t.Helper()
	clk := clock.NewManual(t0)
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a := apptest.New(t, apptest.Options{Clock: clk, Log: log})
	st := billingtest.NewStripe(t)
	h := &harness{t: t, ctx: context.Background(), pool: a.Pool, clock: clk, ledger: a.Ledger, gate: a.Gate,
		accounts: a.Accounts, stripe: st, logs: logs}
	// The service under test is configured by the test (its return address, its Stripe).
	h.svc = billing.New(testConfig(st.URL), a.Pool, a.Ledger, a.Accounts, clk, log)
	return h
}

func testConfig(apiBase string) billing.Config {
	return billing.Config{
		SecretKey: billingtest.SecretKey, WebhookSecret: billingtest.WebhookSecret, APIBase: apiBase,
		DashboardURL: "https://dash.test/billing",
		Prices: billing.Prices{ProMonthly: billingtest.PriceProMonthly, ProAnnual: billingtest.PriceProAnnual,
			ScaleMonthly: billingtest.PriceScaleMonthly, ScaleAnnual: billingtest.PriceScaleAnnual},
	}
}

// register creates a free account and returns its id and key.
func (h *harness) register() (uuid.UUID, string) {
	h.t.Helper()
	reg, err := h.accounts.Register(h.ctx, "u-"+uuid.NewString()+"@example.com", "")
	if err != nil {
		h.t.Fatal(err)
	}
	return reg.AccountID, reg.Key
}

// event builds a signed-ready event of type typ created now on the test clock.
func (h *harness) event(typ string, obj map[string]any) []byte {
	return billingtest.Event("evt_"+uuid.NewString(), typ, h.clock.Now(), obj)
}

// deliver sends a payload as Stripe does, signed now.
func (h *harness) deliver(payload []byte) error {
	return h.svc.HandleWebhook(h.ctx, payload, billingtest.Sign(payload, billingtest.WebhookSecret))
}

func (h *harness) mustDeliver(payload []byte) {
	h.t.Helper()
	if err := h.deliver(payload); err != nil {
		h.t.Fatalf("deliver: %v", err)
	}
}

// complete delivers a completed checkout of a new subscription and returns its ids.
func (h *harness) complete(acct uuid.UUID, planName, cycle string) (subID, customer string) {
	h.t.Helper()
	subID, customer = "sub_"+short(), "cus_"+short()
	h.mustDeliver(h.event(billing.EventCheckoutCompleted,
		billingtest.CheckoutSession("cs_"+short(), acct.String(), subID, customer, planName, cycle)))
	return subID, customer
}

// renew delivers a paid renewal invoice for the period [start, end) at price.
func (h *harness) renew(subID, customer, price string, start, end time.Time) string {
	h.t.Helper()
	id := "in_" + short()
	h.mustDeliver(h.event(billing.EventInvoicePaid,
		billingtest.Invoice(id, "subscription_cycle", subID, customer, "", price, start, end)))
	return id
}

func (h *harness) account(id uuid.UUID) auth.Account {
	h.t.Helper()
	a, err := h.accounts.Get(h.ctx, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return a
}

func (h *harness) balance(id uuid.UUID) int {
	h.t.Helper()
	n, err := h.ledger.Balance(h.ctx, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return n
}

// spend reserves and settles n credits.
func (h *harness) spend(id uuid.UUID, n int) {
	h.t.Helper()
	rid, err := h.ledger.Reserve(h.ctx, id, n, "/v1/test")
	if err != nil {
		h.t.Fatalf("spend %d: %v", n, err)
	}
	if _, err := h.ledger.Settle(h.ctx, rid); err != nil {
		h.t.Fatal(err)
	}
}

// limit is the rate limit the gate applies to the key's next request.
func (h *harness) limit(key string) int {
	h.t.Helper()
	_, d, err := h.gate.Authenticate(h.ctx, "Bearer "+key)
	if err != nil {
		h.t.Fatal(err)
	}
	return d.Limit
}

type grantRow struct {
	Amount, Remaining   int
	IssuedAt, ExpiresAt time.Time
	Source, SourceRef   string
}

func (h *harness) grants(id uuid.UUID) []grantRow {
	h.t.Helper()
	rows, err := h.pool.Query(h.ctx, `
		SELECT amount, remaining, issued_at, expires_at, source, source_ref FROM credit_grants
		WHERE account_id = $1 ORDER BY id`, id)
	if err != nil {
		h.t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[grantRow])
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

func (h *harness) paidGrants(id uuid.UUID) []grantRow {
	var out []grantRow
	for _, g := range h.grants(id) {
		if g.Source == credits.SourcePaid {
			out = append(out, g)
		}
	}
	return out
}

func (h *harness) processed(eventID string) (n int, outcome string) {
	h.t.Helper()
	_ = h.pool.QueryRow(h.ctx, `SELECT count(*), COALESCE(max(outcome), '') FROM processed_stripe_events WHERE id = $1`,
		eventID).Scan(&n, &outcome)
	return n, outcome
}

func short() string { return uuid.NewString()[:13] }

func months(n int) time.Time { return clock.AddMonths(t0, n) }

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
