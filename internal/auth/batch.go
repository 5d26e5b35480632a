package auth

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// scriptBatcher sends gate-script calls to Redis in pipelines: a call made while others are
// waiting goes out with them in one round trip, so under load the API spends one network
// exchange on many requests, and alone a call goes out at once with no added wait (the
// auto-pipelining rueidis does, for this one script).
type scriptBatcher struct {
	rdb    redis.UniversalClient
	script *redis.Script
	calls  chan *scriptCall

	// done ends the loops (close); loops counts them, so close returns once they have.
	done      chan struct{}
	closeOnce sync.Once
	loops     sync.WaitGroup
}

// errGateClosed answers calls made on a closed gate.
var errGateClosed = errors.New("auth: gate closed")

type scriptCall struct {
	ctx  context.Context
	keys []string
	args []any
	res  []any
	err  error
	done chan struct{}
}

const maxBatch = 64

func newScriptBatcher(rdb redis.UniversalClient, script *redis.Script, workers int) *scriptBatcher {
	b := &scriptBatcher{rdb: rdb, script: script, calls: make(chan *scriptCall, 1024), done: make(chan struct{})}
	b.loops.Add(workers)
	for i := 0; i < workers; i++ {
		go b.loop()
	}
	return b
}

// close stops the loops and waits for them: a batch being sent is finished; calls still
// queued get errGateClosed from Run.
func (b *scriptBatcher) close() {
	b.closeOnce.Do(func() { close(b.done) })
	b.loops.Wait()
}

// Run runs the script once, batched with whatever calls are waiting.
func (b *scriptBatcher) Run(ctx context.Context, keys []string, args ...any) ([]any, error) {
	c := &scriptCall{ctx: ctx, keys: keys, args: args, done: make(chan struct{})}
	select {
	case b.calls <- c:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-b.done:
		return nil, errGateClosed
	}
	select {
	case <-c.done:
		return c.res, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-b.done:
		// A loop may still be sending this call's batch; its answer is not waited for.
		return nil, errGateClosed
	}
}

func (b *scriptBatcher) loop() {
	defer b.loops.Done()
	batch := make([]*scriptCall, 0, maxBatch)
	for {
		var c *scriptCall
		select {
		case c = <-b.calls:
		case <-b.done:
			return
		}
		batch = append(batch[:0], c)
	drain:
		for len(batch) < maxBatch {
			select {
			case c := <-b.calls:
				batch = append(batch, c)
			default:
				break drain
			}
		}
		b.send(batch)
	}
}

func (b *scriptBatcher) send(batch []*scriptCall) {
	if len(batch) == 1 {
		c := batch[0]
		c.res, c.err = b.script.Run(c.ctx, b.rdb, c.keys, c.args...).Slice()
		close(c.done)
		return
	}
	ctx := context.Background()
	pipe := b.rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(batch))
	for i, c := range batch {
		cmds[i] = b.script.EvalSha(ctx, pipe, c.keys, c.args...)
	}
	_, _ = pipe.Exec(ctx)
	for i, c := range batch {
		c.res, c.err = cmds[i].Slice()
		if c.err != nil && strings.HasPrefix(c.err.Error(), "NOSCRIPT") {
			// Redis lost its script cache (a restart); Run loads it again.
			c.res, c.err = b.script.Run(c.ctx, b.rdb, c.keys, c.args...).Slice()
		}
		close(c.done)
	}
}
