// Package metrics holds the service's Prometheus metrics. Every method is safe on a nil
// *Metrics, so code paths can report without caring whether metrics are wired.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are one process's collectors on their own registry.
type Metrics struct {
	Registry     *prometheus.Registry
	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec
	credits      *prometheus.CounterVec
	jobs         *prometheus.CounterVec
	jobDuration  *prometheus.HistogramVec
	crawlPages   *prometheus.CounterVec
}

// New returns metrics registered on a fresh registry with Go runtime and process collectors.
func New() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "contentapi_http_requests_total", Help: "HTTP requests by route, method and status.",
		}, []string{"route", "method", "status"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "contentapi_http_request_duration_seconds", Help: "HTTP request latency by route and method.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route", "method", "status"}),
		credits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "contentapi_credits_total", Help: "Credits reserved, settled and refunded.",
		}, []string{"event"}),
		jobs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "contentapi_jobs_total", Help: "Analysis job runs by kind and outcome (succeeded, failed, retried).",
		}, []string{"kind", "outcome"}),
		jobDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "contentapi_job_duration_seconds", Help: "Analysis job run time by kind and outcome.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300},
		}, []string{"kind", "outcome"}),
		crawlPages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "contentapi_crawl_pages_total", Help: "Pages fetched by the crawler, by result (ok, http_error, fetch_error).",
		}, []string{"result"}),
	}
	m.Registry.MustRegister(m.httpRequests, m.httpDuration, m.credits, m.jobs, m.jobDuration, m.crawlPages,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

// Register adds more collectors (queue depth, cache counters).
func (m *Metrics) Register(cs ...prometheus.Collector) {
	if m != nil {
		m.Registry.MustRegister(cs...)
	}
}

// HTTP records one request.
func (m *Metrics) HTTP(route, method string, status int, d time.Duration) {
	if m == nil {
		return
	}
	s := strconv.Itoa(status)
	m.httpRequests.WithLabelValues(route, method, s).Inc()
	m.httpDuration.WithLabelValues(route, method, s).Observe(d.Seconds())
}

// Credits records credits reserved, settled or refunded.
func (m *Metrics) Credits(event string, n int) {
	if m != nil && n > 0 {
		m.credits.WithLabelValues(event).Add(float64(n))
	}
}

// Job records one run of a job.
func (m *Metrics) Job(kind, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.jobs.WithLabelValues(kind, outcome).Inc()
	m.jobDuration.WithLabelValues(kind, outcome).Observe(d.Seconds())
}

// CrawlPage records one fetched page.
func (m *Metrics) CrawlPage(status int, fetchErr bool) {
	if m == nil {
		return
	}
	result := "ok"
	switch {
	case fetchErr:
		result = "fetch_error"
	case status >= 400:
		result = "http_error"
	}
	m.crawlPages.WithLabelValues(result).Inc()
}

// CounterFunc registers a counter read from fn at scrape time (cache hits and misses).
func (m *Metrics) CounterFunc(name, help string, labels prometheus.Labels, fn func() float64) {
	m.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels}, fn))
}
