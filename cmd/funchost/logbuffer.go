package main

import (
	"io"
	"sync"
	"time"
)

// logFlushDelay is how long a log line may wait to be written with the
// lines that follow it.
const logFlushDelay = 10 * time.Millisecond

// maxLogBuffer is how much is buffered before a write is forced.
const maxLogBuffer = 64 << 10

// logBuffer batches the host log: funchost logs every tool call (and the
// worker's log lines for it), and one write to stderr per line costs a
// system call per line. A write is kept for at most logFlushDelay, or until
// maxLogBuffer bytes are waiting, and then written with the others in one
// call. Each Write of the slog handler is one whole record, so lines are
// never split. Flush writes what waits; call it before exiting.
type logBuffer struct {
	mu    sync.Mutex
	w     io.Writer
	buf   []byte
	timer *time.Timer
	armed bool
}

func newLogBuffer(w io.Writer) *logBuffer { return &logBuffer{w: w} }

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	switch {
	case len(b.buf) >= maxLogBuffer:
		b.flushLocked()
	case !b.armed:
		b.armed = true
		if b.timer == nil {
			b.timer = time.AfterFunc(logFlushDelay, b.Flush)
		} else {
			b.timer.Reset(logFlushDelay)
		}
	}
	return len(p), nil
}

// Flush writes every buffered line now.
func (b *logBuffer) Flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked()
}

func (b *logBuffer) flushLocked() {
	if len(b.buf) > 0 {
		_, _ = b.w.Write(b.buf)
		b.buf = b.buf[:0]
	}
	if b.armed {
		b.timer.Stop()
		b.armed = false
	}
}
