package cli

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// countingWriter counts the writes it gets.
type countingWriter struct {
	mu     sync.Mutex
	writes int
	sb     strings.Builder
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	return w.sb.Write(p)
}

func (w *countingWriter) state() (int, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writes, w.sb.String()
}

func TestLogBufferBatchesLines(t *testing.T) {
	w := &countingWriter{}
	b := NewLogBuffer(w)
	for i := range 100 {
		_, _ = b.Write([]byte(strings.Repeat("x", i%7) + "\n"))
	}
	// The timer writes them without a Flush.
	deadline := time.Now().Add(5 * time.Second)
	n, text := w.state()
	for strings.Count(text, "\n") < 100 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
		n, text = w.state()
	}
	assert.Equal(t, 100, strings.Count(text, "\n"))
	assert.Less(t, n, 10, "a hundred lines in a few writes, not one each")

	_, _ = b.Write([]byte("last\n"))
	b.Flush()
	before := n
	n, text = w.state()
	assert.Equal(t, before+1, n)
	assert.True(t, strings.HasSuffix(text, "last\n"), "Flush writes what waits")

	_, _ = b.Write([]byte(strings.Repeat("y", maxLogBuffer) + "\n"))
	after, _ := w.state()
	assert.Equal(t, n+1, after, "a full buffer is written at once")
}
