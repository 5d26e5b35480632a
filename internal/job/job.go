// Package job is the path every credit-consuming call takes: the job row and its credit
// reservation written in one transaction, the task enqueued after commit, the caller woken
// by a Redis signal when the worker settles or refunds, and a sweep that finishes or refunds
// whatever a crash left behind. Every reserved credit ends settled or refunded exactly once.
package job

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/credits"
	"github.com/contentapi/contentapi/internal/metrics"
	"github.com/contentapi/contentapi/internal/postgres"
)

// Job statuses.
const (
	Queued    = "queued"
	Running   = "running"
	Succeeded = "succeeded"
	Failed    = "failed"
)

// IdempotencyWindow is how long an Idempotency-Key keeps answering with its first job.
const IdempotencyWindow = 24 * time.Hour

// Job is one analysis call.
type Job struct {
	ID        uuid.UUID       `json:"job_id"`
	AccountID uuid.UUID       `json:"-"`
	Kind      string          `json:"kind"`
	Endpoint  string          `json:"endpoint"`
	Request   json.RawMessage `json:"-"`
	Cost      int             `json:"-"`
	Status    string          `json:"status"`
	Attempts  int             `json:"-"`
	Result    json.RawMessage `json:"-"`
	// Meta is the result's meta (Described), stored beside it; null when it has none.
	Meta         json.RawMessage `json:"-"`
	ErrorCode    string          `json:"-"`
	ErrorMessage string          `json:"-"`
	RequestID    string          `json:"-"`
	CreatedAt    time.Time       `json:"created_at"`
	FinishedAt   *time.Time      `json:"finished_at,omitempty"`
	// Replayed is set when an Idempotency-Key returned an earlier job.
	Replayed bool `json:"-"`
	// Balance is the account's credit balance read with the job, when Balanced.
	Balance  int  `json:"-"`
	Balanced bool `json:"-"`
	// ReadFailed is set when waiting for the job ended without reading it again
	// (PostgreSQL could not be reached): the job exists, may still run and be charged, and is
	// reported as last seen, so the caller learns its id rather than an error.
	ReadFailed bool `json:"-"`
}

// Done reports whether the job has ended.
func (j Job) Done() bool { return j.Status == Succeeded || j.Status == Failed }

// Enqueuer puts a job's task on the queue. taskID names the task: the job id for the first
// enqueue, so repeating it is harmless, and a new name when a crashed run is resumed. A
// task of that name still to run is not doubled: Enqueue then reports ErrQueued.
type Enqueuer interface {
	Enqueue(ctx context.Context, kind string, id uuid.UUID, taskID string) error
}

// ErrQueued says a send added nothing: the job's task is in the queue already.
var ErrQueued = errors.New("job: task already queued")

// Config tunes the job path.
type Config struct {
	// MaxAttempts is how many runs a job gets before it is failed and refunded.
	MaxAttempts int
	// StaleAfter is how long a running job may go without a heartbeat before it is
	// considered lost (its worker died, or could not reach PostgreSQL): a delivery of its
	// task then takes it over (see Claim), and the sweep resumes it under a new task, or
	// refunds it once its attempts are spent. Runners send a heartbeat every StaleAfter/3,
	// at most 5 s apart, so a job is lost after three missed heartbeats at the least.
	// Zero means 15 s.
	StaleAfter time.Duration
	// Deadline is the most a job may take from submission; then it is failed and refunded.
	Deadline time.Duration
	// EnqueueGrace is how long a queued job may wait before the sweep sends its task again
	// (under the job's own task id, so a task still in the queue is not doubled).
	EnqueueGrace time.Duration
}

// defaultStaleAfter is StaleAfter's value when unset: three 5-s heartbeats.
const defaultStaleAfter = 15 * time.Second

// staleAfter is how long a running job may go without a heartbeat before it is lost.
func (c Config) staleAfter() time.Duration {
	if c.StaleAfter <= 0 {
		return defaultStaleAfter
	}
	return c.StaleAfter
}

// heartbeat is how often a runner sends heartbeats: a third of StaleAfter, at most 5 s.
func (c Config) heartbeat() time.Duration {
	return max(min(5*time.Second, c.staleAfter()/3), time.Millisecond)
}

// DefaultConfig is the production tuning (the defaults of JOB_MAX_ATTEMPTS, JOB_STALE_AFTER
// and JOB_SWEEP_INTERVAL, whose double is the enqueue grace).
var DefaultConfig = Config{MaxAttempts: 3, StaleAfter: defaultStaleAfter, Deadline: time.Hour, EnqueueGrace: 4 * time.Second}

// Service runs the job path.
type Service struct {
	pool    *pgxpool.Pool
	ledger  *credits.Ledger
	clock   clock.Clock
	queue   Enqueuer
	signals *Signals
	cfg     Config
	log     *slog.Logger
	metrics *metrics.Metrics
	// onFinish is called after a job with a callback URL ended.
	onFinish func(ctx context.Context, id uuid.UUID)
	// stopWaiting is closed by StopWaiting: every wait answers at once.
	stopWaiting chan struct{}
	stopOnce    sync.Once
}

// StopWaiting ends every wait for a job, now and later, as if its timeout had passed: each
// caller gets its job as it stands (a 202 for an API call). The API calls it as it shuts
// down, so calls waiting for their jobs answer at once instead of holding the shutdown up.
func (s *Service) StopWaiting() { s.stopOnce.Do(func() { close(s.stopWaiting) }) }

// OnFinish sets what to do after a job that carries a callback URL ended (succeeded or
// failed and refunded): the worker schedules the delivery there, outside the job.
func (s *Service) OnFinish(fn func(ctx context.Context, id uuid.UUID)) { s.onFinish = fn }

// WithMetrics makes the service count credits reserved, settled and refunded.
func (s *Service) WithMetrics(m *metrics.Metrics) *Service {
	s.metrics = m
	return s
}

// StaleAfter is how long a running job may go without a heartbeat before it is taken for
// lost: a delivery of its task takes it over, the sweep resumes or refunds it.
func (s *Service) StaleAfter() time.Duration { return s.cfg.staleAfter() }

// NewService returns the job service. queue may be nil in processes that never enqueue.
func NewService(pool *pgxpool.Pool, ledger *credits.Ledger, clk clock.Clock, queue Enqueuer, signals *Signals, cfg Config, log *slog.Logger) *Service {
	return &Service{pool: pool, ledger: ledger, clock: clk, queue: queue, signals: signals, cfg: cfg, log: log,
		stopWaiting: make(chan struct{})}
}

// Submission is a validated analysis request.
type Submission struct {
	// ID is the job's id; zero means a new one.
	ID             uuid.UUID
	AccountID      uuid.UUID
	Kind           string
	Endpoint       string
	Cost           int
	Request        any // the normalised request; its JSON is what the worker reads
	IdempotencyKey string
	RequestID      string
	// CallbackURL, when set, receives the job's result when it ends.
	CallbackURL string
	// KeyID is the API key that made the call; zero for the dashboard (Source) or when
	// unknown. It is stored on the call's reservation, which usage per key reads.
	KeyID uuid.UUID
	// Source is the channel: SourceAPI (the default) or SourceDashboard.
	Source string
}

// Channels a job comes from (reservations.source).
const (
	SourceAPI       = "api"
	SourceDashboard = "dashboard"
)

// Submit reserves the credits and writes the job in one transaction, then enqueues it. With
// an Idempotency-Key seen in the last 24 h it returns that job instead, charging nothing;
// the same key with another body is IDEMPOTENCY_KEY_REUSED.
func (s *Service) Submit(ctx context.Context, sub Submission) (Job, error) {
	body, err := json.Marshal(sub.Request)
	if err != nil {
		return Job{}, fmt.Errorf("job: encode request: %w", err)
	}
	sum := sha256.Sum256(append([]byte(sub.Kind+"\n"), body...))
	for attempt := 0; ; attempt++ {
		if sub.IdempotencyKey != "" {
			j, found, err := s.byIdempotencyKey(ctx, sub, sum[:])
			if err != nil || found {
				return j, err
			}
		}
		j, err := s.insert(ctx, sub, body, sum[:])
		if postgres.IsUniqueViolation(err, "jobs_idempotency_key") && attempt == 0 {
			continue // a concurrent call with the same key won; answer with its job
		}
		if err != nil {
			return Job{}, err
		}
		s.ledger.Notify(ctx, sub.AccountID)
		s.metrics.Credits("reserved", sub.Cost)
		if err := s.queue.Enqueue(ctx, sub.Kind, j.ID, j.ID.String()); err != nil && !errors.Is(err, ErrQueued) {
			s.log.Error("enqueue failed; refunding", "job_id", j.ID, "err", err)
			const msg = "The job queue is unavailable. Nothing was charged; retry shortly."
			// The caller is told nothing was done, so its Idempotency-Key is freed with the
			// refund: a retry under the same key makes a new job instead of replaying this
			// failure for 24 h.
			if ok, ferr := s.fail(ctx, j.ID, apperr.ServiceUnavailable, msg, true); ferr != nil || !ok {
				// Not refunded: the job stays queued and the sweep sends it again, so it may
				// yet run and be charged. The caller gets its id, never "nothing was charged".
				s.log.Error("refund after failed enqueue; the sweep will send the job", "job_id", j.ID, "err", ferr)
				return j, nil
			}
			return Job{}, apperr.New(apperr.ServiceUnavailable, msg)
		}
		return j, nil
	}
}

func (s *Service) byIdempotencyKey(ctx context.Context, sub Submission, sum []byte) (Job, bool, error) {
	j, err := s.get(ctx, `account_id = $1 AND idempotency_key = $2`, sub.AccountID, sub.IdempotencyKey)
	if errors.Is(err, errNotFound) {
		return Job{}, false, nil
	}
	if err != nil {
		return Job{}, false, err
	}
	if s.clock.Now().Sub(j.CreatedAt) >= IdempotencyWindow {
		// The key has lapsed: free it for this new call.
		_, err := s.pool.Exec(ctx, `UPDATE jobs SET idempotency_key = NULL WHERE id = $1`, j.ID)
		return Job{}, false, err
	}
	var hash []byte
	if err := s.pool.QueryRow(ctx, `SELECT request_hash FROM jobs WHERE id = $1`, j.ID).Scan(&hash); err != nil {
		return Job{}, false, fmt.Errorf("job: idempotency: %w", err)
	}
	if string(hash) != string(sum) || j.Endpoint != sub.Endpoint {
		return Job{}, false, apperr.New(apperr.IdempotencyKeyReused,
			"This Idempotency-Key was used in the last 24 hours with a different request. Use a new key for a new request.")
	}
	j.Replayed = true
	return j, true, nil
}

func (s *Service) insert(ctx context.Context, sub Submission, body, sum []byte) (Job, error) {
	now := s.clock.Now()
	if sub.ID == uuid.Nil {
		sub.ID = uuid.New()
	}
	j := Job{ID: sub.ID, AccountID: sub.AccountID, Kind: sub.Kind, Endpoint: sub.Endpoint, Request: body,
		Cost: sub.Cost, Status: Queued, RequestID: sub.RequestID, CreatedAt: now}
	var key, callback *string
	var apiKey *uuid.UUID
	if sub.KeyID != uuid.Nil {
		apiKey = &sub.KeyID
	}
	if sub.Source == "" {
		sub.Source = SourceAPI
	}
	if sub.IdempotencyKey != "" {
		key = &sub.IdempotencyKey
	}
	if sub.CallbackURL != "" {
		callback = &sub.CallbackURL
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return j, fmt.Errorf("job: begin: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after commit
	reservation := uuid.New()
	if err := s.ledger.ReserveTx(ctx, tx, reservation, sub.AccountID, sub.Cost, sub.Endpoint); err != nil {
		return j, err
	}
	// The reservation learns its channel in the same statement (usage per key reads it).
	_, err = tx.Exec(ctx, `
		WITH channel AS (UPDATE reservations SET source = $13, api_key_id = $14 WHERE id = $8)
		INSERT INTO jobs (id, account_id, kind, endpoint, request, request_hash, idempotency_key, reservation_id, cost, request_id, created_at, callback_url)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		j.ID, j.AccountID, j.Kind, j.Endpoint, body, sum, key, reservation, j.Cost, j.RequestID, now, callback, sub.Source, apiKey)
	if err != nil {
		return j, fmt.Errorf("job: insert: %w", err)
	}
	err = tx.Commit(ctx)
	if err == nil || !commitOutcomeUnknown(err) {
		if err != nil {
			return j, fmt.Errorf("job: commit: %w", err)
		}
		return j, nil
	}
	// The connection broke while COMMIT was under way: the job and its reservation may be
	// stored. Look before telling the caller anything about money.
	stored, lerr := s.stored(ctx, j.AccountID, j.ID)
	switch {
	case lerr == nil && stored:
		s.log.Warn("job commit answer lost; the job was stored", "job_id", j.ID, "err", err)
		return j, nil
	case lerr == nil:
		return j, fmt.Errorf("job: commit: %w", err) // not stored: nothing was charged
	}
	s.log.Error("job commit outcome unknown", "job_id", j.ID, "err", err, "lookup_err", lerr)
	return j, ErrOutcomeUnknown(j.ID)
}

// ErrOutcomeUnknown is the answer when the connection to PostgreSQL broke during the COMMIT
// of a job and whether it was stored could not be read: the call may have been accepted and
// charged, so the caller is told how to find out, never that nothing was charged.
func ErrOutcomeUnknown(id uuid.UUID) *apperr.Error {
	e := apperr.New(apperr.ServiceUnavailable,
		"The database connection was lost while this call was being recorded, so it may have been accepted as job %s "+
			"and charged. GET /v1/jobs/%s tells (404: it was not, and nothing was charged); a retry with the same "+
			"Idempotency-Key never charges twice.", id, id)
	e.JobID = id.String()
	return e
}

// commitOutcomeUnknown reports whether a failed COMMIT may still have committed: the
// server did not answer it with an error. (pgconn's SafeToRetry cannot tell: a connection
// that broke after the COMMIT was sent can surface as its "conn closed" lock error.)
func commitOutcomeUnknown(err error) bool {
	var pgErr *pgconn.PgError
	return !errors.As(err, &pgErr) && !errors.Is(err, pgx.ErrTxCommitRollback)
}

// stored reports whether the job was committed. Its transaction held the account's row lock
// until it ended, so taking that lock first orders this read after it, even when the server
// is still finishing the COMMIT the client lost sight of.
func (s *Service) stored(ctx context.Context, accountID, id uuid.UUID) (bool, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	var found bool
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE`, accountID); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM jobs WHERE id = $1)`, id).Scan(&found)
	})
	return found, err
}

var errNotFound = errors.New("job not found")

const jobColumns = `id, account_id, kind, endpoint, request, cost, status, attempts, result,
	COALESCE(error_code, ''), COALESCE(error_message, ''), request_id, created_at, finished_at, meta`

// fields are the scan targets of jobColumns, then extra.
func (j *Job) fields(extra ...any) []any {
	return append([]any{&j.ID, &j.AccountID, &j.Kind, &j.Endpoint, &j.Request, &j.Cost, &j.Status, &j.Attempts,
		&j.Result, &j.ErrorCode, &j.ErrorMessage, &j.RequestID, &j.CreatedAt, &j.FinishedAt, &j.Meta}, extra...)
}

func scanJob(row pgx.Row) (Job, error) {
	var j Job
	err := row.Scan(j.fields()...)
	if errors.Is(err, pgx.ErrNoRows) {
		return j, errNotFound
	}
	if err != nil {
		return j, fmt.Errorf("job: read: %w", err)
	}
	return j, nil
}

func (s *Service) get(ctx context.Context, where string, args ...any) (Job, error) {
	return scanJob(s.pool.QueryRow(ctx, `SELECT `+jobColumns+` FROM jobs WHERE `+where, args...))
}

// Get returns the account's job; another account's job is NOT_FOUND, as is an unknown id.
func (s *Service) Get(ctx context.Context, accountID, id uuid.UUID) (Job, error) {
	j, err := s.get(ctx, `id = $1 AND account_id = $2`, id, accountID)
	if errors.Is(err, errNotFound) {
		return j, apperr.New(apperr.NotFound, "Job not found.")
	}
	return j, err
}

// Load returns a job by id, for the worker.
func (s *Service) Load(ctx context.Context, id uuid.UUID) (Job, error) {
	return s.get(ctx, `id = $1`, id)
}

// SubmitAndWait submits the job and waits for it up to timeout. It listens for the job's
// signal before the task can reach a worker, so the row needs reading only once the signal
// came (or, in case a signal was lost with a Redis connection, now and then).
func (s *Service) SubmitAndWait(ctx context.Context, sub Submission, timeout time.Duration) (Job, error) {
	sub.ID = uuid.New()
	wake, stop := s.signals.Listen(sub.ID)
	defer func() { stop() }()
	j, err := s.Submit(ctx, sub)
	if err != nil || j.Done() {
		return j, err
	}
	if j.ID != sub.ID { // an Idempotency-Key answered with an earlier job
		stop()
		wake, stop = s.signals.Listen(j.ID)
		cur, err := s.getWithBalance(ctx, sub.AccountID, j.ID)
		if err != nil {
			return s.lastSeen(j, err), nil
		}
		cur.Replayed = true
		if j = cur; j.Done() {
			return j, nil
		}
	}
	return s.await(ctx, j, wake, timeout)
}

// getWithBalance reads the account's job and its balance in one round trip.
func (s *Service) getWithBalance(ctx context.Context, accountID, id uuid.UUID) (Job, error) {
	var j Job
	err := s.pool.QueryRow(ctx, `SELECT `+jobColumns+`, `+credits.BalanceSQL("jobs.account_id", "$3")+`
		FROM jobs WHERE id = $1 AND account_id = $2`, id, accountID, s.clock.Now()).
		Scan(j.fields(&j.Balance)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return j, apperr.New(apperr.NotFound, "Job not found.")
	}
	if err != nil {
		return j, fmt.Errorf("job: read: %w", err)
	}
	j.Balanced = true
	return j, nil
}

// Wait returns the job once it has ended, or as it stands when timeout passes. It listens
// for the worker's signal before reading the row, so a signal sent meanwhile is not missed,
// and re-reads the row now and then in case a signal was lost with a Redis connection.
func (s *Service) Wait(ctx context.Context, accountID, id uuid.UUID, timeout time.Duration) (Job, error) {
	wake, stop := s.signals.Listen(id)
	defer stop()
	j, err := s.getWithBalance(ctx, accountID, id)
	if err != nil || j.Done() {
		return j, err
	}
	return s.await(ctx, j, wake, timeout)
}

// readGrace is how long past the wait's end the last read of a job may take.
const readGrace = 2 * time.Second

// await waits for the job j, known to exist, to end, up to timeout. A read that fails
// (PostgreSQL unreachable) is tried again on the next tick; if none succeeds by the end,
// the job is returned as last seen with ReadFailed set, not as an error: it exists and may
// still be charged, so its caller must learn its id.
func (s *Service) await(ctx context.Context, j Job, wake <-chan struct{}, timeout time.Duration) (Job, error) {
	end := time.Now().Add(timeout)
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var readErr error
	for {
		last := false
		select {
		case <-wake:
		case <-tick.C:
		case <-deadline.C:
			last = true
		case <-s.stopWaiting:
			last = true
		case <-ctx.Done():
			return j, ctx.Err()
		}
		rctx, cancel := context.WithDeadline(ctx, end.Add(readGrace))
		cur, err := s.getWithBalance(rctx, j.AccountID, j.ID)
		cancel()
		switch {
		case err != nil && ctx.Err() != nil:
			return j, ctx.Err()
		case err != nil:
			readErr = err
		default:
			cur.Replayed = j.Replayed
			j, readErr = cur, nil
		}
		if j.Done() || last {
			if readErr != nil {
				return s.lastSeen(j, readErr), nil
			}
			return j, nil
		}
	}
}

// lastSeen flags a job that could not be read again.
func (s *Service) lastSeen(j Job, err error) Job {
	s.log.Warn("job could not be re-read; answering with it as last seen", "job_id", j.ID, "status", j.Status, "err", err)
	j.ReadFailed, j.Balanced = true, false
	return j
}
