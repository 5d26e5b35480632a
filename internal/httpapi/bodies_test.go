package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"runtime"
	"strings"
	"testing"

	"github.com/contentapi/contentapi/internal/httpapi"
)

// gzipBomb compresses zeros until the compressed stream reaches size bytes; each compressed
// byte inflates to about a kilobyte.
func gzipBomb(t *testing.T, size int) (body []byte, inflated int) {
	t.Helper()
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	for buf.Len() < size-4096 {
		if _, err := w.Write(zeros); err != nil {
			t.Fatal(err)
		}
		inflated += len(zeros)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), inflated
}

// A compressed request body is refused before anything inflates it: a 255 KiB gzip body
// inflating to a quarter of a gigabyte costs the server next to nothing. Without the check
// Fiber inflates it in c.Body() (in limitBody and again in decodeJSON).
func TestCompressedBodiesRefused(t *testing.T) {
	s := startServer(t)
	big, bigInflated := gzipBomb(t, 255<<10)
	// Under the raw size limit, so measuring the raw body alone would not stop it.
	small, smallInflated := gzipBomb(t, 60<<10)
	t.Logf("bombs: %d KiB → %d MiB, %d KiB → %d MiB", len(big)>>10, bigInflated>>20, len(small)>>10, smallInflated>>20)
	register(t, s) // warm the connection pools before measuring

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, c := range []struct {
		body     []byte
		encoding string
	}{{big, "gzip"}, {small, "gzip"}, {small, "deflate, gzip"}, {small, "x-gzip"}, {small, "br"}, {small, "zstd"}} {
		for _, path := range []string{"/v1/auth/register", "/v1/billing/webhook"} {
			r := do(t, "POST", s.URL+path, "", c.body, "Content-Encoding", c.encoding)
			if r.Status != 415 || r.errCode() != "UNSUPPORTED_MEDIA_TYPE" {
				t.Fatalf("%s with %s (%d KiB): %d %s", path, c.encoding, len(c.body)>>10, r.Status, r.Raw)
			}
		}
	}
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	runtime.GC()
	var settled runtime.MemStats
	runtime.ReadMemStats(&settled)
	t.Logf("12 refused bombs: %d KiB allocated in the process, heap %d → %d KiB (peak system %d MiB)",
		allocated>>10, before.HeapAlloc>>10, settled.HeapAlloc>>10, after.Sys>>20)
	// One inflated small bomb alone would allocate 60 MiB.
	if allocated > 16<<20 {
		t.Fatalf("refusing compressed bodies allocated %d MiB", allocated>>20)
	}

	// identity is no coding; plain bodies keep their limit, measured as sent.
	if r := do(t, "POST", s.URL+"/v1/auth/register", "", map[string]any{"email": uniqueEmail()}, "Content-Encoding", "identity"); r.Status != 201 {
		t.Fatalf("identity: %d %s", r.Status, r.Raw)
	}
	tooBig := `{"email":"` + strings.Repeat("a", httpapi.BodyLimit) + `"}`
	if r := do(t, "POST", s.URL+"/v1/auth/register", "", tooBig); r.Status != 413 || r.errCode() != "PAYLOAD_TOO_LARGE" {
		t.Fatalf("plain body over the limit: %d %s", r.Status, r.Raw)
	}
}
