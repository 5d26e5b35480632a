package dashboard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/sethvargo/go-retry"
)

// ErrOutboxFull is returned by Outbox.Send when its queue is full (the SMTP server is
// slower than the requests for links); the caller asks the user to try again.
var ErrOutboxFull = errors.New("dashboard: too many e-mails waiting to be sent")

// Outbox sends e-mails in the background, so that neither a registration nor a sign-in
// request waits on the SMTP server: a slow server no longer holds a request for up to
// 20 s, and a sign-in answer for an address without an account comes as fast as for one
// with an account (the time taken to send no longer tells which addresses have accounts).
// A message that fails is tried again twice, then logged; the user can ask for a new link.
type Outbox struct {
	mailer  Mailer
	log     *slog.Logger
	timeout time.Duration // per attempt
	backoff time.Duration // before the second attempt; doubled for the third

	mu      sync.Mutex
	closed  bool
	pending int // queued or being sent
	idle    *sync.Cond
	queue   chan outMail
	done    chan struct{}
}

type outMail struct{ to, subject, body string }

// OutboxConfig sizes an Outbox; zero values take the defaults.
type OutboxConfig struct {
	Size    int           // messages queued at most (default 1,000)
	Workers int           // concurrent SMTP sessions (default 2)
	Timeout time.Duration // per attempt (default 20 s)
	Backoff time.Duration // before a retry (default 2 s)
}

// NewOutbox starts the senders of an outbox over mailer; Close stops them.
func NewOutbox(mailer Mailer, log *slog.Logger, c OutboxConfig) *Outbox {
	if c.Size <= 0 {
		c.Size = 1000
	}
	if c.Workers <= 0 {
		c.Workers = 2
	}
	if c.Timeout <= 0 {
		c.Timeout = 20 * time.Second
	}
	if c.Backoff <= 0 {
		c.Backoff = 2 * time.Second
	}
	o := &Outbox{mailer: mailer, log: log, timeout: c.Timeout, backoff: c.Backoff,
		queue: make(chan outMail, c.Size), done: make(chan struct{})}
	o.idle = sync.NewCond(&o.mu)
	var wg sync.WaitGroup
	for range c.Workers {
		wg.Go(o.run)
	}
	go func() { wg.Wait(); close(o.done) }()
	return o
}

// Send queues a message and returns at once.
func (o *Outbox) Send(_ context.Context, to, subject, body string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return errors.New("dashboard: outbox closed")
	}
	select {
	case o.queue <- outMail{to: to, subject: subject, body: body}:
		o.pending++
		return nil
	default:
		return ErrOutboxFull
	}
}

func (o *Outbox) run() {
	for m := range o.queue {
		o.deliver(m)
		o.mu.Lock()
		o.pending--
		if o.pending == 0 {
			o.idle.Broadcast()
		}
		o.mu.Unlock()
	}
}

// deliver sends one message, trying twice more after a failure (waiting backoff, then twice
// that). Its context is the process's: a message queued before Close is still sent after
// Close's context ended, while the process lives.
func (o *Outbox) deliver(m outMail) {
	const attempts = 3
	attempt := 0
	err := retry.Do(context.Background(), retry.WithMaxRetries(attempts-1, retry.NewExponential(o.backoff)),
		func(ctx context.Context) error {
			attempt++
			ctx, cancel := context.WithTimeout(ctx, o.timeout)
			defer cancel()
			err := o.mailer.Send(ctx, m.to, m.subject, m.body)
			if err != nil && attempt < attempts {
				o.log.Warn("dashboard: e-mail not sent, trying again", "subject", m.subject, "attempt", attempt,
					"in", (o.backoff << (attempt - 1)).String(), "err", err)
			}
			return retry.RetryableError(err)
		})
	if err != nil {
		o.log.Error("dashboard: e-mail not sent", "subject", m.subject, "attempts", attempt, "err", err)
	}
}

// Wait returns when nothing is queued or being sent.
func (o *Outbox) Wait() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for o.pending > 0 {
		o.idle.Wait()
	}
}

// Close refuses new messages and sends the queued ones until ctx ends; then it reports
// how many were left unsent (their links still work if the user asks again).
func (o *Outbox) Close(ctx context.Context) error {
	o.mu.Lock()
	if !o.closed {
		o.closed = true
		close(o.queue)
	}
	o.mu.Unlock()
	select {
	case <-o.done:
		return nil
	case <-ctx.Done():
		o.mu.Lock()
		n := o.pending
		o.mu.Unlock()
		return fmt.Errorf("dashboard: %d e-mails not sent at shutdown: %w", n, ctx.Err())
	}
}
