package auth

import (
	"context"
	"strings"

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
}

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
	b := &scriptBatcher{rdb: rdb, script: script, calls: make(chan *scriptCall, 1024)}
	for i := 0; i < workers; i++ {
		go b.loop()
	}
	return b
}

// Run runs the script once, batched with whatever calls are waiting.
func (b *scriptBatcher) Run(ctx context.Context, keys []string, args ...any) ([]any, error) {
	c := &scriptCall{ctx: ctx, keys: keys, args: args, done: make(chan struct{})}
	select {
	case b.calls <- c:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case <-c.done:
		return c.res, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (b *scriptBatcher) loop() {
	batch := make([]*scriptCall, 0, maxBatch)
	for c := range b.calls {
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
