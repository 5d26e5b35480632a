package job

import (
	"context"
	"fmt"
	"sync"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// doneChannel carries the ids of jobs that ended, from workers to every API replica.
const doneChannel = "contentapi:jobs:done"

// Signals wakes callers waiting for jobs. Each API process holds one Redis subscription and
// fans messages out to its waiters, so waiting costs no connection per request.
type Signals struct {
	rdb redis.UniversalClient

	mu      sync.Mutex
	waiters map[uuid.UUID]map[chan struct{}]struct{}
}

// NewSignals returns signals over rdb.
func NewSignals(rdb redis.UniversalClient) *Signals {
	return &Signals{rdb: rdb, waiters: make(map[uuid.UUID]map[chan struct{}]struct{})}
}

// Publish announces that a job ended.
func (s *Signals) Publish(ctx context.Context, id uuid.UUID) error {
	return s.rdb.Publish(ctx, doneChannel, id.String()).Err()
}

// Listen registers interest in a job; the channel receives when it ends.
func (s *Signals) Listen(id uuid.UUID) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	s.mu.Lock()
	if s.waiters[id] == nil {
		s.waiters[id] = make(map[chan struct{}]struct{})
	}
	s.waiters[id][ch] = struct{}{}
	s.mu.Unlock()
	return ch, func() {
		s.mu.Lock()
		delete(s.waiters[id], ch)
		if len(s.waiters[id]) == 0 {
			delete(s.waiters, id)
		}
		s.mu.Unlock()
	}
}

// Subscribe opens the subscription and returns once Redis confirmed it; Run then delivers.
func (s *Signals) Subscribe(ctx context.Context) (*redis.PubSub, error) {
	ps := s.rdb.Subscribe(ctx, doneChannel)
	if _, err := ps.Receive(ctx); err != nil {
		ps.Close()
		return nil, fmt.Errorf("job: subscribe: %w", err)
	}
	return ps, nil
}

// Start subscribes and delivers messages to waiters in the background until ctx ends.
func (s *Signals) Start(ctx context.Context) error {
	ps, err := s.Subscribe(ctx)
	if err != nil {
		return err
	}
	go s.Run(ctx, ps)
	return nil
}

// Run delivers messages of ps to waiters until ctx ends.
func (s *Signals) Run(ctx context.Context, ps *redis.PubSub) {
	defer ps.Close()
	ch := ps.Channel()
	for {
		select {
		case <-ctx.Done():
			return
		case m, ok := <-ch:
			if !ok {
				return
			}
			id, err := uuid.Parse(m.Payload)
			if err != nil {
				continue
			}
			s.mu.Lock()
			for w := range s.waiters[id] {
				select {
				case w <- struct{}{}:
				default:
				}
			}
			s.mu.Unlock()
		}
	}
}
