package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/contentapi/contentapi/internal/postgres"
)

// A connection a failed test never gave back does not hold the package's end: closing the
// pool gives up after its wait instead of waiting for ever.
func TestClosePoolBoundsTheWait(t *testing.T) {
	ctx := context.Background()
	_, dsn := PostgresDSN(t)
	p, err := postgres.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	held, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if closePool(p, 200*time.Millisecond) {
		t.Fatal("closePool reports the pool closed while a connection was in use")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("closePool took %v with a connection in use", took)
	}
	held.Release() // the pool's Close, still waiting, ends now
	q, err := postgres.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if !closePool(q, 5*time.Second) {
		t.Fatal("closePool did not close an idle pool")
	}
}
