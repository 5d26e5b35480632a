package jobs

import (
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// NewQueue returns the queue both binaries send analysis tasks through, over rdb. Its
// inspector lets a send replace a finished task under the same id (the worker's sweep needs
// it; the API's first sends never meet one). Neither client closes rdb.
func NewQueue(rdb redis.UniversalClient, timeout time.Duration, maxRetry int) *Queue {
	return &Queue{Client: asynq.NewClientFromRedisClient(rdb), Inspector: asynq.NewInspectorFromRedisClient(rdb),
		Timeout: timeout, MaxRetry: maxRetry}
}

// RedisConnOpt gives asynq (its server, scheduler and the queue dashboard) clients made
// from opt; asynq's own option types cannot carry go-redis's retry and dial tuning. opt is
// never handed to go-redis itself, which fills in the Options it gets: each client gets a
// copy.
func RedisConnOpt(opt *redis.Options) asynq.RedisConnOpt { return redisConnOpt{opt} }

type redisConnOpt struct{ opt *redis.Options }

// MakeRedisClient implements asynq.RedisConnOpt.
func (o redisConnOpt) MakeRedisClient() any {
	opt := *o.opt
	return redis.NewClient(&opt)
}
