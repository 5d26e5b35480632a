package jobs

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hibiken/asynq"

	"github.com/contentapi/contentapi/internal/job"
)

// ErrInterrupted is returned by a delivery whose run was stopped from outside (the worker
// shutting down, or its lease lost) after it handed the job back: the task is retried at
// once, by whichever worker is still running.
var ErrInterrupted = errors.New("job run interrupted; handed back")

// RetryDelay is the worker's retry schedule. Callback deliveries keep their own. A delivery
// that found its job held by a live runner looks again when that runner's heartbeat would
// be stale; an interrupted run, or a task whose lease expired (its worker went silent a
// minute ago), is retried at once. Other failures wait base, doubling per retry up to a
// minute: a temporary provider or site failure gets a quick second chance without
// hammering it.
func RetryDelay(base time.Duration) asynq.RetryDelayFunc {
	return func(n int, err error, t *asynq.Task) time.Duration {
		if t.Type() == TypeDeliverCallback {
			return CallbackDelay(n)
		}
		var busy *job.BusyError
		switch {
		case errors.As(err, &busy):
			return busy.RetryIn
		case errors.Is(err, ErrInterrupted), errors.Is(err, asynq.ErrLeaseExpired):
			return 0
		}
		d := base
		for i := 0; i < n && d < time.Minute; i++ {
			d *= 2
		}
		return min(d, time.Minute)
	}
}

// InFlight counts the tasks being handled, so a worker shutting down can wait for them.
type InFlight struct {
	mu   sync.Mutex
	n    int
	idle chan struct{}
}

// Middleware counts the handlers it wraps while they run.
func (f *InFlight) Middleware(h asynq.Handler) asynq.Handler {
	return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		f.add(1)
		defer f.add(-1)
		return h.ProcessTask(ctx, t)
	})
}

func (f *InFlight) add(d int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n += d
	if f.n == 0 && f.idle != nil {
		close(f.idle)
		f.idle = nil
	}
}

// Idle is closed once no task is being handled (at once when none is).
func (f *InFlight) Idle() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 {
		c := make(chan struct{})
		close(c)
		return c
	}
	if f.idle == nil {
		f.idle = make(chan struct{})
	}
	return f.idle
}
