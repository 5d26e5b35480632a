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

// RedisConnOpt gives asynq (its server, scheduler and the queue dashboard) clients made by
// newClient (app.NewRedis over app.RedisOptions): one server, Sentinel's master or a
// Cluster, with the service's retry and dial tuning, which asynq's own option types cannot
// carry. Each call of MakeRedisClient makes a new client, which asynq closes.
func RedisConnOpt(newClient func() redis.UniversalClient) asynq.RedisConnOpt {
	return redisConnOpt(newClient)
}

type redisConnOpt func() redis.UniversalClient

// MakeRedisClient implements asynq.RedisConnOpt.
func (o redisConnOpt) MakeRedisClient() any { return o() }
