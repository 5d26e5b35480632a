package app

import (
	"bufio"
	"io"
	"log/slog"
	"sync"
	"time"
)

// LogWriter buffers log lines and writes them out every interval, when the buffer fills,
// and on Close, so a busy API spends one write system call on many lines instead of one per
// request. Lines are at most interval late; Close must run at shutdown.
type LogWriter struct {
	mu   sync.Mutex
	buf  *bufio.Writer
	stop chan struct{}
	done chan struct{}
}

// NewLogWriter starts a buffered writer over w.
func NewLogWriter(w io.Writer, interval time.Duration) *LogWriter {
	l := &LogWriter{buf: bufio.NewWriterSize(w, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				l.Flush()
			case <-l.stop:
				l.Flush()
				return
			}
		}
	}()
	return l
}

// Write buffers p; a line never splits across flushes because slog writes whole lines.
func (l *LogWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// Flush writes out what is buffered.
func (l *LogWriter) Flush() {
	l.mu.Lock()
	_ = l.buf.Flush()
	l.mu.Unlock()
}

// Close flushes and stops the writer.
func (l *LogWriter) Close() error {
	close(l.stop)
	<-l.done
	return nil
}

// NewLogger returns the JSON logger every binary writes with.
func NewLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}
