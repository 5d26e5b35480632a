package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/postgres"
)

// BusyError says a delivery found its job held by a live runner (a fresh heartbeat). The
// delivery should be retried after RetryIn: by then the heartbeat is stale if that runner
// has died meanwhile, and the retry takes the job over.
type BusyError struct {
	ID      uuid.UUID
	RetryIn time.Duration
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("job %s is held by a live runner; retry in %s", e.ID, e.RetryIn)
}

// lostMessage is what the caller is told about a job whose runners all died.
const lostMessage = "The job could not finish: the worker running it stopped. Nothing was charged."

// Claim makes the caller the job's runner: a queued job, or a running one whose runner is
// gone: no heartbeat for StaleAfter, which is what a redelivery of its task finds after a
// worker was killed, could not store a result, or was shut down in the middle of a run. It
// reports false when there is nothing to run: the job ended or does not exist, or its
// runner is gone with no attempt left (the job is then failed and refunded here, as the
// sweep would). A job whose runner is alive gives a *BusyError.
func (s *Service) Claim(ctx context.Context, id uuid.UUID) (Job, bool, error) {
	now := s.clock.Now()
	lost := now.Add(-s.cfg.staleAfter())
	j, err := scanJob(s.pool.QueryRow(ctx, `
		UPDATE jobs SET status = 'running', attempts = attempts + 1, started_at = COALESCE(started_at, $2), heartbeat_at = $2
		WHERE id = $1 AND attempts < $4
			AND (status = 'queued' OR (status = 'running' AND (heartbeat_at IS NULL OR heartbeat_at < $3)))
		RETURNING `+jobColumns, id, now, lost, s.cfg.MaxAttempts))
	if !errors.Is(err, errNotFound) {
		return j, err == nil, err
	}
	var heartbeat *time.Time
	err = s.pool.QueryRow(ctx, `SELECT `+jobColumns+`, heartbeat_at FROM jobs WHERE id = $1`, id).
		Scan(j.fields(&heartbeat)...)
	margin := s.cfg.heartbeat() / 4
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return Job{}, false, nil
	case err != nil:
		return j, false, fmt.Errorf("job: claim: %w", err)
	case j.Done():
		return j, false, nil
	case j.Status == Running && heartbeat != nil && !heartbeat.Before(lost):
		return j, false, &BusyError{ID: id, RetryIn: heartbeat.Sub(lost) + margin}
	case j.Attempts >= s.cfg.MaxAttempts:
		if _, err := s.Fail(ctx, id, apperr.JobFailed, lostMessage); err != nil {
			return j, false, err
		}
		j, err = s.Load(ctx, id)
		return j, false, err
	}
	// The job changed between the two statements; the next delivery will see it settled.
	return j, false, &BusyError{ID: id, RetryIn: margin}
}

// Heartbeat records that the job's runner is alive.
func (s *Service) Heartbeat(ctx context.Context, id uuid.UUID) error {
	_, err := s.pool.Exec(ctx, `UPDATE jobs SET heartbeat_at = $2 WHERE id = $1 AND status = 'running'`, id, s.clock.Now())
	if err != nil {
		return fmt.Errorf("job: heartbeat: %w", err)
	}
	return nil
}

// KeepAlive sends a heartbeat every Heartbeat interval until the returned stop is called
// (stop may be called more than once).
func (s *Service) KeepAlive(ctx context.Context, id uuid.UUID) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(s.cfg.heartbeat())
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := s.Heartbeat(ctx, id); err != nil && ctx.Err() == nil {
					s.log.Warn("job heartbeat", "job_id", id, "err", err)
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

// ErrUnstorable marks a result PostgreSQL refuses to store (a data exception such as a NUL
// character, or a size limit): storing it again cannot succeed.
var ErrUnstorable = errors.New("job: result cannot be stored")

// Described is a result with meta of its own for the answer (where its data came from,
// warnings): Complete stores it beside the result.
type Described interface {
	AnswerMeta() any
}

// Charged is a result whose price depends on what it holds (the rows of a keyword list, the
// items of a plan): Charge is the credits it costs, at most what the call reserved. Complete
// settles that much and gives the rest of the reservation back; a charge of 0 (a later page
// that found nothing) gives it all back, the job still succeeding.
type Charged interface {
	Charge() (credits int, ok bool)
}

// Complete stores the result (and its meta, when it is Described; its snapshot, when it is a
// Snapshotter) and settles the reservation in one transaction: in full, or for a Charged
// result's charge, the rest given back. A job that already ended is left as it is (false).
func (s *Service) Complete(ctx context.Context, id uuid.UUID, result any) (bool, error) {
	body, err := json.Marshal(result)
	if err != nil {
		return false, fmt.Errorf("job: encode result: %w", err)
	}
	var meta []byte
	if d, ok := result.(Described); ok {
		if meta, err = json.Marshal(d.AnswerMeta()); err != nil {
			return false, fmt.Errorf("job: encode result meta: %w", err)
		}
	}
	domain, snapshot, err := snapshotArgs(result)
	if err != nil {
		return false, err
	}
	var charge *int
	if c, ok := result.(Charged); ok {
		if n, ok := c.Charge(); ok {
			n = max(n, 0)
			charge = &n
		}
	}
	// The result and the settlement in one statement, atomic without a transaction's extra
	// round trips. Locks are taken in the order every path uses (the job row, then its
	// reservation, then the account), and the job only succeeds while its reservation is
	// still reserved: the ledger's rule that a reservation closes exactly once. A charge
	// below the reservation lowers the job's cost and the reservation's amount (a charge of
	// 0 marks the reservation refunded instead: an amount is never 0), and the ledger gives
	// the difference back in the same transaction.
	now := s.clock.Now()
	var account, reservation uuid.UUID
	var cost, reserved, settled int
	var callback *string
	run := func(q postgres.Querier) error {
		return q.QueryRow(ctx, `
		WITH j AS (
			UPDATE jobs SET status = 'succeeded', result = $2, finished_at = $3, heartbeat_at = NULL, meta = $4,
				cost = LEAST(cost, COALESCE($7::integer, cost))
			WHERE id = $1 AND status IN ('queued', 'running')
				AND EXISTS (SELECT 1 FROM reservations r WHERE r.id = jobs.reservation_id AND r.status = 'reserved')
			RETURNING reservation_id, account_id, cost, callback_url,
				(SELECT r.amount FROM reservations r WHERE r.id = jobs.reservation_id) AS reserved
		), settled AS (
			UPDATE reservations SET finished_at = $3,
				status = CASE WHEN $7::integer = 0 THEN 'refunded' ELSE 'settled' END,
				amount = CASE WHEN $7::integer > 0 THEN LEAST(reservations.amount, $7::integer) ELSE reservations.amount END
			FROM j WHERE reservations.id = j.reservation_id AND reservations.status = 'reserved'
			RETURNING reservations.id
		), snapshot AS (
			INSERT INTO audit_snapshots (job_id, account_id, domain, created_at, issues)
			SELECT $1, j.account_id, $5::text, $3, $6::jsonb FROM j WHERE $5::text IS NOT NULL
			ON CONFLICT (job_id) DO NOTHING
		)
		SELECT j.reservation_id, j.account_id, j.cost, j.reserved, j.callback_url, (SELECT count(*) FROM settled) FROM j`,
			id, body, now, meta, domain, snapshot, charge).
			Scan(&reservation, &account, &cost, &reserved, &callback, &settled)
	}
	var back int
	if charge == nil {
		err = run(s.pool)
	} else {
		err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
			if err := run(tx); err != nil || settled != 1 || cost >= reserved {
				return err
			}
			var err error
			back, err = s.ledger.KeepTx(ctx, tx, reservation, account, cost)
			return err
		})
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil // the job had ended already
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (strings.HasPrefix(pgErr.Code, "22") || strings.HasPrefix(pgErr.Code, "54")) {
		return false, fmt.Errorf("job: complete: %w: %w", ErrUnstorable, err)
	}
	if err != nil {
		return false, fmt.Errorf("job: complete: %w", err)
	}
	if settled != 1 {
		s.log.Error("job completed but its reservation was closed out of band", "job_id", id)
	}
	if back > 0 {
		s.metrics.Credits("refunded", back)
	}
	s.finished(ctx, id, account, "settled", cost, callback)
	return true, nil
}

// Fail marks the job failed with a code and message for the caller and refunds its
// reservation, in one transaction. A job that already ended is left as it is (false).
func (s *Service) Fail(ctx context.Context, id uuid.UUID, code, message string) (bool, error) {
	return s.fail(ctx, id, code, message, false)
}

// fail is Fail; freeKey also clears the job's Idempotency-Key in the same statement.
func (s *Service) fail(ctx context.Context, id uuid.UUID, code, message string, freeKey bool) (bool, error) {
	set := `status = 'failed', error_code = $2, error_message = $3`
	if freeKey {
		set += `, idempotency_key = NULL`
	}
	return s.finish(ctx, id, "refunded", func(tx pgx.Tx, reservation uuid.UUID) (uuid.UUID, bool, error) {
		return s.ledger.RefundTx(ctx, tx, reservation)
	}, set, code, message)
}

func (s *Service) finish(ctx context.Context, id uuid.UUID, event string, money func(pgx.Tx, uuid.UUID) (uuid.UUID, bool, error), set string, args ...any) (bool, error) {
	var account uuid.UUID
	var done bool
	var cost int
	var callback *string
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var reservation uuid.UUID
		n := len(args) + 2
		err := tx.QueryRow(ctx, fmt.Sprintf(`
			UPDATE jobs SET %s, finished_at = $%d, heartbeat_at = NULL
			WHERE id = $1 AND status IN ('queued', 'running') RETURNING reservation_id, cost, callback_url`, set, n),
			append(append([]any{id}, args...), s.clock.Now())...).Scan(&reservation, &cost, &callback)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("job: finish: %w", err)
		}
		account, done, err = money(tx, reservation)
		if err == nil && !done {
			err = fmt.Errorf("job: reservation %s of job %s was already closed", reservation, id)
		}
		return err
	})
	if err != nil || !done {
		return false, err
	}
	s.finished(ctx, id, account, event, cost, callback)
	return true, nil
}

// finished tells the world a job ended: the account's cached state, metrics, the callback,
// and the callers waiting for it.
func (s *Service) finished(ctx context.Context, id, account uuid.UUID, event string, cost int, callback *string) {
	// Cached usage answers are invalidated before the caller is woken, so a usage call
	// right after the answer sees the charge.
	s.ledger.Notify(ctx, account)
	if err := s.signals.Publish(ctx, id); err != nil {
		s.log.Warn("job done signal not sent; waiters will re-read", "job_id", id, "err", err)
	}
	s.metrics.Credits(event, cost)
	if callback != nil && s.onFinish != nil {
		s.onFinish(ctx, id)
	}
}

// Callback is a finished job's callback delivery state.
type Callback struct {
	URL       string
	Status    string
	Attempts  int
	Error     string
	AccountID uuid.UUID
}

// MarkCallbackPending records that a delivery was scheduled.
func (s *Service) MarkCallbackPending(ctx context.Context, id uuid.UUID) error {
	_, err := s.pool.Exec(ctx, `UPDATE jobs SET callback_status = 'pending' WHERE id = $1 AND callback_url IS NOT NULL AND callback_status IS NULL`, id)
	return err
}

// RecordCallback records one delivery attempt: delivered, or its error (failed when final).
func (s *Service) RecordCallback(ctx context.Context, id uuid.UUID, delivered, final bool, errMsg string) error {
	status := "pending"
	switch {
	case delivered:
		status = "delivered"
	case final:
		status = "failed"
	}
	var at *time.Time
	if delivered {
		now := s.clock.Now()
		at = &now
	}
	_, err := s.pool.Exec(ctx, `
		UPDATE jobs SET callback_status = $2, callback_attempts = callback_attempts + 1, callback_error = NULLIF($3, ''),
			callback_delivered_at = COALESCE($4, callback_delivered_at)
		WHERE id = $1 AND callback_status IS DISTINCT FROM 'delivered'`, id, status, errMsg, at)
	if err != nil {
		return fmt.Errorf("job: record callback: %w", err)
	}
	return nil
}

// CallbackOf returns a job's callback delivery state.
func (s *Service) CallbackOf(ctx context.Context, id uuid.UUID) (Callback, error) {
	var c Callback
	var url, status, errMsg *string
	err := s.pool.QueryRow(ctx, `SELECT callback_url, callback_status, callback_attempts, callback_error, account_id FROM jobs WHERE id = $1`, id).
		Scan(&url, &status, &c.Attempts, &errMsg, &c.AccountID)
	if err != nil {
		return c, fmt.Errorf("job: callback: %w", err)
	}
	for dst, src := range map[*string]*string{&c.URL: url, &c.Status: status, &c.Error: errMsg} {
		if src != nil {
			*dst = *src
		}
	}
	return c, nil
}

// Release hands a running job back to the queue after its run (the given attempt) failed
// and will be retried. It changes nothing once the job ended or another runner took it
// over (a later attempt), so a release retried long after the run is harmless.
func (s *Service) Release(ctx context.Context, id uuid.UUID, attempt int) error {
	_, err := s.pool.Exec(ctx, `UPDATE jobs SET status = 'queued', heartbeat_at = NULL
		WHERE id = $1 AND status = 'running' AND attempts = $2`, id, attempt)
	if err != nil {
		return fmt.Errorf("job: release: %w", err)
	}
	return nil
}

// HandBack returns a running job to the queue after its run was stopped from outside (the
// worker shutting down, or its queue lease lost), not counting the attempt: the next
// delivery claims it at once. The job's Deadline still bounds how long it may take.
func (s *Service) HandBack(ctx context.Context, id uuid.UUID) error {
	_, err := s.pool.Exec(ctx, `UPDATE jobs SET status = 'queued', heartbeat_at = NULL, attempts = GREATEST(attempts - 1, 0)
		WHERE id = $1 AND status = 'running'`, id)
	if err != nil {
		return fmt.Errorf("job: hand back: %w", err)
	}
	return nil
}

// SweepResult counts what a sweep did: jobs whose task was sent again, running jobs resumed
// under a new task, jobs refunded; Unsent counts sends that failed (the queue unreachable),
// tried again at the next sweep.
type SweepResult struct{ Resent, Resumed, Refunded, Unsent int }

// Sweep finds jobs a crash or an outage left behind: queued jobs whose task may never have
// reached the queue, or was lost with it, are sent again (under their own task id, so a
// task still queued is not doubled); running jobs without a heartbeat for StaleAfter are
// resumed under a new task id, or failed and refunded once their attempts are spent; jobs
// past the deadline are refunded. Every step is a conditional update, so sweeps on several
// workers at once are safe. Its query reads the partial index of unfinished jobs.
func (s *Service) Sweep(ctx context.Context) (SweepResult, error) {
	var r SweepResult
	now := s.clock.Now()
	stale := now.Add(-s.cfg.staleAfter())
	rows, err := s.pool.Query(ctx, `
		SELECT id, kind, status, attempts, created_at FROM jobs
		WHERE (status = 'queued' AND created_at < $1) OR (status = 'running' AND heartbeat_at < $2)
		ORDER BY created_at LIMIT 500`, now.Add(-s.cfg.EnqueueGrace), stale)
	if err != nil {
		return r, fmt.Errorf("job: sweep: %w", err)
	}
	type stuck struct {
		id           uuid.UUID
		kind, status string
		attempts     int
		created      time.Time
	}
	var list []stuck
	for rows.Next() {
		var x stuck
		if err := rows.Scan(&x.id, &x.kind, &x.status, &x.attempts, &x.created); err != nil {
			rows.Close()
			return r, fmt.Errorf("job: sweep: %w", err)
		}
		list = append(list, x)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return r, fmt.Errorf("job: sweep: %w", err)
	}
	var sendErr error
	for _, x := range list {
		switch {
		case now.Sub(x.created) > s.cfg.Deadline || x.attempts >= s.cfg.MaxAttempts:
			if ok, err := s.Fail(ctx, x.id, apperr.JobFailed, lostMessage); err != nil {
				return r, err
			} else if ok {
				r.Refunded++
			}
		case x.status == Queued:
			switch err := s.queue.Enqueue(ctx, x.kind, x.id, queuedTaskID(x.id, x.attempts)); {
			case err == nil:
				r.Resent++
			case !errors.Is(err, ErrQueued):
				r.Unsent++
				sendErr = err
			}
		default:
			// The dead runner's task is still held by the queue until its lease ends;
			// a task under a new id lets another worker take the job now.
			tag, err := s.pool.Exec(ctx, `UPDATE jobs SET status = 'queued', heartbeat_at = NULL
				WHERE id = $1 AND status = 'running' AND heartbeat_at < $2`, x.id, stale)
			if err != nil {
				return r, fmt.Errorf("job: sweep: %w", err)
			}
			if tag.RowsAffected() == 1 {
				r.Resumed++
				if err := s.queue.Enqueue(ctx, x.kind, x.id, queuedTaskID(x.id, x.attempts)); err != nil && !errors.Is(err, ErrQueued) {
					r.Unsent++ // the job is queued: the next sweep sends it again
					sendErr = err
				}
			}
		}
	}
	if sendErr != nil {
		s.log.Warn("sweep: tasks not sent; the next sweep tries again", "jobs", r.Unsent, "err", sendErr)
	}
	return r, nil
}

// queuedTaskID is the task a queued job is sent under: its own id until it has run, then
// the resume task of its last attempt. A job resumed while the queue was unreachable is
// queued with its first task still held by the dead runner's lease: sending it again under
// its own id would find that task and do nothing until the lease ends.
func queuedTaskID(id uuid.UUID, attempts int) string {
	if attempts == 0 {
		return id.String()
	}
	return fmt.Sprintf("%s:resume-%d", id, attempts)
}
