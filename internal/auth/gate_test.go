package auth_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/google/uuid"
	"go.uber.org/goleak"

	"github.com/contentapi/contentapi/internal/auth"
	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/credits"
	"github.com/contentapi/contentapi/internal/testenv"
)

func TestMain(m *testing.M) { testenv.MainNoLeaks(m) }

// A closed gate leaves no goroutine behind (its Redis batchers, its key caches), and a
// call made after Close fails instead of waiting for a batcher that is gone.
func TestGateCloseStopsItsGoroutines(t *testing.T) {
	ctx := context.Background()
	pool, rdb := testenv.Postgres(t), testenv.Redis(t)
	rdb.Ping(ctx) // the client's pool is open before the snapshot
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

	clk := clock.Real{}
	ledger := credits.NewLedger(pool, clk)
	gate := auth.NewGate(pool, rdb, ledger, clk, slog.New(slog.NewTextHandler(io.Discard, nil)))
	reg, err := auth.NewAccounts(pool, ledger, clk, gate).Register(ctx, uuid.NewString()+"@example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := gate.Authenticate(ctx, "Bearer "+reg.Key); err != nil {
		t.Fatalf("authenticate: %v", err)
	}
	gate.Close()
	gate.Close() // twice is harmless
	if _, _, err := gate.Authenticate(ctx, "Bearer "+reg.Key); err == nil {
		t.Fatal("authenticated through a closed gate")
	}
}
