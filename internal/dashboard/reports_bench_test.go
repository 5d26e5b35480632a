package dashboard

import (
	"encoding/json"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/contentapi/contentapi/internal/report"
)

// countingWriter counts what a page weighs.
type countingWriter struct{ n int }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// BenchmarkReportPage renders the report page of the largest results from their stored
// JSON (decoding included, as a request does): an audit of 500 pages that found every
// issue type on every page with the longest lists an answer holds, and a research of 100
// keywords. Targets: ≤ 150 ms (ns/op) and ≤ 1 MB of HTML (html-bytes) each.
func BenchmarkReportPage(b *testing.B) {
	d := newTestDashboard(b)
	for _, bc := range []struct {
		name   string
		kind   report.Kind
		result any
	}{
		{"audit500", report.KindAudit, auditFixture(500)},
		{"research100", report.KindResearch, researchFixture(100)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			result, err := json.Marshal(bc.result)
			if err != nil {
				b.Fatal(err)
			}
			req := json.RawMessage(`{"domain":"www.example-coffee-shop.com","topic":"coffee"}`)
			meta := json.RawMessage(`{"data_source":"imported","warnings":[]}`)
			var w countingWriter
			if err := d.writeReport(&w, string(bc.kind), req, result, meta); err != nil {
				b.Fatal(err)
			}
			cpu0 := cpuTime(b)
			for b.Loop() {
				if err := d.writeReport(io.Discard, string(bc.kind), req, result, meta); err != nil {
					b.Fatal(err)
				}
			}
			// The machine is shared: the process's CPU time per page says what one page costs
			// when wall time (ns/op) also counts waiting for a core.
			b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(w.n), "html-bytes")
			b.ReportMetric(float64(len(result)), "json-bytes")
		})
	}
}

// cpuTime is the CPU time the process used so far (user and system).
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
