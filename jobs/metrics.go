package jobs

import (
	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
)

// QueueCollector reports asynq queue depth by queue and task state at scrape time.
type QueueCollector struct {
	inspector *asynq.Inspector
	desc      *prometheus.Desc
}

// NewQueueCollector returns a collector reading the queues through inspector.
func NewQueueCollector(inspector *asynq.Inspector) *QueueCollector {
	return &QueueCollector{inspector: inspector, desc: prometheus.NewDesc("contentapi_queue_tasks",
		"Tasks in each asynq queue by state.", []string{"queue", "state"}, nil)}
}

// Describe implements prometheus.Collector.
func (q *QueueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- q.desc }

// Collect implements prometheus.Collector.
func (q *QueueCollector) Collect(ch chan<- prometheus.Metric) {
	for name := range Queues {
		info, err := q.inspector.GetQueueInfo(name)
		if err != nil {
			continue // a queue that never held a task does not exist yet
		}
		for state, n := range map[string]int{"pending": info.Pending, "active": info.Active, "scheduled": info.Scheduled,
			"retry": info.Retry, "archived": info.Archived, "completed": info.Completed} {
			ch <- prometheus.MustNewConstMetric(q.desc, prometheus.GaugeValue, float64(n), name, state)
		}
	}
}
