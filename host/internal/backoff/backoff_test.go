package backoff

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestDoubling(t *testing.T) {
	tests := []struct {
		name       string
		first, max time.Duration
		want       []time.Duration
	}{
		{"doubles up to the cap", time.Second, time.Minute, []time.Duration{
			time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, time.Minute, time.Minute}},
		{"cap below first", 200 * time.Millisecond, 100 * time.Millisecond, []time.Duration{100 * time.Millisecond, 100 * time.Millisecond}},
		{"cap not a power of two of first", 200 * time.Millisecond, 500 * time.Millisecond, []time.Duration{
			200 * time.Millisecond, 400 * time.Millisecond, 500 * time.Millisecond, 500 * time.Millisecond}},
		{"zero first waits nothing", 0, time.Minute, []time.Duration{0, 0}},
		{"a huge cap does not overflow", 10 * time.Second, time.Duration(1<<63 - 1), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &Doubling{First: tt.first, Max: tt.max}
			if tt.want == nil {
				last := time.Duration(0)
				for range 200 {
					d := b.Next()
					assert.GreaterOrEqual(t, d, last, "waits never shrink (no overflow)")
					last = d
				}
				return
			}
			var got []time.Duration
			for range tt.want {
				got = append(got, b.Next())
			}
			assert.Equal(t, tt.want, got)
			b.Reset()
			assert.Equal(t, tt.want[0], b.Next(), "Reset starts again from First")
		})
	}
}

func TestSleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		assert.True(t, Sleep(t.Context(), 3*time.Second))
		assert.Equal(t, 3*time.Second, time.Since(start), "the whole wait (fake clock)")

		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start = time.Now()
		assert.False(t, Sleep(ctx, time.Hour), "a context that ends stops the wait")
		assert.Equal(t, time.Second, time.Since(start))

		assert.True(t, Sleep(t.Context(), 0))
		assert.False(t, Sleep(ctx, 0), "no wait, but the context has ended")
	})
}
