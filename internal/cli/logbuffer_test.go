package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

func TestLogBufferBatchesLines(t *testing.T) {
	w := &testutil.Writes{}
	b := NewLogBuffer(w)
	for i := range 100 {
		_, _ = b.Write([]byte(strings.Repeat("x", i%7) + "\n"))
	}
	// The timer writes them without a Flush.
	deadline := time.Now().Add(5 * time.Second)
	n, text := w.State()
	for strings.Count(text, "\n") < 100 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
		n, text = w.State()
	}
	assert.Equal(t, 100, strings.Count(text, "\n"))
	assert.Less(t, n, 10, "a hundred lines in a few writes, not one each")

	_, _ = b.Write([]byte("last\n"))
	b.Flush()
	before := n
	n, text = w.State()
	assert.Equal(t, before+1, n)
	assert.True(t, strings.HasSuffix(text, "last\n"), "Flush writes what waits")

	_, _ = b.Write([]byte(strings.Repeat("y", maxLogBuffer) + "\n"))
	after, _ := w.State()
	assert.Equal(t, n+1, after, "a full buffer is written at once")
}

// TestLogBufferDoesNotKeepALongLine: a line far longer than the batching
// size is written at once, and the buffer does not stay that large.
func TestLogBufferDoesNotKeepALongLine(t *testing.T) {
	w := &testutil.Writes{}
	b := NewLogBuffer(w)
	long := strings.Repeat("z", 4<<20) + "\n"
	_, _ = b.Write([]byte(long))
	n, text := w.State()
	assert.Equal(t, 1, n)
	assert.Len(t, text, len(long))
	b.mu.Lock()
	kept := cap(b.buf)
	b.mu.Unlock()
	assert.LessOrEqual(t, kept, 2*maxLogBuffer, "the buffer keeps %d bytes after a 4 MiB line", kept)

	_, _ = b.Write([]byte("after\n"))
	b.Flush()
	_, text = w.State()
	assert.True(t, strings.HasSuffix(text, "after\n"), "and goes on batching")
}
