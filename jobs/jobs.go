// Package jobs holds the task types both binaries share: their names, payloads,
// constructors, and the worker's handlers.
package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"

	"github.com/contentapi/contentapi/internal/credits"
	"github.com/contentapi/contentapi/internal/job"
)

// Queues and their weights: analysis work for callers first, housekeeping after.
const (
	QueueAnalysis    = "analysis"
	QueueMaintenance = "maintenance"
)

// Queues is the worker's queue configuration.
var Queues = map[string]int{QueueAnalysis: 6, QueueCallbacks: 2, QueueMaintenance: 1}

// TypeRenewPeriods starts the next credit period, with its monthly credits, of every free or
// operator-managed account whose period has ended (Stripe subscriptions renew by invoice).
const TypeRenewPeriods = "credits:renew-periods"

// NewRenewPeriodsTask returns the periodic renewal task.
func NewRenewPeriodsTask() *asynq.Task {
	return asynq.NewTask(TypeRenewPeriods, nil, asynq.Queue(QueueMaintenance), asynq.MaxRetry(0),
		asynq.Timeout(5*time.Minute), asynq.Unique(time.Minute))
}

// TypePurgeJobs deletes the jobs that ended more than JOB_RETENTION ago.
const TypePurgeJobs = "jobs:purge"

// NewPurgeJobsTask returns the periodic job retention task.
func NewPurgeJobsTask() *asynq.Task {
	return asynq.NewTask(TypePurgeJobs, nil, asynq.Queue(QueueMaintenance), asynq.MaxRetry(0),
		asynq.Timeout(30*time.Minute), asynq.Unique(time.Hour))
}

// Maintenance handles housekeeping tasks.
type Maintenance struct {
	Ledger *credits.Ledger
	Log    *slog.Logger
	// Jobs and Retention purge ended jobs older than Retention; no purge without Jobs.
	Jobs      *job.Service
	Retention time.Duration
}

// Register adds the handlers to mux.
func (m *Maintenance) Register(mux *asynq.ServeMux) {
	mux.HandleFunc(TypeRenewPeriods, m.renewPeriods)
	if m.Jobs != nil {
		mux.HandleFunc(TypePurgeJobs, m.purgeJobs)
	}
}

func (m *Maintenance) purgeJobs(ctx context.Context, _ *asynq.Task) error {
	n, err := m.Jobs.Purge(ctx, m.Retention)
	if n > 0 {
		m.Log.Info("ended jobs past retention deleted", "jobs", n, "retention", m.Retention.String())
	}
	if err != nil {
		return fmt.Errorf("purge jobs: %w", err)
	}
	return nil
}

func (m *Maintenance) renewPeriods(ctx context.Context, _ *asynq.Task) error {
	n, err := m.Ledger.RenewDuePeriods(ctx)
	if err != nil {
		return fmt.Errorf("renew periods: %w", err)
	}
	if n > 0 {
		m.Log.Info("credit periods renewed", "accounts", n)
	}
	return nil
}
