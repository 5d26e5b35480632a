package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	"github.com/sethvargo/go-retry"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/crawler"
	"github.com/contentapi/contentapi/internal/job"
	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/metrics"
	"github.com/contentapi/contentapi/internal/report"
)

// AnalysisPayload is the payload of every analysis task: only the job id; the request lives
// in the job row.
type AnalysisPayload struct {
	JobID uuid.UUID `json:"job_id"`
}

// Queue enqueues analysis tasks with asynq. It implements job.Enqueuer.
type Queue struct {
	Client *asynq.Client
	// Inspector, when set, lets a send find a finished task under the same id (archived
	// after its retries ran out, or kept as completed) and replace it; without it such a
	// task blocks its id until asynq drops it.
	Inspector *asynq.Inspector
	// Timeout bounds one run of a task.
	Timeout time.Duration
	// MaxRetry is the job's MaxAttempts; the task's retry budget adds RetryHeadroom. The
	// job row's attempt count is what really limits runs.
	MaxRetry int
}

// RetryHeadroom is added to an analysis task's retry budget: deliveries that run nothing
// (one that found the job's runner alive, a run handed back at shutdown, a lost lease)
// spend asynq retries too, and the job row's attempts are what limit real runs.
const RetryHeadroom = 10

// NewAnalysisTask returns the task of an analysis job.
func NewAnalysisTask(kind string, id uuid.UUID, taskID string, timeout time.Duration, maxRetry int) (*asynq.Task, error) {
	payload, err := json.Marshal(AnalysisPayload{JobID: id})
	if err != nil {
		return nil, err
	}
	return asynq.NewTask(kind, payload, asynq.Queue(QueueAnalysis), asynq.TaskID(taskID),
		asynq.MaxRetry(maxRetry+RetryHeadroom), asynq.Timeout(timeout)), nil
}

// Enqueue puts the job's task on the analysis queue. A task id names one task in asynq
// whatever its state: a send under the id of a task still to run (pending, scheduled,
// waiting to retry, or being run) adds nothing and reports job.ErrQueued. A task that will
// never run again (archived, or completed and kept) is replaced by a new one when an
// Inspector is set: the job it names is not over, or nobody would send it. (ErrDuplicateTask
// only concerns tasks enqueued with asynq.Unique, which analysis tasks are not.)
func (q *Queue) Enqueue(ctx context.Context, kind string, id uuid.UUID, taskID string) error {
	t, err := NewAnalysisTask(kind, id, taskID, q.Timeout, q.MaxRetry)
	if err != nil {
		return err
	}
	for tries := 0; ; tries++ {
		_, err = q.Client.EnqueueContext(ctx, t)
		if !errors.Is(err, asynq.ErrTaskIDConflict) {
			return err
		}
		if q.Inspector == nil || tries > 0 {
			return job.ErrQueued
		}
		info, err := q.Inspector.GetTaskInfo(QueueAnalysis, taskID)
		switch {
		case errors.Is(err, asynq.ErrTaskNotFound):
			continue // gone meanwhile (completed): send again
		case err != nil:
			return fmt.Errorf("analysis task %s: %w", taskID, err)
		case info.State != asynq.TaskStateArchived && info.State != asynq.TaskStateCompleted:
			return job.ErrQueued
		}
		if err := q.Inspector.DeleteTask(QueueAnalysis, taskID); err != nil && !errors.Is(err, asynq.ErrTaskNotFound) {
			return fmt.Errorf("analysis task %s: replace the %s task: %w", taskID, info.State, err)
		}
	}
}

// Runner builds an analysis answer.
type Runner interface {
	Run(ctx context.Context, kind, jobID string, request []byte) (any, error)
}

// Analysis handles analysis tasks.
type Analysis struct {
	Jobs        *job.Service
	Runner      Runner
	MaxAttempts int
	Log         *slog.Logger
	Metrics     *metrics.Metrics
	// Lifetime ends when the worker stops: hand-backs still being retried after their task
	// returned (see release) stop with it. Nil means they stop only when they succeed.
	Lifetime context.Context

	background sync.WaitGroup
}

// Wait returns when no hand-back is being retried in the background any more; once
// Lifetime has ended, that is soon.
func (a *Analysis) Wait() { a.background.Wait() }

// writeBackoff is how a write to PostgreSQL that failed is tried again: after 100 ms,
// doubling to at most a second between tries.
func writeBackoff() retry.Backoff {
	return retry.WithCappedDuration(time.Second, retry.NewExponential(100*time.Millisecond))
}

// Register adds a handler for every analysis kind.
func (a *Analysis) Register(mux *asynq.ServeMux) {
	for _, an := range report.Catalog {
		mux.HandleFunc(string(an.Kind), a.handle)
	}
}

// handle runs one delivery of a task. It first claims the job row, so a second delivery, or
// a delivery for a job another worker is running, does nothing; a job whose runner is alive
// (a fresh heartbeat) is a *job.BusyError, retried when that heartbeat would have gone
// stale, so a task redelivered after its runner died takes the job over instead of being
// dropped. Success stores the result and settles; a failure that retrying cannot fix, or
// the last attempt's failure, fails the job and refunds; other failures hand the job back
// for asynq to retry, and a run stopped from outside (shutdown, lost lease) hands it back
// without spending the attempt.
func (a *Analysis) handle(ctx context.Context, t *asynq.Task) error {
	var p AnalysisPayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil || p.JobID == uuid.Nil {
		return fmt.Errorf("analysis task payload: %w: %w", err, asynq.SkipRetry)
	}
	retried, _ := asynq.GetRetryCount(ctx)
	a.Log.Debug("job delivery", "job_id", p.JobID, "retried", retried)
	j, claimed, err := a.Jobs.Claim(ctx, p.JobID)
	var busy *job.BusyError
	if errors.As(err, &busy) {
		a.Log.Info("job held by a live runner; will look again", "job_id", p.JobID, "retry_in", busy.RetryIn.String())
	}
	if err != nil {
		return err
	}
	if !claimed {
		a.Log.Info("job not claimed; nothing to do", "job_id", p.JobID, "status", j.Status)
		return nil
	}
	bg := context.WithoutCancel(ctx)
	stop := a.Jobs.KeepAlive(bg, j.ID)
	defer stop()
	start := time.Now()
	result, runErr := a.Runner.Run(report.WithAccount(ctx, j.AccountID.String()), j.Kind, j.ID.String(), j.Request)
	log := a.Log.With("job_id", j.ID, "kind", j.Kind, "attempt", j.Attempts, "duration_ms", time.Since(start).Milliseconds())
	if runErr == nil {
		return a.store(bg, j, result, stop, start, log)
	}
	stop()
	if errors.Is(ctx.Err(), context.Canceled) {
		log.Warn("job run interrupted; handing it back", "err", runErr)
		if err := a.Jobs.HandBack(bg, j.ID); err != nil {
			log.Error("job not handed back; its next delivery takes it over once its heartbeat is stale", "err", err)
		}
		return fmt.Errorf("%w: %w", ErrInterrupted, runErr)
	}
	code, message, permanent := classify(runErr)
	if permanent || j.Attempts >= a.MaxAttempts {
		log.Warn("job failed; refunding", "err", runErr, "code", code)
		if _, err := a.Jobs.Fail(bg, j.ID, code, message); err != nil {
			log.Error("job failure not stored; a redelivery will end it", "err", err)
			return err
		}
		a.Metrics.Job(j.Kind, "failed", time.Since(start))
		return fmt.Errorf("%w: %w", runErr, asynq.SkipRetry)
	}
	a.Metrics.Job(j.Kind, "retried", time.Since(start))
	log.Warn("job attempt failed; will retry", "err", runErr)
	a.release(bg, j, log)
	return runErr
}

// release hands the job back for its task's retry. A release that fails (PostgreSQL down)
// is logged and tried again in the background, backing off to once a second, until it
// succeeds or Lifetime ends: the task's retry may be lost with Redis in the same outage,
// and a job released once PostgreSQL is back is queued again, which the sweep re-sends
// within JOB_SWEEP_INTERVAL, where a job left running waits for its heartbeat to go stale
// first. Release changes nothing once another runner took the job over.
func (a *Analysis) release(ctx context.Context, j job.Job, log *slog.Logger) {
	err := a.Jobs.Release(ctx, j.ID, j.Attempts)
	if err == nil {
		return
	}
	log.Error("job not handed back for its retry; trying again until PostgreSQL answers", "err", err)
	lifetime := a.Lifetime
	if lifetime == nil {
		lifetime = context.Background()
	}
	a.background.Go(func() {
		tries := 1
		err := retry.Do(lifetime, writeBackoff(), func(ctx context.Context) error {
			tries++
			return retry.RetryableError(a.Jobs.Release(ctx, j.ID, j.Attempts))
		})
		if err != nil {
			log.Warn("job hand-back abandoned as the worker stops; its next delivery takes it over once its heartbeat is stale",
				"tries", tries, "err", err)
			return
		}
		log.Info("job handed back for its retry after failed tries", "tries", tries)
	})
}

// store saves the result and settles, retrying while PostgreSQL is unreachable for twice
// StaleAfter: a short outage costs no second run (the heartbeats go on once PostgreSQL
// answers, and a job the sweep resumed meanwhile is still settled by this result). A result
// PostgreSQL refuses (ErrUnstorable) fails the job and refunds. Past the retries the job is
// handed back (see release); its heartbeat is stale by then, so the task's redelivery takes
// the job over at once either way. Every failed write is logged.
func (a *Analysis) store(ctx context.Context, j job.Job, result any, stop func(), start time.Time, log *slog.Logger) error {
	tries := 0
	err := retry.Do(ctx, retry.WithMaxDuration(2*a.Jobs.StaleAfter(), writeBackoff()), func(ctx context.Context) error {
		tries++
		_, err := a.Jobs.Complete(ctx, j.ID, result)
		if err == nil || errors.Is(err, job.ErrUnstorable) {
			return err
		}
		if tries == 1 {
			log.Error("job result not stored", "err", err, "tries", tries)
		}
		return retry.RetryableError(err)
	})
	switch {
	case err == nil:
		if tries > 1 {
			log.Info("job result stored after failed writes", "tries", tries)
		}
		a.Metrics.Job(j.Kind, "succeeded", time.Since(start))
		log.Info("job succeeded")
		return nil
	case errors.Is(err, job.ErrUnstorable):
		log.Error("job result cannot be stored; refunding", "err", err)
		stop()
		if _, ferr := a.Jobs.Fail(ctx, j.ID, apperr.JobFailed, "The result could not be stored. Nothing was charged."); ferr != nil {
			log.Error("job failure not stored; a redelivery will end it", "err", ferr)
			return ferr
		}
		a.Metrics.Job(j.Kind, "failed", time.Since(start))
		return fmt.Errorf("%w: %w", err, asynq.SkipRetry)
	}
	log.Error("job result not stored", "err", err, "tries", tries)
	stop()
	a.release(ctx, j, log)
	return err
}

// classify turns a run error into what the caller is told, and whether retrying is futile.
func classify(err error) (code, message string, permanent bool) {
	if e, ok := apperr.As(err); ok {
		return e.Code, e.Message, true
	}
	switch {
	case errors.Is(err, report.ErrBadJob):
		return apperr.JobFailed, "The job could not be run. Nothing was charged.", true
	case errors.Is(err, keywords.ErrUnsupported):
		// A query part the keyword data source cannot answer (DataForSEO has no such
		// filter, say): the caller's to change, named.
		var ue *keywords.UnsupportedError
		if errors.As(err, &ue) {
			return apperr.Validation, fmt.Sprintf("%s: the keyword data source cannot answer this (%s). Nothing was charged.", ue.Part, ue.Reason), true
		}
		return apperr.Validation, "A part of the query is not supported by the keyword data source. Nothing was charged.", true
	case errors.Is(err, keywords.ErrRateLimited):
		// Retrying within the job's few seconds of backoff only meets the limit again.
		return apperr.ProviderRateLimited, fmt.Sprintf("The keyword data provider's rate limit is reached; retry after %d seconds. Nothing was charged.",
			apperr.RetryAfterProviderRateLimit), true
	case errors.Is(err, keywords.ErrPermanent):
		return apperr.ProviderError, "The keyword data provider refused the request. Nothing was charged.", true
	case errors.Is(err, crawler.ErrForbiddenAddress), errors.Is(err, crawler.ErrInvalidDomain):
		return apperr.Validation, "The domain resolves to an address that cannot be crawled. Nothing was charged.", true
	case errors.Is(err, crawler.ErrSiteTooLarge):
		return apperr.SiteTooLarge, "The site's pages carry more text than one audit can hold; audit fewer pages with max_pages. Nothing was charged.", true
	case errors.Is(err, context.DeadlineExceeded):
		return apperr.JobFailed, "The job took too long and was stopped. Nothing was charged.", false
	}
	return apperr.ProviderError, "The analysis could not be completed: a data source did not answer. Nothing was charged.", false
}
