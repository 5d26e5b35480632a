package app

import (
	"bytes"
	"sync"
	"testing"
	"time"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

func TestLogWriterFlushesOnClose(t *testing.T) {
	var out lockedBuffer
	w := NewLogWriter(&out, time.Hour)
	log := NewLogger(w, "info")
	log.Info("one", "request_id", "r1")
	if out.String() != "" {
		t.Fatal("written before a flush")
	}
	w.Flush()
	if !bytes.Contains([]byte(out.String()), []byte(`"request_id":"r1"`)) {
		t.Fatalf("flush: %q", out.String())
	}
	log.Info("two")
	_ = w.Close()
	if !bytes.Contains([]byte(out.String()), []byte(`"msg":"two"`)) {
		t.Fatalf("close did not flush: %q", out.String())
	}
}
