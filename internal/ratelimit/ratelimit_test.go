package ratelimit_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/ratelimit"
	"github.com/contentapi/contentapi/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestExactlyLimitAdmittedConcurrently(t *testing.T) {
	l := ratelimit.New(testenv.Redis(t))
	bucket := uuid.NewString()
	var admitted atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := l.Allow(context.Background(), bucket, 25, time.Minute)
			if err != nil {
				t.Error(err)
			}
			if d.Allowed {
				admitted.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := admitted.Load(); n != 25 {
		t.Fatalf("admitted %d, want 25", n)
	}
}

func TestWindowSlides(t *testing.T) {
	l := ratelimit.New(testenv.Redis(t))
	bucket := uuid.NewString()
	ctx := context.Background()
	const window = 300 * time.Millisecond
	for i := 0; i < 3; i++ {
		d, err := l.Allow(ctx, bucket, 3, window)
		if err != nil || !d.Allowed || d.Remaining != 2-i || d.Limit != 3 {
			t.Fatalf("request %d: %+v %v", i, d, err)
		}
	}
	d, _ := l.Allow(ctx, bucket, 3, window)
	if d.Allowed || d.Remaining != 0 || d.Reset <= 0 || d.Reset > window || d.RetryAfterSeconds() != 1 {
		t.Fatalf("4th: %+v", d)
	}
	// Wait exactly as long as the refusal says, then a slot is free: Reset is truthful.
	time.Sleep(d.Reset + 5*time.Millisecond)
	if d, _ := l.Allow(ctx, bucket, 3, window); !d.Allowed {
		t.Fatalf("after reset: %+v", d)
	}
}
