package cli

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

// LogBuffer batches the host log: funchost and the serve command log every
// tool call (and the function's log lines for it), and one write to stderr
// per line costs a system call per line, made under the slog handler's
// lock, which every other call's log line then waits for. A write is kept
// for at most logFlushDelay, or until maxLogBuffer bytes are waiting, and
// then written with the others in one call. Each Write of the slog handler
// is one whole record, so lines are never split. Flush writes what waits;
// call it before exiting.
type LogBuffer struct {
	mu    sync.Mutex
	w     io.Writer
	buf   []byte
	timer *time.Timer
	armed bool
}

// NewLogBuffer returns a LogBuffer writing to w.
func NewLogBuffer(w io.Writer) *LogBuffer { return &LogBuffer{w: w} }

func (b *LogBuffer) Write(p []byte) (int, error) {
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
func (b *LogBuffer) Flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked()
}

func (b *LogBuffer) flushLocked() {
	if len(b.buf) > 0 {
		_, _ = b.w.Write(b.buf)
		b.buf = b.buf[:0]
	}
	// One very long line (a tool's log of a large value) grows the buffer
	// past the batching size; it is not kept at that size afterwards.
	if cap(b.buf) > 2*maxLogBuffer {
		b.buf = nil
	}
	if b.armed {
		b.timer.Stop()
		b.armed = false
	}
}
