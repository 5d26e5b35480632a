package jobs

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"github.com/contentapi/contentapi/internal/job"
	"github.com/contentapi/contentapi/internal/testenv"
)

// A send under the id of a task that will still run (pending, scheduled, waiting to retry,
// being run) adds nothing and says so (job.ErrQueued), leaving that task as it was; a send
// under the id of a task that will never run again (archived, completed and kept) replaces
// it, so the sweep can always get a stuck job's task back onto the queue.
func TestEnqueueInEveryTaskState(t *testing.T) {
	ctx := context.Background()
	rdb := testenv.StartRedisServer(t).Client(t) // a Redis of its own: its server takes every analysis task
	insp := asynq.NewInspectorFromRedisClient(rdb)
	q := &Queue{Client: asynq.NewClientFromRedisClient(rdb), Inspector: insp, Timeout: time.Minute, MaxRetry: 3}
	const kind = "keywords:research"
	ids := map[string]uuid.UUID{}
	for _, s := range []string{"pending", "scheduled", "active", "retry", "archived", "completed"} {
		ids[s] = uuid.New()
	}
	stateOf := func(id uuid.UUID) (asynq.TaskState, int) {
		t.Helper()
		info, err := insp.GetTaskInfo(QueueAnalysis, id.String())
		if err != nil {
			t.Fatalf("task %s: %v", id, err)
		}
		return info.State, info.Retried
	}
	waitState := func(id uuid.UUID, want asynq.TaskState) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if s, _ := stateOf(id); s == want {
				return
			} else if time.Now().After(deadline) {
				t.Fatalf("task %s is %s, never %s", id, s, want)
			}
		}
	}

	// enqueueWith sends a job's task with an option analysis tasks never get.
	enqueueWith := func(id uuid.UUID, opt asynq.Option) {
		t.Helper()
		task, err := NewAnalysisTask(kind, id, id.String(), time.Minute, 3)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := q.Client.EnqueueContext(ctx, task, opt); err != nil {
			t.Fatal(err)
		}
	}

	// Active, retry and completed tasks need a server: it holds one task, fails one (to be
	// retried in an hour) and completes one kept for an hour.
	release := make(chan struct{})
	releaseOnce := sync.OnceFunc(func() { close(release) })
	var mu sync.Mutex
	runs := map[string]int{}
	mux := asynq.NewServeMux()
	mux.HandleFunc(kind, func(ctx context.Context, _ *asynq.Task) error {
		id, _ := asynq.GetTaskID(ctx)
		mu.Lock()
		runs[id]++
		mu.Unlock()
		switch id {
		case ids["active"].String():
			<-release
		case ids["retry"].String():
			return errors.New("provider down")
		}
		return nil
	})
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{Concurrency: 4, Queues: map[string]int{QueueAnalysis: 1},
		TaskCheckInterval: 5 * time.Millisecond, LogLevel: asynq.FatalLevel,
		RetryDelayFunc: func(int, error, *asynq.Task) time.Duration { return time.Hour }})
	if err := srv.Start(mux); err != nil {
		t.Fatal(err)
	}
	stopServer := sync.OnceFunc(func() { releaseOnce(); srv.Shutdown() })
	defer stopServer()
	for _, s := range []string{"active", "retry"} {
		if err := q.Enqueue(ctx, kind, ids[s], ids[s].String()); err != nil {
			t.Fatal(err)
		}
	}
	enqueueWith(ids["completed"], asynq.Retention(time.Hour))
	waitState(ids["active"], asynq.TaskStateActive)
	waitState(ids["retry"], asynq.TaskStateRetry)
	waitState(ids["completed"], asynq.TaskStateCompleted)
	for _, s := range []string{"active", "retry"} {
		if err := q.Enqueue(ctx, kind, ids[s], ids[s].String()); !errors.Is(err, job.ErrQueued) {
			t.Fatalf("send for an %s task: %v, want ErrQueued", s, err)
		}
	}
	waitState(ids["active"], asynq.TaskStateActive)
	waitState(ids["retry"], asynq.TaskStateRetry)
	if err := q.Enqueue(ctx, kind, ids["completed"], ids["completed"].String()); err != nil {
		t.Fatalf("send for a completed task: %v, want it replaced", err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		n := runs[ids["completed"].String()]
		mu.Unlock()
		if n == 2 {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the completed task's replacement ran %d time(s) in all, want 2", n)
		}
	}
	stopServer()

	// Pending, scheduled and archived tasks, with no server running.
	if err := q.Enqueue(ctx, kind, ids["pending"], ids["pending"].String()); err != nil {
		t.Fatal(err)
	}
	enqueueWith(ids["scheduled"], asynq.ProcessIn(time.Hour))
	if err := q.Enqueue(ctx, kind, ids["archived"], ids["archived"].String()); err != nil {
		t.Fatal(err)
	}
	if err := insp.ArchiveTask(QueueAnalysis, ids["archived"].String()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		state string
		want  asynq.TaskState
		err   error
	}{
		{"pending", asynq.TaskStatePending, job.ErrQueued},
		{"scheduled", asynq.TaskStateScheduled, job.ErrQueued},
		{"archived", asynq.TaskStatePending, nil},
	} {
		err := q.Enqueue(ctx, kind, ids[c.state], ids[c.state].String())
		if !errors.Is(err, c.err) || (c.err == nil && err != nil) {
			t.Errorf("send for a %s task: %v, want %v", c.state, err, c.err)
		}
		if s, retried := stateOf(ids[c.state]); s != c.want || retried != 0 {
			t.Errorf("%s task after the send: %s, retried %d; want %s", c.state, s, retried, c.want)
		}
	}
	pending, err := insp.ListPendingTasks(QueueAnalysis)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 2 {
		t.Errorf("%d pending tasks, want 2 (no task doubled): %v", len(pending), fmt.Sprint(pending))
	}
}
