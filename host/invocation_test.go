package host

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// records keeps the records it handles at or above its level.
type records struct {
	mu    sync.Mutex
	level slog.Level
	got   []slog.Record
}

func (h *records) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }
func (h *records) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h *records) WithGroup(string) slog.Handler                { return h }
func (h *records) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got = append(h.got, r.Clone())
	return nil
}

func attrsOf(r slog.Record) map[string]string {
	m := map[string]string{}
	r.Attrs(func(a slog.Attr) bool {
		m[a.Key] = a.Value.String()
		return true
	})
	return m
}

// TestInvocationLinesSkipTheCaller: the lines written for every call carry
// what they said before, and no program counter, which slog would take by
// walking the stack.
func TestInvocationLinesSkipTheCaller(t *testing.T) {
	rec := &records{level: slog.LevelInfo}
	h := &Host{log: slog.New(rec)}
	iv := &invocation{h: h, function: "get_weather", id: "0f5c", start: time.Now().Add(-time.Millisecond),
		attrs: []slog.Attr{slog.String("tool", "get_weather")}}

	iv.workerLogs(t.Context(), []string{"forecast for Oslo"})
	iv.executed(t.Context(), "Succeeded")

	require.Len(t, rec.got, 2)
	assert.Equal(t, "forecast for Oslo", rec.got[0].Message)
	assert.Equal(t, map[string]string{"function": "get_weather", "invocationId": "0f5c"}, attrsOf(rec.got[0]))
	assert.Equal(t, "Executed 'Functions.get_weather' (Succeeded)", rec.got[1].Message)
	attrs := attrsOf(rec.got[1])
	assert.NotEmpty(t, attrs["duration"])
	delete(attrs, "duration")
	assert.Equal(t, map[string]string{"function": "get_weather", "tool": "get_weather", "invocationId": "0f5c"}, attrs)
	for _, r := range rec.got {
		assert.Equal(t, slog.LevelInfo, r.Level)
		assert.WithinDuration(t, time.Now(), r.Time, time.Minute)
		assert.Zero(t, r.PC, "no caller taken for %q", r.Message)
	}

	quiet := &records{level: slog.LevelWarn}
	iv.h = &Host{log: slog.New(quiet)}
	iv.executed(t.Context(), "Succeeded")
	assert.Empty(t, quiet.got, "a handler above Info gets no line")
}

// BenchmarkInvocationLine writes a call's Executed line through a text
// handler, as the host does and as Logger.LogAttrs would.
func BenchmarkInvocationLine(b *testing.B) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	h := &Host{log: log}
	attrs := []slog.Attr{slog.String("function", "get_weather"), slog.String("tool", "get_weather"),
		slog.String("invocationId", "40bd92f3-c128-4ea2-9e0c-dc5191611865"), slog.Duration("duration", 82*time.Microsecond)}
	const msg = "Executed 'Functions.get_weather' (Succeeded)"
	b.Run("logCall", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			h.logCall(context.Background(), slog.LevelInfo, msg, attrs...)
		}
	})
	b.Run("Logger.LogAttrs", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			log.LogAttrs(context.Background(), slog.LevelInfo, msg, attrs...)
		}
	})
}
